// Journal: one container's log stream on disk, exactly as the daemon framed it.
//
// A journal is a directory `<state>/containers/<container id>/` holding rotated segment files
// `<seq>.seg` (seq: 10 decimal digits, ascending; a segment is named once and never renamed).
// Each segment holds raw frames `[uint32 big-endian length][LogEntry]` from one FIFO, and starts
// at a frame boundary. Bytes move from the FIFO into the active segment with splice(2), so a
// byte leaves the FIFO only into the journal: a kill -9 loses nothing the daemon wrote, and on
// restart a writer resumed on the same FIFO completes a frame that the kill cut in half.
//
// A segment is "live" while a writer may still append to it (a marker file `<seq>.live` holds
// the FIFO path; it survives a crash so the session can be resumed) and "sealed" afterwards.
// Rotation happens only at frame boundaries: when the active segment reaches
// `max_segment_bytes`, the bytes after its last complete frame are copied to the start of the
// new segment before the old one is truncated to that boundary. A sealed segment that still
// ends inside a frame (a crash between those two steps, or a session that ended mid-frame) is
// read only up to its last complete frame; the torn bytes are skipped and counted.
//
// Budgets: beyond `max_segments` the oldest segment is evicted (deleted), after the evict hook
// has seen it (its owner counts the lines it had not shipped yet). With `block_when_full`, a
// segment holding data at or after the acknowledged position is never evicted: the writer
// stops taking bytes (SpliceFrom returns kFull) until acknowledgements move on.
//
// Metadata beside the segments: `info.json` (the StartLogging Info of the latest session: the
// labels and options a restarted plugin needs to replay the journal) and `cursor` (the oldest
// position not yet acknowledged by Loki), each replaced atomically (write temp file, rename).
//
// Threads: one writer per live segment (the FIFO reader's thread); any number of
// JournalFrameReaders on other threads (shipping, `docker logs`). The segment list is guarded
// by the journal's mutex; readers see bytes as soon as SpliceFrom returns.
// The journal knows bytes, frames, segments and positions; not Loki, not stages, not Docker.
#pragma once

#include <chrono>
#include <compare>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/journal_position.h"

namespace skald {

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

  // --- Metadata (atomic replace; the read functions return nullopt when absent/unreadable).
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

  // --- Writers.
  // Begins a session: a new segment after the last one, marked live with `fifo_path`.
  std::unique_ptr<Writer> StartWriter(const std::string& fifo_path);
  // Continues the live `session` found on disk (same segment, appends at its end).
  std::unique_ptr<Writer> ResumeWriter(const LiveSession& session);
  // Seals a live session found on disk whose FIFO is gone (no writer will come back).
  void SealSession(const LiveSession& session);

  // --- Eviction and acknowledgement.
  // Called (on the evicting thread, without the journal's mutex held) just before `segment`
  // is deleted; the file can still be read then.
  void SetEvictHook(std::function<void(uint64_t segment)> hook);
  // The oldest position not yet acknowledged (block_when_full keeps segments from it on).
  void SetAcknowledged(JournalPosition position);
  // Deletes the oldest segment unless it is live (or, with block_when_full, holds data at or
  // after the acknowledged position). Returns the bytes freed (0: nothing evicted).
  uint64_t EvictOldest();
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
  struct Impl;
  explicit Journal(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  friend class Writer;
  friend class JournalFrameReader;  // one consistent view of a segment per look
};

class Journal::Writer {
 public:
  enum class Status {
    kMoved,       // `bytes` > 0 bytes moved
    kWouldBlock,  // nothing to read now (EAGAIN)
    kEof,         // the FIFO's writer closed it
    kFull,        // block_when_full and no room: nothing was taken from the FIFO
  };
  struct Result {
    Status status;
    std::size_t bytes = 0;
  };

  ~Writer();  // does NOT seal: a writer destroyed by shutdown is resumed at the next start
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Moves at most `max_bytes` from `fd` (a FIFO opened O_NONBLOCK) into the journal with
  // splice(2) (falls back to read+write where splice is refused), then rotates and evicts as
  // the limits say. Throws std::system_error on a write error (disk full, ...) when nothing
  // was moved; bytes it could not take are still in the FIFO, and a rotation that failed
  // left the writer on its segment (it is tried again next time).
  Result SpliceFrom(int fd, std::size_t max_bytes);
  // Appends bytes (tests, and sources that are not FIFOs). Rotates and evicts the same way.
  // Throws std::system_error on a write error.
  void Append(std::string_view bytes);
  // Cuts the active segment after its last complete frame and returns the bytes cut (the
  // start of a frame whose rest is still in the FIFO), so that they can be carried elsewhere
  // when the journal cannot take more. Throws std::system_error on an I/O error.
  std::string CutAtFrameBoundary();
  // The session is over (EOF, or the journal is given up): the active segment becomes sealed
  // and its marker is removed. Never throws; errors are logged (a marker that could not be
  // removed is sealed again at the next start).
  void Seal();
  uint64_t segment() const;  // the active segment

 private:
  friend class Journal;
  struct State;
  explicit Writer(std::shared_ptr<Journal> journal, std::unique_ptr<State> state);
  std::shared_ptr<Journal> journal_;
  std::unique_ptr<State> state_;
};

// Reads frames from a journal, from a position on, across segments in order.
// At the end of a live segment it reports kWait; it moves on to the next segment only once
// the current one is sealed. When its segment was evicted it continues at the oldest segment
// left (and counts the bytes it skipped). A segment that cannot be opened or read (removed by
// hand, an I/O error) is given up: its unread bytes are counted as lost by this reader, one
// whose file is gone is forgotten by the journal, and the reader goes on with the next. A
// failure that passes (EMFILE, ENOMEM) is kRetry: nothing is given up. Never throws.
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
  std::unique_ptr<State> state_;
};

// All journals under one state directory (`<root>/containers/<id>/`), and the plugin-wide
// budget over them. A store holds an exclusive lock on `<root>/lock` for its life: two copies
// of the plugin (say `skald` and an alias `loki`) sharing a state directory would replay each
// other's journals.
class JournalStore {
 public:
  // Another process holds the state directory's lock.
  class InUse : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
  };

  // Throws std::system_error naming `root` when it cannot be created or written, InUse when
  // another process holds its lock.
  JournalStore(std::filesystem::path root, uint64_t max_total_bytes);
  ~JournalStore();
  JournalStore(const JournalStore&) = delete;
  JournalStore& operator=(const JournalStore&) = delete;

  const std::filesystem::path& root() const;
  std::filesystem::path ContainerDir(const std::string& container_id) const;
  // Container ids that have a journal directory.
  std::vector<std::string> ContainerIds() const;
  uint64_t max_total_bytes() const;

 private:
  std::filesystem::path root_;
  uint64_t max_total_bytes_;
  int lock_fd_ = -1;
};

}  // namespace skald
