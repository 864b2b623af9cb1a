#include "plugin/cli/dry_run.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "plugin/cli/config_check.h"

namespace skald {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kUrl = "http://127.0.0.1:3100/loki/api/v1/push";

std::string DryRunOf(std::map<std::string, std::string> opts, const std::string& lines,
                     std::size_t* sent = nullptr, LogSource source = LogSource::kStdout) {
  opts["loki-url"] = kUrl;
  ConfigCheckResult checked = CheckLoggingConfig([&] {
    ConfigCheckInput c;
    c.log_opts = opts;
    return c;
  }());
  EXPECT_TRUE(checked.errors.empty()) << ::testing::PrintToString(checked.errors);
  if (!checked.options) return "";
  DryRunInput in;
  in.options = *checked.options;
  in.log_opts = opts;
  in.source = source;
  in.start_ns = 1764612000000000000;
  std::istringstream input(lines);
  std::ostringstream out;
  std::size_t n = DryRun(in, input, out);
  if (sent) *sent = n;
  return out.str();
}

TEST(DryRun, PinoLinesShowLabelsTimestampLineAndMetadata) {
  const std::string stages =
      "- json:\n"
      "    expressions: {level: level, time: time, msg: msg, traceID: traceID}\n"
      "- template:\n"
      "    source: level\n"
      "    template: '{{ if eq .Value \"30\" }}info{{ else if eq .Value \"50\" }}error{{ end }}'\n"
      "- labels: {level: }\n"
      "- structured_metadata: {trace_id: traceID}\n"
      "- timestamp: {source: time, format: UnixMs}\n"
      "- output: {source: msg}\n";
  std::size_t sent = 0;
  std::string out = DryRunOf(
      {{"loki-pipeline-stages", stages}, {"loki-external-labels", "job=api"}},
      R"({"level":30,"time":1764612000123,"pid":7,"hostname":"h","context":"http","traceID":"abc123","msg":"request done"})"
      "\n"
      R"({"level":50,"time":1764612000456,"pid":7,"hostname":"h","context":"db","traceID":"def456","msg":"query failed"})"
      "\n",
      &sent);
  EXPECT_EQ(sent, 2u) << out;
  EXPECT_THAT(out, HasSubstr("level=\"info\""));
  EXPECT_THAT(out, HasSubstr("level=\"error\""));
  EXPECT_THAT(out, HasSubstr("job=\"api\""));
  EXPECT_THAT(out, HasSubstr("source=\"stdout\""));
  EXPECT_THAT(out, HasSubstr("time:     2025-12-01T18:00:00.123Z"));
  EXPECT_THAT(out, HasSubstr("line:     \"request done\""));
  EXPECT_THAT(out, HasSubstr("metadata: trace_id=\"abc123\""));
  EXPECT_THAT(out, HasSubstr("2 lines in, 2 entries would be sent"));
}

TEST(DryRun, DropsAndHeldLinesSayWhy) {
  std::size_t sent = 0;
  std::string out = DryRunOf({{"loki-pipeline-stages",
                               "- drop: {expression: '^DEBUG', drop_counter_reason: debug_noise}\n"
                               "- multiline: {firstline: '^START'}\n"}},
                             "DEBUG x\nSTART a\n  more\nSTART b\n", &sent);
  EXPECT_THAT(out, HasSubstr("dropped (debug_noise)"));
  EXPECT_THAT(out, HasSubstr("held by a stage"));
  EXPECT_THAT(out, HasSubstr("end of input: what the stages held"));
  EXPECT_THAT(out, HasSubstr("\"START a\\n  more\""));
  EXPECT_EQ(sent, 2u) << out;
}

TEST(DryRun, StderrLinesAndInvalidTenant) {
  // The tenant comes from the line: a container can write one Loki refuses.
  std::string out = DryRunOf(
      {{"loki-pipeline-stages", "- regex: {expression: '^(?P<t>\\S+)'}\n- tenant: {source: t}\n"}},
      "bad/../tenant oops\n", nullptr, LogSource::kStderr);
  EXPECT_THAT(out, HasSubstr("source=\"stderr\""));
  EXPECT_THAT(out, HasSubstr("Loki refuses it"));
  EXPECT_THAT(out, HasSubstr("0 entries would be sent"));
}

TEST(DryRun, FormatsTimes) {
  EXPECT_EQ(FormatRfc3339Utc(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatRfc3339Utc(1500000001), "1970-01-01T00:00:01.500000001Z");
  EXPECT_EQ(FormatRfc3339Utc(-1), "1969-12-31T23:59:59.999999999Z");
}

}  // namespace
}  // namespace skald
