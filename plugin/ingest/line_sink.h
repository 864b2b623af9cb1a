// LineSink: where the FIFO reader gives the lines it decoded (the driver), and what it asks
// of it before reading more.
#pragma once

#include <cstdint>
#include <vector>

#include "plugin/ingest/line_assembler.h"
#include "plugin/journal/journal_position.h"

namespace skald {

class LineSink {
 public:
  virtual ~LineSink() = default;
  // Called on the reader thread; `lines` may be moved from. For a journal stream, `resume` is
  // where a restart must start reading to produce every line after these (before a line whose
  // partial chunks are still being assembled, if any); for a memory stream it is {0, 0}.
  virtual void OnLines(uint64_t stream_id, std::vector<LogLine>& lines,
                       const JournalPosition& resume) = 0;
  virtual void OnEnd(uint64_t stream_id, bool corrupt) = 0;
  // Journal streams: false pauses decoding until Wake() (the data waits on disk).
  virtual bool WantsLines(uint64_t /*stream_id*/) { return true; }
  // Journal streams whose journal refuses bytes (memory mode): whether the stream's Loki takes
  // lines now. While it does, a full memory queue holds the FIFO (the container waits at
  // Loki's pace) instead of dropping the oldest lines as disk_full.
  virtual bool LokiTakesLines(uint64_t /*stream_id*/) { return false; }
  // Memory streams: true holds the FIFO unread (the container waits) until it turns false;
  // asked before every read and every kHeldRecheck while held.
  virtual bool HoldsMemoryStream(uint64_t /*stream_id*/) { return false; }
  // Journal streams: `lines` complete lines were evicted by the journal budget before they
  // were read (counted as dropped, reason journal_full).
  virtual void OnEvicted(uint64_t /*stream_id*/, uint64_t /*lines*/) {}
};

}  // namespace skald
