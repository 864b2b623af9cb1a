#include "plugin/metrics/metrics.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string_view>

namespace skald {
namespace {

constexpr const char* kHistogramSuffixes[] = {"_bucket", "_sum", "_count"};

const char* TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      break;
  }
  return "histogram";
}

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::vector<double> CheckedBounds(std::vector<double> bounds) {
  if (!bounds.empty() && std::isinf(bounds.back()) && bounds.back() > 0) bounds.pop_back();
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    if (std::isnan(bounds[i])) throw std::invalid_argument("histogram bucket bound is NaN");
    if (i > 0 && !(bounds[i - 1] < bounds[i])) {
      throw std::invalid_argument(
          "histogram bucket bounds " + FormatPrometheusFloat(bounds[i - 1]) + " and " +
          FormatPrometheusFloat(bounds[i]) + " are not in increasing order");
    }
  }
  return bounds;
}

// Where `v` is counted: the first bound >= v, or the +Inf bucket (NaN too).
std::size_t BucketOf(const std::vector<double>& bounds, double v) {
  return static_cast<std::size_t>(std::lower_bound(bounds.begin(), bounds.end(), v) -
                                  bounds.begin());
}

void AppendValueLine(std::string& out, std::string_view name, const MetricLabels& labels,
                     double value) {
  AppendPrometheusSeries(out, name, labels);
  out += ' ';
  AppendPrometheusFloat(out, value);
  out += '\n';
}

