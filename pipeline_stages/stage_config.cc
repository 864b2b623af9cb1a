#include "pipeline_stages/stage_config.h"

#include <fcntl.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <ctime>

#include "pipeline_stages/common/did_you_mean.h"
#include "pipeline_stages/go/go_duration.h"

namespace skald::stages {

int OpenRegularFile(const std::string& path, std::string* why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) *why = std::strerror(errno);
  return fd;
}

void StageContext::Fail(std::string_view detail) const {
  throw ConfigError(where + ": " + std::string(detail));
}

std::string Quote(std::string_view s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q.push_back('\\');
    if (c == '\n') {
      q += "\\n";
      continue;
    }
    q.push_back(c);
  }
  q.push_back('"');
  return q;
}

std::string DescribeNode(const YAML::Node& node) {
  if (!node || node.IsNull()) return "null";
  if (node.IsScalar()) return Quote(node.Scalar());
  YAML::Emitter e;
  e << YAML::Flow << node;
  return e.c_str();
}

std::string KeyText(const YAML::Node& key) {
  // yaml-cpp throws TypedBadConversion converting a list or a map to a string.
  if (key.IsSequence() || key.IsMap()) return DescribeNode(key);
  return key.as<std::string>();
}

std::string KeyName(const YAML::Node& key, const StageContext& ctx, std::string_view what) {
  if (key.IsSequence() || key.IsMap()) {
    ctx.Fail(std::string(what) + " must be a string, got " + DescribeNode(key));
  }
  return key.as<std::string>();
}

StageConfig::StageConfig(const YAML::Node& node, const StageContext& ctx,
                         std::vector<std::string_view> known_fields)
    // An absent field (`metrics: {m: {type: Histogram}}` has no config) is an invalid node that
    // throws YAML::InvalidNode when assigned to, and assigning to a null one would rewrite the
    // document: a missing or null config is a fresh empty map.
    : node_(node && !node.IsNull() ? node : YAML::Node(YAML::NodeType::Map)), ctx_(ctx) {
  if (!node || node.IsNull()) return;
  if (!node.IsMap()) {
    std::string accepted;
    for (auto f : known_fields) accepted += (accepted.empty() ? "" : ", ") + std::string(f);
    ctx.Fail("config must be a map of fields (" + accepted + "), got " + DescribeNode(node));
  }
  for (const auto& kv : node) {
    const std::string key = KeyText(kv.first);
    if (std::find(known_fields.begin(), known_fields.end(), key) != known_fields.end()) continue;
    std::string msg = "unknown field " + Quote(key);
    std::string guess = DidYouMean(key, known_fields);
    if (!guess.empty()) msg += " (did you mean " + guess + "?)";
    msg += "; accepted fields: ";
    for (size_t i = 0; i < known_fields.size(); ++i) {
      msg += (i ? ", " : "") + std::string(known_fields[i]);
    }
    ctx.Fail(msg);
  }
}

void StageConfig::Fail(std::string_view field, std::string_view detail) const {
  ctx_.Fail("field " + Quote(field) + ": " + std::string(detail));
}

bool StageConfig::Has(std::string_view field) const {
  YAML::Node n = node_[std::string(field)];
  return n && !n.IsNull();
}

YAML::Node StageConfig::Get(std::string_view field) const { return node_[std::string(field)]; }

std::optional<std::string> StageConfig::OptString(std::string_view field) const {
  YAML::Node n = Get(field);
  if (!n || n.IsNull()) return std::nullopt;
  if (!n.IsScalar()) Fail(field, "expected a string, got " + DescribeNode(n));
  return n.Scalar();
}

std::string StageConfig::String(std::string_view field, std::string_view def) const {
  auto s = OptString(field);
  return s ? *s : std::string(def);
}

std::string StageConfig::RequiredString(std::string_view field) const {
  auto s = OptString(field);
  if (!s || s->empty()) Fail(field, "is required and must not be empty");
  return *s;
}

