#include "pipeline_stages/pipeline.h"

#include <chrono>
#include <cstdio>
#include <fstream>

#include "tests/pipeline_stages/stage_test_util.h"
#include "tests/tools/yaml_alias_bomb.h"

namespace skald::stages {
namespace {

using ::testing::HasSubstr;
using testkit::BuildError;
using testkit::FakeClock;
using testkit::MakeEntry;

TEST(Pipeline, EmptyPipelinePassesEntriesThrough) {
  auto p = Pipeline::FromYaml("");
  EXPECT_TRUE(p->empty());
  std::vector<Entry> out;
  p->Process(MakeEntry("x", LabelSet{{"a", "b"}}), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line, "x");
}

TEST(Pipeline, FromFileReadsTopLevelPipelineStages) {
  const std::string path = ::testing::TempDir() + "/stages.yaml";
  {
    std::ofstream f(path);
    f << "pipeline_stages:\n  - static_labels: {env: prod}\n";
  }
  auto p = Pipeline::FromFile(path);
  std::vector<Entry> out;
  p->Process(MakeEntry("x"), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].labels.Get("env"), "prod");
  std::remove(path.c_str());
}

TEST(Pipeline, FromFileNeedsPipelineStagesKey) {
  const std::string path = ::testing::TempDir() + "/stages_bad.yaml";
  {
    std::ofstream f(path);
    f << "- static_labels: {env: prod}\n";
  }
  try {
    Pipeline::FromFile(path);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("expected a top-level pipeline_stages: list"));
    EXPECT_THAT(e.what(), HasSubstr(path));
  }
  std::remove(path.c_str());
}

TEST(Pipeline, FromFileMissingFileIsAConfigError) {
  EXPECT_THROW(Pipeline::FromFile("/nonexistent/stages.yaml"), ConfigError);
}

TEST(Pipeline, ExtractedDoesNotLeakIntoOutputOrNextEntry) {
  FakeClock clock;
  auto p = Pipeline::FromYaml(R"(
- regex: {expression: 'k=(?P<k>\w+)'}
- labels: {k: }
)",
                              nullptr, &clock);
  std::vector<Entry> out;
  p->Process(MakeEntry("k=1"), out);
  p->Process(MakeEntry("nothing"), out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].labels.Get("k"), "1");
  EXPECT_FALSE(out[1].labels.Contains("k"));
  EXPECT_EQ(out[0].extracted.Find("k"), nullptr);
}

TEST(Pipeline, FlushReleasesHeldEntriesWhenTheirTimeComes) {
  FakeClock clock;
  auto p = Pipeline::FromYaml("- multiline: {firstline: '^S', max_wait_time: 2s}", nullptr, &clock);
  std::vector<Entry> out;
  p->Process(MakeEntry("S1"), out);
  p->Process(MakeEntry("cont"), out);
  EXPECT_TRUE(out.empty());
  clock.Advance(1'000'000'000);
  p->Flush(clock.NowNs(), false, out);
  EXPECT_TRUE(out.empty());
  clock.Advance(1'000'000'000);
  p->Flush(clock.NowNs(), false, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line, "S1\ncont");
}

TEST(Pipeline, HoldsWhileAStageKeepsEntriesItTook) {
  FakeClock clock;
  auto p = Pipeline::FromYaml(R"(
- json: {expressions: {level: level}}
- match:
    selector: '{job="x"}'
    stages:
      - multiline: {firstline: '^S', max_wait_time: 2s}
)",
                              nullptr, &clock);
  std::vector<Entry> out;
  EXPECT_FALSE(p->Holds());
  p->Process(MakeEntry("S1", LabelSet{{"job", "x"}}), out);
  EXPECT_TRUE(p->Holds()) << "the nested multiline holds its block";
  p->Process(MakeEntry("not matched", LabelSet{{"job", "y"}}), out);
  EXPECT_TRUE(p->Holds());
  ASSERT_EQ(out.size(), 1u);
  clock.Advance(3'000'000'000);
  p->Flush(clock.NowNs(), false, out);
  EXPECT_FALSE(p->Holds()) << "the block left at max_wait_time";
  EXPECT_EQ(out.size(), 2u);

  auto limited = Pipeline::FromYaml("- limit: {rate: 1, burst: 1, drop: false}", nullptr, &clock);
  limited->Process(MakeEntry("a"), out);
  EXPECT_FALSE(limited->Holds()) << "within the burst";
  limited->Process(MakeEntry("b"), out);
  EXPECT_TRUE(limited->Holds()) << "over the rate: held";
  limited->Flush(clock.NowNs(), true, out);
  EXPECT_FALSE(limited->Holds());
}

TEST(Pipeline, FinalFlushEmitsEverything) {
  FakeClock clock;
  auto p = Pipeline::FromYaml(R"(
- multiline: {firstline: '^S'}
- limit: {rate: 1, burst: 1}
)",
                              nullptr, &clock);
  std::vector<Entry> out;
  for (const char* l : {"S1", "S2", "S3", "S4"}) p->Process(MakeEntry(l), out);
  p->Flush(clock.NowNs(), true, out);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[3].line, "S4");
}

