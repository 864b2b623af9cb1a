// multiline: joins continuation lines into the block started by a `firstline` match.
//
// Lines before the first `firstline` pass through. Afterwards lines join the open block with
// "\n" until the next firstline, `max_lines` (128), `max_wait_time` (3s) without a new line, the
// pipeline's max_line_size in bytes (a line that would take the block past it starts the next
// block), or the end of the stream (Flush with final). A continuation line with no open block
// (after such a flush) opens a block of its own. The block keeps the first line's
// labels, timestamp and extracted data. Time is the pipeline's clock.
#pragma once

#include <re2/re2.h>

#include <memory>
#include <optional>

#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

class MultilineStage final : public Stage {
 public:
  MultilineStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;
  void Flush(int64_t now_ns, bool final, Downstream& next) override;
  bool Holds() const override { return block_.has_value(); }
  size_t HeldBytes() const override { return block_ ? block_->line.size() : 0; }
  std::optional<uint64_t> OldestHeldOrigin() const override {
    return block_ ? std::optional<uint64_t>(block_->origin) : std::nullopt;
  }

 private:
  void EmitBlock(Downstream& next);

  StageContext ctx_;
  std::unique_ptr<RE2> firstline_;
  int64_t max_wait_ns_;
  int64_t max_lines_;
  std::size_t max_bytes_;  // 0 = no bound
  bool seen_firstline_ = false;
  std::optional<Entry> block_;
  int64_t block_lines_ = 0;
  int64_t last_line_ns_ = 0;
};

}  // namespace skald::stages
