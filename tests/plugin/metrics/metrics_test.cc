#include "plugin/metrics/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tests/tools/prometheus_text_parser.h"

namespace skald {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::size_t kUnlimited = std::numeric_limits<std::size_t>::max();

MetricsRegistry::FamilyOptions Options(MetricType type, std::string help, int64_t max_idle_ns = 0,
                                       std::size_t max_series = kUnlimited,
                                       std::vector<double> buckets = {}) {
  MetricsRegistry::FamilyOptions o;
  o.type = type;
  o.help = std::move(help);
  o.buckets = std::move(buckets);
  o.max_idle_ns = max_idle_ns;
  o.max_series = max_series;
  return o;
}

TEST(MetricsRegistry, RendersCountersAndGaugesWithTheirLabels) {
  MetricsRegistry m;
  m.GetCounter("c_total", "a counter", {{"reason", "x"}}).Add(3);
  m.GetGauge("g", "a gauge").Set(-2);
  const std::string text = m.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("# TYPE c_total counter\nc_total{reason=\"x\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE g gauge\ng -2\n"));
}

// A counter slot read from the gauge table (and the reverse) used to corrupt /metrics: one
// container's counter rendered as 94900707384240, or a SEGV under ASan.
TEST(MetricsRegistry, ANameKeepsTheKindItWasCreatedWith) {
  MetricsRegistry m;
  m.GetGauge("hits", "a gauge", {{"app", "a"}}).Set(7);
  try {
    m.GetCounter("hits", "a counter", {{"app", "b"}});
    FAIL() << "a counter under a gauge's name was handed out";
  } catch (const std::logic_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("hits is a gauge"));
  }
  m.GetCounter("misses", "a counter").Add(2);
  EXPECT_THROW(m.GetGauge("misses", "a gauge"), std::logic_error);
  const std::string text = m.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("# TYPE hits gauge\nhits{app=\"a\"} 7\n# HELP"));
  EXPECT_THAT(text, HasSubstr("# TYPE misses counter\nmisses 2\n"));
}

TEST(MetricsRegistry, DeclaredFamiliesAreUpdatedByNameAndCanBeRemoved) {
  MetricsRegistry m;
  m.DeclareFamily("hits", Options(MetricType::kCounter, "hits seen"));
  m.DeclareFamily("depth", Options(MetricType::kGauge, "queue depth"));
  EXPECT_EQ(m.CounterAdd("hits", {{"app", "a"}}, 2), MetricsRegistry::Update::kApplied);
  EXPECT_EQ(m.CounterAdd("hits", {{"app", "a"}}, 3), MetricsRegistry::Update::kApplied);
  EXPECT_EQ(m.GaugeSet("depth", {}, 9), MetricsRegistry::Update::kApplied);
  EXPECT_EQ(m.GaugeAdd("depth", {}, -2), MetricsRegistry::Update::kApplied);
  // Updates of the wrong kind or of an undeclared name are not applied anywhere.
  EXPECT_EQ(m.GaugeSet("hits", {{"app", "a"}}, 1), MetricsRegistry::Update::kNoFamily);
  EXPECT_EQ(m.CounterAdd("misses", {}, 1), MetricsRegistry::Update::kNoFamily);
  std::string text = m.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("# HELP hits hits seen\n# TYPE hits counter\nhits{app=\"a\"} 5\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE depth gauge\ndepth 7\n"));
  EXPECT_EQ(m.CounterTotal("hits"), 5u);

  m.DeclareFamily(
      "hits", Options(MetricType::kCounter, "other help"));  // the same kind again keeps the series
  EXPECT_THAT(m.RenderPrometheus(),
              HasSubstr("# HELP hits hits seen\n# TYPE hits counter\nhits{app=\"a\"} 5\n"));
  m.RemoveFamily("hits");
  text = m.RenderPrometheus();
  EXPECT_THAT(text, Not(HasSubstr("hits")));
  EXPECT_EQ(m.CounterAdd("hits", {{"app", "a"}}, 1), MetricsRegistry::Update::kNoFamily);
  m.DeclareFamily("hits", Options(MetricType::kGauge, "now a gauge"));
  EXPECT_EQ(m.GaugeSet("hits", {}, 4), MetricsRegistry::Update::kApplied);
  EXPECT_THAT(m.RenderPrometheus(), HasSubstr("# TYPE hits gauge\nhits 4\n"));
}

