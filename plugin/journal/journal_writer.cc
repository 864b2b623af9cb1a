#include "plugin/journal/journal_writer.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "plugin/journal/frame_format.h"
#include "plugin/journal/journal_files.h"
#include "plugin/journal/journal_format.h"
#include "plugin/journal/journal_segments.h"

namespace skald {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kCopyBlock = 64 * 1024;  // read+write where splice is refused

// The bytes the writer may take now: up to the segment limit, or, past it (a frame bigger
// than the limit), up to the end of that frame so the rotation happens right after it.
std::size_t Budget(const JournalLimits& limits, uint64_t size, uint64_t next_end,
                   std::size_t max_bytes) {
  if (limits.max_segment_bytes < 0) return max_bytes;
  auto max = static_cast<uint64_t>(limits.max_segment_bytes);
  if (size < max) return static_cast<std::size_t>(std::min<uint64_t>(max_bytes, max - size));
  if (next_end > size)
    return static_cast<std::size_t>(std::min<uint64_t>(max_bytes, next_end - size));
  return max_bytes;
}

UniqueFd CreateSegmentFile(const fs::path& path) {
  UniqueFd fd(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, kJournalFileMode));
  if (!fd) ThrowJournalError(errno, "create", path);
  return fd;
}

}  // namespace

struct Journal::Writer::State {
  uint64_t seq = 0;
  fs::path path;  // the segment file
  std::string fifo_path;
  UniqueFd fd;            // the segment file, O_RDWR; empty until its first byte
  uint64_t size = 0;      // bytes in the segment file
  uint64_t boundary = 0;  // a complete-frame boundary in the segment (the last one scanned)
  uint64_t next_end = 0;  // no boundary after `boundary` can exist while size < next_end
  bool splice_works = true;
  bool sealed = false;
  bool rotate_now = false;  // a reader cannot read the segment: rotate even below the limit
  std::unique_ptr<char[]> copy_buffer;  // read+write fallback only

  // Rotates when the segment is at its limit (or rotate_now) and holds a complete frame;
  // returns false when `may_refuse` and block_when_full forbid the eviction the rotation
  // needs. A rotation that fails (disk full, I/O error) throws and leaves the writer on its
  // segment, as if it had not been tried.
  bool MaybeRotate(JournalSegments& segs, const JournalLimits& limits, bool may_refuse);
  // The segment's frames up to `size`, walked from the furthest boundary known: the last one
  // scanned, or the one a reader took every frame up to (Segment::walked).
  FrameScan ScanTail(const JournalSegments& segs) {
    boundary = std::max(boundary, std::min(segs.Walked(seq), size));
    return ScanFrames(fd.get(), boundary, size, path);
  }
  // The rotation's steps: whether the segment is due; the new segment `new_seq` with the bytes
  // after `boundary` (none when `corrupt`), the old one cut at `boundary` (`tail`: the bytes
  // copied); the segments' table told of both.
  bool DueForRotation(const JournalSegments& segs, const JournalLimits& limits) const;
  UniqueFd StartSegmentWithTail(JournalSegments& segs, uint64_t new_seq, const fs::path& new_path,
                                bool corrupt, uint64_t& tail);
  void RecordRotation(JournalSegments& segs, uint64_t new_seq, bool corrupt, uint64_t tail);

  // Moves at most `want` bytes from `in` to the segment at offset `off`: one splice, or a read
  // and a write where splice is refused. As read(2): the bytes moved, 0 at end of input, -1
  // with errno (EINVAL from splice is taken care of: it moves nothing, so returns -1 with
  // EINTR, to be tried again). Throws when the write fails after a read (those bytes are lost).
  ssize_t MoveChunk(int in, std::size_t want, uint64_t off);
  // What one MoveChunk asks of `in` for `want`: a splice all of it, a read one copy block. A
  // chunk that moves fewer bytes than this found the input empty.
  std::size_t ChunkAsk(std::size_t want) const {
    return splice_works ? want : std::min(kCopyBlock, want);
  }
  // MoveChunk until `n` bytes moved after `size` (not yet counted in it), the input is empty
  // (`drained`: a chunk moved fewer bytes than it asked for, or would block), the input ends
  // (`eof`), or an error (`err`, else 0). Returns the bytes moved.
  std::size_t MoveUpTo(int in, std::size_t n, JournalSegments& segs, bool& eof, bool& drained,
                       int& err);

