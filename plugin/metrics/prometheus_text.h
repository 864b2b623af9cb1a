// Prometheus text exposition format 0.0.4: the pieces MetricsRegistry writes with.
//
// Values are written as Prometheus' Go client writes them (expfmt): 0, 1 and -1 as such, NaN,
// +Inf and -Inf by name, anything else as Go's strconv.FormatFloat(v, 'g', -1, 64), the
// shortest form that reads back as the same double (1e+06, 0.25, 1.5e-07). Label values escape
// backslash, double quote and line feed; help texts backslash and line feed.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace skald {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// Appends `v` as the Go client writes a sample value or an `le` label.
void AppendPrometheusFloat(std::string& out, double v);
std::string FormatPrometheusFloat(double v);

// Appends `name{k="v",...}` (no braces without labels), and `extra_name="extra_value"` as the
// last label when extra_name is not empty (a histogram bucket's `le`).
void AppendPrometheusSeries(std::string& out, std::string_view name, const MetricLabels& labels,
                            std::string_view extra_name = {}, std::string_view extra_value = {});

// Appends `# HELP name help` and `# TYPE name type`, each with its line feed.
void AppendPrometheusHeader(std::string& out, std::string_view name, std::string_view help,
                            std::string_view type);

}  // namespace skald
