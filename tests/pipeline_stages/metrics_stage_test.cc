#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using ::testing::HasSubstr;
using testkit::BuildError;
using testkit::FakeClock;
using testkit::RecordingObserver;
using testkit::RunLines;

TEST(MetricsStage, CounterIncCountsEntriesWithTheSource) {
  RecordingObserver obs;
  RunLines(R"(
- regex: {expression: 'level=(?P<level>\w+)'}
- metrics:
    lines:
      type: Counter
      description: lines with a level
      source: level
      config: {action: inc}
)",
           {"level=info", "no level", "level=warn"}, LabelSet{{"app", "a"}}, &obs);
  EXPECT_EQ(obs.values["promtail_custom_lines{app=\"a\"}"], 2);
  ASSERT_EQ(obs.declared.size(), 1u);
  EXPECT_EQ(obs.declared[0].description, "lines with a level");
}

TEST(MetricsStage, CounterValueFiltersOnEquality) {
  RecordingObserver obs;
  RunLines(R"(
- regex: {expression: 'level=(?P<level>\w+)'}
- metrics:
    errors: {type: Counter, source: level, prefix: app_, config: {value: error, action: inc}}
)",
           {"level=error", "level=info", "level=error"}, {}, &obs);
  EXPECT_EQ(obs.values["app_errors{}"], 2);
}

TEST(MetricsStage, CounterAddUsesNumericValueAndSkipsNonNumbers) {
  RecordingObserver obs;
  RunLines(R"(
- regex: {expression: 'bytes=(?P<bytes>\S+)'}
- metrics:
    bytes_total: {type: Counter, source: bytes, config: {action: add}}
)",
           {"bytes=10", "bytes=x", "bytes=2.5"}, {}, &obs);
  EXPECT_DOUBLE_EQ(obs.values["promtail_custom_bytes_total{}"], 12.5);
}

TEST(MetricsStage, CounterMatchAllWithEntryBytes) {
  RecordingObserver obs;
  RunLines(R"(
- metrics:
    bytes: {type: Counter, config: {match_all: true, count_entry_bytes: true, action: add}}
    lines: {type: Counter, config: {match_all: true, action: inc}}
)",
           {"abc", "de"}, {}, &obs);
  EXPECT_EQ(obs.values["promtail_custom_bytes{}"], 5);
  EXPECT_EQ(obs.values["promtail_custom_lines{}"], 2);
}

TEST(MetricsStage, GaugeActions) {
  RecordingObserver obs;
  RunLines(R"(
- regex: {expression: 'q=(?P<q>\S+)'}
- metrics:
    queue_set: {type: Gauge, source: q, config: {action: set}}
    queue_add: {type: Gauge, source: q, config: {action: add}}
    queue_inc: {type: Gauge, source: q, config: {action: inc}}
    queue_sub: {type: Gauge, source: q, config: {action: sub}}
)",
           {"q=5", "q=3"}, {}, &obs);
  EXPECT_EQ(obs.values["promtail_custom_queue_set{}"], 3);
  EXPECT_EQ(obs.values["promtail_custom_queue_add{}"], 8);
  EXPECT_EQ(obs.values["promtail_custom_queue_inc{}"], 2);
  EXPECT_EQ(obs.values["promtail_custom_queue_sub{}"], -8);
}

TEST(MetricsStage, HistogramObservesWithBuckets) {
  RecordingObserver obs;
  RunLines(R"(
- regex: {expression: 't=(?P<t>\S+)'}
- metrics:
    latency: {type: Histogram, source: t, config: {buckets: [0.1, 1, 10]}}
)",
           {"t=0.5", "t=2"}, {}, &obs);
  EXPECT_EQ(obs.observations["promtail_custom_latency{}"], (std::vector<double>{0.5, 2}));
  ASSERT_EQ(obs.declared.size(), 1u);
  EXPECT_EQ(obs.declared[0].buckets, (std::vector<double>{0.1, 1, 10}));
}

