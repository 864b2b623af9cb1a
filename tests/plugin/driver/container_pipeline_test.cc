#include "plugin/driver/container_pipeline.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace skald {
namespace {

class RecordingObserver : public stages::PipelineObserver {
 public:
  void EntryDropped(std::string_view reason) override { drops.emplace_back(reason); }
  void CounterAdd(const stages::MetricDesc&, const stages::LabelSet&, double) override {}
  void GaugeSet(const stages::MetricDesc&, const stages::LabelSet&, double) override {}
  void GaugeAdd(const stages::MetricDesc&, const stages::LabelSet&, double) override {}
  void HistogramObserve(const stages::MetricDesc&, const stages::LabelSet&, double) override {}
  std::vector<std::string> drops;
};

ContainerInfo Info() {
  ContainerInfo i;
  i.container_id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  i.container_name = "/api";
  return i;
}

std::vector<LogLine> Lines(std::vector<std::pair<LogSource, std::string>> in) {
  std::vector<LogLine> out;
  int64_t t = 1;
  for (auto& [source, text] : in) out.push_back({source, t++, text});
  return out;
}

TEST(ContainerPipeline, WithoutStagesEachSourceHasItsSelector) {
  RecordingObserver observer;
  ContainerPipeline p(ParseLogOptions({{"loki-url", "http://l/x"}}, {}), Info(), "node1",
                      &observer);
  EXPECT_FALSE(p.has_stages());
  auto lines = Lines({{LogSource::kStdout, "out"}, {LogSource::kStderr, "err"}});
  std::vector<LokiEntry> out;
  p.Process(lines, 0, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].labels.view(), R"({container_name="api", host="node1", source="stdout"})");
  EXPECT_EQ(out[1].labels.view(), R"({container_name="api", host="node1", source="stderr"})");
  EXPECT_EQ(out[1].line, "err");
  EXPECT_EQ(out[1].timestamp_ns, 2);
}

TEST(ContainerPipeline, StagesSetLabelsMetadataAndTenant) {
  RecordingObserver observer;
  ContainerPipeline p(ParseLogOptions({{"loki-url", "http://l/x"}, {"loki-pipeline-stages", R"(
- json: {expressions: {level: level, trace: trace, org: org}}
- labels: {level: }
- structured_metadata: {trace: }
- tenant: {source: org}
)"}},
                                      {}),
                      Info(), "", &observer);
  ASSERT_TRUE(p.has_stages());
  auto lines = Lines({{LogSource::kStdout, R"({"level":"info","trace":"t1","org":"acme"})"},
                      {LogSource::kStdout, "not json"}});
  std::vector<LokiEntry> out;
  p.Process(lines, 7, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].labels.view(), R"({container_name="api", level="info", source="stdout"})");
  EXPECT_EQ(out[1].labels.view(), R"({container_name="api", source="stdout"})");
  ASSERT_EQ(out[0].structured_metadata.size(), 1u);
  EXPECT_EQ(out[0].structured_metadata[0].second, "t1");
  EXPECT_EQ(out[0].tenant, "acme");
  EXPECT_TRUE(observer.drops.empty());
}

