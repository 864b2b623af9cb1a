#include "pipeline_stages/pipeline_lint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pipeline_stages/pipeline.h"

namespace skald::stages {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<std::string> Lint(std::string_view yaml) {
  return LintPipeline(Pipeline::StagesFromYaml(yaml));
}

TEST(PipelineLint, ParserWhoseFieldsNobodyReadsDoesNothing) {
  // A pino json stage pasted without the labels or output after it.
  EXPECT_THAT(Lint("- json: {expressions: {level: level, msg: msg}}\n"),
              ElementsAre(AllOf(HasSubstr("pipeline stage 1 (json)"), HasSubstr("does nothing"),
                                HasSubstr("\"level\", \"msg\""))));
}

TEST(PipelineLint, FieldsReadLaterAreFine) {
  EXPECT_THAT(Lint("- json: {expressions: {level: level, msg: msg, ts: time}}\n"
                   "- labels: {level: }\n"
                   "- timestamp: {source: ts, format: UnixMs}\n"
                   "- output: {source: msg}\n"),
              IsEmpty());
}

TEST(PipelineLint, SomeFieldsUnusedAreNamed) {
  auto findings = Lint(
      "- regex: {expression: '^(?P<level>\\w+) (?P<pid>\\d+) (?P<rest>.*)$'}\n"
      "- labels: {severity: level}\n");
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0], AllOf(HasSubstr("pipeline stage 1 (regex)"),
                                 HasSubstr("extracts \"pid\", \"rest\" but no later stage")));
}

TEST(PipelineLint, TemplatesMetricsAndMatchCountAsReaders) {
  EXPECT_THAT(Lint("- logfmt: {mapping: {a: , b: , c: , d: }}\n"
                   "- match:\n"
                   "    selector: '{source=\"stdout\"}'\n"
                   "    stages:\n"
                   "      - template: {source: out, template: '{{ .a }} {{ index . \"b\" }}'}\n"
                   "      - metrics: {lines: {type: Counter, source: c, config: {action: inc}}}\n"
                   "      - drop: {source: [d]}\n"
                   "      - output: {source: out}\n"),
              IsEmpty());
  // Inside a match stage, the stage is named by its path.
  auto findings = Lint(
      "- match:\n"
      "    selector: '{source=\"stdout\"}'\n"
      "    stages:\n"
      "      - json: {expressions: {x: x}}\n");
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0], HasSubstr("pipeline stage 1 (match) > stage 1 (json)"));
}

TEST(PipelineLint, ATemplateGivenTheWholeMapReadsEverything) {
  EXPECT_THAT(Lint("- json: {expressions: {a: a, b: b}}\n"
                   "- template: {source: out, template: '{{ toJson . }}'}\n"
                   "- output: {source: out}\n"),
              IsEmpty());
}

TEST(PipelineLint, IdLikeLabelBelongsInStructuredMetadata) {
  auto findings = Lint(
      "- json: {expressions: {level: level, traceID: traceID}}\n"
      "- labels: {level: , trace: traceID}\n");
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0], AllOf(HasSubstr("pipeline stage 2 (labels)"), HasSubstr("\"trace\""),
                                 HasSubstr("\"traceID\""), HasSubstr("structured_metadata")));
  EXPECT_THAT(Lint("- json: {expressions: {traceID: traceID}}\n"
                   "- structured_metadata: {trace_id: traceID}\n"),
              IsEmpty());
}

TEST(PipelineLint, IdNames) {
  for (const char* id : {"trace_id", "traceId", "span-id", "request_id", "X-Request-ID", "uuid",
                         "session_uuid", "id", "correlationId"}) {
    EXPECT_TRUE(LooksLikeAnId(id)) << id;
  }
  for (const char* not_id : {"level", "pid", "app", "idle", "service", "hostname"}) {
    EXPECT_FALSE(LooksLikeAnId(not_id)) << not_id;
  }
}

}  // namespace
}  // namespace skald::stages
