// ConfigCheck: what `skald check` and `skald dry-run` do before a container exists: the
// container's --log-opts (and the plugin-wide defaults) checked exactly as StartLogging checks
// them, every problem at once, plus a lint of the pipeline for what is legal but useless.
//
// Messages never hold a secret: URLs are shown without credentials, files by path only.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipeline_stages/pipeline_observer.h"
#include "plugin/config/container_info.h"
#include "plugin/config/log_options.h"

namespace skald {

struct ConfigCheckInput {
  std::map<std::string, std::string> log_opts;      // --log-opt k=v, as a container gives them
  std::map<std::string, std::string> env_defaults;  // the plugin-wide defaults (option -> value)
  // Checking a managed plugin's settings from the host: a path under `state_dir` (as the
  // plugin sees it) is read under `host_state_dir` instead. Empty: paths are read as given.
  std::string state_dir;
  std::string host_state_dir;
};

struct ConfigCheckResult {
  std::vector<std::string> errors;    // each stops StartLogging
  std::vector<std::string> warnings;  // legal but very likely not what is meant
  // The options, once they parse; the paths in them are those read (see host_state_dir).
  std::optional<LogOptions> options;
};

ConfigCheckResult CheckLoggingConfig(const ConfigCheckInput& input);

// The container a check or dry-run pretends to start: its name, image and labels are those a
// template or label option renders.
ContainerInfo PlaceholderContainer(const std::map<std::string, std::string>& log_opts);

// An observer for pipelines run outside the plugin: records drops and stage failures in order,
// accepts every metric declaration and ignores metric updates.
class RecordingObserver : public stages::PipelineObserver {
 public:
  void EntryDropped(std::string_view reason) override { events.emplace_back(reason); }
  void StageFailed(std::string_view stage, std::string_view reason) override {
    events.push_back(std::string(stage) + " failed: " + std::string(reason));
  }
  void CounterAdd(const stages::MetricDesc&, const stages::LabelSet&, double) override {}
  void GaugeSet(const stages::MetricDesc&, const stages::LabelSet&, double) override {}
  void GaugeAdd(const stages::MetricDesc&, const stages::LabelSet&, double) override {}
  void HistogramObserve(const stages::MetricDesc&, const stages::LabelSet&, double) override {}

  std::vector<std::string> events;
};

}  // namespace skald
