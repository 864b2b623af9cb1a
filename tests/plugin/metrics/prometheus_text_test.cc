#include "plugin/metrics/prometheus_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace skald {
namespace {

// What Go's strconv.FormatFloat(v, 'g', -1, 64) prints (Go 1.26), as the Prometheus Go client
// writes values and `le` labels.
TEST(PrometheusText, FloatsAreWrittenAsGosShortestG) {
  const struct {
    double v;
    const char* go;
  } kCases[] = {
      {0, "0"},
      {1, "1"},
      {-1, "-1"},
      {0.10000000000000001, "0.1"},
      {0.25, "0.25"},
      {2.5, "2.5"},
      {10, "10"},
      {100000, "100000"},
      {999999, "999999"},
      {1000000, "1e+06"},
      {1234567, "1.234567e+06"},
      {123456789, "1.23456789e+08"},
      {1e+21, "1e+21"},
      {0.0001, "0.0001"},
      {1.0000000000000001e-05, "1e-05"},
      {0.00012344999999999999, "0.00012345"},
      {1.4999999999999999e-07, "1.5e-07"},
      {3.1415899999999999, "3.14159"},
      {-2.75, "-2.75"},
      {1e+100, "1e+100"},
      {4.9406564584124654e-324, "5e-324"},
      {1.7976931348623157e+308, "1.7976931348623157e+308"},
      {0.33333333333333331, "0.3333333333333333"},
      {9007199254740992, "9.007199254740992e+15"},
      {1.8446744073709552e+19, "1.8446744073709552e+19"},
      {4.3499999999999996, "4.35"},
      {9.9999999999999694e-311, "1e-310"},
      {1234560000000, "1.23456e+12"},
      {0.0050000000000000001, "0.005"},
      {12345.678, "12345.678"},
  };
  for (const auto& c : kCases) EXPECT_EQ(FormatPrometheusFloat(c.v), c.go) << c.go;
  EXPECT_EQ(FormatPrometheusFloat(std::nan("")), "NaN");
  EXPECT_EQ(FormatPrometheusFloat(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatPrometheusFloat(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatPrometheusFloat(-0.0), "0");
}

// Every double reads back as itself (the shortest form loses nothing).
TEST(PrometheusText, FloatsRoundTrip) {
  double v = 1.0 / 7;
  for (int i = 0; i < 2000; ++i) {
    v = v * -3.7 + 1e-3 * i;
    if (std::isinf(v) || std::fabs(v) > 1e300) v = 1.0 / (i + 3);
    const std::string s = FormatPrometheusFloat(v);
    EXPECT_EQ(std::strtod(s.c_str(), nullptr), v) << s;
  }
}

TEST(PrometheusText, LabelValuesAndHelpAreEscaped) {
  std::string out;
  AppendPrometheusSeries(out, "m", {{"path", "C:\\x \"q\"\nnext"}}, "le", "0.5");
  EXPECT_EQ(out, "m{path=\"C:\\\\x \\\"q\\\"\\nnext\",le=\"0.5\"}");
  out.clear();
  AppendPrometheusHeader(out, "m", "a \"help\" \\ with\nlines", "gauge");
  EXPECT_EQ(out, "# HELP m a \"help\" \\\\ with\\nlines\n# TYPE m gauge\n");
}

}  // namespace
}  // namespace skald