// `cumulative`: per bound, then +Inf.
void AppendHistogram(std::string& out, const std::string& name, const MetricLabels& labels,
                     const std::vector<double>& bounds, const std::vector<uint64_t>& cumulative,
                     double sum) {
  const std::string bucket = name + "_bucket";
  for (std::size_t i = 0; i <= bounds.size(); ++i) {
    AppendPrometheusSeries(out, bucket, labels, "le",
                           i < bounds.size() ? FormatPrometheusFloat(bounds[i]) : "+Inf");
    out += ' ';
    out += std::to_string(cumulative[i]);
    out += '\n';
  }
  AppendValueLine(out, name + "_sum", labels, sum);
  AppendPrometheusSeries(out, name + "_count", labels);
  out += ' ';
  out += std::to_string(cumulative.back());
  out += '\n';
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(CheckedBounds(std::move(upper_bounds))),
      counts_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {}

void Histogram::Observe(double v) {
  counts_[BucketOf(bounds_, v)].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot s;
  s.cumulative.resize(bounds_.size() + 1);
  uint64_t total = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    total += counts_[i].load(std::memory_order_relaxed);
    s.cumulative[i] = total;
  }
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

MetricsRegistry::MetricsRegistry() : now_ns_(SteadyNowNs) {}

void MetricsRegistry::SetClockForTesting(std::function<int64_t()> now_ns) {
  absl::MutexLock lock(&mu_);
  now_ns_ = std::move(now_ns);
}

void MetricsRegistry::CheckWrittenNamesLocked(const std::string& name, MetricType type) const {
  // (`other_type` is passed in: the lambda is analysed on its own, without mu_ held.)
  auto clash = [&](const std::string& other, MetricType other_type, const std::string& written) {
    throw std::logic_error("metric " + name + " would write " + written + ", which the " +
                           TypeName(other_type) + " " + other + " writes");
  };
  for (std::string_view suffix : kHistogramSuffixes) {
    // A histogram writes name + suffix: no other family may have that name.
    if (type == MetricType::kHistogram) {
      const std::string written = name + std::string(suffix);
      if (auto it = families_.find(written); it != families_.end()) {
        clash(written, it->second.type, written);
      }
    }
    // And a family named like that is written by the histogram it extends.
    if (name.size() > suffix.size() && name.ends_with(suffix)) {
      const std::string stem = name.substr(0, name.size() - suffix.size());
      auto it = families_.find(stem);
      if (it != families_.end() && it->second.type == MetricType::kHistogram) {
        clash(stem, it->second.type, name);
      }
    }
  }
}

MetricsRegistry::Family& MetricsRegistry::FamilyLocked(const std::string& name,
                                                       const std::string& help, MetricType type,
                                                       const std::vector<double>* buckets) {
  auto found = families_.find(name);
  if (found == families_.end()) {
    CheckWrittenNamesLocked(name, type);
    std::vector<double> bounds = buckets ? CheckedBounds(*buckets) : std::vector<double>{};
    Family& f = families_[name];
    f.type = type;
    f.help = help;
    f.buckets = std::move(bounds);
    return f;
  }
  Family& f = found->second;
  if (f.declared) {
    // Its series may go away; a reference to one could dangle.
    throw std::logic_error("metric " + name + " is a declared family; it hands out no series");
  }
  if (f.type != type) {
    // Its slots index the other type's storage: handing one out would read a foreign series.
    throw std::logic_error("metric " + name + " is a " + TypeName(f.type) +
                           "; it cannot also be a " + TypeName(type));
  }
  if (buckets && CheckedBounds(*buckets) != f.buckets) {
    throw std::logic_error("histogram " + name + " was created with other buckets");
  }
  if (f.help.empty()) f.help = help;
  return f;
}

Counter& MetricsRegistry::GetCounter(const std::string& name, const std::string& help,
                                     const MetricLabels& labels) {
  absl::MutexLock lock(&mu_);
  Family& f = FamilyLocked(name, help, MetricType::kCounter, nullptr);
  auto it = f.index.find(labels);
  if (it != f.index.end()) return counters_[it->second];
  counters_.emplace_back();
  f.index.emplace(labels, counters_.size() - 1);
  return counters_.back();
}

Gauge& MetricsRegistry::GetGauge(const std::string& name, const std::string& help,
                                 const MetricLabels& labels) {
  absl::MutexLock lock(&mu_);
  Family& f = FamilyLocked(name, help, MetricType::kGauge, nullptr);
  auto it = f.index.find(labels);
  if (it != f.index.end()) return gauges_[it->second];
  gauges_.emplace_back();
  f.index.emplace(labels, gauges_.size() - 1);
  return gauges_.back();
}

Histogram& MetricsRegistry::GetHistogram(const std::string& name, const std::string& help,
                                         const std::vector<double>& upper_bounds,
                                         const MetricLabels& labels) {
  absl::MutexLock lock(&mu_);
  Family& f = FamilyLocked(name, help, MetricType::kHistogram, &upper_bounds);
  auto it = f.index.find(labels);
  if (it != f.index.end()) return histograms_[it->second];
  histograms_.emplace_back(f.buckets);
  f.index.emplace(labels, histograms_.size() - 1);
  return histograms_.back();
}

uint64_t MetricsRegistry::CounterTotal(const std::string& name) const {
  absl::MutexLock lock(&mu_);
  auto it = families_.find(name);
  if (it == families_.end() || it->second.type != MetricType::kCounter) return 0;
  uint64_t total = 0;
  for (const auto& [labels, slot] : it->second.index) total += counters_[slot].Value();
  for (const auto& [labels, s] : it->second.series) total += static_cast<uint64_t>(s.value);
  return total;
}

void MetricsRegistry::DeclareFamily(const std::string& name, const FamilyOptions& options) {
  absl::MutexLock lock(&mu_);
  auto it = families_.find(name);
  if (it == families_.end()) {
    CheckWrittenNamesLocked(name, options.type);
    std::vector<double> bounds = options.type == MetricType::kHistogram
                                     ? CheckedBounds(options.buckets)
                                     : std::vector<double>{};
    it = families_.try_emplace(name).first;
    it->second.type = options.type;
    it->second.declared = true;
    it->second.help = options.help;
    it->second.buckets = std::move(bounds);
  } else {
    const Family& f = it->second;
    if (!f.declared || f.type != options.type) {
      throw std::logic_error("metric " + name + " is already a " + (f.declared ? "declared " : "") +
                             TypeName(f.type));
    }
    if (f.type == MetricType::kHistogram && CheckedBounds(options.buckets) != f.buckets) {
      throw std::logic_error("histogram " + name + " is declared with other buckets");
    }
  }
  it->second.max_idle_ns = options.max_idle_ns;
  it->second.max_series = options.max_series;
}

void MetricsRegistry::RemoveFamily(const std::string& name) {
  absl::MutexLock lock(&mu_);
  auto it = families_.find(name);
  if (it != families_.end() && it->second.declared) families_.erase(it);
}

MetricsRegistry::Series* MetricsRegistry::SeriesLocked(const std::string& name,
                                                       const MetricLabels& labels, MetricType type,
                                                       Update* result) {
  auto fit = families_.find(name);
  if (fit == families_.end() || !fit->second.declared || fit->second.type != type) {
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
    if (type == MetricType::kHistogram) it->second.buckets.resize(f.buckets.size() + 1);
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
                                                    const MetricLabels& labels, double n) {
  absl::MutexLock lock(&mu_);
  Update result;
  Series* s = SeriesLocked(name, labels, MetricType::kCounter, &result);
  if (s && n > 0) s->value += n;
  return result;
}

MetricsRegistry::Update MetricsRegistry::GaugeSet(const std::string& name,
                                                  const MetricLabels& labels, double value) {
  absl::MutexLock lock(&mu_);
  Update result;
  if (Series* s = SeriesLocked(name, labels, MetricType::kGauge, &result)) s->value = value;
  return result;
}

MetricsRegistry::Update MetricsRegistry::GaugeAdd(const std::string& name,
                                                  const MetricLabels& labels, double n) {
  absl::MutexLock lock(&mu_);
  Update result;
  if (Series* s = SeriesLocked(name, labels, MetricType::kGauge, &result)) s->value += n;
  return result;
}

MetricsRegistry::Update MetricsRegistry::HistogramObserve(const std::string& name,
                                                          const MetricLabels& labels,
                                                          double value) {
  absl::MutexLock lock(&mu_);
  Update result;
  if (Series* s = SeriesLocked(name, labels, MetricType::kHistogram, &result)) {
    ++s->buckets[BucketOf(families_.at(name).buckets, value)];
    s->sum += value;
  }
  return result;
}

std::string MetricsRegistry::RenderPrometheus() {
  absl::MutexLock lock(&mu_);
  const int64_t now = now_ns_();
  std::string out;
  std::vector<uint64_t> cumulative;
  for (auto& [name, f] : families_) {
    ExpireLocked(f, now);
    AppendPrometheusHeader(out, name, f.help, TypeName(f.type));
    for (const auto& [labels, slot] : f.index) {
      switch (f.type) {
        case MetricType::kCounter:
          AppendPrometheusSeries(out, name, labels);
          out += ' ';
          out += std::to_string(counters_[slot].Value());
          out += '\n';
          break;
        case MetricType::kGauge:
          AppendValueLine(out, name, labels, gauges_[slot].Value());
          break;
        case MetricType::kHistogram: {
          const Histogram::Snapshot s = histograms_[slot].Read();
          AppendHistogram(out, name, labels, f.buckets, s.cumulative, s.sum);
          break;
        }
      }
    }
    for (const auto& [labels, s] : f.series) {
      if (f.type != MetricType::kHistogram) {
        AppendValueLine(out, name, labels, s.value);
        continue;
      }
      cumulative.assign(s.buckets.size(), 0);
      uint64_t total = 0;
      for (std::size_t i = 0; i < s.buckets.size(); ++i) cumulative[i] = total += s.buckets[i];
      AppendHistogram(out, name, labels, f.buckets, cumulative, s.sum);
    }
  }
  return out;
}

}  // namespace skald
