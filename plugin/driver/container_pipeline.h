// ContainerPipeline: what a container's lines go through between its FIFO (or journal) and the
// Loki client: the labels its options give (see container_labels.h), its relabel rules, the
// `source` label, its pipeline stages, and each entry's labels rendered as a stream selector.
//
// Built from parsed options the way StartLogging checks them (throws OptionError naming the
// option); `skald check` and `skald dry-run` build the same thing. One thread feeds it. Entries
// whose labels Loki would refuse are dropped and reported to the observer as invalid_labels;
// `observer` also counts the stages' drops and hosts the metrics stage, and must outlive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pipeline_stages/entry.h"
#include "pipeline_stages/pipeline.h"
#include "pipeline_stages/pipeline_observer.h"
#include "plugin/config/container_info.h"
#include "plugin/config/log_options.h"
#include "plugin/ingest/line_assembler.h"
#include "plugin/loki/loki_entry.h"
#include "plugin/loki/stream_selector.h"

namespace skald {

class ContainerPipeline {
 public:
  ContainerPipeline(const LogOptions& options, const ContainerInfo& info,
                    const std::string& hostname, stages::PipelineObserver* observer);
  ~ContainerPipeline();

  // A relabel rule dropped the container's streams: nothing of it is to be sent.
  bool dropped_by_relabel() const { return dropped_by_relabel_; }
  bool has_stages() const { return pipeline_ != nullptr; }

  // Appends the entries `lines` become to `out` (the lines' text is moved). With stages,
  // `origin` numbers the batch for OldestHeldOrigin. Nothing is appended when relabel rules
  // dropped the container.
  void Process(std::vector<LogLine>& lines, uint64_t origin, std::vector<LokiEntry>& out);
  // Releases what stages hold whose time is up, or everything when `final` (the stream ended).
  void Flush(int64_t now_ns, bool final, std::vector<LokiEntry>& out);

  // The `origin` of the oldest batch the stages still hold an entry of; nullopt when they hold
  // none.
  std::optional<uint64_t> OldestHeldOrigin() const;
  // Bytes of entries the stages hold.
  std::size_t HeldBytes() const;

  // The labels of a source's lines as they enter the stages (container labels after relabel
  // rules, with `source`).
  const stages::LabelSet& labels(LogSource source) const {
    return labels_[static_cast<int>(source)];
  }

 private:
  void Convert(std::vector<stages::Entry>& entries, std::vector<LokiEntry>& out);
  // The selector of `labels`, cached; null when Loki would refuse them.
  const StreamSelector* SelectorFor(const stages::LabelSet& labels);

  struct OverlayHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  stages::PipelineObserver* observer_;
  bool dropped_by_relabel_ = false;
  // The tenant a relabel rule chose with the __tenant_id__ label (not sent as a label); empty:
  // the client's own. A tenant stage may still choose another per entry.
  std::string tenant_;
  StreamSelector rendered_labels_[2];  // stdout, stderr: the selectors without stages
  std::unique_ptr<stages::Pipeline> pipeline_;
  stages::LabelSet labels_[2];
  // Selectors of the pipeline's output whose labels are labels_[source] and an overlay the
  // stages made, by the overlay's bytes (empty: Loki would refuse them).
  std::unordered_map<std::string, StreamSelector, OverlayHash, std::equal_to<>> selectors_[2];
  std::size_t selector_bytes_[2] = {0, 0};  // what selectors_[source] holds
  StreamSelector uncached_;  // the last selector of labels that are not in `selectors_`
};

}  // namespace skald
