#include "plugin/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

namespace skald {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

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
  m.DeclareFamily("hits", {.is_counter = true, .help = "hits seen"});
  m.DeclareFamily("depth", {.is_counter = false, .help = "queue depth"});
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
      "hits", {.is_counter = true, .help = "other help"});  // the same kind again keeps the series
  EXPECT_THAT(m.RenderPrometheus(),
              HasSubstr("# HELP hits hits seen\n# TYPE hits counter\nhits{app=\"a\"} 5\n"));
  m.RemoveFamily("hits");
  text = m.RenderPrometheus();
  EXPECT_THAT(text, Not(HasSubstr("hits")));
  EXPECT_EQ(m.CounterAdd("hits", {{"app", "a"}}, 1), MetricsRegistry::Update::kNoFamily);
  m.DeclareFamily("hits", {.is_counter = false, .help = "now a gauge"});
  EXPECT_EQ(m.GaugeSet("hits", {}, 4), MetricsRegistry::Update::kApplied);
  EXPECT_THAT(m.RenderPrometheus(), HasSubstr("# TYPE hits gauge\nhits 4\n"));
}

// A declared family may lose its series, so none is handed out by reference; and a family keeps
// its kind whichever way it was made.
TEST(MetricsRegistry, DeclaredAndReferenceFamiliesNeverShareAName) {
  MetricsRegistry m;
  m.DeclareFamily("hits", {.is_counter = true, .help = "hits"});
  EXPECT_THROW(m.GetCounter("hits", "hits"), std::logic_error);
  EXPECT_THROW(m.DeclareFamily("hits", {.is_counter = false, .help = "a gauge"}), std::logic_error);
  m.GetCounter("skald_lines_read_total", "lines").Add();
  EXPECT_THROW(m.DeclareFamily("skald_lines_read_total", {.is_counter = true, .help = "mine"}),
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
  m.DeclareFamily("hits", {.is_counter = true, .help = "hits", .max_idle_ns = 10'000'000'000});
  m.DeclareFamily("forever", {.is_counter = false, .help = "no idle limit"});
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
  m.DeclareFamily(
      "hits", {.is_counter = true, .help = "hits", .max_idle_ns = 60'000'000'000, .max_series = 2});
  using U = MetricsRegistry::Update;
  EXPECT_EQ(m.CounterAdd("hits", {{"app", "a"}}, 1), U::kApplied);
  EXPECT_EQ(m.CounterAdd("hits", {{"app", "b"}}, 1), U::kApplied);
  EXPECT_EQ(m.CounterAdd("hits", {{"app", "c"}}, 1), U::kFull);
  EXPECT_EQ(m.CounterAdd("hits", {{"app", "a"}}, 1), U::kApplied);
  std::string text = m.RenderPrometheus();
  EXPECT_THAT(text, testing::EndsWith("hits{app=\"a\"} 2\nhits{app=\"b\"} 1\n"));
  EXPECT_THAT(text, Not(HasSubstr("app=\"c\"")));
  now += 40'000'000'000;
  EXPECT_EQ(m.CounterAdd("hits", {{"app", "b"}}, 1), U::kApplied);
  now += 30'000'000'000;  // "a" idle for 70 s: it makes room without a scrape
  EXPECT_EQ(m.CounterAdd("hits", {{"app", "c"}}, 1), U::kApplied);
  text = m.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("hits{app=\"b\"} 2\nhits{app=\"c\"} 1\n"));
  EXPECT_THAT(text, Not(HasSubstr("app=\"a\"")));
}

}  // namespace
}  // namespace skald
