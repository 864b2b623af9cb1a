// JournalSegments: one journal's segment list (guarded by `mu`) and the file-system operations
// on it. The Journal owns it; its writers and frame readers share it through the Journal. Not
// a public interface: the fields are the journal's state. The functions take `mu` themselves
// unless their name ends in Locked (clang's -Wthread-safety checks both).
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "plugin/journal/journal.h"
#include "plugin/journal/journal_format.h"
#include "plugin/journal/journal_position.h"

namespace skald {

struct JournalSegments {
  struct Segment {
    uint64_t size = 0;      // bytes in the file; 0 while it does not exist yet
    bool has_file = false;  // false: reserved by a live session that has not had a byte yet
    bool live = false;      // a marker names a FIFO; a writer may (still) append
    bool writer = false;    // a Writer object is attached now
    std::optional<uint64_t> readable;  // sealed: bytes up to the last complete frame
    // A reader could not open or read this live segment (its file was removed, an I/O
    // error): the writer moves to a new segment at its next write.
    bool unreadable = false;
    // A live segment's frames from offset 0 up to here are whole: a reader that entered it at 0
    // has taken them (a boundary, never past `size`). Its writer's rotation and seal scan from
    // here, not again over what was read already.
    uint64_t walked = 0;
    std::string fifo_path;
  };

  std::filesystem::path dir;  // set before the journal is shared

  // One eviction at a time; held across the hook (`mu` is not).
  absl::Mutex evict_mu ABSL_ACQUIRED_BEFORE(mu);
  mutable absl::Mutex mu;
  mutable absl::CondVar changed;  // signalled when `version` moves
  JournalLimits limits ABSL_GUARDED_BY(mu);
  std::map<uint64_t, Segment> segments ABSL_GUARDED_BY(mu);
  // seq -> bytes, for readers that jump over them
  std::map<uint64_t, uint64_t> evicted ABSL_GUARDED_BY(mu);
  uint64_t next_seq ABSL_GUARDED_BY(mu) = 1;
  uint64_t version ABSL_GUARDED_BY(mu) = 0;
  JournalPosition acknowledged ABSL_GUARDED_BY(mu);
  std::function<void(uint64_t)> evict_hook ABSL_GUARDED_BY(mu);
  uint64_t evict_hook_owner ABSL_GUARDED_BY(mu) = 0;  // of the hook set last
  // The plugin-wide budget (plugin/journal/journal_retention.h): the live segment is to be sealed
  // at the writer's next write so that it can be evicted; with block_when_full, the journal may not
  // grow until the budget has room again.
  std::atomic<bool> rotation_requested{false};
  std::atomic<bool> over_budget{false};

  std::filesystem::path SegmentPath(uint64_t seq) const {
    return dir / JournalFileName(seq, kJournalSegmentExt);
  }
  std::filesystem::path MarkerPath(uint64_t seq) const {
    return dir / JournalFileName(seq, kJournalMarkerExt);
  }

  void Notify() { changed.SignalAll(); }

  // Lists the directory's segments and markers (once, before anything else uses the list),
  // removes leftovers of interrupted atomic replaces and empty sealed segments, and repairs
  // rotations a crash interrupted. Throws std::system_error when the directory cannot be read.
  void ScanLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // ScanLocked's walk of the directory: records the segment files and next_seq, removes
  // unfinished temporary files, and returns the session markers (FIFO path by segment).
  std::map<uint64_t, std::string> ListFilesLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  void RepairInterruptedRotationLocked(uint64_t older, uint64_t newer)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  // Writer side.
  uint64_t Reserve(const std::string& fifo_path) ABSL_LOCKS_EXCLUDED(mu);
  // Undoes Reserve() of a rotation that failed: removes the marker, any file, the entry.
  void Unreserve(uint64_t seq) ABSL_LOCKS_EXCLUDED(mu);
  // Returns true when a reader found the segment unreadable (the writer should rotate).
  bool Publish(uint64_t seq, uint64_t size) ABSL_LOCKS_EXCLUDED(mu);
  void Seal(uint64_t seq, uint64_t readable) ABSL_LOCKS_EXCLUDED(mu);
  // Segment::walked of `seq` (0 when it is not listed).
  uint64_t Walked(uint64_t seq) const ABSL_LOCKS_EXCLUDED(mu);
  bool RoomFor(uint64_t rotating_seq, uint64_t rotating_boundary) ABSL_LOCKS_EXCLUDED(mu);
  // Journal::EvictOldest.
  uint64_t EvictOldest(bool acknowledged_only = false) ABSL_LOCKS_EXCLUDED(mu);
  void EvictWhileOver() ABSL_LOCKS_EXCLUDED(mu);

  // Reader side.
  uint64_t SealedReadable(uint64_t seq) ABSL_LOCKS_EXCLUDED(mu);
  // The file of `seq` is gone: a sealed segment is forgotten (its bytes are lost), a live one
  // is flagged for its writer. Returns its size, or nullopt when it is no longer listed
  // (evicted meanwhile).
  std::optional<uint64_t> MarkUnreadable(uint64_t seq) ABSL_LOCKS_EXCLUDED(mu);
  // The size of `seq`, or nullopt when it is not listed.
  std::optional<uint64_t> ListedSize(uint64_t seq) const ABSL_LOCKS_EXCLUDED(mu);

  bool AcknowledgedLocked(uint64_t seq, uint64_t readable) const ABSL_SHARED_LOCKS_REQUIRED(mu) {
    return acknowledged.segment > seq ||
           (acknowledged.segment == seq && acknowledged.offset >= readable);
  }
};

}  // namespace skald
