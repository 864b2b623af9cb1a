// MemoryFallback: the lines of a FIFO session whose journal refuses bytes (disk full, an I/O
// error, its directory removed) with loki-on-full=drop: FifoReader reads the FIFO itself then,
// and this decodes what it read into lines at once and keeps them until the sink's window
// takes them.
//
// At most kMaxQueuedBytes of lines wait: beyond, the oldest are dropped (the reader counts them
// as `disk_full`), one line always stays. Lines go to the sink in hand-overs bounded as
// the reader's others are (hand_over_bounds.h). When journaling resumes, the line being assembled
// ends (Finish) and the lines still queued stay until the window takes them or the session ends; a
// later refusal starts decoding again (Start) behind them. Not thread-safe: the reader's loop
// thread owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/ingest/line_assembler.h"

namespace skald {

class MemoryFallback {
 public:
  static constexpr std::size_t kMaxQueuedBytes = 1024 * 1024;

  // Decoding starts (again) with a new assembler. `pending`: the start of a frame the journal
  // could not take whose rest is still in the FIFO (empty: the FIFO is at a frame boundary).
  void Start(std::string pending, std::size_t max_line_bytes);
  // Decodes `bytes` read from the FIFO after what is pending; complete lines are queued.
  // Returns the bytes skipped to find the next frame (out of step with the frames: the
  // journal could not hand back the start of the frame it was writing). After Start only.
  uint64_t Decode(std::string_view bytes);
  // The FIFO ended, or its bytes go into the journal again: the open line is queued as it is
  // and nothing stays pending. After Start only.
  void Finish();

  // Bytes read, not decoded: the start of a frame at most.
  const std::string& pending() const { return pending_; }
  // The assembler of the last Start (its counts; the reader reports them), and what of them
  // was reported already.
  const LineAssembler& assembler() const { return *assembler_; }
  AssemblerCounts& reported() { return reported_; }

  // Drops the oldest lines while more than kMaxQueuedBytes are queued (the newest line always
  // stays); returns how many went.
  uint64_t DropOverflow();
  // Moves the oldest lines into `out` (cleared first): one hand-over (hand_over::Full), at
  // least one line when any is queued.
  void TakeHandOver(std::vector<LogLine>& out);
  bool empty() const { return queued_.empty(); }
  std::size_t queued_lines() const { return queued_.size(); }
  std::size_t queued_bytes() const { return queued_bytes_; }

 private:
  void Queue(std::vector<LogLine>& lines);

  std::string pending_;
  std::unique_ptr<LineAssembler> assembler_;
  AssemblerCounts reported_;
  std::deque<LogLine> queued_;  // decoded, waiting for the sink's window
  std::size_t queued_bytes_ = 0;
  std::vector<LogLine> decoded_;  // scratch
};

}  // namespace skald
