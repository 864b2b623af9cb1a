#include "plugin/cli/config_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace skald {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

const std::string kUrl = "http://127.0.0.1:3100/loki/api/v1/push";

ConfigCheckResult Check(std::map<std::string, std::string> opts,
                        std::map<std::string, std::string> env = {}) {
  ConfigCheckInput in;
  in.log_opts = std::move(opts);
  in.env_defaults = std::move(env);
  return CheckLoggingConfig(in);
}

TEST(ConfigCheck, GoodOptionsPass) {
  ConfigCheckResult r = Check({{"loki-url", kUrl}});
  EXPECT_THAT(r.errors, IsEmpty());
  EXPECT_THAT(r.warnings, IsEmpty());
  EXPECT_TRUE(r.options.has_value());
}

TEST(ConfigCheck, TypoBadValueAndBrokenStageAreAllReported) {
  // A bad option does not hide a broken stage: the stages are still built with the options
  // that are good.
  ConfigCheckResult r = Check({{"loki-url", kUrl},
                               {"loki-batch-sise", "400"},
                               {"loki-retries", "many"},
                               {"loki-pipeline-stages",
                                "- json: {expressions: {level: level}}\n"
                                "- labes: {level: }\n"}});
  EXPECT_THAT(r.errors,
              ElementsAre(HasSubstr("'loki-batch-sise' (did you mean 'loki-batch-size'?)"),
                          AllOf(HasSubstr("loki-retries"), HasSubstr("many")),
                          AllOf(HasSubstr("loki-pipeline-stages"),
                                HasSubstr("unknown stage \"labes\" (did you mean labels?)"))));
  EXPECT_FALSE(r.options.has_value());
}

TEST(ConfigCheck, LintFindingsAreWarnings) {
  ConfigCheckResult r =
      Check({{"loki-url", kUrl},
             {"loki-pipeline-stages", "- json: {expressions: {level: level, msg: msg}}\n"}});
  EXPECT_THAT(r.errors, IsEmpty());
  EXPECT_THAT(r.warnings,
              ElementsAre(AllOf(HasSubstr("log-opt loki-pipeline-stages"),
                                HasSubstr("pipeline stage 1 (json)"), HasSubstr("does nothing"))));
  EXPECT_TRUE(r.options.has_value());
}

TEST(ConfigCheck, MissingUrlIsAnErrorUnlessThePluginGivesOne) {
  EXPECT_THAT(CheckLoggingConfig({}).errors, ElementsAre(HasSubstr("loki-url")));
  EXPECT_THAT(Check({}, {{"loki-url", kUrl}}).errors, IsEmpty());
}

TEST(ConfigCheck, SecretsNeverAppear) {
  ConfigCheckResult r = Check({{"loki-url", "http://bob:hunter2@127.0.0.1:3100/loki/api/v1/push"},
                               {"loki-bearer-token", "s3cr3t-token"},
                               {"loki-batch-size", "lots"}});
  ASSERT_FALSE(r.errors.empty());
  for (const std::string& e : r.errors) {
    EXPECT_THAT(e, AllOf(Not(HasSubstr("hunter2")), Not(HasSubstr("s3cr3t-token"))));
  }
}

TEST(ConfigCheck, FilesAreLookedUpWhereThePluginKeepsThemOnTheHost) {
  const auto host = std::filesystem::path(::testing::TempDir()) / "skald-check-host";
  std::filesystem::create_directories(host / "files");
  std::ofstream(host / "files" / "stages.yaml") << "pipeline_stages:\n  - json: {expressions: "
                                                   "{a: a}}\n  - output: {source: a}\n";
  ConfigCheckInput in;
  in.log_opts = {{"loki-url", kUrl},
                 {"loki-pipeline-stage-file", "/var/lib/skald/files/stages.yaml"},
                 {"loki-bearer-token-file", "/var/lib/skald/files/absent"}};
  in.state_dir = "/var/lib/skald";
  in.host_state_dir = host.string();
  ConfigCheckResult r = CheckLoggingConfig(in);
  // The stage file is found under the host directory; the token file is missing there.
  EXPECT_THAT(r.errors, ElementsAre(AllOf(HasSubstr("loki-bearer-token-file"),
                                          HasSubstr((host / "files" / "absent").string()))));
  EXPECT_THAT(r.warnings, IsEmpty());
  std::filesystem::remove_all(host);
}

}  // namespace
}  // namespace skald
