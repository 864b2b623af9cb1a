#include "pipeline_stages/metrics_stage.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "pipeline_stages/go/go_duration.h"

namespace skald::stages {
namespace {

bool IsValidMetricName(std::string_view n) {
  if (n.empty()) return false;
  for (size_t i = 0; i < n.size(); ++i) {
    const char c = n[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
                    (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

std::optional<double> ToFloat(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNumber:
      return v.number();
    case Value::Kind::kBool:
      return v.boolean() ? 1.0 : 0.0;
    case Value::Kind::kString: {
      // As Promtail's getFloatFromString: a number (Go's ParseFloat takes a leading +), else a
      // Go duration in seconds ("250ms" is 0.25).
      std::string_view s = v.string();
      std::string_view digits = s;
      if (digits.size() > 1 && digits[0] == '+' && digits[1] != '-' && digits[1] != '+') {
        digits.remove_prefix(1);
      }
      double d = 0;
      auto r = std::from_chars(digits.data(), digits.data() + digits.size(), d);
      if (r.ec == std::errc() && r.ptr == digits.data() + digits.size()) return d;
      if (std::optional<int64_t> ns = ParseGoDuration(s)) {
        const int64_t sec = *ns / 1'000'000'000;
        const int64_t nsec = *ns % 1'000'000'000;
        return static_cast<double>(sec) + static_cast<double>(nsec) / 1e9;  // Go's Seconds()
      }
      return std::nullopt;
    }
    case Value::Kind::kNull:
      break;
  }
  return std::nullopt;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), ::tolower);
  return s;
}

}  // namespace

MetricsStage::MetricsStage(const YAML::Node& config, const StageContext& ctx) : ctx_(ctx) {
  if (!config || !config.IsMap() || config.size() == 0) {
    ctx.Fail("expected a map of metric name to definition, got " + DescribeNode(config));
  }
  for (const auto& kv : config) {
    const std::string name = KeyName(kv.first, ctx, "a metric name");
    StageContext mctx = ctx;
    mctx.where += ": metric " + Quote(name);
    StageConfig c(kv.second, mctx,
                  {"type", "description", "prefix", "source", "max_idle_duration", "config"});
    Metric m;
    const std::string type = c.RequiredString("type");
    const std::string t = Lower(type);
    if (t == "counter") {
      m.desc.type = MetricDesc::Type::kCounter;
    } else if (t == "gauge") {
      m.desc.type = MetricDesc::Type::kGauge;
    } else if (t == "histogram") {
      m.desc.type = MetricDesc::Type::kHistogram;
    } else {
      c.Fail("type", Quote(type) + " is not a metric type; expected Counter, Gauge or Histogram");
    }
    m.desc.name = c.String("prefix", "promtail_custom_") + name;
    if (!IsValidMetricName(m.desc.name)) {
      c.Fail("prefix", "metric name " + Quote(m.desc.name) +
                           " is invalid: it must match [a-zA-Z_:][a-zA-Z0-9_:]*");
    }
    if (m.desc.name.starts_with("skald_")) {
      mctx.Fail("metric name " + Quote(m.desc.name) +
                " is reserved: names starting with skald_ are the plugin's own metrics; choose "
                "another name or prefix");
    }
    m.desc.description = c.String("description");
    m.source = c.String("source", name);
    if (m.source.empty()) m.source = name;
    // Promtail's default and floor: series not updated for this long leave /metrics.
    m.desc.max_idle_duration_ns = c.OptDurationNs("max_idle_duration").value_or(300'000'000'000);
    if (m.desc.max_idle_duration_ns < 1'000'000'000) {
      c.Fail("max_idle_duration", Quote(c.String("max_idle_duration")) +
                                      " is less than 1s; expected e.g. 30s or 1h (default 5m)");
    }

    StageContext cctx = mctx;
    cctx.where += " config";
    const YAML::Node cfg_node = c.Get("config");
    switch (m.desc.type) {
      case MetricDesc::Type::kCounter: {
        StageConfig cc(cfg_node, cctx, {"value", "action", "match_all", "count_entry_bytes"});
        m.value = cc.OptString("value");
        const std::string action = Lower(cc.RequiredString("action"));
        if (action == "inc") {
          m.action = Action::kInc;
        } else if (action == "add") {
          m.action = Action::kAdd;
        } else {
          cc.Fail("action", Quote(action) + " is not a counter action; expected inc or add");
        }
        m.match_all = cc.Bool("match_all", false);
        m.count_entry_bytes = cc.Bool("count_entry_bytes", false);
        if (m.match_all && m.value) cc.Fail("match_all", "cannot be combined with value");
        if (m.count_entry_bytes && (!m.match_all || m.action != Action::kAdd)) {
          cc.Fail("count_entry_bytes", "needs match_all: true and action: add");
        }
        break;
      }
      case MetricDesc::Type::kGauge: {
        StageConfig cc(cfg_node, cctx, {"value", "action"});
        m.value = cc.OptString("value");
        const std::string action = Lower(cc.RequiredString("action"));
        if (action == "set") {
          m.action = Action::kSet;
        } else if (action == "inc") {
          m.action = Action::kInc;
        } else if (action == "dec") {
          m.action = Action::kDec;
        } else if (action == "add") {
          m.action = Action::kAdd;
        } else if (action == "sub") {
          m.action = Action::kSub;
        } else {
          cc.Fail("action",
                  Quote(action) + " is not a gauge action; expected set, inc, dec, add or sub");
        }
        break;
      }
      case MetricDesc::Type::kHistogram: {
        StageConfig cc(cfg_node, cctx, {"value", "buckets"});
        m.value = cc.OptString("value");
        m.action = Action::kObserve;
        YAML::Node b = cc.Get("buckets");
        if (b && !b.IsNull()) {
          if (!b.IsSequence()) cc.Fail("buckets", "expected a list of numbers");
          for (const auto& x : b) {
            double d = 0;
            const std::string s = x.IsScalar() ? x.Scalar() : "";
            auto r = std::from_chars(s.data(), s.data() + s.size(), d);
            if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || std::isnan(d)) {
              cc.Fail("buckets", DescribeNode(x) + " is not a number");
            }
            if (!m.desc.buckets.empty() && d <= m.desc.buckets.back()) {
              cc.Fail("buckets", "must be in increasing order");
            }
            m.desc.buckets.push_back(d);
          }
        }
        if (m.desc.buckets.empty()) {  // Prometheus' default buckets, as Promtail gets them
          m.desc.buckets = {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10};
        }
        break;
      }
    }
    if (ctx.build && ctx.build->observer) {
      const std::string by =
          ctx.build->owner.empty() ? ctx.where : ctx.build->owner + ", " + ctx.where;
      try {
        m.declaration = ctx.build->observer->DeclareMetric(m.desc, by);
      } catch (const ConfigError& e) {
        mctx.Fail(e.what());
      }
    }
    metrics_.push_back(std::move(m));
  }
}

void MetricsStage::Update(const Metric& m, const Entry& entry) {
  PipelineObserver* obs = ctx_.build->observer;
  if (m.match_all) {
    obs->CounterAdd(m.desc, entry.labels,
                    m.count_entry_bytes ? static_cast<double>(entry.line.size()) : 1.0);
    return;
  }
  const Value* v = entry.extracted.Find(m.source);
  if (!v) return;
  if (m.value) {
    auto s = v->AsString();
    if (!s || *s != *m.value) return;
  }
  switch (m.action) {
    case Action::kInc:
      if (m.desc.type == MetricDesc::Type::kCounter) {
        obs->CounterAdd(m.desc, entry.labels, 1);
      } else {
        obs->GaugeAdd(m.desc, entry.labels, 1);
      }
      return;
    case Action::kDec:
      obs->GaugeAdd(m.desc, entry.labels, -1);
      return;
    default:
      break;
  }
  auto f = ToFloat(*v);
  if (!f) return;
  switch (m.action) {
    case Action::kAdd:
      if (m.desc.type == MetricDesc::Type::kCounter) {
        if (*f >= 0) obs->CounterAdd(m.desc, entry.labels, *f);
      } else {
        obs->GaugeAdd(m.desc, entry.labels, *f);
      }
      return;
    case Action::kSub:
      obs->GaugeAdd(m.desc, entry.labels, -*f);
      return;
    case Action::kSet:
      obs->GaugeSet(m.desc, entry.labels, *f);
      return;
    case Action::kObserve:
      obs->HistogramObserve(m.desc, entry.labels, *f);
      return;
    default:
      return;
  }
}

Verdict MetricsStage::Process(Entry& entry, Downstream&) {
  if (!ctx_.build->observer) return Verdict::kPass;
  for (const Metric& m : metrics_) Update(m, entry);
  return Verdict::kPass;
}

}  // namespace skald::stages
