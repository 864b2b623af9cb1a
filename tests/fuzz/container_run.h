// For the fuzz targets that parse a container's options: builds what StartLogging builds from
// them (labels, relabel rules, stages; see plugin/driver/container_pipeline.h), runs the sample
// lines through it on both sources, and encodes what comes out as the push request Loki would get.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "plugin/config/container_info.h"
#include "plugin/config/container_labels.h"
#include "plugin/config/log_options.h"
#include "plugin/driver/container_pipeline.h"
#include "plugin/loki/push_encoder.h"
#include "plugin/metrics/metrics.h"
#include "plugin/metrics/pipeline_metrics_observer.h"
#include "tests/fuzz/fuzz_support.h"

namespace skald::fuzz {

// Throws OptionError as StartLogging would.
inline void RunContainer(const LogOptions& options, const ContainerInfo& info) {
  FUZZ_CHECK(ValidateLokiClientConfig(options.client).empty());
  (void)options.client.Key();
  (void)KeepLabelSources(info, options, "fuzz-host");

  MetricsRegistry metrics;
  PipelineMetricsObserver observer(metrics);
  ContainerPipeline pipeline(options, info, "fuzz-host", &observer);
  std::vector<LokiEntry> entries;
  std::vector<LogLine> lines;
  int64_t time = 1'700'000'000'000'000'000;
  for (LogSource source : {LogSource::kStdout, LogSource::kStderr}) {
    for (const std::string& line : SampleLines()) {
      lines.push_back(LogLine{source, time++, line});
    }
  }
  pipeline.Process(lines, 1, entries);
  pipeline.Flush(time, /*final=*/true, entries);
  FUZZ_CHECK(!pipeline.OldestHeldOrigin().has_value());
  if (pipeline.dropped_by_relabel()) FUZZ_CHECK(entries.empty());

  // One stream per selector, as the client batches them.
  std::map<std::string_view, std::vector<const LokiEntry*>> streams;
  for (const LokiEntry& e : entries) {
    FUZZ_CHECK(!e.labels.empty());
    streams[e.labels.view()].push_back(&e);
  }
  std::vector<PushStream> push;
  for (const auto& [labels, list] : streams) push.push_back({labels, list});
  PushEncoder encoder;
  (void)encoder.Encode(push);
  (void)metrics.RenderPrometheus();
}

}  // namespace skald::fuzz
