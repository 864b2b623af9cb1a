#include "plugin/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

namespace skald {
namespace {

using ::testing::HasSubstr;

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

}  // namespace
}  // namespace skald
