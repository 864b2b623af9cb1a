// Metrics: counters, gauges and histograms that render as Prometheus text exposition 0.0.4.
//
// A MetricsRegistry owns every series. GetCounter/GetGauge/GetHistogram return a reference that
// stays valid for the registry's lifetime, so hot paths look a series up once and then only
// update it (lock-free: relaxed atomics; a scrape may see a histogram's _sum a moment behind its
// buckets, never a _count that differs from its +Inf bucket). Families declared with
// DeclareFamily (the metrics of `metrics` stages) hand out no references: each update finds its
// series by name, so such a family can be removed and its series can expire.
// A name has one type (and a histogram its buckets): a clash throws instead of mixing two. A
// histogram `h` is written as h_bucket, h_sum and h_count, so it also takes those names. Names
// follow Prometheus conventions; label values and help texts are escaped on render, and values
// are written as Prometheus' Go client writes them (see prometheus_text.h), except Counter's
// whole numbers, written exactly.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "plugin/metrics/prometheus_text.h"

namespace skald {

// Counts things: whole, never decreasing.
class Counter {
 public:
  void Add(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

// A value that goes up and down (a float64, as every Prometheus value).
class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Add(double n) { value_.fetch_add(n, std::memory_order_relaxed); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Observations counted in fixed buckets: bucket i counts values <= upper_bounds[i], a last
// bucket (+Inf) the rest, NaN included (as the Go client does).
class Histogram {
 public:
  // `upper_bounds` strictly increasing; a trailing +Inf is implied and dropped. Throws
  // std::invalid_argument for NaN or bounds out of order.
  explicit Histogram(std::vector<double> upper_bounds);
  void Observe(double v);

  const std::vector<double>& upper_bounds() const { return bounds_; }
  struct Snapshot {
    std::vector<uint64_t> cumulative;  // per upper bound, then +Inf (the count)
    double sum = 0;
  };
  Snapshot Read() const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // bounds_.size() + 1, not cumulative
  std::atomic<double> sum_{0};
};

enum class MetricType { kCounter, kGauge, kHistogram };

class MetricsRegistry {
 public:
  MetricsRegistry();

  // Returns the series (name, labels), creating it on first use. `help` is kept from the first
  // call for a name, as are a histogram's `upper_bounds`. Thread-safe; the reference stays valid
  // for the registry's lifetime. Throws std::logic_error when `name` is taken by a family of
  // another type, a declared family or a histogram's written names, or when a histogram's
  // bounds differ from those it was created with.
  Counter& GetCounter(const std::string& name, const std::string& help,
                      const MetricLabels& labels = {});
  Gauge& GetGauge(const std::string& name, const std::string& help,
                  const MetricLabels& labels = {});
  Histogram& GetHistogram(const std::string& name, const std::string& help,
                          const std::vector<double>& upper_bounds, const MetricLabels& labels = {});

  // Sum of every series of a counter family (all label values; declared ones' fractions cut).
  uint64_t CounterTotal(const std::string& name) const;

  // A family whose series are updated by name (below). Series not updated for `max_idle_ns`
  // (0 = never) disappear at the next render; it holds at most `max_series` label sets.
  struct FamilyOptions {
    MetricType type = MetricType::kCounter;
    std::string help;
    std::vector<double> buckets;  // histograms: upper bounds, as for Histogram
    int64_t max_idle_ns = 0;
    std::size_t max_series = std::numeric_limits<std::size_t>::max();
  };
  // Creates the family, or keeps it (with its series and help; the limits apply from now on)
  // when it exists as a declared family of the same type (and buckets). Throws
  // std::logic_error otherwise, and std::invalid_argument for bad buckets.
  void DeclareFamily(const std::string& name, const FamilyOptions& options);
  // Removes a declared family and its series (nothing when it is not one).
  void RemoveFamily(const std::string& name);

  enum class Update {
    kApplied,
    kFull,      // a new label set for a family that holds max_series (after idle ones went)
    kNoFamily,  // no declared family of that type has the name: not applied
  };
  // A counter never goes down: a negative or NaN `n` changes nothing (the series is touched).
  Update CounterAdd(const std::string& name, const MetricLabels& labels, double n);
  Update GaugeSet(const std::string& name, const MetricLabels& labels, double value);
  Update GaugeAdd(const std::string& name, const MetricLabels& labels, double n);
  Update HistogramObserve(const std::string& name, const MetricLabels& labels, double value);

  // Prometheus text exposition format 0.0.4. Idle series of declared families go first.
  std::string RenderPrometheus();

  // Monotonic nanoseconds for the idle times of declared families (default: steady_clock).
  void SetClockForTesting(std::function<int64_t()> now_ns);

 private:
  struct Series {                   // of a declared family
    double value = 0;               // counter, gauge
    std::vector<uint64_t> buckets;  // histogram: per bound, then +Inf; not cumulative
    double sum = 0;                 // histogram
    int64_t updated_ns = 0;
  };
  struct Family {
    std::string help;
    MetricType type = MetricType::kCounter;     // set when the family is created, never changed
    bool declared = false;                      // set when the family is created, never changed
    std::vector<double> buckets;                // histograms, set at creation
    std::map<MetricLabels, std::size_t> index;  // labels -> slot in counters_/gauges_/...
    // Declared families only:
    int64_t max_idle_ns = 0;
    std::size_t max_series = 0;
    std::map<MetricLabels, Series> series;
  };
  // The family `name` of `type`, created with `help` (and `buckets`) if new.
  Family& FamilyLocked(const std::string& name, const std::string& help, MetricType type,
                       const std::vector<double>* buckets) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Throws std::logic_error when a new family `name` of `type` would write a name another
  // family writes (a histogram's _bucket, _sum, _count).
  void CheckWrittenNamesLocked(const std::string& name, MetricType type) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The series of a declared family to update, created on first use if there is room; null
  // otherwise, with *result saying why.
  Series* SeriesLocked(const std::string& name, const MetricLabels& labels, MetricType type,
                       Update* result) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes the series of a declared family not updated for its max_idle_ns.
  static void ExpireLocked(Family& f, int64_t now);

  mutable absl::Mutex mu_;
  std::map<std::string, Family> families_ ABSL_GUARDED_BY(mu_);
  std::deque<Counter> counters_ ABSL_GUARDED_BY(mu_);
  std::deque<Gauge> gauges_ ABSL_GUARDED_BY(mu_);
  std::deque<Histogram> histograms_ ABSL_GUARDED_BY(mu_);
  std::function<int64_t()> now_ns_ ABSL_GUARDED_BY(mu_);
};

}  // namespace skald
