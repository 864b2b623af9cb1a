// Grafana's Go Docker driver's own tests (clients/cmd/docker-driver/config_test.go and
// loki_test.go of the pinned Loki v3.7.8), row by row, run against skald's option parsing and
// container pipeline. Each test names its Go test and row; the list of every Go test with its
// fate is tests/pipeline_stages/peer_corpus/docker_driver_*.yaml (checked against the Go files
// by tests/e2e/loki/check-corpus.sh).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "pipeline_stages/common/config_error.h"
#include "pipeline_stages/relabel.h"
#include "plugin/driver/container_pipeline.h"

namespace skald {
namespace {

using ::testing::HasSubstr;

constexpr const char* kUrl = "http://127.0.0.1:3100/loki/api/v1/push";

// config_test.go's jobRename.
constexpr const char* kJobRename = R"(
- regex: (.*)
  source_labels: [swarm_stack]
  target_label: job
- regex: ^swarm_stack$
  action: labeldrop)";

// config_test.go's pipelineString.
constexpr const char* kPipelineString = R"(
- regex:
     expression: '(level|lvl|severity)=(?P<level>\w+)'
- labels:
    level:
)";

ContainerInfo Info() {
  ContainerInfo i;
  i.container_id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  i.container_name = "/api";
  return i;
}

// The error ContainerPipeline (option parsing, then the relabel rules and stages) gives for
// these options, or "" when it takes them.
std::string ErrorOf(const std::map<std::string, std::string>& opts) {
  try {
    ContainerPipeline p(ParseLogOptions(opts, {}), Info(), "", nullptr);
    return "";
  } catch (const OptionError& e) {
    return e.what();
  }
}

// What the container's pipeline makes of one stdout line: its rendered stream labels.
std::string LabelsOf(const std::map<std::string, std::string>& opts, const std::string& line) {
  ContainerPipeline p(ParseLogOptions(opts, {}), Info(), "", nullptr);
  std::vector<LogLine> lines{{LogSource::kStdout, 1, line}};
  std::vector<LokiEntry> out;
  p.Process(lines, 0, out);
  p.Flush(1, true, out);
  return out.size() == 1 ? std::string(out[0].labels.view())
                         : "(" + std::to_string(out.size()) + " entries)";
}

TEST(GoDriverConfigTests, Test_relabelConfig_ConfigErr_NotYaml) {
  EXPECT_THROW(stages::RelabelConfig::FromYaml("foo"), stages::ConfigError);
  EXPECT_THAT(ErrorOf({{"loki-url", kUrl}, {"loki-relabel-config", "foo"}}),
              HasSubstr("loki-relabel-config"));
}

TEST(GoDriverConfigTests, Test_relabelConfig_JobRename) {
  stages::RelabelConfig relabel = stages::RelabelConfig::FromYaml(kJobRename);
  stages::LabelSet labels{{"swarm_stack", "foo"}, {"bar", "buzz"}};
  ASSERT_TRUE(relabel.Apply(labels));
  EXPECT_EQ(labels, (stages::LabelSet{{"job", "foo"}, {"bar", "buzz"}}));
}

TEST(GoDriverConfigTests, Test_parsePipeline_NoConfig) {
  ContainerPipeline p(ParseLogOptions({{"loki-url", kUrl}}, {}), Info(), "", nullptr);
  EXPECT_FALSE(p.has_stages());
}

TEST(GoDriverConfigTests, Test_parsePipeline_DoubleConfig) {
  EXPECT_THAT(
      ErrorOf({{"loki-url", kUrl}, {"loki-pipeline-stage-file", ""}, {"loki-pipeline-stages", ""}}),
      HasSubstr("only one of"));
}

TEST(GoDriverConfigTests, Test_parsePipeline_StringConfig) {
  EXPECT_EQ(LabelsOf({{"loki-url", kUrl}, {"loki-pipeline-stages", kPipelineString}}, "level=warn"),
            R"({container_name="api", level="warn", source="stdout"})");
}

TEST(GoDriverConfigTests, Test_parsePipeline_StringWrong) {
  EXPECT_THAT(ErrorOf({{"loki-url", kUrl}, {"loki-pipeline-stages", "pipelineString"}}),
              HasSubstr("loki-pipeline-stages"));
}

TEST(GoDriverConfigTests, Test_parsePipeline_FileConfig) {
  const auto file = std::filesystem::path(::testing::TempDir()) / "Test_parsePipeline.yaml";
  std::ofstream(file) << "pipeline_stages:\n" << kPipelineString;
  EXPECT_EQ(LabelsOf({{"loki-url", kUrl}, {"loki-pipeline-stage-file", file.string()}}, "lvl=warn"),
            R"({container_name="api", level="warn", source="stdout"})");
  std::filesystem::remove(file);
}

TEST(GoDriverConfigTests, Test_parsePipeline_FileWrong) {
  EXPECT_THAT(ErrorOf({{"loki-url", kUrl}, {"loki-pipeline-stage-file", "foo"}}),
              HasSubstr("loki-pipeline-stage-file"));
}

}  // namespace
}  // namespace skald
