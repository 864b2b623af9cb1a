#include "plugin/metrics/pipeline_metrics_observer.h"

#include <spdlog/spdlog.h>

#include <set>
#include <stdexcept>
#include <vector>

#include "pipeline_stages/common/config_error.h"

namespace skald {
namespace {

using Type = stages::MetricDesc::Type;

MetricLabels ToMetricLabels(const stages::LabelSet& labels) {
  MetricLabels out;
  labels.ForEach([&](std::string_view k, std::string_view v) { out.emplace_back(k, v); });
  return out;
}

MetricType RegistryType(Type type) {
  switch (type) {
    case Type::kCounter:
      return MetricType::kCounter;
    case Type::kGauge:
      return MetricType::kGauge;
    case Type::kHistogram:
      break;
  }
  return MetricType::kHistogram;
}

// The names a metric takes on /metrics.
std::vector<std::string> WrittenNames(const stages::MetricDesc& d) {
  if (d.type == Type::kHistogram) {
    return {d.name, d.name + "_bucket", d.name + "_count", d.name + "_sum"};
  }
  return {d.name};
}

std::string HistogramNames(const stages::MetricDesc& d) {
  return "(exported as " + d.name + "_bucket, " + d.name + "_count and " + d.name + "_sum)";
}

std::string Describe(const stages::MetricDesc& d) {
  switch (d.type) {
    case Type::kCounter:
      return "a counter";
    case Type::kGauge:
      return "a gauge";
    case Type::kHistogram:
      break;
  }
  return "a histogram " + HistogramNames(d);
}

// What `d` would make of the name `taken`: the metric itself, or one of a histogram's families.
std::string DescribeAs(const stages::MetricDesc& d, const std::string& taken) {
  if (d.name == taken) return Describe(d);
  return "a family of the histogram " + d.name + " " + HistogramNames(d);
}

std::string Buckets(const std::vector<double>& bounds) {
  std::string out = "[";
  for (double b : bounds) {
    if (out.size() > 1) out += ", ";
    AppendPrometheusFloat(out, b);
  }
  return out + "]";
}

// Whether the metric `desc` may take the name `taken`, which `other_name` (declared as `other`,
// by `declarers`) writes: the same metric may; one no running pipeline declares any more makes
// way (added to `replaced`); else a ConfigError names both declarations.
void CheckNameIsFree(const stages::MetricDesc& desc, const std::string& taken,
                     const std::string& other_name, const stages::MetricDesc& other,
                     const std::list<std::string>& declarers, std::set<std::string>& replaced) {
  const bool same = other_name == desc.name && other.type == desc.type;
  if (same && other.buckets == desc.buckets) return;  // the same metric
  if (declarers.empty()) {
    replaced.insert(other_name);
    return;
  }
  if (same) {
    throw stages::ConfigError(
        "metric name " + taken + " is already a histogram with buckets " + Buckets(other.buckets) +
        ", declared by " + declarers.front() + "; here its buckets would be " +
        Buckets(desc.buckets) +
        ". A histogram has one set of buckets across all containers while one that declared "
        "it runs: give them the same buckets, or rename one of them");
  }
  throw stages::ConfigError(
      "metric name " + taken + " is already " + DescribeAs(other, taken) + ", declared by " +
      declarers.front() + "; here it would be " + DescribeAs(desc, taken) +
      ". A metric name has one type across all containers while one that declared it runs: "
      "rename one of them (the metric's name or its prefix)");
}

MetricsRegistry::FamilyOptions FamilyOptionsOf(const stages::MetricDesc& desc) {
  MetricsRegistry::FamilyOptions options;
  options.type = RegistryType(desc.type);
  options.help = desc.description;
  options.buckets = desc.buckets;
  options.max_idle_ns = desc.max_idle_duration_ns;
  options.max_series = PipelineMetricsObserver::kMaxSeriesPerMetric;
  return options;
}

}  // namespace

// Withdraws one declaration when the pipeline that made it is destroyed.
class PipelineMetricsObserver::Declaration final : public stages::MetricDeclaration {
 public:
  Declaration(PipelineMetricsObserver* observer, std::string name,
              std::list<std::string>::iterator declarer)
      : observer_(observer), name_(std::move(name)), declarer_(declarer) {}
  ~Declaration() override { observer_->Release(name_, declarer_); }

