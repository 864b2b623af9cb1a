#include "plugin/journal/journal_frame_reader.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <system_error>

#include "plugin/common/posix_file.h"
#include "plugin/journal/frame_format.h"
#include "plugin/journal/journal_files.h"
#include "plugin/journal/journal_segments.h"

namespace skald {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kReadBlock = 64 * 1024;  // the reader's reused buffer

}  // namespace

struct JournalFrameReader::State {
  std::shared_ptr<Journal> journal;
  uint64_t want;         // no segment open: the next one to read is the first >= want
  uint64_t want_offset;  // where to start in `want` itself
  uint64_t seq = 0;      // the segment open (when fd is)
  UniqueFd fd;
  uint64_t pos = 0;
  bool from_start = false;  // entered `seq` at offset 0: `pos` is a frame boundary of the file
  uint64_t limit = 0;       // bytes readable in `seq`, as last looked up
  bool sealed = false;      // `limit` is final
  uint64_t file_size = 0;   // sealed: the file's size (bytes past `limit` are a torn tail)
  std::unique_ptr<char[]> buf;
  std::size_t cap = 0;
  uint64_t buf_off = 0;  // buf holds the file's bytes [buf_off, buf_off + buf_len)
  std::size_t buf_len = 0;
  uint64_t skipped = 0;
  uint64_t lost = 0;

  // Gives up the segment `seq` (not open, or open at `pos`): counts what was not read of it
  // as lost and goes on with the next one. Only a file that is gone (ENOENT) is forgotten by
  // the journal; another error (EIO, EACCES) is this reader's alone.
  void GiveUp(JournalSegments& segs, uint64_t seq, uint64_t from, const char* what, int err) {
    const std::optional<uint64_t> size =
        err == ENOENT ? segs.MarkUnreadable(seq) : segs.ListedSize(seq);
    const uint64_t left = size && *size > from ? *size - from : 0;
    lost += left;
    spdlog::error("journal: cannot {} {}: {}; {} unread bytes of it are lost", what,
                  segs.SegmentPath(seq).string(), strerror(err), left);
    fd.reset();
    want = seq + 1;
    want_offset = 0;
    buf_len = 0;
  }

  void CloseSegment() {
    fd.reset();
    want = seq + 1;
    want_offset = 0;
    buf_len = 0;
  }
};

JournalFrameReader::JournalFrameReader(std::shared_ptr<Journal> journal, JournalPosition from)
    : state_(std::make_unique<State>()) {
  state_->journal = std::move(journal);
  state_->want = from.segment;
  state_->want_offset = from.offset;
}

JournalFrameReader::~JournalFrameReader() = default;

JournalPosition JournalFrameReader::position() const {
  if (state_->fd) return {state_->seq, state_->pos};
  return {state_->want, state_->want_offset};
}

uint64_t JournalFrameReader::skipped_bytes() const { return state_->skipped; }

uint64_t JournalFrameReader::lost_bytes() const { return state_->lost; }

// Next's steps. Each returns what Next returns, or nullopt (or false) when Next goes on.

std::optional<JournalFrameReader::Status> JournalFrameReader::OpenNextSegment() {
  State& s = *state_;
  JournalSegments& segs = *s.journal->segments_;
  // Find the segment to read: the first one >= want (evicted ones in between are counted
  // as skipped; sequence numbers never used are not).
  uint64_t found;
  bool has_file;
  {
    absl::MutexLock lock(&segs.mu);
    auto it = segs.segments.lower_bound(s.want);
    if (it == segs.segments.end()) {
      bool any_live = std::any_of(segs.segments.begin(), segs.segments.end(),
                                  [](auto& e) { return e.second.live; });
      return any_live ? Status::kWait : Status::kEnd;
    }
    found = it->first;
    has_file = it->second.has_file;
    if (s.want > 0) {
      for (auto e = segs.evicted.lower_bound(s.want); e != segs.evicted.end() && e->first < found;
           ++e) {
        uint64_t from = e->first == s.want ? s.want_offset : 0;
        s.skipped += e->second > from ? e->second - from : 0;
      }
    }
  }
  if (found != s.want) {
    s.want = found;
    s.want_offset = 0;
  }
  if (!has_file) return Status::kWait;  // a live session without a byte yet
  fs::path path = segs.SegmentPath(found);
  s.fd.reset(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!s.fd) {
    const int err = errno;
    if (err == ENOENT) {
      absl::MutexLock lock(&segs.mu);
      if (!segs.segments.count(found)) return std::nullopt;  // evicted meanwhile: counted next look
    }
    if (err == EMFILE || err == ENFILE || err == ENOMEM || err == EINTR || err == EAGAIN) {
      return Status::kRetry;  // out of descriptors or memory for a moment
    }
    s.GiveUp(segs, found, s.want_offset, "open", err);  // removed by hand, unreadable
    return std::nullopt;
  }
  s.seq = found;
  s.pos = s.want_offset;
  s.from_start = s.pos == 0;
  s.limit = 0;
  s.sealed = false;
  s.buf_len = 0;
  return std::nullopt;
}

