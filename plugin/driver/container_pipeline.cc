#include "plugin/driver/container_pipeline.h"

#include <algorithm>
#include <utility>

#include "pipeline_stages/common/config_error.h"
#include "pipeline_stages/relabel.h"
#include "pipeline_stages/tenant_id.h"
#include "plugin/common/user_files.h"
#include "plugin/config/container_labels.h"
#include "plugin/config/stream_labels.h"
#include "plugin/driver/stage_yaml_cache.h"

namespace skald {
namespace {

// Distinct label sets a pipeline's output may have per stream before the cache starts over,
// and the bytes they may take (label values come from the lines: a container chooses them).
constexpr std::size_t kMaxCachedSelectors = 4096;
constexpr std::size_t kMaxCachedSelectorBytes = 1024 * 1024;

// The selector of `labels`; empty when Loki would refuse them (counted by the caller).
StreamSelector RenderSelector(const stages::LabelSet& labels) {
  StreamLabelSet pairs;
  labels.ForEach([&](std::string_view k, std::string_view v) { pairs.emplace_back(k, v); });
  std::string rendered;
  if (!RenderStreamLabels(pairs, rendered).empty()) return {};
  return StreamSelector(std::move(rendered));
}

std::unique_ptr<stages::Pipeline> BuildPipeline(const LogOptions& options,
                                                const ContainerInfo& info,
                                                stages::PipelineObserver* observer) {
  stages::PipelineOptions build;
  build.observer = observer;
  build.owner = "container " + info.Name() + " (" + info.ID() + ")";
  build.max_line_size = options.max_line_size;
  // A stage's file (geoip's db) is a path inside the plugin; errors say where it is on the host.
  build.describe_path = [](const std::string& path) {
    return " (inside the plugin" + HostLocationOf(path) + ")";
  };
  // ... and is read only from where option files lie (plugin/common/user_files.h), from the
  // descriptor that check opened.
  build.open_file = OpenUserFileDescriptor;
  try {
    if (!options.pipeline_stages.empty()) {
      return stages::Pipeline::FromNode(StageYamlCache::Shared().StagesOf(options.pipeline_stages),
                                        build);
    }
    if (!options.pipeline_stage_file.empty()) {
      return stages::Pipeline::FromFile(options.pipeline_stage_file, build);
    }
  } catch (const stages::ConfigError& e) {
    const std::string option =
        options.pipeline_stages.empty() ? "loki-pipeline-stage-file" : "loki-pipeline-stages";
    std::vector<std::string> problems;
    for (const std::string& p : e.problems())
      problems.push_back("invalid log-opt " + option + ": " + p);
    throw OptionError(std::move(problems));
  }
  return nullptr;
}

// The stages' output for the batch being converted; one per thread, so that a thousand
// containers do not each keep one.
thread_local std::vector<stages::Entry> stage_output;

}  // namespace

ContainerPipeline::ContainerPipeline(const LogOptions& options, const ContainerInfo& info,
                                     const std::string& hostname,
                                     stages::PipelineObserver* observer)
    : observer_(observer) {
  StreamLabelSet labels = BuildContainerLabels(info, options, hostname);
  if (!options.relabel_config.empty()) {
    stages::RelabelConfig relabel;
    try {
      relabel = stages::RelabelConfig::FromYaml(options.relabel_config);
    } catch (const stages::ConfigError& e) {
      throw OptionError(std::string("skald: invalid log-opt loki-relabel-config: ") + e.what());
    }
    std::vector<stages::Label> as_stage_labels;
    for (const auto& [k, v] : labels) as_stage_labels.push_back({k, v});
    stages::LabelSet relabeled = stages::LabelSet::FromVector(std::move(as_stage_labels));
    dropped_by_relabel_ = !relabel.Apply(relabeled);
    labels.clear();
    relabeled.ForEach([&](std::string_view k, std::string_view v) { labels.emplace_back(k, v); });
  }
  for (auto it = labels.begin(); it != labels.end();) {
    if (it->first != stages::kTenantLabel) {
      ++it;
      continue;
    }
    if (std::string why = stages::TenantIdError(it->second); !why.empty()) {
      throw OptionError(
          "skald: the container's labels (loki-external-labels, "
          "loki-relabel-config) set an invalid tenant in " +
          std::string(stages::kTenantLabel) + ": " + why);
    }
    tenant_ = it->second;
    it = labels.erase(it);
  }
  pipeline_ = BuildPipeline(options, info, observer);
  for (LogSource source : {LogSource::kStdout, LogSource::kStderr}) {
    StreamLabelSet with_source = labels;
    with_source.emplace_back("source", std::string(LogSourceName(source)));
    std::sort(with_source.begin(), with_source.end());
    std::string rendered;
    if (!dropped_by_relabel_) {
      if (std::string why = RenderStreamLabels(with_source, rendered); !why.empty()) {
        throw OptionError("skald: the container's labels are not valid for Loki: " + why);
      }
    }
    rendered_labels_[static_cast<int>(source)] = StreamSelector(std::move(rendered));
    std::vector<stages::Label> as_stage_labels;
    for (const auto& [k, v] : with_source) as_stage_labels.push_back({k, v});
    labels_[static_cast<int>(source)] = stages::LabelSet::FromVector(std::move(as_stage_labels));
  }
}

ContainerPipeline::~ContainerPipeline() = default;

void ContainerPipeline::Process(std::vector<LogLine>& lines, uint64_t origin,
                                std::vector<LokiEntry>& out) {
  if (dropped_by_relabel_) return;
  if (!pipeline_) {
    out.reserve(out.size() + lines.size());
    for (LogLine& l : lines) {
      LokiEntry& e = out.emplace_back();
      e.labels = rendered_labels_[static_cast<int>(l.source)];
      e.timestamp_ns = l.time_nano;
      e.line = std::move(l.line);
      e.tenant = tenant_;
    }
    return;
  }
  for (LogLine& l : lines) {
    stages::Entry e;
    e.labels = labels_[static_cast<int>(l.source)];
    e.timestamp_ns = l.time_nano;
    e.line = std::move(l.line);
    e.origin = origin;
    e.tenant = tenant_;
    pipeline_->Process(std::move(e), stage_output);
  }
  Convert(stage_output, out);
}

void ContainerPipeline::Flush(int64_t now_ns, bool final, std::vector<LokiEntry>& out) {
  if (!pipeline_) return;
  pipeline_->Flush(now_ns, final, stage_output);
  Convert(stage_output, out);
}

std::optional<uint64_t> ContainerPipeline::OldestHeldOrigin() const {
  return pipeline_ ? pipeline_->OldestHeldOrigin() : std::nullopt;
}

std::size_t ContainerPipeline::HeldBytes() const { return pipeline_ ? pipeline_->HeldBytes() : 0; }

void ContainerPipeline::Convert(std::vector<stages::Entry>& entries, std::vector<LokiEntry>& out) {
  for (stages::Entry& e : entries) {
    const StreamSelector* selector = SelectorFor(e.labels);
    if (selector == nullptr) {
      if (observer_ != nullptr) observer_->EntryDropped("invalid_labels");
      continue;
    }
    LokiEntry& converted = out.emplace_back();
    converted.labels = *selector;
    converted.timestamp_ns = e.timestamp_ns;
    converted.line = std::move(e.line);
    converted.tenant = std::move(e.tenant);
    for (auto& m : e.structured_metadata) {
      converted.structured_metadata.emplace_back(std::move(m.name), std::move(m.value));
    }
  }
  entries.clear();
}

const StreamSelector* ContainerPipeline::SelectorFor(const stages::LabelSet& labels) {
  for (int source = 0; source < 2; ++source) {
    if (!labels.SharesBaseWith(labels_[source])) continue;
    auto& cache = selectors_[source];
    std::size_t& bytes = selector_bytes_[source];
    const std::string_view overlay = labels.OverlayBytes();
    auto it = cache.find(overlay);
    if (it == cache.end()) {
      if (cache.size() >= kMaxCachedSelectors || bytes >= kMaxCachedSelectorBytes) {
        cache.clear();
        bytes = 0;
      }
      StreamSelector selector = RenderSelector(labels);
      bytes += overlay.size() + selector.view().size();
      it = cache.emplace(std::string(overlay), std::move(selector)).first;
    }
    return it->second.empty() ? nullptr : &it->second;
  }
  uncached_ = RenderSelector(labels);
  return uncached_.empty() ? nullptr : &uncached_;
}

}  // namespace skald