 private:
  PipelineMetricsObserver* observer_;
  std::string name_;
  std::list<std::string>::iterator declarer_;
};

void PipelineMetricsObserver::EntryDropped(std::string_view reason) {
  metrics_
      .GetCounter("skald_entries_dropped_total", "Entries not delivered, by reason.",
                  {{"reason", std::string(reason)}})
      .Add();
}

void PipelineMetricsObserver::StageFailed(std::string_view stage, std::string_view reason) {
  metrics_
      .GetCounter("skald_stage_errors_total",
                  "Entries a pipeline stage failed on and passed on without its change, by stage "
                  "and reason.",
                  {{"stage", std::string(stage)}, {"reason", std::string(reason)}})
      .Add();
}

std::unique_ptr<stages::MetricDeclaration> PipelineMetricsObserver::DeclareMetric(
    const stages::MetricDesc& desc, std::string_view declared_by) {
  const std::vector<std::string> written = WrittenNames(desc);
  absl::MutexLock lock(&mu_);
  // Metrics whose names this one would take. A live one refuses the declaration; one whose
  // declarations are all gone makes way (with its series).
  std::set<std::string> replaced;
  if (auto it = declared_.find(desc.name); it != declared_.end()) {
    CheckNameIsFree(desc, desc.name, desc.name, it->second.desc, it->second.declarers, replaced);
  }
  for (const std::string& name : written) {
    if (auto it = owner_.find(name); it != owner_.end()) {
      const Declared& other = declared_.at(it->second);
      CheckNameIsFree(desc, name, it->second, other.desc, other.declarers, replaced);
    }
  }
  for (const std::string& name : replaced) {
    metrics_.RemoveFamily(name);
    for (const std::string& taken : WrittenNames(declared_.at(name).desc)) owner_.erase(taken);
    declared_.erase(name);
  }
  auto [it, created] = declared_.try_emplace(desc.name);
  // A metric follows the declaration that created it, or the first after all were gone.
  if (created || it->second.declarers.empty()) {
    it->second.desc = desc;
    try {
      metrics_.DeclareFamily(desc.name, FamilyOptionsOf(desc));
      for (const std::string& name : written) owner_[name] = desc.name;
    } catch (const std::logic_error& e) {
      if (created) declared_.erase(it);
      if (dynamic_cast<const std::invalid_argument*>(&e)) {
        throw stages::ConfigError("metric " + desc.name + ": " + e.what());
      }
      // Only a family of the plugin's own can be in the way of a new metric's name.
      throw stages::ConfigError("metric name " + desc.name +
                                " is one of the plugin's own metrics: choose another name or "
                                "prefix");
    }
  }
  it->second.declarers.emplace_back(declared_by);
  return std::make_unique<Declaration>(this, desc.name, std::prev(it->second.declarers.end()));
}

void PipelineMetricsObserver::Release(const std::string& name,
                                      std::list<std::string>::iterator declarer) {
  absl::MutexLock lock(&mu_);
  // The metric and its series stay until a declaration of another type replaces them.
  if (auto it = declared_.find(name); it != declared_.end()) it->second.declarers.erase(declarer);
}

void PipelineMetricsObserver::UpdateDropped(const std::string& name,
                                            MetricsRegistry::Update result) {
  if (result != MetricsRegistry::Update::kFull) return;
  metrics_
      .GetCounter("skald_metric_updates_dropped_total",
                  "Updates of metrics-stage metrics dropped: a new label set for a metric that "
                  "holds " +
                      std::to_string(kMaxSeriesPerMetric) + " already.",
                  {{"metric", name}})
      .Add();
  uint64_t suppressed = 0;
  if (!full_log_.Allow(name, suppressed)) return;
  spdlog::warn(
      "metric {} holds {} label sets, the most a metric keeps: updates of new ones are dropped "
      "and counted in skald_metric_updates_dropped_total (check the labels of the entries at "
      "the metrics stage, or set max_idle_duration so that old label sets go){}",
      name, kMaxSeriesPerMetric, Suppressed(suppressed));
}

void PipelineMetricsObserver::CounterAdd(const stages::MetricDesc& desc,
                                         const stages::LabelSet& labels, double delta) {
  if (!(delta >= 0)) return;  // a counter never goes down (Promtail skips these too)
  UpdateDropped(desc.name, metrics_.CounterAdd(desc.name, ToMetricLabels(labels), delta));
}

void PipelineMetricsObserver::GaugeSet(const stages::MetricDesc& desc,
                                       const stages::LabelSet& labels, double value) {
  UpdateDropped(desc.name, metrics_.GaugeSet(desc.name, ToMetricLabels(labels), value));
}

void PipelineMetricsObserver::GaugeAdd(const stages::MetricDesc& desc,
                                       const stages::LabelSet& labels, double delta) {
  UpdateDropped(desc.name, metrics_.GaugeAdd(desc.name, ToMetricLabels(labels), delta));
}

void PipelineMetricsObserver::HistogramObserve(const stages::MetricDesc& desc,
                                               const stages::LabelSet& labels, double value) {
  UpdateDropped(desc.name, metrics_.HistogramObserve(desc.name, ToMetricLabels(labels), value));
}

}  // namespace skald
