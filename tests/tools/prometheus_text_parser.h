// A strict reader of Prometheus text exposition format 0.0.4, for tests of what /metrics says.
//
// It accepts the subset a conforming writer may produce and the Go client does: `# HELP` and
// `# TYPE` at most once per family and before its samples, a family's samples together, values
// as Go's strconv.FormatFloat writes them (or NaN, +Inf, -Inf), no duplicate series, and for
// histograms per label set: `le` buckets in increasing order ending in +Inf, counts that never
// decrease, `_count` equal to the +Inf bucket and a `_sum`. Anything else throws
// std::runtime_error naming the line and what is wrong.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace skald::testkit {

struct PrometheusSample {
  std::string name;  // as written: a histogram's samples end in _bucket, _sum or _count
  std::vector<std::pair<std::string, std::string>> labels;  // unescaped, in written order
  double value = 0;
  // The value of label `name`, or "" when absent.
  std::string Label(std::string_view name) const;
};

struct PrometheusFamily {
  std::string name;
  std::string help;  // unescaped
  std::string type;  // counter, gauge, histogram, summary or untyped
  std::vector<PrometheusSample> samples;
};

std::vector<PrometheusFamily> ParsePrometheusText(std::string_view text);

// The family `name` in `families`, or null.
const PrometheusFamily* FindFamily(const std::vector<PrometheusFamily>& families,
                                   std::string_view name);

}  // namespace skald::testkit