// A declared family may lose its series, so none is handed out by reference; and a family keeps
// its kind whichever way it was made.
TEST(MetricsRegistry, DeclaredAndReferenceFamiliesNeverShareAName) {
  MetricsRegistry m;
  m.DeclareFamily("hits", Options(MetricType::kCounter, "hits"));
  EXPECT_THROW(m.GetCounter("hits", "hits"), std::logic_error);
  EXPECT_THROW(m.DeclareFamily("hits", Options(MetricType::kGauge, "a gauge")), std::logic_error);
  m.GetCounter("skald_lines_read_total", "lines").Add();
  EXPECT_THROW(m.DeclareFamily("skald_lines_read_total", Options(MetricType::kCounter, "mine")),
               std::logic_error);
  m.RemoveFamily("skald_lines_read_total");  // only declared families can be removed
  EXPECT_THAT(m.RenderPrometheus(), HasSubstr("skald_lines_read_total 1\n"));
}

// A declared family's series not updated for max_idle_ns leave at the next render; the others
// and the reference families stay. (Promtail prunes on collection the same way.)
TEST(MetricsRegistry, IdleSeriesOfDeclaredFamiliesExpireAtRender) {
  MetricsRegistry m;
  int64_t now = 1'000'000'000'000;
  m.SetClockForTesting([&now] { return now; });
  m.DeclareFamily("hits", Options(MetricType::kCounter, "hits", 10'000'000'000));
  m.DeclareFamily("forever", Options(MetricType::kGauge, "no idle limit"));
  m.GetCounter("skald_lines_read_total", "lines").Add();
  m.CounterAdd("hits", {{"app", "old"}}, 1);
  m.CounterAdd("hits", {{"app", "busy"}}, 1);
  m.GaugeSet("forever", {}, 3);
  now += 6'000'000'000;
  m.CounterAdd("hits", {{"app", "busy"}}, 1);
  EXPECT_THAT(m.RenderPrometheus(), HasSubstr("hits{app=\"old\"} 1\n"));
  now += 4'000'000'000;  // "old" idle for 10 s, "busy" for 4 s
  std::string text = m.RenderPrometheus();
  EXPECT_THAT(text, Not(HasSubstr("app=\"old\"")));
  EXPECT_THAT(text, HasSubstr("hits{app=\"busy\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("forever 3\n"));
  EXPECT_THAT(text, HasSubstr("skald_lines_read_total 1\n"));
  // An expired series that comes back starts over.
  m.CounterAdd("hits", {{"app", "old"}}, 5);
  EXPECT_THAT(m.RenderPrometheus(), HasSubstr("hits{app=\"old\"} 5\n"));
  now += 3'600'000'000'000;
  text = m.RenderPrometheus();
  EXPECT_THAT(text, Not(HasSubstr("hits{")));
  EXPECT_THAT(text, HasSubstr("forever 3\n"));
}

// A declared family holds at most max_series label sets: a new one beyond is refused (kFull)
// unless idle series make room; the label sets it holds go on updating.
TEST(MetricsRegistry, ADeclaredFamilyHoldsAtMostMaxSeries) {
  MetricsRegistry m;
  int64_t now = 1'000'000'000'000;
  m.SetClockForTesting([&now] { return now; });
  m.DeclareFamily("hits", Options(MetricType::kCounter, "hits", 60'000'000'000, 2));
  using U = MetricsRegistry::Update;
  EXPECT_EQ(m.CounterAdd("hits", {{"app", "a"}}, 1), U::kApplied);
  EXPECT_EQ(m.CounterAdd("hits", {{"app", "b"}}, 1), U::kApplied);
  EXPECT_EQ(m.CounterAdd("hits", {{"app", "c"}}, 1), U::kFull);
  EXPECT_EQ(m.CounterAdd("hits", {{"app", "a"}}, 1), U::kApplied);
  std::string text = m.RenderPrometheus();
  EXPECT_THAT(text, ::testing::EndsWith("hits{app=\"a\"} 2\nhits{app=\"b\"} 1\n"));
  EXPECT_THAT(text, Not(HasSubstr("app=\"c\"")));
  now += 40'000'000'000;
  EXPECT_EQ(m.CounterAdd("hits", {{"app", "b"}}, 1), U::kApplied);
  now += 30'000'000'000;  // "a" idle for 70 s: it makes room without a scrape
  EXPECT_EQ(m.CounterAdd("hits", {{"app", "c"}}, 1), U::kApplied);
  text = m.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("hits{app=\"b\"} 2\nhits{app=\"c\"} 1\n"));
  EXPECT_THAT(text, Not(HasSubstr("app=\"a\"")));
}

TEST(MetricsRegistry, GaugesHoldFloats) {
  MetricsRegistry m;
  Gauge& g = m.GetGauge("ratio", "a ratio", {{"app", "a"}});
  g.Set(0.25);
  g.Add(0.5);
  m.GetGauge("big", "a big one").Set(2147483648.0);
  const std::string text = m.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("ratio{app=\"a\"} 0.75\n"));
  EXPECT_THAT(text, HasSubstr("big 2.147483648e+09\n"));  // as the Go client writes it
  EXPECT_DOUBLE_EQ(g.Value(), 0.75);
}

TEST(MetricsRegistry, HistogramsWriteCumulativeBucketsSumAndCount) {
  MetricsRegistry m;
  Histogram& ok =
      m.GetHistogram("req_seconds", "request latency", {0.1, 0.5, 1}, {{"status", "2xx"}});
  for (double v : {0.05, 0.1, 0.3, 0.7, 3.0}) ok.Observe(v);
  m.GetHistogram("req_seconds", "", {0.1, 0.5, 1}, {{"status", "5xx"}}).Observe(0.2);
  EXPECT_EQ(&m.GetHistogram("req_seconds", "", {0.1, 0.5, 1}, {{"status", "2xx"}}), &ok);
  EXPECT_EQ(m.RenderPrometheus(),
            "# HELP req_seconds request latency\n"
            "# TYPE req_seconds histogram\n"
            "req_seconds_bucket{status=\"2xx\",le=\"0.1\"} 2\n"
            "req_seconds_bucket{status=\"2xx\",le=\"0.5\"} 3\n"
            "req_seconds_bucket{status=\"2xx\",le=\"1\"} 4\n"
            "req_seconds_bucket{status=\"2xx\",le=\"+Inf\"} 5\n"
            "req_seconds_sum{status=\"2xx\"} 4.15\n"
            "req_seconds_count{status=\"2xx\"} 5\n"
            "req_seconds_bucket{status=\"5xx\",le=\"0.1\"} 0\n"
            "req_seconds_bucket{status=\"5xx\",le=\"0.5\"} 1\n"
            "req_seconds_bucket{status=\"5xx\",le=\"1\"} 1\n"
            "req_seconds_bucket{status=\"5xx\",le=\"+Inf\"} 1\n"
            "req_seconds_sum{status=\"5xx\"} 0.2\n"
            "req_seconds_count{status=\"5xx\"} 1\n");
}

TEST(MetricsRegistry, AHistogramKeepsItsBucketsAndItsWrittenNames) {
  MetricsRegistry m;
  m.GetHistogram("h", "h", {1, 2});
  EXPECT_THROW(m.GetHistogram("h", "h", {1, 3}), std::logic_error);
  EXPECT_THROW(m.GetHistogram("bad", "b", {2, 1}), std::invalid_argument);
  EXPECT_THROW(m.GetHistogram("nan", "n", {std::nan("")}), std::invalid_argument);
  // h writes h_bucket, h_sum and h_count: no other family may.
  for (const char* taken : {"h_bucket", "h_sum", "h_count"}) {
    EXPECT_THROW(m.GetCounter(taken, "c"), std::logic_error) << taken;
    EXPECT_THROW(m.DeclareFamily(taken, Options(MetricType::kGauge, "")), std::logic_error)
        << taken;
  }
  m.GetCounter("g_count", "c");
  EXPECT_THROW(m.GetHistogram("g", "g", {1}), std::logic_error);
  EXPECT_THROW(m.DeclareFamily("g", Options(MetricType::kHistogram, "", 0, kUnlimited, {1})),
               std::logic_error);
  // A trailing +Inf is the implied last bucket.
  m.GetHistogram("i", "i", {1, std::numeric_limits<double>::infinity()}).Observe(5);
  EXPECT_THAT(m.RenderPrometheus(),
              HasSubstr("i_bucket{le=\"1\"} 0\ni_bucket{le=\"+Inf\"} 1\ni_sum 5\ni_count 1\n"));
}

TEST(MetricsRegistry, DeclaredFamiliesTakeFloatsAndObservations) {
  MetricsRegistry m;
  m.DeclareFamily("bytes", Options(MetricType::kCounter, "bytes"));
  m.DeclareFamily("load", Options(MetricType::kGauge, "load"));
  m.DeclareFamily("lat", Options(MetricType::kHistogram, "latency", 0, kUnlimited, {0.1, 0.5, 1}));
  using U = MetricsRegistry::Update;
  EXPECT_EQ(m.CounterAdd("bytes", {}, 2.5), U::kApplied);
  EXPECT_EQ(m.CounterAdd("bytes", {}, 0.25), U::kApplied);
  EXPECT_EQ(m.CounterAdd("bytes", {}, -7), U::kApplied);  // a counter never goes down
  EXPECT_EQ(m.GaugeSet("load", {}, 0.25), U::kApplied);
  EXPECT_EQ(m.GaugeAdd("load", {}, -1.5), U::kApplied);
  for (double v : {0.05, 0.3, 0.7, 3.0})
    EXPECT_EQ(m.HistogramObserve("lat", {{"a", "b"}}, v), U::kApplied);
  EXPECT_EQ(m.HistogramObserve("load", {}, 1), U::kNoFamily);
  EXPECT_EQ(m.GaugeSet("lat", {}, 1), U::kNoFamily);
  // Declared again with other buckets: refused; with the same: kept.
  EXPECT_THROW(m.DeclareFamily("lat", Options(MetricType::kHistogram, "", 0, kUnlimited, {1})),
               std::logic_error);
  m.DeclareFamily("lat", Options(MetricType::kHistogram, "", 0, kUnlimited, {0.1, 0.5, 1}));
  const std::string text = m.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("# TYPE bytes counter\nbytes 2.75\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE load gauge\nload -1.25\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE lat histogram\n"
                              "lat_bucket{a=\"b\",le=\"0.1\"} 1\n"
                              "lat_bucket{a=\"b\",le=\"0.5\"} 2\n"
                              "lat_bucket{a=\"b\",le=\"1\"} 3\n"
                              "lat_bucket{a=\"b\",le=\"+Inf\"} 4\n"
                              "lat_sum{a=\"b\"} 4.05\n"
                              "lat_count{a=\"b\"} 4\n"));
}

// Everything the registry writes is valid exposition format, and reads back as written: a strict
// parser checks the format, the histogram rules and each value.
TEST(MetricsRegistry, TheRenderedTextParsesBack) {
  MetricsRegistry m;
  m.GetCounter("c_total", "a counter with \\ and\nlines", {{"reason", "a \"quoted\"\nvalue"}})
      .Add(7);
  m.GetGauge("g", "a gauge").Set(-0.000123);
  m.GetGauge("g", "", {{"k", "v"}}).Set(1e300);
  Histogram& h = m.GetHistogram("h_seconds", "latency", {0.005, 0.25, 1, 2.5, 1e6});
  m.DeclareFamily("d", Options(MetricType::kHistogram, "declared", 0, kUnlimited, {1}));
  m.DeclareFamily("e", Options(MetricType::kGauge, "empty"));
  m.HistogramObserve("d", {{"x", "1"}}, 0.5);
  m.HistogramObserve("d", {{"x", "2"}}, std::nan(""));
  // Observed while rendering: _count always equals the +Inf bucket.
  std::thread observer([&] {
    for (int i = 0; i < 20000; ++i) h.Observe(i % 7 * 0.4);
  });
  std::vector<std::string> texts;
  for (int i = 0; i < 50; ++i) texts.push_back(m.RenderPrometheus());
  observer.join();
  texts.push_back(m.RenderPrometheus());
  for (const std::string& text : texts) {
    std::vector<testkit::PrometheusFamily> families;
    ASSERT_NO_THROW(families = testkit::ParsePrometheusText(text)) << text;
    ASSERT_EQ(families.size(), 5u);
  }
  const auto families = testkit::ParsePrometheusText(texts.back());
  const testkit::PrometheusFamily* c = testkit::FindFamily(families, "c_total");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->help, "a counter with \\ and\nlines");
  ASSERT_EQ(c->samples.size(), 1u);
  EXPECT_EQ(c->samples[0].Label("reason"), "a \"quoted\"\nvalue");
  EXPECT_EQ(c->samples[0].value, 7);
  const testkit::PrometheusFamily* g = testkit::FindFamily(families, "g");
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(g->samples.size(), 2u);
  EXPECT_EQ(g->samples[0].value, -0.000123);
  EXPECT_EQ(g->samples[1].value, 1e300);
  const testkit::PrometheusFamily* hist = testkit::FindFamily(families, "h_seconds");
  ASSERT_NE(hist, nullptr);
  EXPECT_EQ(hist->type, "histogram");
  ASSERT_EQ(hist->samples.size(), 8u);  // 5 bounds, +Inf, _sum, _count
  EXPECT_EQ(hist->samples[4].Label("le"), "1e+06");
  EXPECT_EQ(hist->samples.back().value, 20000);
  double sum = 0;
  for (int i = 0; i < 20000; ++i) sum += i % 7 * 0.4;
  EXPECT_NEAR(hist->samples[6].value, sum, 1e-6);
  EXPECT_EQ(testkit::FindFamily(families, "e")->samples.size(), 0u);
}

// The parser the test above relies on refuses what the format does not allow.
TEST(MetricsRegistry, TheParserRefusesInvalidText) {
  for (const char* bad : {
           "m 1",                           // no final line feed
           "m{a=\"x\"} 1\nm{a=\"x\"} 2\n",  // duplicate series
           "m 1.0e6\n",                     // not as Go writes a value
           "# TYPE m counter\nm -1\n",      // a counter below 0
           "a 1\nb 1\na{x=\"y\"} 1\n",      // a family split
           "m 1\n# TYPE m gauge\n",         // TYPE after samples
           "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n",  // no +Inf
           "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\n"
           "h_count 1\n",                                                        // decreasing
           "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 1\n",  // count differs
           "m{a=\"\\x\"} 1\n",                                                   // bad escape
       }) {
    EXPECT_THROW(testkit::ParsePrometheusText(bad), std::runtime_error) << bad;
  }
}

}  // namespace
}  // namespace skald
