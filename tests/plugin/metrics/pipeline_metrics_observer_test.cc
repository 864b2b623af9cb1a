#include "plugin/metrics/pipeline_metrics_observer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pipeline_stages/common/config_error.h"
#include "pipeline_stages/pipeline.h"
#include "tests/tools/prometheus_text_parser.h"

namespace skald {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Metrics stages as two containers would write them: one name, two types.
constexpr char kCounter[] = R"(
- metrics:
    hits: {type: Counter, config: {match_all: true, action: inc}}
)";
constexpr char kGauge[] = R"(
- regex: {expression: 'n=(?P<hits>\d+)'}
- metrics:
    hits: {type: Gauge, config: {action: set}}
)";

class PipelineMetricsObserverTest : public ::testing::Test {
 protected:
  std::unique_ptr<stages::Pipeline> Build(std::string_view yaml, std::string owner) {
    stages::PipelineOptions options;
    options.observer = &observer_;
    options.owner = std::move(owner);
    return stages::Pipeline::FromYaml(yaml, options);
  }
  std::string BuildError(std::string_view yaml, std::string owner) {
    try {
      Build(yaml, std::move(owner));
    } catch (const stages::ConfigError& e) {
      return e.what();
    }
    return "";
  }
  static void Run(stages::Pipeline& p, const std::vector<std::string>& lines,
                  const std::string& app) {
    std::vector<stages::Entry> out;
    for (const std::string& line : lines) {
      stages::Entry e;
      e.line = line;
      e.labels = stages::LabelSet{{"app", app}};
      p.Process(std::move(e), out);
    }
  }

  MetricsRegistry metrics_;
  PipelineMetricsObserver observer_{metrics_};
};

TEST_F(PipelineMetricsObserverTest, ASecondTypeForANameIsRefusedNamingBothDeclarations) {
  auto a = Build(kCounter, "container a (aaa)");
  Run(*a, {"x", "y"}, "a");
  EXPECT_EQ(BuildError(kGauge, "container b (bbb)"),
            "pipeline stage 2 (metrics): metric \"hits\": metric name promtail_custom_hits is "
            "already a counter, declared by container a (aaa), pipeline stage 1 (metrics); here "
            "it would be a gauge. A metric name has one type across all containers while one "
            "that declared it runs: rename one of them (the metric's name or its prefix)");
  Run(*a, {"z"}, "a");
  // Another container declaring the same type shares the metric.
  auto c = Build(kCounter, "container c (ccc)");
  Run(*c, {"x"}, "c");
  const std::string text = metrics_.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("# TYPE promtail_custom_hits counter\n"
                              "promtail_custom_hits{app=\"a\"} 3\n"
                              "promtail_custom_hits{app=\"c\"} 1\n"));
}

TEST_F(PipelineMetricsObserverTest, ANameIsFreedWhenItsLastDeclarationIsDestroyed) {
  auto a1 = Build(kCounter, "container a1");
  auto a2 = Build(kCounter, "container a2");
  Run(*a1, {"x"}, "a1");
  a1.reset();
  EXPECT_THAT(BuildError(kGauge, "container b"),
              HasSubstr("declared by container a2, pipeline stage 1 (metrics)"));
  a2.reset();
  // The counter keeps its series while no other type wants the name.
  EXPECT_THAT(metrics_.RenderPrometheus(), HasSubstr("promtail_custom_hits{app=\"a1\"} 1\n"));
  auto b = Build(kGauge, "container b");
  Run(*b, {"n=42"}, "b");
  const std::string text = metrics_.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("# TYPE promtail_custom_hits gauge\n"
                              "promtail_custom_hits{app=\"b\"} 42\n"));
  EXPECT_THAT(text, Not(HasSubstr("app=\"a1\"")));
}

