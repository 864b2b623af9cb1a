// Bad --log-opt values refuse the container at `docker run`, with a message that names the
// option and the value; plugin-wide settings (docker plugin set) serve containers that give none,
// and `skald check --plugin` sees them.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "tests/e2e/e2e_support.h"
#include "tests/tools/random_hex.h"

namespace skald::e2e {
namespace {

class Options : public SkaldTest {};

TEST_F(Options, AnUnknownOptionFailsTheRunAndSuggestsTheNearestName) {
  const std::string name = NewContainer();
  std::vector<std::string> args{"run",       "--name",    name,
                                "--network", "none",      "--log-driver",
                                driver_,     "--log-opt", "loki-urll=" + loki().PushUrl(),
                                image(),     "echo",      "never"};
  auto run = Docker(args, 60s);
  ASSERT_FALSE(run.ok()) << "docker run accepted an unknown option: " << run.Describe();
  const std::string said = run.out + run.err;
  EXPECT_NE(said.find("loki-urll"), std::string::npos)
      << "the error does not name the unknown option: " << run.Describe();
  // "loki-urll" contains "loki-url": look for the suggestion as a word of its own.
  EXPECT_TRUE(std::regex_search(said, std::regex(R"(loki-url([^l]|$))")))
      << "the error does not suggest loki-url: " << run.Describe();
  EXPECT_EQ(DockerInspect(name, "{{.State.Running}}").value_or("false"), "false");
}

TEST_F(Options, ABadValueFailsTheRunNamingTheOptionAndTheValue) {
  const std::string name = NewContainer();
  auto run = Docker(RunArgs(name, {"loki-batch-wait=fast"}, {"echo", "never"}), 60s);
  ASSERT_FALSE(run.ok()) << "docker run accepted loki-batch-wait=fast: " << run.Describe();
  const std::string said = run.out + run.err;
  EXPECT_NE(said.find("loki-batch-wait"), std::string::npos) << run.Describe();
  EXPECT_NE(said.find("fast"), std::string::npos) << run.Describe();
}

TEST_F(Options, AGoodRunStillWorksNextToRefusedOnes) {
  // A refused container must not disturb the plugin for the next one.
  const std::string bad = NewContainer("bad");
  ASSERT_FALSE(Docker(RunArgs(bad, {"loki-retries=many"}, {"echo", "never"}), 60s).ok());
  const std::string good = NewContainer("good");
  auto run = Docker(RunArgs(good, {}, {"loggen", "--lines", "100"}), 60s);
  ASSERT_TRUE(run.ok()) << run.Describe();
  EXPECT_EQ(loki().WaitForCount(Selector(good), 100, 60s), 100u);
}

// What a Go driver user writes: Go templates over Docker's logger.Info, as the real daemon fills
// it. A template that fails on its container refuses that container alone, with Go's reason.
TEST_F(Options, ExternalLabelsAndTagAreGoTemplatesOverTheContainer) {
  const std::string bad = NewContainer("tmplbad");
  auto refused = Docker(
      RunArgs(bad, {"loki-external-labels=arg={{index .ContainerArgs 9}}"}, {"echo", "never"}),
      60s);
  ASSERT_FALSE(refused.ok()) << refused.Describe();
  EXPECT_NE((refused.out + refused.err).find("index out of range: 9"), std::string::npos)
      << refused.Describe();
  EXPECT_NE((refused.out + refused.err).find("loki-external-labels"), std::string::npos)
      << refused.Describe();

  const std::string name = NewContainer("tmpl");
  std::vector<std::string> args =
      RunArgs(name,
              {"loki-external-labels=container_name={{.Name}},team={{index .ContainerLabels "
               "\"team\"}},args={{len .ContainerArgs}},first={{if eq .Name \"" +
                   name + "\"}}{{index .ContainerArgs 0}}{{end}}",
               "tag={{.ImageID}}"},
              {"loggen", "--lines", "20"});
  args.insert(args.begin() + 1, {"--label", "team=payments"});
  auto run = Docker(args, 60s);
  ASSERT_TRUE(run.ok()) << run.Describe();
  EXPECT_EQ(loki().WaitForCount(Selector(name, "team=\"payments\""), 20, 60s), 20u);
  const auto series = loki().Series(Selector(name));
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].at("args"), "2");  // loggen's --lines 20
  EXPECT_EQ(series[0].at("first"), "--lines");
  // Docker's .ImageID: the first 12 characters of the image id, "sha256:" included.
  const std::optional<std::string> image_id = DockerInspect(name, "{{.Image}}");
  ASSERT_TRUE(image_id.has_value());
  EXPECT_EQ(series[0].at("tag"), image_id->substr(0, 12));
  EXPECT_EQ(series[0].at("tag").rfind("sha256:", 0), 0u);
}

