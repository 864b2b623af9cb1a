#include "plugin/pipeline_metrics_observer.h"

#include <cmath>
#include <stdexcept>

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
  try {
    metrics_.GetCounter(desc.name, desc.description, ToMetricLabels(labels))
        .Add(static_cast<uint64_t>(std::llround(delta)));
  } catch (const std::logic_error&) {
    // The name is a gauge of another pipeline: the update is dropped.
  }
}

void PipelineMetricsObserver::GaugeSet(const stages::MetricDesc& desc,
                                       const stages::LabelSet& labels, double value) {
  try {
    metrics_.GetGauge(desc.name, desc.description, ToMetricLabels(labels)).Set(std::llround(value));
  } catch (const std::logic_error&) {
    // The name is a counter of another pipeline: the update is dropped.
  }
}

void PipelineMetricsObserver::GaugeAdd(const stages::MetricDesc& desc,
                                       const stages::LabelSet& labels, double delta) {
  try {
    metrics_.GetGauge(desc.name, desc.description, ToMetricLabels(labels)).Add(std::llround(delta));
  } catch (const std::logic_error&) {
    // The name is a counter of another pipeline: the update is dropped.
  }
}

void PipelineMetricsObserver::HistogramObserve(const stages::MetricDesc& desc,
                                               const stages::LabelSet& labels, double value) {
  MetricLabels l = ToMetricLabels(labels);
  try {
    metrics_.GetCounter(desc.name + "_count", desc.description, l).Add();
    if (value > 0) {
      metrics_.GetCounter(desc.name + "_sum", desc.description, l)
          .Add(static_cast<uint64_t>(std::llround(value)));
    }
  } catch (const std::logic_error&) {
    // A gauge of another pipeline has the name: the update is dropped.
  }
}

}  // namespace skald