TEST_F(PipelineMetricsObserverTest, AHistogramsFamiliesAreTakenNames) {
  auto h = Build("- metrics:\n    latency: {type: Histogram}\n", "container h");
  EXPECT_THAT(
      BuildError("- metrics:\n    latency_count: {type: Counter, config: {action: inc}}\n",
                 "container c"),
      HasSubstr("metric name promtail_custom_latency_count is already a family of the histogram "
                "promtail_custom_latency (exported as promtail_custom_latency_bucket, "
                "promtail_custom_latency_count and promtail_custom_latency_sum), declared by "
                "container h, pipeline stage 1 (metrics); here it would be a counter."));
  EXPECT_THAT(
      BuildError("- metrics:\n    latency_bucket: {type: Gauge, config: {action: set}}\n", "g"),
      HasSubstr("metric name promtail_custom_latency_bucket is already a family of the histogram "
                "promtail_custom_latency"));
  EXPECT_THAT(
      BuildError("- metrics:\n    latency: {type: Gauge, config: {action: set}}\n", "container g"),
      HasSubstr("metric name promtail_custom_latency is already a histogram"));
  // And the other way round: a histogram whose families a counter has.
  auto c = Build("- metrics:\n    wait_sum: {type: Counter, config: {action: inc}}\n", "c");
  EXPECT_THAT(BuildError("- metrics:\n    wait: {type: Histogram}\n", "container w"),
              HasSubstr("metric name promtail_custom_wait_sum is already a counter, declared by "
                        "c, pipeline stage 1 (metrics); here it would be a family of the "
                        "histogram promtail_custom_wait"));
}

// Declarations made before a later stage failed are withdrawn with the half-built pipeline, and
// two metrics stages of one pipeline are held to one type as well.
TEST_F(PipelineMetricsObserverTest, AFailedBuildWithdrawsItsDeclarations) {
  EXPECT_THAT(BuildError(std::string(kGauge) + "- jsn: {}\n", "container a"),
              HasSubstr("unknown stage \"jsn\""));
  EXPECT_THAT(BuildError(std::string(kGauge) + kCounter, "container a"),
              HasSubstr("pipeline stage 3 (metrics): metric \"hits\": metric name "
                        "promtail_custom_hits is already a gauge, declared by container a, "
                        "pipeline stage 2 (metrics); here it would be a counter"));
  auto c = Build(kCounter, "container c");
  Run(*c, {"x"}, "c");
  EXPECT_THAT(metrics_.RenderPrometheus(), HasSubstr("# TYPE promtail_custom_hits counter\n"
                                                     "promtail_custom_hits{app=\"c\"} 1\n"));
}

// max_idle_duration reaches the registry: a container's series leave /metrics once it has not
// updated them for that long (the default is Promtail's 5m).
TEST_F(PipelineMetricsObserverTest, SeriesLeaveAfterTheMetricsMaxIdleDuration) {
  int64_t now = 1'000'000'000'000;
  metrics_.SetClockForTesting([&now] { return now; });
  auto p = Build(R"(
- metrics:
    hits: {type: Counter, max_idle_duration: 30s, config: {match_all: true, action: inc}}
    lines: {type: Counter, config: {match_all: true, action: inc}}
)",
                 "container a");
  Run(*p, {"x"}, "gone");
  now += 20'000'000'000;
  Run(*p, {"x"}, "here");
  now += 15'000'000'000;
  std::string text = metrics_.RenderPrometheus();
  EXPECT_THAT(text, Not(HasSubstr("promtail_custom_hits{app=\"gone\"}")));
  EXPECT_THAT(text, HasSubstr("promtail_custom_hits{app=\"here\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("promtail_custom_lines{app=\"gone\"} 1\n"));
  now += 300'000'000'000;
  EXPECT_THAT(metrics_.RenderPrometheus(), Not(HasSubstr("promtail_custom_lines{")));
}

// A label per request id would grow /metrics without bound: a metric keeps 1000 label sets, and
// updates of further ones are counted by metric. The kept ones go on counting.
TEST_F(PipelineMetricsObserverTest, AMetricKeepsAtMostAThousandLabelSets) {
  auto p = Build(kCounter, "container a");
  for (int i = 0; i < 1003; ++i) Run(*p, {"line"}, "app" + std::to_string(i));
  Run(*p, {"line"}, "app0");
  const std::string text = metrics_.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("promtail_custom_hits{app=\"app0\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("promtail_custom_hits{app=\"app999\"} 1\n"));
  EXPECT_THAT(text, Not(HasSubstr("app=\"app1000\"")));
  EXPECT_THAT(text,
              HasSubstr("skald_metric_updates_dropped_total{metric=\"promtail_custom_hits\"} 3\n"));
  std::size_t series = 0;
  for (std::size_t at = 0; (at = text.find("\npromtail_custom_hits{", at)) != std::string::npos;
       ++at) {
    ++series;
  }
  EXPECT_EQ(series, 1000u);
}