// Runs `docker plugin disable/set/enable`, and puts LOKI_URL back (empty) at the end.
class PluginSettings : public SkaldTest {
 protected:
  void TearDown() override {
    if (!changed_) return;
    guard_.RemoveAll();  // a container that used the plugin may keep it "in use"
    // Restore the plugin-wide default, whatever happened in the test.
    Docker({"plugin", "disable", driver_}, 60s);
    auto set = Docker({"plugin", "set", driver_, "LOKI_URL="}, 60s);
    auto en = Docker({"plugin", "enable", "--timeout", "0", driver_}, 120s);
    EXPECT_TRUE(set.ok()) << "could not restore LOKI_URL: " << set.Describe();
    EXPECT_TRUE(en.ok()) << "could not re-enable the plugin: " << en.Describe();
  }

  // disable, set KEY=VALUE, enable --timeout 0.
  ::testing::AssertionResult SetPluginEnv(const std::string& kv) {
    auto dis = Docker({"plugin", "disable", driver_}, 60s);
    if (!dis.ok()) {
      return ::testing::AssertionFailure()
             << "docker plugin disable failed (are other containers using the plugin?): "
             << dis.Describe();
    }
    changed_ = true;
    auto set = Docker({"plugin", "set", driver_, kv}, 60s);
    auto en = Docker({"plugin", "enable", "--timeout", "0", driver_}, 120s);
    if (!set.ok()) return ::testing::AssertionFailure() << set.Describe();
    if (!en.ok()) return ::testing::AssertionFailure() << en.Describe();
    return ::testing::AssertionSuccess();
  }

  bool changed_ = false;
};

TEST_F(PluginSettings, LokiUrlSetOnThePluginServesAContainerThatGivesNone) {
  ASSERT_TRUE(SetPluginEnv("LOKI_URL=" + loki().PushUrl()));
  const std::string name = NewContainer();
  auto run = Docker(RunArgs(name, {}, {"loggen", "--lines", "500"}, /*loki_url=*/""), 60s);
  ASSERT_TRUE(run.ok()) << run.Describe();
  EXPECT_EQ(loki().WaitForCount(Selector(name), 500, 60s), 500u);
}

// `skald check --plugin NAME` reads the installed plugin's settings from the real daemon: a
// LOKI_URL set on the plugin makes a check without loki-url pass (without --plugin it fails),
// the setting is named and its password never printed, and a typo is still an error.
TEST_F(PluginSettings, CheckWithPluginSeesThePluginWideSettingsOfTheRealDaemon) {
  const std::string skald = E2eEnv::Get().Bundle() + "/rootfs/usr/bin/skald";
  const std::string password = "S3cr3t-" + skald::testkit::RandomHex(12);
  std::string url = loki().PushUrl();
  url.insert(url.find("://") + 3, "skald:" + password + "@");
  ASSERT_TRUE(SetPluginEnv("LOKI_URL=" + url));

  auto alone = RunCommand({skald, "check"}, 60s);
  EXPECT_EQ(alone.exit_code, 1) << "a check without loki-url passed: " << alone.Describe();
  EXPECT_NE((alone.out + alone.err).find("loki-url"), std::string::npos) << alone.Describe();

  auto with = RunCommand({skald, "check", "--plugin", driver_}, 60s);
  EXPECT_EQ(with.exit_code, 0) << with.Describe();
  EXPECT_NE((with.out + with.err).find("LOKI_URL"), std::string::npos)
      << "the plugin-wide setting used is not named: " << with.Describe();

  auto typo =
      RunCommand({skald, "check", "--plugin", driver_, "--log-opt", "loki-batch-sise=400"}, 60s);
  EXPECT_EQ(typo.exit_code, 1) << typo.Describe();
  EXPECT_NE((typo.out + typo.err).find("did you mean 'loki-batch-size'"), std::string::npos)
      << typo.Describe();

  auto missing = RunCommand({skald, "check", "--plugin", "no-such-plugin-" + password}, 60s);
  EXPECT_NE(missing.exit_code, 0) << "an unknown plugin was accepted: " << missing.Describe();
  for (const CommandResult* r : {&with, &typo}) {
    EXPECT_EQ((r->out + r->err).find(password), std::string::npos)
        << "the password of LOKI_URL was printed: " << r->Describe();
  }
}

}  // namespace
}  // namespace skald::e2e
