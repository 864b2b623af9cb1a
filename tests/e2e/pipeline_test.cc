// Pipeline stages end to end: pino-style JSON through the STAGES.md example, into the real Loki.
#include <gtest/gtest.h>

#include <string>

#include "tests/e2e/e2e_support.h"

namespace skald::e2e {
namespace {

class Pipeline : public SkaldTest {};

TEST_F(Pipeline, PinoJsonBecomesLevelAndContextLabelsMsgLineAndTraceMetadata) {
  constexpr int kLines = 2000;
  const std::string stages = R"(
- json:
    expressions:
      output: msg
      level: level
      timestamp: time
      pid: pid
      hostname: hostname
      context: context
      traceID: traceID
- labels:
    level:
    context:
- structured_metadata:
    traceID:
- output:
    source: output
)";
  const std::string name = NewContainer();
  auto run =
      Docker(RunArgs(name, {"loki-pipeline-stages=" + stages},
                     {"loggen", "--lines", std::to_string(kLines), "--json", "--prefix", "PIPE"}),
             120s);
  ASSERT_TRUE(run.ok()) << run.Describe();

  const std::string sel = Selector(name);
  ASSERT_EQ(loki().WaitForCount(sel, kLines, 60s), uint64_t{kLines});

  // level and context are stream labels; the trace ID is not (it would make a stream per line).
  auto series = loki().Series(sel);
  ASSERT_FALSE(series.empty());
  uint64_t total = 0;
  for (auto& labels : series) {
    EXPECT_FALSE(labels["level"].empty());
    EXPECT_FALSE(labels["context"].empty());
    EXPECT_EQ(labels.count("traceID"), 0u) << "traceID became a stream label";
    total += loki().Count(Selector(name, "level=" + LogqlQuote(labels["level"]) +
                                             ", context=" + LogqlQuote(labels["context"])));
  }
  EXPECT_EQ(total, uint64_t{kLines});

  // The line is the msg field, not the JSON.
  auto entries = loki().QueryAll(sel);
  ASSERT_EQ(entries.size(), size_t{kLines});
  for (const auto& e : entries) {
    ASSERT_EQ(e.line.rfind("PIPE request handled GET /api/v1/items/", 0), 0u) << e.line;
  }

  // Every entry carries the trace ID as structured metadata (filterable after the selector).
  EXPECT_EQ(loki().Count(sel + " | traceID=~\"[0-9a-f]{32}\""), uint64_t{kLines});
}

TEST_F(Pipeline, ABadPipelineFailsDockerRunNamingTheStage) {
  const std::string name = NewContainer();
  auto run = Docker(RunArgs(name, {"loki-pipeline-stages=- jsonn:\n    expressions: {}\n"},
                            {"loggen", "--lines", "1"}),
                    60s);
  EXPECT_FALSE(run.ok());
  EXPECT_NE((run.out + run.err).find("jsonn"), std::string::npos) << run.Describe();
  EXPECT_NE((run.out + run.err).find("loki-pipeline-stages"), std::string::npos) << run.Describe();
}

}  // namespace
}  // namespace skald::e2e
