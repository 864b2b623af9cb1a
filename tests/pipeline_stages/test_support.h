// Helpers shared by the stage tests: a controllable clock, a recording observer, and a
// one-call way to run lines through a pipeline.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "pipeline_stages/pipeline.h"

namespace skald::stages::testkit {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t now = 1'700'000'000'000'000'000) : now_(now) {}
  int64_t NowNs() const override { return now_; }
  void Set(int64_t now) { now_ = now; }
  void Advance(int64_t ns) { now_ += ns; }

 private:
  int64_t now_;
};

class RecordingObserver final : public PipelineObserver {
 public:
  class Declaration final : public MetricDeclaration {
   public:
    explicit Declaration(int* live) : live_(live) { ++*live_; }
    ~Declaration() override { --*live_; }

   private:
    int* live_;
  };

  void EntryDropped(std::string_view reason) override { drops.emplace_back(reason); }
  void StageFailed(std::string_view stage, std::string_view reason) override {
    failures.push_back(std::string(stage) + ": " + std::string(reason));
  }
  std::unique_ptr<MetricDeclaration> DeclareMetric(const MetricDesc& desc,
                                                   std::string_view by) override {
    declared.push_back(desc);
    declared_by.emplace_back(by);
    return std::make_unique<Declaration>(&live_declarations);
  }
  void CounterAdd(const MetricDesc& d, const LabelSet& l, double v) override {
    values[d.name + l.ToString()] += v;
  }
  void GaugeSet(const MetricDesc& d, const LabelSet& l, double v) override {
    values[d.name + l.ToString()] = v;
  }
  void GaugeAdd(const MetricDesc& d, const LabelSet& l, double v) override {
    values[d.name + l.ToString()] += v;
  }
  void HistogramObserve(const MetricDesc& d, const LabelSet& l, double v) override {
    observations[d.name + l.ToString()].push_back(v);
  }

  std::vector<std::string> drops;
  std::vector<std::string> failures;  // "<stage>: <reason>"
  std::vector<MetricDesc> declared;
  std::vector<std::string> declared_by;
  int live_declarations = 0;  // handed out and not destroyed yet
  std::map<std::string, double> values;
  std::map<std::string, std::vector<double>> observations;
};

inline Entry MakeEntry(std::string line, LabelSet labels = {},
                       int64_t ts = 1'700'000'000'000'000'000) {
  Entry e;
  e.line = std::move(line);
  e.labels = std::move(labels);
  e.timestamp_ns = ts;
  return e;
}

// Runs one entry through a fresh pipeline built from yaml, then flushes everything.
inline std::vector<Entry> RunOne(std::string_view yaml, Entry entry,
                                 PipelineObserver* observer = nullptr) {
  FakeClock clock;
  auto p = Pipeline::FromYaml(yaml, observer, &clock);
  std::vector<Entry> out;
  p->Process(std::move(entry), out);
  p->Flush(clock.NowNs(), true, out);
  return out;
}

// The ConfigError message for yaml, or "" when it builds.
inline std::string BuildError(std::string_view yaml) {
  try {
    FakeClock clock;
    Pipeline::FromYaml(yaml, nullptr, &clock);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace skald::stages::testkit