  // The segment becomes `seq`, empty (its file is created by the first byte).
  void Switch(uint64_t new_seq, const fs::path& new_path) {
    seq = new_seq;
    path = new_path;
    size = boundary = next_end = 0;
  }
};

Journal::Writer::Writer(std::shared_ptr<Journal> journal, uint64_t seq, std::string fifo_path,
                        UniqueFd fd, uint64_t size)
    : journal_(std::move(journal)), state_(std::make_unique<State>()) {
  state_->fifo_path = std::move(fifo_path);
  state_->Switch(seq, journal_->segments_->SegmentPath(seq));
  state_->fd = std::move(fd);
  state_->size = size;
}

Journal::Writer::~Writer() {
  state_->fd.reset();
  if (state_->sealed) return;
  absl::MutexLock lock(&journal_->segments_->mu);
  auto it = journal_->segments_->segments.find(state_->seq);
  if (it != journal_->segments_->segments.end()) it->second.writer = false;
}

uint64_t Journal::Writer::segment() const { return state_->seq; }

ssize_t Journal::Writer::State::MoveChunk(int in, std::size_t want, uint64_t off) {
  if (splice_works) {
    loff_t out_off = static_cast<loff_t>(off);
    const ssize_t r =
        splice(in, nullptr, fd.get(), &out_off, want, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (r >= 0 || errno != EINVAL) return r;
    spdlog::debug("journal: splice refused into {}; reading and writing instead", path.string());
    splice_works = false;
    errno = EINTR;
    return -1;
  }
  if (!copy_buffer) copy_buffer.reset(new char[kCopyBlock]);
  const ssize_t r = read(in, copy_buffer.get(), ChunkAsk(want));
  if (r <= 0) return r;
  try {
    PwriteOrThrow(fd.get(), copy_buffer.get(), static_cast<std::size_t>(r), off, path);
  } catch (const std::system_error& e) {
    spdlog::error("{}: {} bytes read from the FIFO are lost", e.what(), r);
    throw;
  }
  return r;
}

std::size_t Journal::Writer::State::MoveUpTo(int in, std::size_t n, JournalSegments& segs,
                                             bool& eof, bool& drained, int& err) {
  std::size_t moved = 0;
  while (moved < n) {
    const std::size_t asked = ChunkAsk(n - moved);
    ssize_t r;
    try {
      r = MoveChunk(in, n - moved, size + moved);
    } catch (const std::system_error&) {
      if (moved > 0) {  // what came before the lost bytes is kept
        size += moved;
        segs.Publish(seq, size);
      }
      throw;
    }
    if (r > 0) {
      moved += static_cast<std::size_t>(r);
      // Fewer than asked: the FIFO is empty now. Going on would take what its writer adds
      // meanwhile, a frame per splice.
      if (static_cast<std::size_t>(r) < asked) {
        drained = true;
        break;
      }
    } else if (r == 0) {
      eof = true;
      break;
    } else if (errno != EINTR) {
      if (errno == EAGAIN) {
        drained = true;
      } else {
        err = errno;
      }
      break;
    }
  }
  return moved;
}

Journal::Writer::Result Journal::Writer::SpliceFrom(int fd, std::size_t max_bytes) {
  State& s = *state_;
  JournalSegments& segs = *journal_->segments_;
  if (s.sealed) throw std::logic_error("journal: SpliceFrom on a sealed writer");
  JournalLimits limits = journal_->limits();
  // Room first: with block_when_full nothing leaves the FIFO unless it fits.
  if (!s.fd && limits.block_when_full && !segs.RoomFor(0, 0)) return {Status::kFull, 0};
  if (!s.MaybeRotate(segs, limits, true)) return {Status::kFull, 0};
  // The plugin-wide budget is spent and the user chose to lose nothing: the bytes wait (a
  // rotation the budget asked for is done above, so that the sealed part can go once Loki has
  // it).
  if (limits.block_when_full && segs.over_budget) return {Status::kFull, 0};
  std::size_t n = Budget(limits, s.size, s.next_end, max_bytes);
  if (n == 0) return {Status::kWouldBlock, 0};

  // A session may end without a byte (no segment then): the file made for this call goes
  // again if nothing came.
  bool created = !s.fd;
  if (created) s.fd = CreateSegmentFile(s.path);

  int err = 0;
  bool eof = false;
  bool drained = false;
  const std::size_t moved = s.MoveUpTo(fd, n, segs, eof, drained, err);
  if (moved == 0) {
    if (created) {
      s.fd.reset();
      unlink(s.path.c_str());
    }
    if (err) ThrowJournalError(err, "splice into", s.path);
    return {eof ? Status::kEof : Status::kWouldBlock, 0};
  }
  // An error after some bytes moved: report the bytes; the next call meets the error again.
  s.size += moved;
  if (segs.Publish(s.seq, s.size)) s.rotate_now = true;
  if (created) segs.EvictWhileOver();
  try {
    s.MaybeRotate(segs, limits, true);
  } catch (const std::system_error& e) {
    // The bytes are in the journal; the next call tries the rotation again before it takes
    // any byte, and reports the error then.
    spdlog::debug("{}", e.what());
    s.next_end = 0;
  }
  return {Status::kMoved, moved, drained};
}

void Journal::Writer::Append(std::string_view bytes) {
  State& s = *state_;
  JournalSegments& segs = *journal_->segments_;
  if (s.sealed) throw std::logic_error("journal: Append on a sealed writer");
  // Append never refuses bytes: with block_when_full and no room, segments are kept beyond
  // max_segments instead.
  while (!bytes.empty()) {
    JournalLimits limits = journal_->limits();
    s.MaybeRotate(segs, limits, false);
    std::size_t n = Budget(limits, s.size, s.next_end, bytes.size());
    bool created = !s.fd;
    if (created) s.fd = CreateSegmentFile(s.path);
    PwriteOrThrow(s.fd.get(), bytes.data(), n, s.size, s.path);
    s.size += n;
    if (segs.Publish(s.seq, s.size)) s.rotate_now = true;
    if (created) segs.EvictWhileOver();
    bytes.remove_prefix(n);
  }
  s.MaybeRotate(segs, journal_->limits(), false);
}

void Journal::Writer::Seal() {
  State& s = *state_;
  if (s.sealed) return;
  JournalSegments& segs = *journal_->segments_;
  uint64_t readable = 0;
  if (s.fd) {
    try {
      readable = s.ScanTail(segs).boundary;
    } catch (const std::system_error& e) {
      spdlog::error("{}; the segment is read up to byte {}", e.what(), s.boundary);
      readable = s.boundary;
    }
    s.fd.reset();
  }
  // A marker left behind names a FIFO that is gone: the next start seals the session again.
  if (unlink(segs.MarkerPath(s.seq).c_str()) != 0 && errno != ENOENT) {
    spdlog::error("journal: cannot remove {}: {}", segs.MarkerPath(s.seq).string(),
                  strerror(errno));
  }
  segs.Seal(s.seq, readable);
  s.sealed = true;
}

std::string Journal::Writer::CutAtFrameBoundary() {
  State& s = *state_;
  if (s.sealed || !s.fd) return {};
  FrameScan scan = s.ScanTail(*journal_->segments_);
  if (scan.corrupt || scan.boundary >= s.size) return {};
  std::string tail(static_cast<std::size_t>(s.size - scan.boundary), '\0');
  tail.resize(PreadOrThrow(s.fd.get(), tail.data(), tail.size(), scan.boundary, s.path));
  if (ftruncate(s.fd.get(), static_cast<off_t>(scan.boundary)) != 0)
    ThrowJournalError(errno, "truncate", s.path);
  s.size = s.boundary = scan.boundary;
  s.next_end = 0;
  journal_->segments_->Publish(s.seq, s.size);
  return tail;
}

bool Journal::Writer::State::DueForRotation(const JournalSegments& segs,
                                            const JournalLimits& limits) const {
  if (!fd) return false;
  if (!rotate_now && !segs.rotation_requested) {
    if (limits.max_segment_bytes < 0) return false;
    if (size < static_cast<uint64_t>(limits.max_segment_bytes)) return false;
  }
  return size >= next_end;  // else the frame after `boundary` is not complete yet
}

bool Journal::Writer::State::MaybeRotate(JournalSegments& segs, const JournalLimits& limits,
                                         bool may_refuse) {
  if (!DueForRotation(segs, limits)) return true;
  FrameScan scan = ScanTail(segs);
  boundary = scan.boundary;
  next_end = scan.next_end;
  if (!scan.corrupt && boundary == 0) return true;  // one frame bigger than the limit
  if (may_refuse && limits.block_when_full && !segs.RoomFor(seq, boundary)) {
    next_end = 0;  // look again next time (the boundary is known, the scan is short)
    return false;
  }
  if (scan.corrupt) {
    spdlog::error(
        "journal: {}: length prefix over {} bytes at offset {}; the rest of the "
        "segment is skipped",
        path.string(), kMaxFrameBytes, boundary);
  }

  // The new segment: marker first, then the bytes of the frame cut by the limit, then the old
  // segment is cut at its boundary and sealed. A restart between two steps finds two markers
  // for one FIFO and finishes or undoes the rotation (JournalSegments::RepairInterruptedRotation).
  const uint64_t new_seq = segs.Reserve(fifo_path);
  const fs::path new_path = segs.SegmentPath(new_seq);
  uint64_t tail = 0;
  UniqueFd new_fd = StartSegmentWithTail(segs, new_seq, new_path, scan.corrupt, tail);
  fd.reset();
  if (unlink(segs.MarkerPath(seq).c_str()) != 0 && errno != ENOENT)
    spdlog::warn("journal: cannot remove {}: {}", segs.MarkerPath(seq).string(), strerror(errno));
  RecordRotation(segs, new_seq, scan.corrupt, tail);
  segs.Notify();
  Switch(new_seq, new_path);
  fd = std::move(new_fd);
  size = tail;
  rotate_now = false;
  segs.rotation_requested = false;
  segs.EvictWhileOver();
  return true;
}

UniqueFd Journal::Writer::State::StartSegmentWithTail(JournalSegments& segs, uint64_t new_seq,
                                                      const fs::path& new_path, bool corrupt,
                                                      uint64_t& tail) {
  tail = corrupt ? 0 : size - boundary;
  UniqueFd new_fd;
  try {
    if (tail > 0) {
      new_fd = CreateSegmentFile(new_path);
      std::unique_ptr<char[]> buf(new char[tail]);
      const std::size_t got = PreadOrThrow(fd.get(), buf.get(), tail, boundary, path);
      PwriteOrThrow(new_fd.get(), buf.get(), got, 0, new_path);
      tail = got;
    }
    if (!corrupt && ftruncate(fd.get(), static_cast<off_t>(boundary)) != 0)
      ThrowJournalError(errno, "truncate", path);
  } catch (...) {
    // Nothing of the old segment changed yet: forget the new one, stay where we were.
    new_fd.reset();
    segs.Unreserve(new_seq);
    throw;
  }
  return new_fd;
}

void Journal::Writer::State::RecordRotation(JournalSegments& segs, uint64_t new_seq, bool corrupt,
                                            uint64_t tail) {
  absl::MutexLock lock(&segs.mu);
  auto& old_seg = segs.segments[seq];
  old_seg.size = corrupt ? size : boundary;
  old_seg.readable = boundary;
  old_seg.live = false;
  old_seg.writer = false;
  auto& new_seg = segs.segments[new_seq];
  new_seg.size = tail;
  new_seg.has_file = tail > 0;
  ++segs.version;
}

}  // namespace skald
