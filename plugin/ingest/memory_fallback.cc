#include "plugin/ingest/memory_fallback.h"

#include "plugin/ingest/frame_codec.h"
#include "plugin/ingest/hand_over_bounds.h"

namespace skald {

void MemoryFallback::Start(std::string pending, std::size_t max_line_bytes) {
  pending_ = std::move(pending);
  assembler_ = std::make_unique<LineAssembler>(max_line_bytes);
  reported_ = {};
}

uint64_t MemoryFallback::Decode(std::string_view bytes) {
  uint64_t skipped = 0;
  pending_.append(bytes);
  std::string_view rest = pending_;
  std::string_view body;
  std::size_t used = 0;
  decoded_.clear();
  for (;;) {
    const FrameStatus st = NextFrame(rest, &body, &used);
    if (st == FrameStatus::kNeedMore) break;
    auto entry = st == FrameStatus::kOk ? DecodeLogEntry(body) : std::nullopt;
    if (!entry) {
      // Out of step with the frames: look for the next frame one byte on.
      ++skipped;
      rest.remove_prefix(1);
      continue;
    }
    assembler_->Add(*entry, decoded_);
    rest.remove_prefix(used);
  }
  pending_.erase(0, pending_.size() - rest.size());
  Queue(decoded_);
  return skipped;
}

void MemoryFallback::Finish() {
  decoded_.clear();
  assembler_->Finish(decoded_);
  Queue(decoded_);
  pending_.clear();
}

void MemoryFallback::Queue(std::vector<LogLine>& lines) {
  for (LogLine& l : lines) {
    queued_bytes_ += l.line.size();
    queued_.push_back(std::move(l));
  }
  lines.clear();
}

uint64_t MemoryFallback::DropOverflow() {
  uint64_t dropped = 0;
  while (queued_bytes_ > kMaxQueuedBytes && queued_.size() > 1) {
    queued_bytes_ -= queued_.front().line.size();
    queued_.pop_front();
    ++dropped;
  }
  return dropped;
}

void MemoryFallback::TakeHandOver(std::vector<LogLine>& out) {
  out.clear();
  std::size_t bytes = 0;
  while (!queued_.empty() && !hand_over::Full(out.size(), bytes)) {
    bytes += queued_.front().line.size();
    queued_bytes_ -= queued_.front().line.size();
    out.push_back(std::move(queued_.front()));
    queued_.pop_front();
  }
}

}  // namespace skald
