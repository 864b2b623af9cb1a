// Journal: one container's log stream on disk, exactly as the daemon framed it.
//
// A journal is a directory of rotated segment files holding raw frames from the container's
// FIFOs, and two metadata files (plugin/journal/journal_format.h describes them). Bytes move from
// the FIFO into the active segment with splice(2), so a byte leaves the FIFO only into the journal:
// a kill -9 loses nothing the daemon wrote, and on restart a writer resumed on the same FIFO
// completes a frame that the kill cut in half.
//
// A segment is "live" while a writer may still append to it and "sealed" afterwards. A
// Journal::Writer (plugin/journal/journal_writer.h) appends and rotates at frame boundaries; any
// number of JournalFrameReaders (plugin/journal/journal_frame_reader.h) read frames in order. All
// the journals of one state directory belong to a JournalStore (plugin/journal/journal_store.h).
//
// Budgets: beyond `max_segments` the oldest segment is evicted (deleted), after the evict hook
// has seen it (its owner counts the lines it had not shipped yet). With `block_when_full`, a
// segment holding data at or after the acknowledged position is never evicted: the writer
// stops taking bytes (SpliceFrom returns kFull) until acknowledgements move on.
//
// Threads: one writer per live segment (the FIFO reader's thread); any number of readers on
// other threads (shipping, `docker logs`). The segment list (plugin/journal/journal_segments.h) is
// guarded by the journal's mutex; readers see bytes as soon as SpliceFrom returns.
// The journal knows bytes, frames, segments and positions; not Loki, not stages, not Docker.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/journal/journal_position.h"

namespace skald {

struct JournalSegments;

struct JournalLimits {
  int64_t max_segment_bytes = 20 * 1024 * 1024;  // rotate past this (max-size); < 0: never
  int max_segments = 5;                          // keep at most this many (max-file), >= 1
  bool block_when_full = false;                  // loki-on-full=block
};

class Journal {
 public:
  class Writer;

  // Opens `dir`, creating it (and its parents) when missing, and scans its segments.
  // Throws std::system_error naming the path when it cannot.
  static std::shared_ptr<Journal> Open(const std::filesystem::path& dir, JournalLimits limits);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  const std::filesystem::path& dir() const;
  void SetLimits(JournalLimits limits);
  JournalLimits limits() const;

  // --- Metadata (info.json replaced atomically, the cursor rewritten in place; the read
  // functions return nullopt when absent or unreadable).
  void WriteInfo(std::string_view json);
  std::optional<std::string> ReadInfo() const;
  void WriteCursor(JournalPosition cursor);
  std::optional<JournalPosition> ReadCursor() const;

  // --- Segments.
  std::vector<uint64_t> Segments() const;  // ascending
  // Bytes readers may read in `segment`: its size, or for a sealed segment its size up to the
  // last complete frame boundary known. 0 for a segment that does not exist.
  uint64_t ReadableBytes(uint64_t segment) const;
  bool IsSealed(uint64_t segment) const;  // true also for a segment that does not exist
  uint64_t TotalBytes() const;            // all segment files
  // The position right after the last byte written (the journal's end); {0,0} when empty.
  JournalPosition End() const;
  // The first position of the oldest segment; {0,0} when empty.
  JournalPosition Begin() const;
  // Modification time of the newest segment (of the directory when there is none).
  std::filesystem::file_time_type LastWrite() const;

  // Live sessions found on disk (markers left by a writer that was not sealed, e.g. after a
  // crash): the segment and the FIFO path it was written from.
  struct LiveSession {
    uint64_t segment;
    std::string fifo_path;
  };
  std::vector<LiveSession> LiveSessions() const;

  // --- Writers (Journal::Writer is defined in plugin/journal/journal_writer.h).
  // Begins a session: a new segment after the last one, marked live with `fifo_path`.
  std::unique_ptr<Writer> StartWriter(const std::string& fifo_path);
  // Continues the live `session` found on disk (same segment, appends at its end).
  std::unique_ptr<Writer> ResumeWriter(const LiveSession& session);
  // Seals a live session found on disk whose FIFO is gone (no writer will come back).
  void SealSession(const LiveSession& session);

  // --- Eviction and acknowledgement.
  // Called (on the evicting thread, without the journal's mutex held) just before `segment`
  // is deleted; the file can still be read then. One hook at a time: setting one replaces the
  // one before. Returns its owner number, for ClearEvictHook.
  uint64_t SetEvictHook(std::function<void(uint64_t segment)> hook);
  // Removes the hook SetEvictHook returned `owner` for, unless another has replaced it since (a
  // stream of the same container that took the journal over).
  void ClearEvictHook(uint64_t owner);
  // The oldest position not yet acknowledged (block_when_full keeps segments from it on).
  void SetAcknowledged(JournalPosition position);
  // Deletes the oldest segment unless it is live (or, with block_when_full or
  // `acknowledged_only`, holds data at or after the acknowledged position). Returns the bytes
  // freed (0: nothing evicted).
  uint64_t EvictOldest(bool acknowledged_only = false);
  // True when the oldest segment is the one a writer appends to (nothing else to evict).
  bool OldestIsLive() const;
  // The plugin-wide budget: the live segment is sealed at the writer's next write (even below
  // max-size, or with max-size -1) so that a later EvictOldest can take it.
  void RequestRotation();
  // The plugin-wide budget is spent and nothing of this journal can go: with block_when_full
  // its writer takes no more bytes (the container waits) until this is set false.
  void SetOverBudget(bool over);
  bool OverBudget() const;
  // Deletes every segment and the metadata, then the directory. Live writers must be gone.
  void Remove();

  // --- Change notification (followers of a live journal).
  // A counter bumped by every append, rotation, seal and eviction.
  uint64_t Version() const;
  // Waits until Version() != seen or `timeout` passes; returns Version().
  uint64_t WaitForChange(uint64_t seen, std::chrono::milliseconds timeout) const;
  // Wakes every WaitForChange (the version moves on without new data), so that followers
  // look at what else changed (the server stopping).
  void Interrupt();

 private:
  explicit Journal(std::unique_ptr<JournalSegments> segments);
  std::unique_ptr<JournalSegments> segments_;
  std::weak_ptr<Journal> self_;  // handed to writers
  friend class Writer;
  friend class JournalFrameReader;  // one consistent view of a segment per look
};

}  // namespace skald