TEST_F(PipelineMetricsObserverTest, StageFailuresAreCountedByStageAndReason) {
  auto p = Build(R"(
- regex: {expression: '(?P<n>\d+)'}
- template: {source: n, template: '{{ repeat 700000 .Value }}'}
)",
                 "container a");
  Run(*p, {"12", "7", "34"}, "a");  // 1.4 MB, 700 kB, 1.4 MB
  EXPECT_THAT(
      metrics_.RenderPrometheus(),
      HasSubstr("skald_stage_errors_total{stage=\"template\",reason=\"output_too_long\"} 2\n"));
}

// Promtail's metrics are floats: a gauge set from "0.25", a counter adding "2.5", a histogram
// counting in the stage's buckets. They reach /metrics as such.
TEST_F(PipelineMetricsObserverTest, StageMetricsKeepFloatValuesAndHistogramBuckets) {
  auto p = Build(R"(
- logfmt: {mapping: {load: load, bytes: bytes, took: took}}
- metrics:
    load: {type: Gauge, description: current load, config: {action: set}}
    bytes: {type: Counter, config: {action: add}}
    took: {type: Histogram, description: request time, config: {buckets: [0.1, 0.5, 1]}}
)",
                 "container a");
  Run(*p,
      {"load=0.25 bytes=2.5 took=0.05", "bytes=0.125 took=0.5", "took=0.7", "took=3",
       "took=x load=y"},
      "a");
  const std::string text = metrics_.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("# HELP promtail_custom_load current load\n"
                              "# TYPE promtail_custom_load gauge\n"
                              "promtail_custom_load{app=\"a\"} 0.25\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE promtail_custom_bytes counter\n"
                              "promtail_custom_bytes{app=\"a\"} 2.625\n"));
  EXPECT_THAT(text, HasSubstr("# HELP promtail_custom_took request time\n"
                              "# TYPE promtail_custom_took histogram\n"
                              "promtail_custom_took_bucket{app=\"a\",le=\"0.1\"} 1\n"
                              "promtail_custom_took_bucket{app=\"a\",le=\"0.5\"} 2\n"
                              "promtail_custom_took_bucket{app=\"a\",le=\"1\"} 3\n"
                              "promtail_custom_took_bucket{app=\"a\",le=\"+Inf\"} 4\n"
                              "promtail_custom_took_sum{app=\"a\"} 4.25\n"
                              "promtail_custom_took_count{app=\"a\"} 4\n"));
  EXPECT_NO_THROW(testkit::ParsePrometheusText(text));
}

// Two containers may share a histogram only with the same buckets while both run.
TEST_F(PipelineMetricsObserverTest, AHistogramHasOneSetOfBuckets) {
  auto a = Build("- metrics:\n    took: {type: Histogram, config: {buckets: [1, 2]}}\n", "a");
  EXPECT_EQ(BuildError("- metrics:\n    took: {type: Histogram, config: {buckets: [1, 5]}}\n", "b"),
            "pipeline stage 1 (metrics): metric \"took\": metric name promtail_custom_took is "
            "already a histogram with buckets [1, 2], declared by a, pipeline stage 1 (metrics); "
            "here its buckets would be [1, 5]. A histogram has one set of buckets across all "
            "containers while one that declared it runs: give them the same buckets, or rename "
            "one of them");
  auto same = Build("- metrics:\n    took: {type: Histogram, config: {buckets: [1, 2]}}\n", "c");
  a.reset();
  same.reset();
  // Once none runs, new buckets replace the metric.
  auto b = Build("- metrics:\n    took: {type: Histogram, config: {buckets: [1, 5]}}\n", "b");
  EXPECT_THAT(metrics_.RenderPrometheus(), Not(HasSubstr("le=\"2\"")));
}

}  // namespace
}  // namespace skald