std::optional<JournalFrameReader::Status> JournalFrameReader::TakeFrame(std::string_view* body,
                                                                        JournalPosition* start,
                                                                        uint64_t& avail,
                                                                        uint64_t& needed) {
  State& s = *state_;
  JournalSegments& segs = *s.journal->segments_;
  // A complete frame in the buffer, within what is readable?
  uint64_t avail_end = std::min(s.buf_off + s.buf_len, s.limit);
  avail = s.pos >= s.buf_off && avail_end > s.pos ? avail_end - s.pos : 0;
  needed = kFrameLengthBytes;
  if (avail >= kFrameLengthBytes) {
    uint32_t len = ReadFrameLength(s.buf.get() + (s.pos - s.buf_off));
    if (len > kMaxFrameBytes) {
      uint64_t end = s.sealed ? s.file_size : s.limit;
      spdlog::warn("journal: {}: length prefix {} at offset {}; skipping to the next segment",
                   segs.SegmentPath(s.seq).string(), len, s.pos);
      s.skipped += end > s.pos ? end - s.pos : 0;
      s.CloseSegment();
      return Status::kCorrupt;
    }
    needed = kFrameLengthBytes + uint64_t{len};
    if (avail >= needed) {
      const char* p = s.buf.get() + (s.pos - s.buf_off);
      *body = std::string_view(p + kFrameLengthBytes, len);
      *start = {s.seq, s.pos};
      s.pos += needed;
      return Status::kFrame;
    }
  }
  return std::nullopt;
}

bool JournalFrameReader::ReadMore(uint64_t avail, uint64_t needed) {
  State& s = *state_;
  JournalSegments& segs = *s.journal->segments_;
  // Read more of the file, if the readable part holds more than the buffer.
  if (s.limit <= s.pos + avail) return false;
  std::size_t want = static_cast<std::size_t>(
      std::min<uint64_t>(s.limit - s.pos, std::max<uint64_t>(kReadBlock, needed)));
  if (want > s.cap) {
    s.cap = std::max(want, kReadBlock);
    s.buf.reset(new char[s.cap]);
  }
  s.buf_off = s.pos;
  try {
    s.buf_len = PreadOrThrow(s.fd.get(), s.buf.get(), want, s.pos, segs.SegmentPath(s.seq));
  } catch (const std::system_error& e) {
    s.GiveUp(segs, s.seq, s.pos, "read", e.code().value());
    return true;
  }
  // Not more than before: the file is shorter than the journal said (truncated by a rotation),
  // and the journal is asked again.
  return s.buf_len > avail;
}

std::optional<JournalFrameReader::Status> JournalFrameReader::LookUpLimit() {
  State& s = *state_;
  JournalSegments& segs = *s.journal->segments_;
  // The segment is not sealed (as last looked up): how far it is readable now.
  const uint64_t old_limit = s.limit;
  bool exists, live;
  uint64_t size;
  {
    absl::MutexLock lock(&segs.mu);
    auto it = segs.segments.find(s.seq);
    exists = it != segs.segments.end();
    live = exists && it->second.live;
    size = exists ? it->second.size : 0;
    // Every frame before `pos` was taken whole, walking from offset 0: the writer need not
    // walk them again when it rotates or seals.
    if (live && s.from_start && s.pos <= size) {
      it->second.walked = std::max(it->second.walked, s.pos);
    }
  }
  if (!exists) {
    // Evicted while open: read what the file holds.
    struct stat st {};
    if (fstat(s.fd.get(), &st) != 0) {
      s.GiveUp(segs, s.seq, s.pos, "stat", errno);
      return std::nullopt;
    }
    s.sealed = true;
    s.file_size = s.limit = static_cast<uint64_t>(st.st_size);
  } else if (live) {
    s.limit = size;
  } else {
    s.sealed = true;
    s.file_size = size;
    s.limit = segs.SealedReadable(s.seq);
  }
  if (s.sealed || s.limit != old_limit) return std::nullopt;
  return Status::kWait;
}

JournalFrameReader::Status JournalFrameReader::Next(std::string_view* body,
                                                    JournalPosition* start) {
  State& s = *state_;
  JournalSegments& segs = *s.journal->segments_;
  for (;;) {
    if (!s.fd) {
      if (std::optional<Status> status = OpenNextSegment()) return *status;
      if (!s.fd) continue;
    }
    uint64_t avail = 0;
    uint64_t needed = 0;
    if (std::optional<Status> status = TakeFrame(body, start, avail, needed)) return *status;
    if (ReadMore(avail, needed)) continue;
    if (!s.sealed) {
      if (std::optional<Status> status = LookUpLimit()) return *status;
      continue;
    }
    // Sealed, and what is left is not a complete frame: a torn tail.
    if (s.file_size > s.pos) {
      spdlog::warn("journal: {}: skipping a torn frame of {} bytes at offset {}",
                   segs.SegmentPath(s.seq).string(), s.file_size - s.pos, s.pos);
      s.skipped += s.file_size - s.pos;
    }
    s.CloseSegment();
  }
}

}  // namespace skald