// Promtail accepts a histogram without `config` (default buckets, every numeric value).
TEST(MetricsStage, AHistogramNeedsNoConfig) {
  RecordingObserver obs;
  RunLines("- regex: {expression: 't=(?P<latency>\\S+)'}\n- metrics: {latency: {type: Histogram}}",
           {"t=0.5", "t=x"}, {}, &obs);
  EXPECT_EQ(obs.observations["promtail_custom_latency{}"], (std::vector<double>{0.5}));
  ASSERT_EQ(obs.declared.size(), 1u);
  EXPECT_EQ(obs.declared[0].buckets.size(), 11u);
}

// Values are floats: a gauge set from "0.25", a counter adding "2.5"; an empty bucket list means
// Prometheus' defaults (as Promtail's client library takes it).
TEST(MetricsStage, ValuesAreFloats) {
  RecordingObserver obs;
  RunLines(R"(
- regex: {expression: 'v=(?P<v>\S+)'}
- metrics:
    ratio: {type: Gauge, source: v, config: {action: set}}
    total: {type: Counter, source: v, config: {action: add}}
    took: {type: Histogram, source: v, config: {buckets: []}}
)",
           {"v=0.25", "v=2.5"}, {}, &obs);
  EXPECT_DOUBLE_EQ(obs.values["promtail_custom_ratio{}"], 2.5);
  EXPECT_DOUBLE_EQ(obs.values["promtail_custom_total{}"], 2.75);
  EXPECT_EQ(obs.observations["promtail_custom_took{}"], (std::vector<double>{0.25, 2.5}));
  ASSERT_EQ(obs.declared.size(), 3u);
  EXPECT_EQ(obs.declared[2].buckets.size(), 11u);
}

// As Promtail's getFloatFromString: a leading + is a number, and text that is not a number is
// tried as a Go duration, in seconds ("250ms" is 0.25); anything else is not recorded.
TEST(MetricsStage, DurationsAreSecondsAsInPromtail) {
  RecordingObserver obs;
  RunLines(R"(
- regex: {expression: 'took=(?P<took>\S+)'}
- metrics:
    took: {type: Histogram, source: took, config: {buckets: [1]}}
)",
           {"took=250ms", "took=1m30s", "took=+2", "took=1.5h", "took=-3us", "took=fast"}, {},
           &obs);
  EXPECT_EQ(obs.observations["promtail_custom_took{}"],
            (std::vector<double>{0.25, 90, 2, 5400, -0.000003}));
}

TEST(MetricsStage, WithoutObserverEntriesStillFlow) {
  auto out = RunLines("- metrics: {c: {type: Counter, config: {action: inc}}}", {"x"});
  EXPECT_EQ(out.size(), 1u);
}

TEST(MetricsStage, ErrorsNameMetricAndField) {
  EXPECT_THAT(BuildError("- metrics: {m: {type: Summary, config: {action: inc}}}"),
              HasSubstr("pipeline stage 1 (metrics): metric \"m\": field \"type\": \"Summary\" is "
                        "not a metric type"));
  EXPECT_THAT(BuildError("- metrics: {m: {type: Counter, config: {action: set}}}"),
              HasSubstr("\"set\" is not a counter action; expected inc or add"));
  EXPECT_THAT(BuildError("- metrics: {m: {type: Gauge, config: {action: bump}}}"),
              HasSubstr("expected set, inc, dec, add or sub"));
  EXPECT_THAT(BuildError("- metrics: {m: {type: Histogram, config: {buckets: [2, 1]}}}"),
              HasSubstr("field \"buckets\": must be in increasing order"));
  EXPECT_THAT(BuildError("- metrics: {m: {type: Histogram, config: {buckets: [1, nan]}}}"),
              HasSubstr("field \"buckets\": \"nan\" is not a number"));
  EXPECT_THAT(BuildError("- metrics: {m-x: {type: Counter, config: {action: inc}}}"),
              HasSubstr("metric name \"promtail_custom_m-x\" is invalid"));
  EXPECT_THAT(BuildError("- metrics: {m: {type: Counter, config: {match_all: true, "
                         "value: x, action: inc}}}"),
              HasSubstr("field \"match_all\": cannot be combined with value"));
}

