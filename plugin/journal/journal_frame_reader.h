// JournalFrameReader: reads frames from a journal, from a position on, across segments in
// order. At the end of a live segment it reports kWait; it moves on to the next segment only
// once the current one is sealed. When its segment was evicted it continues at the oldest
// segment left (and counts the bytes it skipped). A segment that cannot be opened or read
// (removed by hand, an I/O error) is given up: its unread bytes are counted as lost by this
// reader, one whose file is gone is forgotten by the journal, and the reader goes on with the
// next. A failure that passes (EMFILE, ENOMEM) is kRetry: nothing is given up. Never throws.
// One thread uses a reader at a time; any number of readers may read one journal.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "plugin/journal/journal.h"
#include "plugin/journal/journal_position.h"

namespace skald {

class JournalFrameReader {
 public:
  enum class Status {
    kFrame,    // `body` is one frame body (LogEntry bytes, no prefix); valid until Next()
    kWait,     // at the end of a live segment: more may come
    kEnd,      // everything is read and every segment is sealed
    kCorrupt,  // a length prefix over kMaxFrameBytes; the reader has moved to the next segment
    kRetry,    // a segment could not be opened for a moment (no descriptor, no memory): ask again
  };
  JournalFrameReader(std::shared_ptr<Journal> journal, JournalPosition from);
  ~JournalFrameReader();
  JournalFrameReader(const JournalFrameReader&) = delete;
  JournalFrameReader& operator=(const JournalFrameReader&) = delete;

  // `start` is the position of the frame's length prefix; position() is right after it.
  Status Next(std::string_view* body, JournalPosition* start);
  JournalPosition position() const;
  // Bytes skipped: torn frames at the end of sealed segments, evicted data jumped over.
  uint64_t skipped_bytes() const;
  // Bytes of segments that could not be read (their lines are lost).
  uint64_t lost_bytes() const;

 private:
  struct State;
  // Next's steps; each returns what Next returns, or nullopt (false) when Next goes on.
  // No segment is open: opens the first one from the position on (counting evicted ones
  // jumped over as skipped).
  std::optional<Status> OpenNextSegment();
  // A complete frame in the buffer, within what is readable, or the segment's corruption;
  // sets `avail` (bytes buffered from the position) and `needed` (for the next frame).
  std::optional<Status> TakeFrame(std::string_view* body, JournalPosition* start, uint64_t& avail,
                                  uint64_t& needed);
  // Reads more of the segment when its readable part holds more than the buffer; true when
  // Next goes on (more came, or the segment was given up).
  bool ReadMore(uint64_t avail, uint64_t needed);
  // The segment was not sealed: how far it is readable now (kWait: no further).
  std::optional<Status> LookUpLimit();

  std::unique_ptr<State> state_;
};

}  // namespace skald
