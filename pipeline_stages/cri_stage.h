// cri: parses a CRI record "<RFC3339Nano time> <stdout|stderr> <flags> <content>": the line
// becomes content, label `stream` is set, the timestamp comes from time. Partial records
// (flags "P") are held and merged, in order, with the following ones up to the next record that
// is not partial, or `max_partial_lines` (100) records; `max_partial_line_size` (bytes, 0 = no
// limit) flushes, or with `max_partial_line_size_truncate` cuts, a merge that grows too long.
// The merged entry keeps the first record's labels and timestamp.
#pragma once

#include <optional>

#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

class CriStage final : public Stage {
 public:
  CriStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;
  void Flush(int64_t now_ns, bool final, Downstream& next) override;
  bool Holds() const override { return partial_.has_value(); }
  size_t HeldBytes() const override { return partial_ ? partial_->line.size() : 0; }
  std::optional<uint64_t> OldestHeldOrigin() const override {
    return partial_ ? std::optional<uint64_t>(partial_->origin) : std::nullopt;
  }

 private:
  void EmitPartial(Downstream& next);

  int64_t max_partial_lines_;
  uint64_t max_partial_line_size_;
  bool truncate_;
  std::optional<Entry> partial_;
  int64_t partial_lines_ = 0;
};

}  // namespace skald::stages
