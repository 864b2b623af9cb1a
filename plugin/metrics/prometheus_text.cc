#include "plugin/metrics/prometheus_text.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <system_error>

namespace skald {
namespace {

// Go's strconv 'g' with the shortest precision, from the shortest round-trip digits that
// std::to_chars gives in scientific form ("d.ddde±x"): %e when the decimal exponent is below -4
// or at least 6 (strconv's rule for the shortest form), %f otherwise.
void AppendGoShortestG(std::string& out, double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<std::size_t>(r.ptr - buf));
  if (!sci.empty() && sci.front() == '-') {
    out += '-';
    sci.remove_prefix(1);
  }
  const std::size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits += c;
  }
  const int exp = std::atoi(std::string(sci.substr(e + 1)).c_str());
  const int nd = static_cast<int>(digits.size());
  if (exp < -4 || exp >= 6) {
    out += digits[0];
    if (nd > 1) {
      out += '.';
      out.append(digits, 1);
    }
    out += 'e';
    out += exp < 0 ? '-' : '+';
    const int a = std::abs(exp);
    if (a < 10) out += '0';
    out += std::to_string(a);
    return;
  }
  const int dp = exp + 1;  // digits before the decimal point
  if (dp <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-dp), '0');
    out += digits;
    return;
  }
  if (nd <= dp) {
    out += digits;
    out.append(static_cast<std::size_t>(dp - nd), '0');
    return;
  }
  out.append(digits, 0, static_cast<std::size_t>(dp));
  out += '.';
  out.append(digits, static_cast<std::size_t>(dp));
}

void AppendEscaped(std::string& out, std::string_view v, bool quote) {
  for (char c : v) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '"':
        out += quote ? "\\\"" : "\"";
        break;
      default:
        out += c;
    }
  }
}

}  // namespace

void AppendPrometheusFloat(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else if (v == 0) {
    out += '0';  // -0 too, as the Go client writes it
  } else {
    AppendGoShortestG(out, v);
  }
}

std::string FormatPrometheusFloat(double v) {
  std::string out;
  AppendPrometheusFloat(out, v);
  return out;
}

void AppendPrometheusSeries(std::string& out, std::string_view name, const MetricLabels& labels,
                            std::string_view extra_name, std::string_view extra_value) {
  out += name;
  if (labels.empty() && extra_name.empty()) return;
  out += '{';
  bool first = true;
  auto label = [&](std::string_view k, std::string_view v) {
    if (!first) out += ',';
    first = false;
    out += k;
    out += "=\"";
    AppendEscaped(out, v, true);
    out += '"';
  };
  for (const auto& [k, v] : labels) label(k, v);
  if (!extra_name.empty()) label(extra_name, extra_value);
  out += '}';
}

void AppendPrometheusHeader(std::string& out, std::string_view name, std::string_view help,
                            std::string_view type) {
  out += "# HELP ";
  out += name;
  out += ' ';
  AppendEscaped(out, help, false);
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

}  // namespace skald
