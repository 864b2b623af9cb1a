#include "plugin/metrics.h"

#include <chrono>
#include <stdexcept>
#include <string_view>

namespace skald {
namespace {

void AppendEscapedLabelValue(std::string& out, std::string_view v) {
  for (char c : v) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
}

void AppendSeriesName(std::string& out, const std::string& name, const MetricLabels& labels) {
  out += name;
  if (labels.empty()) return;
  out += '{';
  bool first = true;
  for (const auto& [k, v] : labels) {
    if (!first) out += ',';
    first = false;
    out += k;
    out += "=\"";
    AppendEscapedLabelValue(out, v);
    out += '"';
  }
  out += '}';
}

const char* KindName(bool is_counter) { return is_counter ? "counter" : "gauge"; }

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

MetricsRegistry::MetricsRegistry() : now_ns_(SteadyNowNs) {}

void MetricsRegistry::SetClockForTesting(std::function<int64_t()> now_ns) {
  std::lock_guard lock(mu_);
  now_ns_ = std::move(now_ns);
}

MetricsRegistry::Family& MetricsRegistry::FamilyLocked(const std::string& name,
                                                       const std::string& help, bool is_counter) {
  auto [it, created] = families_.try_emplace(name);
  Family& f = it->second;
  if (created) {
    f.is_counter = is_counter;
  } else if (f.declared) {
    // Its series may go away; a reference to one could dangle.
    throw std::logic_error("metric " + name + " is a declared family; it hands out no series");
  } else if (f.is_counter != is_counter) {
    // Its slots index the other kind's storage: handing one out would read a foreign series.
    throw std::logic_error("metric " + name + " is a " + KindName(f.is_counter) +
                           "; it cannot also be a " + KindName(is_counter));
  }
  if (f.help.empty()) f.help = help;
  return f;
}

Counter& MetricsRegistry::GetCounter(const std::string& name, const std::string& help,
                                     const MetricLabels& labels) {
  std::lock_guard lock(mu_);
  Family& f = FamilyLocked(name, help, true);
  auto it = f.index.find(labels);
  if (it != f.index.end()) return counters_[it->second];
  counters_.emplace_back();
  f.index.emplace(labels, counters_.size() - 1);
  return counters_.back();
}

Gauge& MetricsRegistry::GetGauge(const std::string& name, const std::string& help,
                                 const MetricLabels& labels) {
  std::lock_guard lock(mu_);
  Family& f = FamilyLocked(name, help, false);
  auto it = f.index.find(labels);
  if (it != f.index.end()) return gauges_[it->second];
  gauges_.emplace_back();
  f.index.emplace(labels, gauges_.size() - 1);
  return gauges_.back();
}

uint64_t MetricsRegistry::CounterTotal(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = families_.find(name);
  if (it == families_.end() || !it->second.is_counter) return 0;
  uint64_t total = 0;
  for (const auto& [labels, slot] : it->second.index) total += counters_[slot].Value();
  for (const auto& [labels, s] : it->second.series) total += s.counter;
  return total;
}

void MetricsRegistry::DeclareFamily(const std::string& name, const FamilyOptions& options) {
  std::lock_guard lock(mu_);
  auto [it, created] = families_.try_emplace(name);
  Family& f = it->second;
  if (created) {
    f.is_counter = options.is_counter;
    f.declared = true;
    f.help = options.help;
  } else if (!f.declared || f.is_counter != options.is_counter) {
    throw std::logic_error("metric " + name + " is already a " + (f.declared ? "declared " : "") +
                           KindName(f.is_counter));
  }
  f.max_idle_ns = options.max_idle_ns;
  f.max_series = options.max_series;
}

void MetricsRegistry::RemoveFamily(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = families_.find(name);
  if (it != families_.end() && it->second.declared) families_.erase(it);
}

MetricsRegistry::Series* MetricsRegistry::SeriesLocked(const std::string& name,
                                                       const MetricLabels& labels, bool is_counter,
                                                       Update* result) {
  auto fit = families_.find(name);
  if (fit == families_.end() || !fit->second.declared || fit->second.is_counter != is_counter) {
    *result = Update::kNoFamily;
    return nullptr;
  }
  Family& f = fit->second;
  const int64_t now = now_ns_();
  auto it = f.series.find(labels);
  if (it == f.series.end()) {
    // Idle series make room first: without scrapes they would otherwise fill the family.
    if (f.series.size() >= f.max_series) ExpireLocked(f, now);
    if (f.series.size() >= f.max_series) {
      *result = Update::kFull;
      return nullptr;
    }
    it = f.series.emplace(labels, Series{}).first;
  }
  it->second.updated_ns = now;
  *result = Update::kApplied;
  return &it->second;
}

void MetricsRegistry::ExpireLocked(Family& f, int64_t now) {
  if (f.max_idle_ns <= 0) return;
  std::erase_if(f.series,
                [&](const auto& kv) { return now - kv.second.updated_ns >= f.max_idle_ns; });
}

MetricsRegistry::Update MetricsRegistry::CounterAdd(const std::string& name,
                                                    const MetricLabels& labels, uint64_t n) {
  std::lock_guard lock(mu_);
  Update result;
  if (Series* s = SeriesLocked(name, labels, true, &result)) s->counter += n;
  return result;
}

MetricsRegistry::Update MetricsRegistry::GaugeSet(const std::string& name,
                                                  const MetricLabels& labels, int64_t value) {
  std::lock_guard lock(mu_);
  Update result;
  if (Series* s = SeriesLocked(name, labels, false, &result)) s->gauge = value;
  return result;
}

MetricsRegistry::Update MetricsRegistry::GaugeAdd(const std::string& name,
                                                  const MetricLabels& labels, int64_t n) {
  std::lock_guard lock(mu_);
  Update result;
  if (Series* s = SeriesLocked(name, labels, false, &result)) s->gauge += n;
  return result;
}

std::string MetricsRegistry::RenderPrometheus() {
  std::lock_guard lock(mu_);
  const int64_t now = now_ns_();
  std::string out;
  for (auto& [name, f] : families_) {
    ExpireLocked(f, now);
    out += "# HELP " + name + " " + f.help + "\n";
    out += "# TYPE " + name + " " + KindName(f.is_counter) + "\n";
    for (const auto& [labels, slot] : f.index) {
      AppendSeriesName(out, name, labels);
      out += ' ';
      out += f.is_counter ? std::to_string(counters_[slot].Value())
                          : std::to_string(gauges_[slot].Value());
      out += '\n';
    }
    for (const auto& [labels, s] : f.series) {
      AppendSeriesName(out, name, labels);
      out += ' ';
      out += f.is_counter ? std::to_string(s.counter) : std::to_string(s.gauge);
      out += '\n';
    }
  }
  return out;
}

}  // namespace skald
