#include "tests/tools/prometheus_text_parser.h"

#include <cmath>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>

namespace skald::testkit {
namespace {

bool IsMetricName(std::string_view n) {
  if (n.empty()) return false;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const char c = n[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
                    (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool IsLabelName(std::string_view n) { return IsMetricName(n) && n.find(':') == n.npos; }

// A value as the Go client writes one.
bool ParseValue(const std::string& s, double* out) {
  if (s == "NaN") {
    *out = std::nan("");
    return true;
  }
  if (s == "+Inf" || s == "-Inf") {
    *out = s[0] == '+' ? HUGE_VAL : -HUGE_VAL;
    return true;
  }
  static const std::regex kNumber(R"(-?[0-9]+(\.[0-9]+)?(e[+-][0-9]{2,3})?)");
  if (!std::regex_match(s, kNumber)) return false;
  *out = std::strtod(s.c_str(), nullptr);
  return true;
}

class LineError : public std::runtime_error {
 public:
  LineError(std::size_t line_no, std::string_view line, const std::string& what)
      : std::runtime_error("line " + std::to_string(line_no) + " (" + std::string(line) +
                           "): " + what) {}
};

// The family a sample named `name` belongs to among those with a TYPE.
std::string FamilyOf(const std::string& name, const std::map<std::string, std::string>& types) {
  if (types.count(name)) return name;
  for (std::string_view suffix : {"_bucket", "_sum", "_count"}) {
    if (name.size() > suffix.size() && name.ends_with(suffix)) {
      const std::string stem = name.substr(0, name.size() - suffix.size());
      auto it = types.find(stem);
      if (it != types.end() &&
          (it->second == "histogram" || (it->second == "summary" && suffix != "_bucket"))) {
        return stem;
      }
    }
  }
  return name;
}

void CheckHistogram(const PrometheusFamily& f) {
  struct Series {
    std::vector<std::pair<double, double>> buckets;  // le, count
    bool has_sum = false;
    bool has_count = false;
    double count = 0;
  };
  std::map<std::vector<std::pair<std::string, std::string>>, Series> by_labels;
  for (const PrometheusSample& s : f.samples) {
    auto labels = s.labels;
    std::string le;
    std::erase_if(labels, [&](const auto& kv) {
      if (kv.first != "le") return false;
      le = kv.second;
      return true;
    });
    Series& series = by_labels[labels];
    const std::string where = "histogram " + f.name + ": " + s.name;
    if (s.name == f.name + "_bucket") {
      double bound = 0;
      if (le.empty() || !ParseValue(le, &bound)) {
        throw std::runtime_error(where + " has no valid le label (\"" + le + "\")");
      }
      if (!series.buckets.empty() && !(series.buckets.back().first < bound)) {
        throw std::runtime_error(where + ": le=\"" + le + "\" is not above the previous bound");
      }
      if (!series.buckets.empty() && s.value < series.buckets.back().second) {
        throw std::runtime_error(where + ": le=\"" + le + "\" counts less than the bucket before");
      }
      series.buckets.emplace_back(bound, s.value);
    } else if (!le.empty()) {
      throw std::runtime_error(where + " has an le label");
    } else if (s.name == f.name + "_sum") {
      series.has_sum = true;
    } else if (s.name == f.name + "_count") {
      series.has_count = true;
      series.count = s.value;
    } else {
      throw std::runtime_error(where + " is not a histogram sample");
    }
  }
  for (const auto& [labels, s] : by_labels) {
    if (s.buckets.empty() || !std::isinf(s.buckets.back().first)) {
      throw std::runtime_error("histogram " + f.name + ": a series lacks its +Inf bucket");
    }
    if (!s.has_sum || !s.has_count) {
      throw std::runtime_error("histogram " + f.name + ": a series lacks _sum or _count");
    }
    if (s.count != s.buckets.back().second) {
      throw std::runtime_error("histogram " + f.name + ": _count differs from the +Inf bucket");
    }
  }
}

}  // namespace

std::string PrometheusSample::Label(std::string_view name) const {
  for (const auto& [k, v] : labels) {
    if (k == name) return v;
  }
  return "";
}

std::vector<PrometheusFamily> ParsePrometheusText(std::string_view text) {
  std::vector<PrometheusFamily> families;
  std::map<std::string, std::string> types;  // family -> type, for every TYPE seen
  std::map<std::string, std::size_t> index;  // family -> position in `families`
  std::set<std::string> closed;              // families whose lines are over
  std::set<std::string> series_seen;
  std::set<std::string> help_seen;
  if (!text.empty() && text.back() != '\n') throw std::runtime_error("text does not end in \\n");
  std::size_t line_no = 0;
  std::string current;  // the family of the previous line
  auto family_for = [&](const std::string& name, std::size_t n, std::string_view line) {
    if (name != current) {
      if (closed.count(name)) throw LineError(n, line, "family " + name + " appeared before");
      if (!current.empty()) closed.insert(current);
      current = name;
    }
    auto [it, created] = index.try_emplace(name, families.size());
    if (created) {
      families.push_back(PrometheusFamily{name, "", "untyped", {}});
    }
    return &families[it->second];
  };
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\n', at);
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++line_no;
    if (line.empty()) throw LineError(line_no, line, "empty line");
    if (line[0] == '#') {
      const bool help = line.starts_with("# HELP ");
      const bool type = line.starts_with("# TYPE ");
      if (!help && !type) continue;  // a comment
      const std::string_view rest = line.substr(7);
      const std::size_t space = rest.find(' ');
      if (space == rest.npos) throw LineError(line_no, line, "no text after the name");
      const std::string name(rest.substr(0, space));
      const std::string_view arg = rest.substr(space + 1);
      if (!IsMetricName(name)) throw LineError(line_no, line, "bad metric name");
      PrometheusFamily* f = family_for(name, line_no, line);
      if (help) {
        if (!help_seen.insert(name).second) throw LineError(line_no, line, "a second HELP");
        for (std::size_t i = 0; i < arg.size(); ++i) {
          if (arg[i] != '\\') {
            f->help += arg[i];
            continue;
          }
          if (i + 1 < arg.size() && arg[i + 1] == '\\') {
            f->help += '\\';
          } else if (i + 1 < arg.size() && arg[i + 1] == 'n') {
            f->help += '\n';
          } else {
            throw LineError(line_no, line, "bad escape in HELP");
          }
          ++i;
        }
      } else {
        static const std::set<std::string_view> kTypes = {"counter", "gauge", "histogram",
                                                          "summary", "untyped"};
        if (!kTypes.count(arg)) throw LineError(line_no, line, "unknown type");
        if (types.count(name)) throw LineError(line_no, line, "a second TYPE");
        if (!f->samples.empty()) throw LineError(line_no, line, "TYPE after samples");
        types[name] = std::string(arg);
        f->type = std::string(arg);
      }
      continue;
    }
    // name{labels} value
    PrometheusSample s;
    std::size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    s.name = std::string(line.substr(0, i));
    if (!IsMetricName(s.name)) throw LineError(line_no, line, "bad metric name");
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        std::size_t eq = line.find('=', i);
        if (eq == line.npos) throw LineError(line_no, line, "label without =");
        std::string key(line.substr(i, eq - i));
        if (!IsLabelName(key)) throw LineError(line_no, line, "bad label name " + key);
        i = eq + 1;
        if (i >= line.size() || line[i] != '"') throw LineError(line_no, line, "unquoted value");
        ++i;
        std::string value;
        for (;; ++i) {
          if (i >= line.size()) throw LineError(line_no, line, "unterminated label value");
          const char c = line[i];
          if (c == '"') break;
          if (c != '\\') {
            value += c;
            continue;
          }
          if (++i >= line.size()) throw LineError(line_no, line, "dangling escape");
          if (line[i] == '\\' || line[i] == '"') {
            value += line[i];
          } else if (line[i] == 'n') {
            value += '\n';
          } else {
            throw LineError(line_no, line, "bad escape in a label value");
          }
        }
        ++i;  // the closing quote
        for (const auto& [k, v] : s.labels) {
          if (k == key) throw LineError(line_no, line, "label " + key + " twice");
        }
        s.labels.emplace_back(std::move(key), std::move(value));
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size()) throw LineError(line_no, line, "unterminated labels");
      ++i;  // '}'
    }
    if (i >= line.size() || line[i] != ' ') throw LineError(line_no, line, "no value");
    const std::string value(line.substr(i + 1));
    if (!ParseValue(value, &s.value)) throw LineError(line_no, line, "bad value " + value);
    std::string key = s.name;
    for (const auto& [k, v] : s.labels) key += "\x01" + k + "\x02" + v;
    if (!series_seen.insert(key).second) throw LineError(line_no, line, "duplicate series");
    PrometheusFamily* f = family_for(FamilyOf(s.name, types), line_no, line);
    if (f->type == "counter" && !(s.value >= 0)) {
      throw LineError(line_no, line, "a counter below 0");
    }
    f->samples.push_back(std::move(s));
  }
  for (const PrometheusFamily& f : families) {
    if (f.type == "histogram") CheckHistogram(f);
  }
  return families;
}

const PrometheusFamily* FindFamily(const std::vector<PrometheusFamily>& families,
                                   std::string_view name) {
  for (const PrometheusFamily& f : families) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

}  // namespace skald::testkit