TEST(Pipeline, ErrorsNameUnknownStagesWithSuggestion) {
  EXPECT_THAT(BuildError("- labes: {a: }"),
              HasSubstr("pipeline stage 1: unknown stage \"labes\" (did you mean labels?)"));
  EXPECT_THAT(BuildError("- timestmp: {}"), HasSubstr("did you mean timestamp?"));
}

TEST(Pipeline, EveryBrokenStageIsReportedAtOnce) {
  try {
    Pipeline::FromYaml(
        "- labes: {a: }\n"
        "- json: {expressions: {a: a}}\n"
        "- match:\n"
        "    selector: '{a=\"b\"}'\n"
        "    stages:\n"
        "      - regex: {expression: '(?P<x>'}\n"
        "- timestamp: {source: a}\n");
    FAIL() << "broken stages accepted";
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.problems().size(), 3u) << e.what();
    EXPECT_THAT(e.problems()[0], HasSubstr("pipeline stage 1: unknown stage \"labes\""));
    EXPECT_THAT(e.problems()[1], HasSubstr("pipeline stage 3 (match) > stage 1 (regex)"));
    EXPECT_THAT(e.problems()[2], HasSubstr("pipeline stage 4 (timestamp)"));
    EXPECT_THAT(e.what(), HasSubstr("; "));
  }
}

TEST(Pipeline, ABoundStopsTheBuildAtOnce) {
  // An alias bomb: the stage count bound ends the build with one message, not one per stage.
  std::string yaml = "- &a {static_labels: {x: y}}\n";
  for (int i = 0; i < 2000; ++i) yaml += "- *a\n";
  try {
    Pipeline::FromYaml(yaml);
    FAIL() << "too many stages accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.problems().size(), 1u);
    EXPECT_THAT(e.what(), HasSubstr("more than"));
  }
}

TEST(Pipeline, ErrorForScalarItem) {
  EXPECT_THAT(BuildError("- docker\n"),
              HasSubstr("\"docker\" is a plain string; a stage is a map with one key"));
}

TEST(Pipeline, ErrorForTwoKeys) {
  EXPECT_THAT(BuildError("- docker: {}\n  cri: {}\n"), HasSubstr("has 2 keys (docker, cri)"));
}

// Found by stage_yaml_fuzz: a key that is a list or a map (`{ !cri: {} }`, `[a]: x`) escaped
// as yaml-cpp's TypedBadConversion ("bad conversion"), naming no stage or field.
TEST(Pipeline, KeysThatAreListsOrMapsAreConfigErrorsNamingTheStage) {
  EXPECT_THAT(BuildError("- cri: { {a: b}: {}}"),
              HasSubstr("pipeline stage 1 (cri): unknown field \"{a: b}\""));
  EXPECT_THAT(BuildError("- json: {expressions: {[a]: a}}"),
              HasSubstr("pipeline stage 1 (json): an extracted key must be a string, got [a]"));
  EXPECT_THAT(BuildError("- labels: {{a: 1}: }"),
              HasSubstr("pipeline stage 1 (labels): a label name must be a string, got {a: 1}"));
  EXPECT_THAT(BuildError("- logfmt: {mapping: {[k]: v}}"),
              HasSubstr("pipeline stage 1 (logfmt): an extracted key must be a string"));
  EXPECT_THAT(BuildError("- static_labels: {[x]: y}"),
              HasSubstr("pipeline stage 1 (static_labels): a label name must be a string"));
  EXPECT_THAT(BuildError("- metrics: {[m]: {type: Counter}}"),
              HasSubstr("pipeline stage 1 (metrics): a metric name must be a string"));
  EXPECT_THAT(BuildError("- {[docker]: {}}"), HasSubstr("unknown stage \"[docker]\""));
  EXPECT_THAT(BuildError("- docker: {}\n  [x]: {}\n"), HasSubstr("has 2 keys (docker, [x])"));
  EXPECT_THAT(BuildError("{[a]: b}"),
              HasSubstr("expected a top-level pipeline_stages: list, found keys [a]"));
}