bool StageConfig::Bool(std::string_view field, bool def) const {
  auto s = OptString(field);
  if (!s) return def;
  std::string v = *s;
  std::transform(v.begin(), v.end(), v.begin(), ::tolower);
  if (v == "true" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "no" || v == "off") return false;
  Fail(field, Quote(*s) + " is not a boolean (expected true or false)");
}

std::optional<double> StageConfig::OptDouble(std::string_view field) const {
  auto s = OptString(field);
  if (!s) return std::nullopt;
  double d = 0;
  auto r = std::from_chars(s->data(), s->data() + s->size(), d);
  if (r.ec != std::errc() || r.ptr != s->data() + s->size() || std::isnan(d)) {
    Fail(field, Quote(*s) + " is not a number");
  }
  return d;
}

std::optional<int64_t> StageConfig::OptInt(std::string_view field) const {
  auto s = OptString(field);
  if (!s) return std::nullopt;
  int64_t v = 0;
  auto r = std::from_chars(s->data(), s->data() + s->size(), v);
  if (r.ec != std::errc() || r.ptr != s->data() + s->size()) {
    Fail(field, Quote(*s) + " is not an integer");
  }
  return v;
}

std::optional<int64_t> StageConfig::OptDurationNs(std::string_view field) const {
  auto s = OptString(field);
  if (!s) return std::nullopt;
  auto d = ParseGoDuration(*s);
  if (!d) {
    Fail(field, Quote(*s) + " is not a duration (expected e.g. 500ms, 3s, 1m30s, 2h)");
  }
  return d;
}

std::vector<std::string> StageConfig::StringOrList(std::string_view field) const {
  YAML::Node n = Get(field);
  std::vector<std::string> out;
  if (!n || n.IsNull()) return out;
  if (n.IsScalar()) {
    out.push_back(n.Scalar());
    return out;
  }
  if (!n.IsSequence())
    Fail(field, "expected a string or a list of strings, got " + DescribeNode(n));
  for (const auto& item : n) {
    if (!item.IsScalar()) {
      Fail(field, "expected a list of strings, got item " + DescribeNode(item));
    }
    out.push_back(item.Scalar());
  }
  return out;
}

std::optional<uint64_t> ParseByteSize(std::string_view s) {
  uint64_t v = 0;
  size_t i = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    const uint64_t d = static_cast<uint64_t>(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  if (i == 0) return std::nullopt;
  std::string_view rest = s.substr(i);
  while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) {
    rest.remove_prefix(1);
  }
  while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.back()))) {
    rest.remove_suffix(1);
  }
  std::string unit(rest);
  std::transform(unit.begin(), unit.end(), unit.begin(), ::tolower);
  struct Unit {
    std::string_view names[5];
    int power;  // of 1024
  };
  static constexpr Unit kUnits[] = {
      {{"", "b", "byte", "", ""}, 0},
      {{"k", "kb", "kilo", "kilobyte", "kilobytes"}, 1},
      {{"m", "mb", "mega", "megabyte", "megabytes"}, 2},
      {{"g", "gb", "giga", "gigabyte", "gigabytes"}, 3},
      {{"t", "tb", "tera", "terabyte", "terabytes"}, 4},
      {{"p", "pb", "peta", "petabyte", "petabytes"}, 5},
      {{"e", "eb", "", "", ""}, 6},
  };
  for (const Unit& u : kUnits) {
    for (size_t n = 0; n < 5; ++n) {
      if (unit != u.names[n] || (n > 0 && u.names[n].empty())) continue;
      for (int k = 0; k < u.power; ++k) {
        if (v > UINT64_MAX / 1024) return std::nullopt;
        v *= 1024;
      }
      return v;
    }
  }
  return std::nullopt;
}

namespace {
class SystemClock final : public Clock {
 public:
  int64_t NowNs() const override {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  }
};
}  // namespace

const Clock& Clock::System() {
  static const SystemClock clock;
  return clock;
}

}  // namespace skald::stages
