// JournalStreamDecoder: one journal stream's reading side. It decodes the container's journal
// from a position on (JournalFrameReader: page cache when caught up, the disk when behind)
// into whole lines (LineAssembler) and hands them to the sink in hand-overs
// (plugin/ingest/hand_over_bounds.h), each with the position a restart must read again from.
// It pauses while the sink wants no more lines, stops a round after kRoundFrames so that other
// streams have their turn, skips a corrupt segment, and counts the complete lines a journal
// budget evicts before they were read (LineSink::OnEvicted). The FIFO reader's loop thread
// owns it: no method is thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "plugin/ingest/decode_counters.h"
#include "plugin/ingest/line_assembler.h"
#include "plugin/ingest/line_sink.h"
#include "plugin/journal/journal.h"
#include "plugin/journal/journal_frame_reader.h"
#include "plugin/journal/journal_position.h"

namespace skald {

class JournalStreamDecoder {
 public:
  // Frames decoded per Decode() at most: then other streams have their turn.
  static constexpr std::size_t kRoundFrames = 8192;

  // Reads `journal` from `from` on for stream `id`; installs the journal's evict hook (removed
  // by the destructor and at the end of the stream, unless a later decoder of the journal,
  // the container's next stream, has installed its own since).
  JournalStreamDecoder(uint64_t id, std::shared_ptr<Journal> journal, JournalPosition from,
                       std::size_t max_line_bytes, LineSink& sink, DecodeCounters& counters);
  ~JournalStreamDecoder();
  JournalStreamDecoder(const JournalStreamDecoder&) = delete;
  JournalStreamDecoder& operator=(const JournalStreamDecoder&) = delete;

  // Decodes what the stream may this round and hands the lines over. At the journal's end it
  // asks `may_end` (true: no FIFO feeds the journal any more); then it gives the sink the last
  // line and OnEnd, and returns false. True while the stream goes on; the flags below say why
  // it stopped.
  bool Decode(const std::function<bool()>& may_end);

  // Where a restart must read the journal again to produce every line not handed over.
  JournalPosition Resume() const;

  uint64_t id() const { return id_; }
  std::size_t max_line_bytes() const { return max_line_bytes_; }
  Journal& journal() const { return *journal_; }

  // Why the last Decode stopped, for the loop's next round (set by the loop too):
  bool more = true;     // stopped at the round limit, or fed since: decode again at once
  bool paused = false;  // the sink wanted no more lines: decode again after a wake-up
  bool retry = false;   // the journal could not be read: decode again after a while

 private:
  // The journal budget evicts `segment` (its evict hook; before the segment is deleted).
  void OnEvict(uint64_t segment);
  // Adds the frame read at `start` to the lines being assembled; returns the bytes of the lines
  // it completed (0, logged, for a frame that does not decode: it is skipped).
  std::size_t AddFrame(std::string_view body, const JournalPosition& start);
  void HandOver();
  // Adds the bytes the frame reader skipped (torn, evicted) or lost since the last report.
  void ReportReaderBytes();

  const uint64_t id_;
  const std::shared_ptr<Journal> journal_;
  const std::size_t max_line_bytes_;
  LineSink& sink_;
  DecodeCounters& counters_;
  std::unique_ptr<JournalFrameReader> reader_;
  LineAssembler assembler_;
  std::vector<LogLine> lines_;  // decoded, not yet handed over
  // Lines in the last hand-over: the sink takes lines_' storage with them, and the next
  // hand-over's is reserved this large at its first line (not before: an idle stream holds
  // none), instead of growing 1, 2, 4 .. 256 and moving every line at each step.
  std::size_t last_hand_over_lines_ = 0;
  AssemblerCounts reported_;
  uint64_t skipped_reported_ = 0;
  uint64_t lost_reported_ = 0;
  uint64_t evict_hook_ = 0;  // the journal's owner number of this decoder's hook
};

}  // namespace skald
