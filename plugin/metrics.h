// Metrics: counters and gauges that render as Prometheus text exposition.
//
// A MetricsRegistry owns every series. GetCounter/GetGauge return a reference that stays valid
// for the registry's lifetime, so hot paths look a series up once and then only add to it
// (lock-free). A name has one kind: asking for a counter under a gauge's name (or the reverse)
// throws. Names follow Prometheus conventions; label values are escaped on render.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
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
  // Returns the series (name, labels), creating it on first use. `help` is kept from the first
  // call for a name. Thread-safe; the reference stays valid for the registry's lifetime.
  // Throws std::logic_error when `name` is already a family of the other kind.
  Counter& GetCounter(const std::string& name, const std::string& help,
                      const MetricLabels& labels = {});
  Gauge& GetGauge(const std::string& name, const std::string& help,
                  const MetricLabels& labels = {});

  // Sum of every series of a counter family (all label values).
  uint64_t CounterTotal(const std::string& name) const;

  // Prometheus text exposition format 0.0.4.
  std::string RenderPrometheus() const;

 private:
  struct Family {
    std::string help;
    bool is_counter = true;                     // set when the family is created, never changed
    std::map<MetricLabels, std::size_t> index;  // labels -> slot in counters_/gauges_
  };
  // The family `name` of kind `is_counter`, created with `help` if new.
  Family& FamilyLocked(const std::string& name, const std::string& help, bool is_counter);

  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
  std::deque<Counter> counters_;
  std::deque<Gauge> gauges_;
};

}  // namespace skald
