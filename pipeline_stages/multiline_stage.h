// multiline: joins continuation lines into the block started by a `firstline` match.
//
// As in Promtail, every label set (as the entries enter the stage) is a stream of its own, with
// its own block: the plugin sets `source` before the stages, so a container's stderr lines never
// join a stdout block. In a stream, lines before the first `firstline` pass through. Afterwards
// lines join the stream's open block with "\n" until the next firstline, `max_lines` (128),
// `max_wait_time` (3s) without a new line in that stream, the pipeline's max_line_size in bytes
// (a line that would take the block past it starts the next block), or the end of the input
// (Flush with final). A continuation line with no open block (after such a flush) opens a block
// of its own. The block keeps the first line's labels, timestamp and extracted data. Time is the
// pipeline's clock.
//
// Bounds (the reference has none): at most kMaxStreams label sets are remembered; a new one
// beyond that makes the stage forget the least recently active one, emitting its open block
// first (its next lines then pass through until its next firstline, as for a new stream). Open
// blocks hold at most kMaxHeldBytes of lines together; past it the least recently active blocks
// are emitted early, all but the current one (which max_line_size bounds).
#pragma once

#include <re2/re2.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <unordered_map>

#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

class MultilineStage final : public Stage {
 public:
  static constexpr std::size_t kMaxStreams = 1000;
  static constexpr std::size_t kMaxHeldBytes = 16 * 1024 * 1024;

  MultilineStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;
  void Flush(int64_t now_ns, bool final, Downstream& next) override;
  bool Holds() const override { return !open_.empty(); }
  size_t HeldBytes() const override { return held_bytes_; }
  std::optional<uint64_t> OldestHeldOrigin() const override;

 private:
  struct Stream;
  using StreamList = std::list<Stream>;
  struct Stream {
    LabelSet labels;  // the key: the labels its lines enter the stage with
    uint64_t hash;
    std::optional<Entry> block;
    int64_t block_lines = 0;
    int64_t last_line_ns = 0;
    std::list<Stream*>::iterator open_pos;  // in open_ while block is set
  };

  // The stream of `labels`, or nullptr when none has seen a firstline (or it was forgotten).
  StreamList::iterator Find(const LabelSet& labels, uint64_t& hash, bool& hashed);
  StreamList::iterator Add(const LabelSet& labels, uint64_t hash, Downstream& next);
  void Forget(StreamList::iterator s, Downstream& next);
  void EmitBlock(Stream& s, Downstream& next);
  // Emits the open blocks silent for max_wait_time or longer.
  void EmitExpired(int64_t now_ns, Downstream& next);

  StageContext ctx_;
  std::unique_ptr<RE2> firstline_;
  int64_t max_wait_ns_;
  int64_t max_lines_;
  std::size_t max_bytes_;  // 0 = no bound
  // Every stream that has seen a firstline, least recently active first.
  StreamList streams_;
  std::unordered_multimap<uint64_t, StreamList::iterator> by_hash_;
  // The streams with an open block, least recently active first.
  std::list<Stream*> open_;
  std::size_t held_bytes_ = 0;  // line bytes of the open blocks
};

}  // namespace skald::stages
