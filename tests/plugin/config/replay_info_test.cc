#include "plugin/config/replay_info.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "plugin/config/container_labels.h"
#include "plugin/config/log_options.h"

namespace skald {
namespace {

namespace fs = std::filesystem;

class ReplayInfoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("skald-replay-info-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    secrets_ = std::make_unique<SecretStore>(dir_ / "secrets");
  }
  void TearDown() override { fs::remove_all(dir_); }

  static ContainerInfo Info() {
    ContainerInfo info;
    info.container_id = "abc123";
    info.container_name = "/web";
    info.config = {{"loki-url", "https://ceo:S3cr3t@loki.example/loki/api/v1/push"},
                   {"loki-bearer-token", ""},
                   {"loki-headers", "X-Scope-Key=k3y"},
                   {"env", "APP_MODE"}};
    info.container_env = {"APP_MODE=blue", "DB_PASSWORD=hunter2"};
    info.container_labels = {{"vault.token", "s.abc123"}};
    return info;
  }

  fs::path dir_;
  std::unique_ptr<SecretStore> secrets_;
};

TEST_F(ReplayInfoTest, KeepsNoSecretAndReadsBackTheCredentials) {
  const ContainerInfo info = Info();
  LogOptions options;
  options.env = "APP_MODE";
  const std::string text = ReplayInfoJson(info, options, *secrets_);
  for (const char* secret : {"S3cr3t", "hunter2", "DB_PASSWORD", "s.abc123", "k3y"}) {
    EXPECT_EQ(text.find(secret), std::string::npos) << secret << " in " << text;
  }
  EXPECT_NE(text.find("APP_MODE=blue"), std::string::npos) << text;

  const ReplayInfo back = ReadReplayInfo("abc123", text, *secrets_);
  EXPECT_EQ(back.unusable, "");
  EXPECT_EQ(back.info.config.at("loki-url"), info.config.at("loki-url"));
  EXPECT_EQ(back.info.config.at("loki-headers"), "X-Scope-Key=k3y");
  EXPECT_EQ(back.info.config.at("loki-bearer-token"), "");  // empty: kept as it is
  EXPECT_EQ(back.info.container_name, "/web");
  EXPECT_EQ(back.secret_references.size(), 2u);
}

// The secrets file is read back at the start: one that is not a file (a FIFO: opening it
// plainly would wait for ever) or larger than any the plugin writes is left unread, and the
// store goes on empty instead of stopping the plugin.
TEST_F(ReplayInfoTest, ASecretsFileThatIsNotOneIsLeftUnread) {
  const std::string reference = secrets_->Put("hunter2");
  EXPECT_EQ(SecretStore(dir_ / "secrets").Get(reference), "hunter2");  // as written

  ASSERT_EQ(truncate((dir_ / "secrets").c_str(), off_t{64} << 20 | 1), 0);  // sparse
  EXPECT_FALSE(SecretStore(dir_ / "secrets").Get(reference));
  fs::remove(dir_ / "secrets");
  ASSERT_EQ(mkfifo((dir_ / "secrets").c_str(), 0600), 0);
  EXPECT_FALSE(SecretStore(dir_ / "secrets").Get(reference));
}

// Nor is it ever written larger than it would be read back: a Put that would grow it past its
// bound is refused (the caller goes on without a journal), and what it held stays readable.
TEST_F(ReplayInfoTest, TheSecretsFileIsNotWrittenPastItsBound) {
  SecretStore store(dir_ / "bounded", 200);
  const std::string kept = store.Put(std::string(60, 'a'));
  EXPECT_THROW(store.Put(std::string(120, 'b')), std::system_error);
  EXPECT_EQ(SecretStore(dir_ / "bounded", 200).Get(kept), std::string(60, 'a'));
  EXPECT_LE(fs::file_size(dir_ / "bounded"), 200u);
}

// The secret list is the option table's: every option it shows hidden or as a redacted URL
// (one added tomorrow too) goes to the secret store, and the others stay in info.json.
TEST_F(ReplayInfoTest, EveryOptionTheTableHidesIsKeptOutOfInfoJson) {
  int hidden = 0;
  for (const OptionSpec& spec : AllOptionSpecs()) {
    ContainerInfo info;
    info.container_id = "abc123";
    const std::string name(spec.name);
    const bool url = spec.shown == OptionShown::kRedactedUrl;
    info.config = {{name, url ? "https://u:Wh1spered@loki.example/push" : "Wh1spered"}};
    const std::string text = ReplayInfoJson(info, LogOptions{}, *secrets_);
    if (spec.shown == OptionShown::kAsIs) {
      EXPECT_NE(text.find("Wh1spered"), std::string::npos) << name << " was moved: " << text;
      continue;
    }
    ++hidden;
    EXPECT_EQ(text.find("Wh1spered"), std::string::npos) << name << " in " << text;
    const ReplayInfo back = ReadReplayInfo("abc123", text, *secrets_);
    EXPECT_EQ(back.info.config.at(name), info.config.at(name)) << name;
  }
  EXPECT_GE(hidden, 4) << "loki-url, loki-proxy-url, loki-bearer-token, loki-headers at least";
}

// The command line may carry a password: kept only when a template of the options shows it.
TEST_F(ReplayInfoTest, TheCommandLineIsKeptOnlyWhenATemplateNamesIt) {
  ContainerInfo info = Info();
  info.container_entrypoint = "/app";
  info.container_args = {"--db-password", "hunter3"};
  LogOptions plain;
  const std::string text = ReplayInfoJson(info, plain, *secrets_);
  EXPECT_EQ(text.find("hunter3"), std::string::npos) << text;
  EXPECT_EQ(text.find("/app"), std::string::npos) << text;
  for (const char* field : {"{{.Command}}", "{{.ContainerArgs}}", "{{.ContainerEntrypoint}}"}) {
    LogOptions shown;
    shown.external_labels = std::string("cmd=") + field;
    const ReplayInfo back =
        ReadReplayInfo("abc123", ReplayInfoJson(info, shown, *secrets_), *secrets_);
    EXPECT_EQ(back.info.Command(), "/app --db-password hunter3") << field;
  }
  LogOptions tagged;
  tagged.tag = "{{.Name}} {{.Command}}";
  EXPECT_NE(ReplayInfoJson(info, tagged, *secrets_).find("hunter3"), std::string::npos);
}

// A template that reads the whole environment renders the same after a restart: its output is
// kept, never the environment. One that reads ContainerLabels keeps them all.
TEST_F(ReplayInfoTest, ATemplateReadingTheEnvironmentIsKeptAsItsOutput) {
  const ContainerInfo info = Info();
  LogOptions options = ParseLogOptions(
      {{"loki-url", "http://127.0.0.1:3100/loki/api/v1/push"},
       {"loki-external-labels",
        "mode={{range .ContainerEnv}}{{if eq (len .) 13}}{{truncate . 3}}{{end}}{{end}},job=x"},
       {"tag", "{{len .ContainerEnv}}/{{.Hostname}}"}},
      {});
  const std::string text = ReplayInfoJson(info, options, *secrets_, "node1");
  for (const char* secret : {"hunter2", "DB_PASSWORD", "APP_MODE=blue", "s.abc123"}) {
    EXPECT_EQ(text.find(secret), std::string::npos) << secret << " in " << text;
  }
  const ReplayInfo back = ReadReplayInfo("abc123", text, *secrets_);
  EXPECT_EQ(back.unusable, "");
  EXPECT_TRUE(back.info.container_env.empty());
  const auto before = BuildContainerLabels(info, options, "node1");
  EXPECT_EQ(BuildContainerLabels(back.info, options, "node1"), before);
  const std::map<std::string, std::string> labels(before.begin(), before.end());
  EXPECT_EQ(labels.at("mode"), "APP");  // of APP_MODE=blue, 13 bytes
  EXPECT_EQ(labels.at("tag"), "2/node1");

  // dockerd's StartLogging cannot bring outputs of its own.
  nlohmann::json forged = info.ToJson();
  forged[ContainerInfo::kRenderedTemplatesKey] = {{"{{.Name}}", "forged"}};
  EXPECT_TRUE(ContainerInfo::FromJson(forged).rendered_templates.empty());

  LogOptions labels_options;
  labels_options.tag = "{{json .ContainerLabels}}";
  const ReplayInfo with_labels =
      ReadReplayInfo("abc123", ReplayInfoJson(info, labels_options, *secrets_), *secrets_);
  EXPECT_EQ(with_labels.info.container_labels, info.container_labels);
  EXPECT_TRUE(with_labels.info.container_env.empty());
}

TEST_F(ReplayInfoTest, AUrlWithoutCredentialsStaysInPlace) {
  ContainerInfo info = Info();
  info.config = {{"loki-url", "https://loki.example/loki/api/v1/push"}};
  const std::string text = ReplayInfoJson(info, LogOptions{}, *secrets_);
  EXPECT_NE(text.find("https://loki.example/loki/api/v1/push"), std::string::npos);
  EXPECT_TRUE(ReadReplayInfo("abc123", text, *secrets_).secret_references.empty());
}

TEST_F(ReplayInfoTest, TheJournalsIdWins) {
  const std::string text = ReplayInfoJson(Info(), LogOptions{}, *secrets_);
  EXPECT_EQ(ReadReplayInfo("other", text, *secrets_).info.container_id, "other");
}

TEST_F(ReplayInfoTest, SaysWhyTheOptionsCannotBeUsed) {
  ReplayInfo missing = ReadReplayInfo("abc123", std::nullopt, *secrets_);
  EXPECT_EQ(missing.unusable, "its info.json is missing or unreadable");
  EXPECT_EQ(missing.info.container_id, "abc123");
  EXPECT_FALSE(missing.parsed);

  ReplayInfo garbage = ReadReplayInfo("abc123", std::string("{not json"), *secrets_);
  EXPECT_EQ(garbage.unusable.rfind("its info.json is unreadable: ", 0), 0u) << garbage.unusable;
  EXPECT_EQ(garbage.info.container_id, "abc123");
  EXPECT_FALSE(garbage.parsed);

  // A secret the store no longer keeps: unusable, and its reference still reported (the
  // caller keeps the others it refers to).
  const std::string text = ReplayInfoJson(Info(), LogOptions{}, *secrets_);
  secrets_->Retain({});
  ReplayInfo gone = ReadReplayInfo("abc123", text, *secrets_);
  EXPECT_NE(gone.unusable.find("is no longer kept"), std::string::npos) << gone.unusable;
  EXPECT_EQ(gone.secret_references.size(), 2u);
  EXPECT_TRUE(gone.parsed) << "parsed, its options unusable all the same";
}

}  // namespace
}  // namespace skald
