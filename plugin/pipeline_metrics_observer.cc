#include "plugin/pipeline_metrics_observer.h"

#include <cmath>

namespace skald {
namespace {

MetricLabels ToMetricLabels(const stages::LabelSet& labels) {
  MetricLabels out;
  labels.ForEach([&](std::string_view k, std::string_view v) { out.emplace_back(k, v); });
  return out;
}

}  // namespace

void PipelineMetricsObserver::EntryDropped(std::string_view reason) {
  metrics_
      .GetCounter("skald_entries_dropped_total", "Entries not delivered, by reason.",
                  {{"reason", std::string(reason)}})
      .Add();
}

void PipelineMetricsObserver::CounterAdd(const stages::MetricDesc& desc,
                                         const stages::LabelSet& labels, double delta) {
  if (delta <= 0) return;
  metrics_.GetCounter(desc.name, desc.description, ToMetricLabels(labels))
      .Add(static_cast<uint64_t>(std::llround(delta)));
}

void PipelineMetricsObserver::GaugeSet(const stages::MetricDesc& desc,
                                       const stages::LabelSet& labels, double value) {
  metrics_.GetGauge(desc.name, desc.description, ToMetricLabels(labels)).Set(std::llround(value));
}

void PipelineMetricsObserver::GaugeAdd(const stages::MetricDesc& desc,
                                       const stages::LabelSet& labels, double delta) {
  metrics_.GetGauge(desc.name, desc.description, ToMetricLabels(labels)).Add(std::llround(delta));
}

void PipelineMetricsObserver::HistogramObserve(const stages::MetricDesc& desc,
                                               const stages::LabelSet& labels, double value) {
  MetricLabels l = ToMetricLabels(labels);
  metrics_.GetCounter(desc.name + "_count", desc.description, l).Add();
  if (value > 0) {
    metrics_.GetCounter(desc.name + "_sum", desc.description, l)
        .Add(static_cast<uint64_t>(std::llround(value)));
  }
}

}  // namespace skald
