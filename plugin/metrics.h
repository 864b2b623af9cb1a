// Metrics: counters and gauges that render as Prometheus text exposition.
//
// A MetricsRegistry owns every series. GetCounter/GetGauge return a reference that stays valid
// for the registry's lifetime, so hot paths look a series up once and then only add to it
// (lock-free). Families declared with DeclareFamily (the metrics of `metrics` stages) hand out no
// references: each update finds its series by name, so such a family can be removed and its
// series can expire. A name has one
// kind: a clash throws instead of mixing two kinds. Names follow Prometheus conventions; label
// values are escaped on render.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace skald {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

class Counter {
 public:
  void Add(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

class Gauge {
 public:
  void Set(int64_t v) { value_.store(v, std::memory_order_relaxed); }
  void Add(int64_t n) { value_.fetch_add(n, std::memory_order_relaxed); }
  int64_t Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

class MetricsRegistry {
 public:
  MetricsRegistry();

  // Returns the series (name, labels), creating it on first use. `help` is kept from the first
  // call for a name. Thread-safe; the reference stays valid for the registry's lifetime.
  // Throws std::logic_error when `name` is a family of the other kind or a declared family.
  Counter& GetCounter(const std::string& name, const std::string& help,
                      const MetricLabels& labels = {});
  Gauge& GetGauge(const std::string& name, const std::string& help,
                  const MetricLabels& labels = {});

  // Sum of every series of a counter family (all label values).
  uint64_t CounterTotal(const std::string& name) const;

  // A family whose series are updated by name (below). Series not updated for `max_idle_ns`
  // (0 = never) disappear at the next render; it holds at most `max_series` label sets.
  struct FamilyOptions {
    bool is_counter = true;
    std::string help;
    int64_t max_idle_ns = 0;
    std::size_t max_series = std::numeric_limits<std::size_t>::max();
  };
  // Creates the family, or keeps it (with its series and help; the limits apply from now on)
  // when it exists as a declared family of the same kind. Throws std::logic_error otherwise.
  void DeclareFamily(const std::string& name, const FamilyOptions& options);
  // Removes a declared family and its series (nothing when it is not one).
  void RemoveFamily(const std::string& name);

  enum class Update {
    kApplied,
    kFull,      // a new label set for a family that holds max_series (after idle ones went)
    kNoFamily,  // no declared family of that kind has the name: not applied
  };
  Update CounterAdd(const std::string& name, const MetricLabels& labels, uint64_t n);
  Update GaugeSet(const std::string& name, const MetricLabels& labels, int64_t value);
  Update GaugeAdd(const std::string& name, const MetricLabels& labels, int64_t n);

  // Prometheus text exposition format 0.0.4. Idle series of declared families go first.
  std::string RenderPrometheus();

  // Monotonic nanoseconds for the idle times of declared families (default: steady_clock).
  void SetClockForTesting(std::function<int64_t()> now_ns);

 private:
  struct Series {  // of a declared family
    uint64_t counter = 0;
    int64_t gauge = 0;
    int64_t updated_ns = 0;
  };
  struct Family {
    std::string help;
    bool is_counter = true;                     // set when the family is created, never changed
    bool declared = false;                      // set when the family is created, never changed
    std::map<MetricLabels, std::size_t> index;  // labels -> slot in counters_/gauges_
    // Declared families only:
    int64_t max_idle_ns = 0;
    std::size_t max_series = 0;
    std::map<MetricLabels, Series> series;
  };
  // The family `name` of kind `is_counter`, created with `help` if new.
  Family& FamilyLocked(const std::string& name, const std::string& help, bool is_counter);
  // The series of a declared family to update, created on first use if there is room; null
  // otherwise, with *result saying why.
  Series* SeriesLocked(const std::string& name, const MetricLabels& labels, bool is_counter,
                       Update* result);
  // Removes the series of a declared family not updated for its max_idle_ns.
  static void ExpireLocked(Family& f, int64_t now);

  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
  std::deque<Counter> counters_;
  std::deque<Gauge> gauges_;
  std::function<int64_t()> now_ns_;
};

}  // namespace skald
