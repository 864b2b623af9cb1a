// Pipeline stages end to end: pino-style JSON through the STAGES.md example, into the real Loki.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
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

// multiline keeps a block per label set, and `source` is a label before the stages: stderr
// lines written while a stdout block is open never join it (they pass through: stderr has no
// firstline). Each stderr line is written between two lines of a block, with a pause, so that
// it reaches the plugin while the block is open.
TEST_F(Pipeline, MultilineKeepsStderrLinesOutOfStdoutBlocks) {
  constexpr int kBlocks = 20;
  const std::string script =
      "i=1; while [ $i -le " + std::to_string(kBlocks) +
      " ]; do echo \"START $i\"; echo \"  at $i.1\"; usleep 20000; echo \"ERR $i\" >&2;"
      " usleep 20000; echo \"  at $i.2\"; i=$((i+1)); done";
  const std::string name = NewContainer();
  auto run = Docker(RunArgs(name, {"loki-pipeline-stages=- multiline: {firstline: '^START'}"},
                            {"sh", "-c", script}),
                    120s);
  ASSERT_TRUE(run.ok()) << run.Describe();

  const std::string out_sel = Selector(name, "source=\"stdout\"");
  const std::string err_sel = Selector(name, "source=\"stderr\"");
  ASSERT_EQ(loki().WaitForCount(out_sel, kBlocks, 60s), uint64_t{kBlocks});
  ASSERT_EQ(loki().WaitForCount(err_sel, kBlocks, 60s), uint64_t{kBlocks});

  std::set<std::string> blocks;
  for (const auto& e : loki().QueryAll(out_sel)) {
    EXPECT_EQ(e.line.find("ERR"), std::string::npos) << "a stderr line in a stdout block:\n"
                                                     << e.line;
    blocks.insert(e.line);
  }
  for (int i = 1; i <= kBlocks; ++i) {
    const std::string n = std::to_string(i);
    EXPECT_EQ(blocks.count("START " + n + "\n  at " + n + ".1\n  at " + n + ".2"), 1u)
        << "block " << n << " is not whole";
  }
  std::set<std::string> errors;
  for (const auto& e : loki().QueryAll(err_sel)) errors.insert(e.line);
  for (int i = 1; i <= kBlocks; ++i) {
    EXPECT_EQ(errors.count("ERR " + std::to_string(i)), 1u) << "stderr line " << i;
  }
}

// geoip reads a MaxMind database put in the plugin's files directory (the test database of
// tests/pipeline_stages/geoip, documentation addresses); a database not there fails docker run
// naming the stage, the field, the path and where it would be on the host.
TEST_F(Pipeline, GeoipLabelsFromADatabaseInThePluginsFilesDirectory) {
  const auto mount = PluginPropagatedMount();
  ASSERT_TRUE(mount) << "the plugin's propagated mount was not found";
  const std::string file = UniqueName("geoip") + ".mmdb";
  const std::filesystem::path host = std::filesystem::path(*mount) / "files" / file;
  std::filesystem::create_directories(host.parent_path());
  std::filesystem::copy_file(SourceDir() + "/tests/pipeline_stages/geoip/city.mmdb", host);
  struct RemoveFile {
    std::filesystem::path path;
    ~RemoveFile() { std::filesystem::remove(path); }
  } remove_file{host};
  auto stages = [](const std::string& db) {
    return "loki-pipeline-stages=- regex: {expression: '^(?P<ip>\\S+) '}\n"
           "- geoip: {db: " +
           db + ", source: ip, db_type: city}\n";
  };

  const std::string name = NewContainer();
  auto run = Docker(RunArgs(name, {stages("/var/lib/skald/files/" + file)},
                            {"sh", "-c", "echo '192.0.2.44 GET /'; echo '2001:db8::9 GET /x'"}),
                    120s);
  ASSERT_TRUE(run.ok()) << run.Describe();
  const std::string sel = Selector(name);
  ASSERT_EQ(loki().WaitForCount(sel, 2, 60s), 2u);
  EXPECT_EQ(loki().Count(Selector(name,
                                  "geoip_city_name=\"London\", geoip_country_name=\"United "
                                  "Kingdom\", geoip_subdivision_code=\"WSM\"")),
            1u);
  EXPECT_EQ(
      loki().Count(Selector(name, "geoip_city_name=\"Tokyo\", geoip_timezone=\"Asia/Tokyo\"")), 1u);

  const std::string missing = NewContainer();
  auto refused =
      Docker(RunArgs(missing, {stages("/var/lib/skald/files/not-there.mmdb")}, {"echo", "x"}), 60s);
  EXPECT_FALSE(refused.ok());
  const std::string said = refused.out + refused.err;
  for (const char* part : {"(geoip)", "field \"db\"", "/var/lib/skald/files/not-there.mmdb",
                           "propagated-mount/files/not-there.mmdb", "No such file"}) {
    EXPECT_NE(said.find(part), std::string::npos) << part << " not in: " << said;
  }
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