TEST(Pipeline, EventlogmessageIsRefused) {
  EXPECT_THAT(BuildError("- eventlogmessage: {}"),
              HasSubstr("the eventlogmessage stage is not supported by skald"));
}

TEST(Pipeline, NonIndexedLabelsIsTheOldNameOfStructuredMetadata) {
  auto out =
      testkit::RunOne("- non_indexed_labels: {pod: }", MakeEntry("x", LabelSet{{"pod", "p"}}));
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].structured_metadata.size(), 1u);
  EXPECT_EQ(out[0].structured_metadata[0].name, "pod");
}

// 776 bytes whose aliases nest 8 deep, 10 uses each: 1.1 * 10^8 stages if each alias were built
// at every use (minutes and gigabytes). Counting stages as they are built stops at the bound.
TEST(Pipeline, AYamlAliasBombIsRefusedAtOnce) {
  const std::string yaml = skald::testkit::YamlAliasBomb();
  EXPECT_LT(yaml.size(), 800u);
  const auto start = std::chrono::steady_clock::now();
  const std::string error = BuildError(yaml);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_THAT(error, HasSubstr("the pipeline has more than 1000 stages (those inside match "
                               "stages count, and a YAML alias counts at every use); at most "
                               "1000 are accepted"));
  EXPECT_THAT(error, ::testing::StartsWith("pipeline stage 4 (match) > stage "));
  EXPECT_LT(took, std::chrono::milliseconds(200));
}

TEST(Pipeline, AThousandStagesAreAccepted) {
  std::string yaml;
  for (int i = 0; i < 998; ++i) yaml += "- static_labels: {a: b}\n";
  yaml += "- match: {selector: '{a=\"b\"}', stages: [{static_labels: {c: d}}]}\n";
  EXPECT_EQ(BuildError(yaml), "");  // 1000 with the stage inside the match
  EXPECT_EQ(BuildError(yaml + "- static_labels: {e: f}\n"),
            "pipeline stage 1000: the pipeline has more than 1000 stages (those inside match "
            "stages count, and a YAML alias counts at every use); at most 1000 are accepted");
}

std::string NestedMatches(int n) {
  std::string yaml = "{static_labels: {a: b}}";
  for (int i = 0; i < n; ++i) yaml = "{match: {selector: '{a=\"b\"}', stages: [" + yaml + "]}}";
  return "- " + yaml + "\n";
}

TEST(Pipeline, MatchStagesNestAtMostSixteenDeep) {
  auto p = Pipeline::FromYaml(NestedMatches(16));
  std::vector<Entry> out;
  p->Process(MakeEntry("x", LabelSet{{"a", "b"}}), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].labels.Get("a"), "b");
  std::string where = "pipeline stage 1 (match)";
  for (int i = 1; i < 17; ++i) where += " > stage 1 (match)";
  EXPECT_EQ(BuildError(NestedMatches(17)),
            where + " > stages: match stages nest 17 deep here; at most 16 are accepted");
}

// yaml-cpp lets an anchored node contain its own alias: a match stage inside itself.
TEST(Pipeline, AMatchStageContainingItselfIsRefused) {
  EXPECT_THAT(BuildError("- &m {match: {selector: '{a=\"b\"}', stages: [*m]}}\n"),
              HasSubstr("match stages nest 17 deep here; at most 16 are accepted"));
}

}  // namespace
}  // namespace skald::stages