TEST(MetricsStage, NamesStartingWithSkaldAreReserved) {
  EXPECT_EQ(BuildError("- metrics: {lines_read_total: {type: Counter, prefix: skald_, "
                       "config: {action: inc}}}"),
            "pipeline stage 1 (metrics): metric \"lines_read_total\": metric name "
            "\"skald_lines_read_total\" is reserved: names starting with skald_ are the "
            "plugin's own metrics; choose another name or prefix");
  EXPECT_EQ(BuildError("- metrics: {skald_x: {type: Gauge, prefix: my_, config: {action: set}}}"),
            "");
}

// The observer gets one declaration per metric, naming the owner and the stage, and each lives
// exactly as long as the pipeline (also one that failed to build after declaring).
TEST(MetricsStage, DeclarationsLiveAsLongAsThePipeline) {
  RecordingObserver obs;
  FakeClock clock;
  PipelineOptions options;
  options.observer = &obs;
  options.clock = &clock;
  options.owner = "container web";
  constexpr char kYaml[] = R"(
- metrics:
    a: {type: Counter, config: {action: inc}}
    b: {type: Gauge, config: {action: set}}
- match:
    selector: '{app="x"}'
    stages:
    - metrics: {c: {type: Histogram}}
)";
  {
    auto p = Pipeline::FromYaml(kYaml, options);
    EXPECT_EQ(obs.live_declarations, 3);
    EXPECT_EQ(obs.declared_by, (std::vector<std::string>{
                                   "container web, pipeline stage 1 (metrics)",
                                   "container web, pipeline stage 1 (metrics)",
                                   "container web, pipeline stage 2 (match) > stage 1 (metrics)",
                               }));
  }
  EXPECT_EQ(obs.live_declarations, 0);
  EXPECT_THROW(Pipeline::FromYaml(std::string(kYaml) + "- jsn: {}\n", options), ConfigError);
  EXPECT_EQ(obs.declared.size(), 6u);
  EXPECT_EQ(obs.live_declarations, 0);
}

// An observer may refuse a declaration: the build fails naming the stage and the metric.
TEST(MetricsStage, ARefusedDeclarationFailsTheBuild) {
  class Refusing final : public PipelineObserver {
   public:
    void EntryDropped(std::string_view) override {}
    std::unique_ptr<MetricDeclaration> DeclareMetric(const MetricDesc& d,
                                                     std::string_view by) override {
      throw ConfigError(d.name + " is taken (asked by " + std::string(by) + ")");
    }
    void CounterAdd(const MetricDesc&, const LabelSet&, double) override {}
    void GaugeSet(const MetricDesc&, const LabelSet&, double) override {}
    void GaugeAdd(const MetricDesc&, const LabelSet&, double) override {}
    void HistogramObserve(const MetricDesc&, const LabelSet&, double) override {}
  } refusing;
  try {
    Pipeline::FromYaml("- metrics: {m: {type: Counter, config: {action: inc}}}", &refusing);
    FAIL() << "built";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "pipeline stage 1 (metrics): metric \"m\": promtail_custom_m is taken (asked by "
                 "pipeline stage 1 (metrics))");
  }
}

// Promtail's rules: 5m when not given, and nothing under 1s.
TEST(MetricsStage, MaxIdleDurationDefaultsToFiveMinutesAndIsAtLeastOneSecond) {
  RecordingObserver obs;
  RunLines(R"(
- metrics:
    a: {type: Counter, config: {action: inc}}
    b: {type: Gauge, max_idle_duration: 1h, config: {action: set}}
)",
           {}, {}, &obs);
  ASSERT_EQ(obs.declared.size(), 2u);
  EXPECT_EQ(obs.declared[0].max_idle_duration_ns, 300'000'000'000);
  EXPECT_EQ(obs.declared[1].max_idle_duration_ns, 3'600'000'000'000);
  EXPECT_EQ(BuildError("- metrics: {m: {type: Counter, max_idle_duration: 500ms, "
                       "config: {action: inc}}}"),
            "pipeline stage 1 (metrics): metric \"m\": field \"max_idle_duration\": \"500ms\" "
            "is less than 1s; expected e.g. 30s or 1h (default 5m)");
}

}  // namespace
}  // namespace skald::stages