TEST(ContainerPipeline, EntriesLokiWouldRefuseAreDroppedAsInvalidLabels) {
  RecordingObserver observer;
  ContainerPipeline p(ParseLogOptions({{"loki-url", "http://l/x"}, {"loki-pipeline-stages", R"(
- match:
    selector: '{source="stderr"}'
    stages:
    - labeldrop: [container_name, source]
)"}},
                                      {}),
                      Info(), "", &observer);
  auto lines = Lines({{LogSource::kStderr, "no labels left"}, {LogSource::kStdout, "kept"}});
  std::vector<LokiEntry> out;
  p.Process(lines, 0, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line, "kept");
  EXPECT_EQ(observer.drops, std::vector<std::string>{"invalid_labels"});
}

TEST(ContainerPipeline, HeldEntriesNameTheirBatchAndFlushReleasesThem) {
  RecordingObserver observer;
  ContainerPipeline p(ParseLogOptions({{"loki-url", "http://l/x"},
                                       {"loki-pipeline-stages",
                                        "- multiline: {firstline: '^START', max_wait_time: 1h}"}},
                                      {}),
                      Info(), "", &observer);
  auto lines = Lines({{LogSource::kStdout, "START a"}, {LogSource::kStdout, "  more"}});
  std::vector<LokiEntry> out;
  p.Process(lines, 3, out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(p.OldestHeldOrigin(), std::optional<uint64_t>(3));
  EXPECT_GT(p.HeldBytes(), 0u);
  p.Flush(0, /*final=*/true, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line, "START a\n  more");
  EXPECT_EQ(p.OldestHeldOrigin(), std::nullopt);
}

// `source` is a label before the stages, so multiline keeps stdout's and stderr's blocks apart
// (as the Go driver, whose Promtail stages keep a block per label set).
TEST(ContainerPipeline, MultilineNeverJoinsStderrIntoAStdoutBlock) {
  RecordingObserver observer;
  ContainerPipeline p(ParseLogOptions({{"loki-url", "http://l/x"},
                                       {"loki-pipeline-stages",
                                        "- multiline: {firstline: '^START', max_wait_time: 1h}"}},
                                      {}),
                      Info(), "", &observer);
  auto lines = Lines({{LogSource::kStdout, "START 1"},
                      {LogSource::kStderr, "warning a"},
                      {LogSource::kStdout, "  1.1"},
                      {LogSource::kStderr, "warning b"},
                      {LogSource::kStdout, "START 2"},
                      {LogSource::kStdout, "  2.1"}});
  std::vector<LokiEntry> out;
  p.Process(lines, 0, out);
  p.Flush(0, /*final=*/true, out);
  std::vector<std::pair<std::string, std::string>> got;
  for (const LokiEntry& e : out) got.emplace_back(std::string(e.labels.view()), e.line);
  const std::string out_labels = R"({container_name="api", source="stdout"})";
  const std::string err_labels = R"({container_name="api", source="stderr"})";
  EXPECT_EQ(got,
            (std::vector<std::pair<std::string, std::string>>{{err_labels, "warning a"},
                                                              {err_labels, "warning b"},
                                                              {out_labels, "START 1\n  1.1"},
                                                              {out_labels, "START 2\n  2.1"}}));
}

TEST(ContainerPipeline, ARelabelDropSendsNothing) {
  RecordingObserver observer;
  ContainerPipeline p(ParseLogOptions({{"loki-url", "http://l/x"}, {"loki-relabel-config", R"(
- source_labels: [container_name]
  regex: api
  action: drop
)"}},
                                      {}),
                      Info(), "", &observer);
  EXPECT_TRUE(p.dropped_by_relabel());
  auto lines = Lines({{LogSource::kStdout, "x"}});
  std::vector<LokiEntry> out;
  p.Process(lines, 0, out);
  EXPECT_TRUE(out.empty());
}

// As in Promtail's client, the __tenant_id__ label chooses the tenant and is not sent: set by a
// relabel rule for the whole container, or by a stage (static_labels, labels, tenant) per entry.
TEST(ContainerPipeline, TheTenantLabelChoosesTheTenantAndIsNotSent) {
  RecordingObserver observer;
  const std::string relabel = R"(
- target_label: __tenant_id__
  replacement: team-a
)";
  ContainerPipeline plain(
      ParseLogOptions({{"loki-url", "http://l/x"}, {"loki-relabel-config", relabel}}, {}), Info(),
      "", &observer);
  ContainerPipeline staged(ParseLogOptions({{"loki-url", "http://l/x"},
                                            {"loki-relabel-config", relabel},
                                            {"loki-pipeline-stages", R"(
- match:
    selector: '{container_name="api"} |= "other"'
    stages:
      - static_labels: {__tenant_id__: team-b}
)"}},
                                           {}),
                           Info(), "", &observer);
  std::vector<LokiEntry> out;
  auto lines = Lines({{LogSource::kStdout, "one"}});
  plain.Process(lines, 0, out);
  lines = Lines({{LogSource::kStdout, "two"}, {LogSource::kStdout, "other"}});
  staged.Process(lines, 0, out);
  ASSERT_EQ(out.size(), 3u);
  for (const LokiEntry& e : out) {
    EXPECT_EQ(e.labels.view(), R"({container_name="api", source="stdout"})") << e.line;
  }
  EXPECT_EQ(out[0].tenant, "team-a");
  EXPECT_EQ(out[1].tenant, "team-a");
  EXPECT_EQ(out[2].tenant, "team-b");

  try {
    ContainerPipeline bad(ParseLogOptions({{"loki-url", "http://l/x"}, {"loki-relabel-config", R"(
- target_label: __tenant_id__
  replacement: "a b"
)"}},
                                          {}),
                          Info(), "", &observer);
    FAIL() << "a tenant Loki refuses was accepted";
  } catch (const OptionError& e) {
    EXPECT_NE(std::string(e.what()).find("__tenant_id__"), std::string::npos) << e.what();
  }
}

TEST(ContainerPipeline, ABadStageNamesTheOption) {
  try {
    ContainerPipeline p(
        ParseLogOptions({{"loki-url", "http://l/x"}, {"loki-pipeline-stages", "- jsn: {}"}}, {}),
        Info(), "", nullptr);
    FAIL() << "built";
  } catch (const OptionError& e) {
    EXPECT_NE(std::string(e.what()).find("loki-pipeline-stages"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("did you mean"), std::string::npos) << e.what();
  }
}

// A stage's file (geoip's db) is a path inside the plugin: the error says so, and where a path
// under STATE_DIR is on the host when the plugin runs managed (not in this test).
TEST(ContainerPipeline, AGeoipDatabaseThatCannotBeOpenedNamesTheOptionStageAndPath) {
  try {
    ContainerPipeline p(ParseLogOptions({{"loki-url", "http://l/x"},
                                         {"loki-pipeline-stages",
                                          "- geoip: {db: /var/lib/skald/files/GeoLite2-City.mmdb, "
                                          "source: ip, db_type: city}"}},
                                        {}),
                        Info(), "", nullptr);
    FAIL() << "built";
  } catch (const OptionError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "invalid log-opt loki-pipeline-stages: pipeline stage 1 (geoip): field \"db\": "
                  "cannot open \"/var/lib/skald/files/GeoLite2-City.mmdb\" (inside the plugin)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace skald
