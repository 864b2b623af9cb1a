#include "plugin/journal.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "plugin/frame_codec.h"

namespace skald {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kScanBlock = 1024 * 1024;  // frame-boundary scans (rotation, seal, open)
constexpr std::size_t kReadBlock = 64 * 1024;    // JournalFrameReader's reused buffer
constexpr std::size_t kCopyBlock = 64 * 1024;    // read+write where splice is refused
constexpr std::size_t kEvictedRemembered = 1024;
constexpr std::string_view kSegmentExt = ".seg";
constexpr std::string_view kMarkerExt = ".live";
constexpr std::string_view kTempExt = ".tmp";
// Journals hold every line a container wrote and info.json its options: readable by root only
// (dockerd keeps its own logs 0640 and the container's config 0600).
constexpr mode_t kFileMode = 0600;
constexpr fs::perms kDirPerms = fs::perms::owner_all;

// Creates `dir` and its missing parents, and makes `dir` itself owner-only.
void CreatePrivateDirectory(const fs::path& dir, std::error_code& ec) {
  fs::create_directories(dir, ec);
  if (!ec) fs::permissions(dir, kDirPerms, fs::perm_options::replace, ec);
}

[[noreturn]] void Fail(int err, std::string_view op, const fs::path& path) {
  throw std::system_error(err, std::generic_category(),
                          "journal: cannot " + std::string(op) + " " + path.string());
}

// Segment numbers stay below this (a name or a cursor with a larger one is damaged): the next
// number never wraps, and every segment written is found again by its name.
constexpr uint64_t kSegmentLimit = uint64_t{1} << 62;

std::string SeqName(uint64_t seq, std::string_view ext) {
  char digits[24];
  std::snprintf(digits, sizeof digits, "%010llu", static_cast<unsigned long long>(seq));
  return digits + std::string(ext);
}

// "0000000003.seg" -> 3, "12345678901.seg" -> 12345678901: the name SeqName gives a number
// below kSegmentLimit; nullopt for any other name.
std::optional<uint64_t> ParseSeqName(std::string_view name, std::string_view ext) {
  if (!name.ends_with(ext)) return std::nullopt;
  const std::string_view digits = name.substr(0, name.size() - ext.size());
  if (digits.size() < 10 || digits.size() > 19) return std::nullopt;
  uint64_t seq = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    seq = seq * 10 + static_cast<uint64_t>(c - '0');
  }
  if (seq == 0 || seq >= kSegmentLimit) return std::nullopt;
  if (digits.size() > 10 && digits[0] == '0') return std::nullopt;  // not a name SeqName gives
  return seq;
}

uint32_t BigEndian32(const char* p) {
  auto b = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
}

// Reads up to `n` bytes at `offset`; fewer only at the end of the file.
std::size_t PreadFull(int fd, char* buf, std::size_t n, uint64_t offset, const fs::path& path) {
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = pread(fd, buf + got, n - got, static_cast<off_t>(offset + got));
    if (r > 0) {
      got += static_cast<std::size_t>(r);
    } else if (r == 0) {
      break;
    } else if (errno != EINTR) {
      Fail(errno, "read", path);
    }
  }
  return got;
}

void PwriteFull(int fd, const char* buf, std::size_t n, uint64_t offset, const fs::path& path) {
  std::size_t done = 0;
  while (done < n) {
    ssize_t r = pwrite(fd, buf + done, n - done, static_cast<off_t>(offset + done));
    if (r >= 0) {
      done += static_cast<std::size_t>(r);
    } else if (errno != EINTR) {
      Fail(errno, "write", path);
    }
  }
}

// Replaces `path` atomically: readers see the old content or the new one, never a mix.
// No fsync: after a power loss the file may be lost, never half written.
void WriteFileAtomically(const fs::path& path, std::string_view data) {
  fs::path tmp = path;
  tmp += kTempExt;
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, kFileMode);
  if (fd < 0) Fail(errno, "create", tmp);
  try {
    PwriteFull(fd, data.data(), data.size(), 0, tmp);
  } catch (...) {
    close(fd);
    unlink(tmp.c_str());
    throw;
  }
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    Fail(err, "rename " + tmp.string() + " to", path);
  }
}

std::optional<std::string> ReadSmallFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(out).str();
}

// Where the complete frames of a segment end, walking the length prefixes from a known
// boundary `from` up to `size`.
struct FrameScan {
  uint64_t boundary;  // the last complete-frame boundary (or the start of a corrupt prefix)
  uint64_t next_end;  // the size at which the next frame would be complete
  bool corrupt;       // a length prefix over kMaxFrameBytes at `boundary`
};

FrameScan ScanFrames(int fd, uint64_t from, uint64_t size, const fs::path& path) {
  uint64_t pos = from;
  if (size <= pos) return {pos, pos + 4, false};
  std::size_t cap = static_cast<std::size_t>(std::min<uint64_t>(kScanBlock, size - pos));
  std::unique_ptr<char[]> block(new char[cap]);
  uint64_t block_off = 0;
  std::size_t block_len = 0;
  while (size - pos >= 4) {
    if (pos < block_off || pos + 4 > block_off + block_len) {
      std::size_t want = static_cast<std::size_t>(std::min<uint64_t>(cap, size - pos));
      block_len = PreadFull(fd, block.get(), want, pos, path);
      block_off = pos;
      if (block_len < 4) break;  // the file is shorter than we were told
    }
    uint32_t len = BigEndian32(block.get() + (pos - block_off));
    if (len > kMaxFrameBytes) return {pos, 0, true};
    uint64_t end = pos + 4 + len;
    if (end > size) return {pos, end, false};
    pos = end;
  }
  return {pos, pos + 4, false};
}

class FileCloser {
 public:
  explicit FileCloser(int fd) : fd_(fd) {}
  ~FileCloser() {
    if (fd_ >= 0) close(fd_);
  }
  FileCloser(const FileCloser&) = delete;
  FileCloser& operator=(const FileCloser&) = delete;

 private:
  int fd_;
};

JournalLimits Sanitized(JournalLimits limits) {
  limits.max_segments = std::max(limits.max_segments, 1);
  return limits;
}

}  // namespace

// ------------------------------------------------------------------------------------------
// Journal::Impl: the segment list (guarded by `mu`) and the file-system operations on it.

struct Journal::Impl {
  struct Segment {
    uint64_t size = 0;      // bytes in the file; 0 while it does not exist yet
    bool has_file = false;  // false: reserved by a live session that has not had a byte yet
    bool live = false;      // a marker names a FIFO; a writer may (still) append
    bool writer = false;    // a Writer object is attached now
    std::optional<uint64_t> readable;  // sealed: bytes up to the last complete frame
    // A reader could not open or read this live segment (its file was removed, an I/O
    // error): the writer moves to a new segment at its next write.
    bool unreadable = false;
    std::string fifo_path;
  };

  fs::path dir;
  std::weak_ptr<Journal> self;

  mutable std::mutex mu;
  mutable std::condition_variable changed;
  JournalLimits limits;
  std::map<uint64_t, Segment> segments;
  std::map<uint64_t, uint64_t> evicted;  // seq -> bytes, for readers that jump over them
  uint64_t next_seq = 1;
  uint64_t version = 0;
  JournalPosition acknowledged;
  std::function<void(uint64_t)> evict_hook;

  std::mutex evict_mu;  // one eviction at a time; held across the hook (`mu` is not)

  fs::path SegmentPath(uint64_t seq) const { return dir / SeqName(seq, kSegmentExt); }
  fs::path MarkerPath(uint64_t seq) const { return dir / SeqName(seq, kMarkerExt); }

  void Notify() { changed.notify_all(); }

  void Scan();
  void RepairInterruptedRotation(uint64_t older, uint64_t newer);

  // Writer side.
  uint64_t Reserve(const std::string& fifo_path);
  // Undoes Reserve() of a rotation that failed: removes the marker, any file, the entry.
  void Unreserve(uint64_t seq);
  // Returns true when a reader found the segment unreadable (the writer should rotate).
  bool Publish(uint64_t seq, uint64_t size);
  void Seal(uint64_t seq, uint64_t readable);
  bool RoomFor(uint64_t rotating_seq, uint64_t rotating_boundary);
  void EvictWhileOver();

  // Reader side.
  uint64_t SealedReadable(uint64_t seq);
  // The file of `seq` is gone: a sealed segment is forgotten (its bytes are lost), a live one
  // is flagged for its writer. Returns its size, or nullopt when it is no longer listed
  // (evicted meanwhile).
  std::optional<uint64_t> MarkUnreadable(uint64_t seq);
  // The size of `seq`, or nullopt when it is not listed.
  std::optional<uint64_t> ListedSize(uint64_t seq) const;

  bool AcknowledgedLocked(uint64_t seq, uint64_t readable) const {
    return acknowledged.segment > seq ||
           (acknowledged.segment == seq && acknowledged.offset >= readable);
  }
};

void Journal::Impl::Scan() {
  std::error_code ec;
  std::map<uint64_t, std::string> markers;
  uint64_t max_seen = 0;  // also of files skipped: a new segment never takes a used name
  auto it = fs::directory_iterator(dir, ec);
  if (ec) Fail(ec.value(), "read directory", dir);
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) Fail(ec.value(), "read directory", dir);
    const fs::path& path = it->path();
    std::string name = path.filename().string();
    if (name.ends_with(kTempExt)) {
      // An atomic replace that did not finish; the previous file (if any) is intact.
      if (!fs::remove(path, ec))
        spdlog::warn("journal: cannot remove {}: {}", path.string(), ec.message());
    } else if (auto seq = ParseSeqName(name, kSegmentExt)) {
      max_seen = std::max(max_seen, *seq);
      std::error_code size_ec;
      bool regular = it->is_regular_file(size_ec);
      uint64_t size = regular ? it->file_size(size_ec) : 0;
      if (!regular || size_ec) {
        spdlog::warn("journal: skipping {}: not a readable regular file", path.string());
        continue;
      }
      Segment& s = segments[*seq];
      s.has_file = true;
      s.size = size;
    } else if (auto seq = ParseSeqName(name, kMarkerExt)) {
      max_seen = std::max(max_seen, *seq);
      auto fifo = ReadSmallFile(path);
      while (fifo && !fifo->empty() && fifo->back() == '\n') fifo->pop_back();
      if (!fifo || fifo->empty()) {
        spdlog::warn("journal: ignoring unreadable or empty marker {}", path.string());
        continue;
      }
      markers[*seq] = std::move(*fifo);
    } else if (name != "info.json" && name != "cursor") {
      spdlog::warn("journal: ignoring unexpected file {}", path.string());
    }
  }
  next_seq = max_seen + 1;

  std::map<std::string, std::vector<uint64_t>> by_fifo;  // ascending seqs per FIFO
  for (auto& [seq, fifo] : markers) {
    Segment& s = segments[seq];
    s.live = true;
    s.fifo_path = fifo;
    by_fifo[fifo].push_back(seq);
  }
  // Two markers naming one FIFO: a crash during a rotation (the new marker is written before
  // the old one is removed). Keep one live session per FIFO.
  for (auto& [fifo, seqs] : by_fifo) {
    while (seqs.size() > 1) {
      uint64_t newer = seqs.back();
      uint64_t older = seqs[seqs.size() - 2];
      RepairInterruptedRotation(older, newer);
      seqs.erase(segments.at(older).live ? seqs.end() - 1 : seqs.end() - 2);
    }
  }
  // Empty sealed segments carry nothing (a crash right after a lazy creation).
  for (auto it2 = segments.begin(); it2 != segments.end();) {
    if (!it2->second.live && it2->second.size == 0) {
      unlink(SegmentPath(it2->first).c_str());
      it2 = segments.erase(it2);
    } else {
      ++it2;
    }
  }
}

// `older` and `newer` are live segments of one FIFO. The rotation from `older` copies the
// bytes after its last complete frame to `newer`, then truncates `older` and removes its
// marker. If the copy is complete, finish the rotation; otherwise undo it.
void Journal::Impl::RepairInterruptedRotation(uint64_t older, uint64_t newer) {
  Segment& old_seg = segments.at(older);
  Segment& new_seg = segments.at(newer);
  fs::path old_path = SegmentPath(older);
  bool finish = true;
  uint64_t boundary = old_seg.size;
  try {
    if (old_seg.has_file) {
      int fd = open(old_path.c_str(), O_RDWR | O_CLOEXEC);
      if (fd < 0) Fail(errno, "open", old_path);
      FileCloser closer(fd);
      FrameScan scan = ScanFrames(fd, 0, old_seg.size, old_path);
      boundary = scan.boundary;
      uint64_t tail = scan.corrupt ? 0 : old_seg.size - boundary;
      finish = new_seg.size >= tail;
      if (finish && !scan.corrupt && ftruncate(fd, static_cast<off_t>(boundary)) != 0)
        Fail(errno, "truncate", old_path);
    }
  } catch (const std::system_error& e) {
    spdlog::error("{}; leaving segments {} and {} live", e.what(), older, newer);
    old_seg.fifo_path += " (duplicate)";  // not the same FIFO for the repair loop any more
    return;
  }
  if (finish) {
    spdlog::warn("journal: {}: finishing a rotation from segment {} to {} cut by a restart",
                 dir.string(), older, newer);
    unlink(MarkerPath(older).c_str());
    old_seg.live = false;
    if (old_seg.has_file) {
      old_seg.size = std::min(old_seg.size, boundary);
      old_seg.readable = boundary;
    }
  } else {
    spdlog::warn("journal: {}: undoing a rotation from segment {} to {} cut by a restart",
                 dir.string(), older, newer);
    unlink(SegmentPath(newer).c_str());
    unlink(MarkerPath(newer).c_str());
    segments.erase(newer);
  }
}

uint64_t Journal::Impl::Reserve(const std::string& fifo_path) {
  uint64_t seq;
  {
    std::lock_guard lock(mu);
    // Only damaged files (a cursor or a segment name near the limit) lead here; a segment
    // numbered past it would not be found again.
    if (next_seq >= kSegmentLimit) Fail(EOVERFLOW, "number another segment in", dir);
    seq = next_seq++;
    Segment& s = segments[seq];
    s.live = true;
    s.writer = true;
    s.fifo_path = fifo_path;
    ++version;
  }
  try {
    WriteFileAtomically(MarkerPath(seq), fifo_path);
  } catch (...) {
    std::lock_guard lock(mu);
    segments.erase(seq);
    throw;
  }
  Notify();
  return seq;
}

void Journal::Impl::Unreserve(uint64_t seq) {
  unlink(SegmentPath(seq).c_str());
  unlink(MarkerPath(seq).c_str());
  {
    std::lock_guard lock(mu);
    segments.erase(seq);
    ++version;
  }
  Notify();
}

bool Journal::Impl::Publish(uint64_t seq, uint64_t size) {
  bool unreadable;
  {
    std::lock_guard lock(mu);
    Segment& s = segments[seq];
    s.size = size;
    s.has_file = true;
    unreadable = s.unreadable;
    ++version;
  }
  Notify();
  return unreadable;
}

std::optional<uint64_t> Journal::Impl::ListedSize(uint64_t seq) const {
  std::lock_guard lock(mu);
  auto it = segments.find(seq);
  if (it == segments.end()) return std::nullopt;
  return it->second.size;
}

std::optional<uint64_t> Journal::Impl::MarkUnreadable(uint64_t seq) {
  uint64_t size;
  {
    std::lock_guard lock(mu);
    auto it = segments.find(seq);
    if (it == segments.end()) return std::nullopt;
    size = it->second.size;
    if (it->second.live) {
      it->second.unreadable = true;
    } else {
      segments.erase(it);
    }
    ++version;
  }
  Notify();
  return size;
}

// The marker is gone (or was never there); the segment is sealed with `readable` bytes, or
// forgotten (and its file removed) when it holds nothing.
void Journal::Impl::Seal(uint64_t seq, uint64_t readable) {
  bool remove_file = false;
  {
    std::lock_guard lock(mu);
    auto it = segments.find(seq);
    if (it == segments.end()) return;
    Segment& s = it->second;
    if (s.size == 0) {
      remove_file = s.has_file;
      segments.erase(it);
    } else {
      s.live = false;
      s.writer = false;
      s.readable = std::min(readable, s.size);
    }
    ++version;
  }
  if (remove_file) unlink(SegmentPath(seq).c_str());
  Notify();
}

// With block_when_full: whether the evictions that one more segment needs are allowed (the
// segment `rotating_seq`, about to be sealed at `rotating_boundary`, counts as sealed; 0: no
// rotation, the new segment is already in the list).
bool Journal::Impl::RoomFor(uint64_t rotating_seq, uint64_t rotating_boundary) {
  std::lock_guard lock(mu);
  std::size_t count_after = segments.size() + (rotating_seq ? 1 : 0);
  std::size_t max = static_cast<std::size_t>(limits.max_segments);
  if (count_after <= max) return true;
  std::size_t need = count_after - max;
  for (auto it = segments.begin(); need > 0 && it != segments.end(); ++it, --need) {
    const Segment& s = it->second;
    if (it->first == rotating_seq) {
      if (!AcknowledgedLocked(it->first, rotating_boundary)) return false;
    } else if (s.live || !AcknowledgedLocked(it->first, s.readable.value_or(s.size))) {
      return false;
    }
  }
  return true;
}

void Journal::Impl::EvictWhileOver() {
  for (;;) {
    {
      std::lock_guard lock(mu);
      if (segments.size() <= static_cast<std::size_t>(limits.max_segments)) return;
    }
    auto journal = self.lock();
    if (!journal || journal->EvictOldest() == 0) return;
  }
}

uint64_t Journal::Impl::SealedReadable(uint64_t seq) {
  uint64_t size;
  {
    std::lock_guard lock(mu);
    auto it = segments.find(seq);
    if (it == segments.end()) return 0;
    if (it->second.live) return it->second.size;
    if (it->second.readable) return *it->second.readable;
    size = it->second.size;
  }
  fs::path path = SegmentPath(seq);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT)
      spdlog::warn("journal: cannot open {}: {}", path.string(), strerror(errno));
    return 0;
  }
  FileCloser closer(fd);
  FrameScan scan;
  try {
    scan = ScanFrames(fd, 0, size, path);
  } catch (const std::system_error& e) {
    spdlog::warn("{}", e.what());
    return 0;
  }
  std::lock_guard lock(mu);
  auto it = segments.find(seq);
  if (it != segments.end() && !it->second.live && !it->second.readable)
    it->second.readable = scan.boundary;
  return scan.boundary;
}

// ------------------------------------------------------------------------------------------
// Journal

Journal::Journal(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Journal::~Journal() = default;

std::shared_ptr<Journal> Journal::Open(const fs::path& dir, JournalLimits limits) {
  std::error_code ec;
  CreatePrivateDirectory(dir, ec);
  if (ec) Fail(ec.value(), "create", dir);
  if (!fs::is_directory(dir, ec)) Fail(ec ? ec.value() : ENOTDIR, "open directory", dir);
  auto impl = std::make_unique<Impl>();
  impl->dir = dir;
  impl->limits = Sanitized(limits);
  impl->Scan();
  auto journal = std::shared_ptr<Journal>(new Journal(std::move(impl)));
  journal->impl_->self = journal;
  if (auto cursor = journal->ReadCursor()) {
    journal->impl_->acknowledged = *cursor;
    journal->impl_->next_seq = std::max(journal->impl_->next_seq, cursor->segment + 1);
  }
  return journal;
}

const fs::path& Journal::dir() const { return impl_->dir; }

void Journal::SetLimits(JournalLimits limits) {
  std::lock_guard lock(impl_->mu);
  impl_->limits = Sanitized(limits);
}

JournalLimits Journal::limits() const {
  std::lock_guard lock(impl_->mu);
  return impl_->limits;
}

void Journal::WriteInfo(std::string_view json) { WriteFileAtomically(dir() / "info.json", json); }

std::optional<std::string> Journal::ReadInfo() const { return ReadSmallFile(dir() / "info.json"); }

// The cursor is rewritten in place (it is persisted several times a second per stream: a new
// file and a rename each time cost an inode allocation). Both numbers are zero-padded to 20
// digits, so every write is one 42-byte pwrite at offset 0 over a file of that size: readers
// see the old cursor or the new one. Files of the shorter, unpadded form (earlier versions)
// are read and overwritten whole; a longer (damaged) file is cut to the 42 bytes, or its
// tail would make every cursor written unreadable.
void Journal::WriteCursor(JournalPosition cursor) {
  char text[64];
  const int n = std::snprintf(text, sizeof text, "%020llu %020llu\n",
                              static_cast<unsigned long long>(cursor.segment),
                              static_cast<unsigned long long>(cursor.offset));
  const fs::path path = dir() / "cursor";
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, kFileMode);
  if (fd < 0) Fail(errno, "create", path);
  try {
    PwriteFull(fd, text, static_cast<std::size_t>(n), 0, path);
    struct stat st {};
    if (fstat(fd, &st) != 0) Fail(errno, "stat", path);
    if (st.st_size > n && ftruncate(fd, n) != 0) Fail(errno, "truncate", path);
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);
}

std::optional<JournalPosition> Journal::ReadCursor() const {
  auto text = ReadSmallFile(dir() / "cursor");
  if (!text) return std::nullopt;
  JournalPosition p;
  const char* begin = text->data();
  const char* end = begin + text->size();
  auto r = std::from_chars(begin, end, p.segment);
  if (r.ec != std::errc() || r.ptr == end || *r.ptr != ' ') return std::nullopt;
  r = std::from_chars(r.ptr + 1, end, p.offset);
  if (r.ec != std::errc() || r.ptr == end || *r.ptr != '\n' || r.ptr + 1 != end)
    return std::nullopt;
  if (p.segment >= kSegmentLimit) {
    // No journal numbers that many segments: a damaged file (it would wrap the next number).
    spdlog::warn("journal {}: its cursor names segment {}; ignored", dir().string(), p.segment);
    return std::nullopt;
  }
  return p;
}

std::vector<uint64_t> Journal::Segments() const {
  std::lock_guard lock(impl_->mu);
  std::vector<uint64_t> out;
  out.reserve(impl_->segments.size());
  for (auto& [seq, s] : impl_->segments) out.push_back(seq);
  return out;
}

uint64_t Journal::ReadableBytes(uint64_t segment) const { return impl_->SealedReadable(segment); }

bool Journal::IsSealed(uint64_t segment) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->segments.find(segment);
  return it == impl_->segments.end() || !it->second.live;
}

uint64_t Journal::TotalBytes() const {
  std::lock_guard lock(impl_->mu);
  uint64_t total = 0;
  for (auto& [seq, s] : impl_->segments) total += s.size;
  return total;
}

JournalPosition Journal::End() const {
  std::lock_guard lock(impl_->mu);
  if (impl_->segments.empty()) return {};
  auto& [seq, s] = *impl_->segments.rbegin();
  return {seq, s.size};
}

JournalPosition Journal::Begin() const {
  std::lock_guard lock(impl_->mu);
  if (impl_->segments.empty()) return {};
  return {impl_->segments.begin()->first, 0};
}

fs::file_time_type Journal::LastWrite() const {
  std::optional<fs::path> newest;
  {
    std::lock_guard lock(impl_->mu);
    for (auto it = impl_->segments.rbegin(); it != impl_->segments.rend(); ++it) {
      if (it->second.has_file) {
        newest = impl_->SegmentPath(it->first);
        break;
      }
    }
  }
  std::error_code ec;
  if (newest) {
    auto t = fs::last_write_time(*newest, ec);
    if (!ec) return t;
  }
  auto t = fs::last_write_time(impl_->dir, ec);
  return ec ? fs::file_time_type::min() : t;
}

std::vector<Journal::LiveSession> Journal::LiveSessions() const {
  std::lock_guard lock(impl_->mu);
  std::vector<LiveSession> out;
  for (auto& [seq, s] : impl_->segments)
    if (s.live && !s.writer) out.push_back({seq, s.fifo_path});
  return out;
}

// --- Writers

struct Journal::Writer::State {
  uint64_t seq = 0;
  fs::path path;  // the segment file
  std::string fifo_path;
  int fd = -1;            // the segment file, O_RDWR; -1 until its first byte
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
  bool MaybeRotate(Impl& impl, const JournalLimits& limits, bool may_refuse);

  // The segment becomes `seq`, empty (its file is created by the first byte).
  void Switch(uint64_t new_seq, const fs::path& new_path) {
    seq = new_seq;
    path = new_path;
    size = boundary = next_end = 0;
  }
};

std::unique_ptr<Journal::Writer> Journal::StartWriter(const std::string& fifo_path) {
  auto state = std::make_unique<Writer::State>();
  state->fifo_path = fifo_path;
  uint64_t seq = impl_->Reserve(fifo_path);
  state->Switch(seq, impl_->SegmentPath(seq));
  return std::unique_ptr<Writer>(new Writer(impl_->self.lock(), std::move(state)));
}

std::unique_ptr<Journal::Writer> Journal::ResumeWriter(const LiveSession& session) {
  auto state = std::make_unique<Writer::State>();
  bool has_file;
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->segments.find(session.segment);
    if (it == impl_->segments.end() || !it->second.live || it->second.writer)
      throw std::invalid_argument("journal: " + impl_->dir.string() + ": segment " +
                                  std::to_string(session.segment) + " is not a resumable session");
    it->second.writer = true;
    has_file = it->second.has_file;
    state->fifo_path = it->second.fifo_path;
  }
  state->Switch(session.segment, impl_->SegmentPath(session.segment));
  if (has_file) {
    state->fd = open(state->path.c_str(), O_RDWR | O_CLOEXEC);
    struct stat st {};
    if (state->fd < 0 || fstat(state->fd, &st) != 0) {
      int err = errno;
      if (state->fd >= 0) close(state->fd);
      std::lock_guard lock(impl_->mu);
      impl_->segments[session.segment].writer = false;
      Fail(err, "open", state->path);
    }
    state->size = static_cast<uint64_t>(st.st_size);
  }
  return std::unique_ptr<Writer>(new Writer(impl_->self.lock(), std::move(state)));
}

void Journal::SealSession(const LiveSession& session) {
  fs::path path = impl_->SegmentPath(session.segment);
  uint64_t size;
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->segments.find(session.segment);
    if (it == impl_->segments.end() || !it->second.live || it->second.writer)
      throw std::invalid_argument("journal: " + impl_->dir.string() + ": segment " +
                                  std::to_string(session.segment) + " is not a resumable session");
    size = it->second.has_file ? it->second.size : 0;
  }
  uint64_t readable = 0;
  if (size > 0) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) Fail(errno, "open", path);
    FileCloser closer(fd);
    readable = ScanFrames(fd, 0, size, path).boundary;
  }
  if (unlink(impl_->MarkerPath(session.segment).c_str()) != 0 && errno != ENOENT)
    Fail(errno, "remove", impl_->MarkerPath(session.segment));
  impl_->Seal(session.segment, readable);
}

void Journal::SetEvictHook(std::function<void(uint64_t)> hook) {
  std::lock_guard lock(impl_->mu);
  impl_->evict_hook = std::move(hook);
}

void Journal::SetAcknowledged(JournalPosition position) {
  std::lock_guard lock(impl_->mu);
  impl_->acknowledged = position;
}

uint64_t Journal::EvictOldest() {
  std::lock_guard evicting(impl_->evict_mu);
  uint64_t seq, size;
  std::function<void(uint64_t)> hook;
  {
    std::lock_guard lock(impl_->mu);
    if (impl_->segments.empty()) return 0;
    auto& [oldest, s] = *impl_->segments.begin();
    if (s.live) return 0;
    if (impl_->limits.block_when_full &&
        !impl_->AcknowledgedLocked(oldest, s.readable.value_or(s.size)))
      return 0;
    seq = oldest;
    size = s.size;
    hook = impl_->evict_hook;
  }
  if (hook) hook(seq);
  fs::path path = impl_->SegmentPath(seq);
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    spdlog::error("journal: cannot remove {}: {}", path.string(), strerror(errno));
    return 0;
  }
  {
    std::lock_guard lock(impl_->mu);
    impl_->segments.erase(seq);
    impl_->evicted[seq] = size;
    if (impl_->evicted.size() > kEvictedRemembered) impl_->evicted.erase(impl_->evicted.begin());
    ++impl_->version;
  }
  impl_->Notify();
  return size;
}

void Journal::Remove() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->segments.clear();
    ++impl_->version;
  }
  impl_->Notify();
  std::error_code ec;
  fs::remove_all(impl_->dir, ec);
  if (ec) Fail(ec.value(), "remove", impl_->dir);
}

uint64_t Journal::Version() const {
  std::lock_guard lock(impl_->mu);
  return impl_->version;
}

void Journal::Interrupt() {
  {
    std::lock_guard lock(impl_->mu);
    ++impl_->version;
  }
  impl_->Notify();
}

uint64_t Journal::WaitForChange(uint64_t seen, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(impl_->mu);
  impl_->changed.wait_for(lock, timeout, [&] { return impl_->version != seen; });
  return impl_->version;
}

// --- Journal::Writer
//
// The writer keeps its segment's size itself (one writer per segment) and publishes it to the
// journal after each move. It looks for frame boundaries only when a rotation is due, from
// the last boundary it knows, so the hot path is one splice(2) per call and no parsing.

namespace {

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

int CreateSegmentFile(const fs::path& path) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, kFileMode);
  if (fd < 0) Fail(errno, "create", path);
  return fd;
}

}  // namespace

Journal::Writer::Writer(std::shared_ptr<Journal> journal, std::unique_ptr<State> state)
    : journal_(std::move(journal)), state_(std::move(state)) {}

Journal::Writer::~Writer() {
  if (state_->fd >= 0) close(state_->fd);
  if (state_->sealed) return;
  std::lock_guard lock(journal_->impl_->mu);
  auto it = journal_->impl_->segments.find(state_->seq);
  if (it != journal_->impl_->segments.end()) it->second.writer = false;
}

uint64_t Journal::Writer::segment() const { return state_->seq; }

Journal::Writer::Result Journal::Writer::SpliceFrom(int fd, std::size_t max_bytes) {
  State& s = *state_;
  Impl& impl = *journal_->impl_;
  if (s.sealed) throw std::logic_error("journal: SpliceFrom on a sealed writer");
  JournalLimits limits = journal_->limits();
  // Room first: with block_when_full nothing leaves the FIFO unless it fits.
  if (s.fd < 0 && limits.block_when_full && !impl.RoomFor(0, 0)) return {Status::kFull, 0};
  if (!s.MaybeRotate(impl, limits, true)) return {Status::kFull, 0};
  std::size_t n = Budget(limits, s.size, s.next_end, max_bytes);
  if (n == 0) return {Status::kWouldBlock, 0};

  // A session may end without a byte (no segment then): the file made for this call goes
  // again if nothing came.
  bool created = s.fd < 0;
  if (created) s.fd = CreateSegmentFile(s.path);

  std::size_t moved = 0;
  int err = 0;
  bool eof = false;
  while (moved < n) {
    ssize_t r;
    uint64_t off = s.size + moved;
    if (s.splice_works) {
      loff_t out_off = static_cast<loff_t>(off);
      r = splice(fd, nullptr, s.fd, &out_off, n - moved, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (r < 0 && errno == EINVAL) {
        spdlog::debug("journal: splice refused into {}; reading and writing instead",
                      s.path.string());
        s.splice_works = false;
        continue;
      }
    } else {
      if (!s.copy_buffer) s.copy_buffer.reset(new char[kCopyBlock]);
      r = read(fd, s.copy_buffer.get(), std::min(kCopyBlock, n - moved));
      if (r > 0) {
        try {
          PwriteFull(s.fd, s.copy_buffer.get(), static_cast<std::size_t>(r), off, s.path);
        } catch (const std::system_error& e) {
          spdlog::error("{}: {} bytes read from the FIFO are lost", e.what(), r);
          if (moved > 0) {
            s.size += moved;
            impl.Publish(s.seq, s.size);
          }
          throw;
        }
      }
    }
    if (r > 0) {
      moved += static_cast<std::size_t>(r);
    } else if (r == 0) {
      eof = true;
      break;
    } else if (errno != EINTR) {
      if (errno != EAGAIN) err = errno;
      break;
    }
  }

  if (moved == 0) {
    if (created) {
      close(s.fd);
      s.fd = -1;
      unlink(s.path.c_str());
    }
    if (err) Fail(err, "splice into", s.path);
    return {eof ? Status::kEof : Status::kWouldBlock, 0};
  }
  // An error after some bytes moved: report the bytes; the next call meets the error again.
  s.size += moved;
  if (impl.Publish(s.seq, s.size)) s.rotate_now = true;
  if (created) impl.EvictWhileOver();
  try {
    s.MaybeRotate(impl, limits, true);
  } catch (const std::system_error& e) {
    // The bytes are in the journal; the next call tries the rotation again before it takes
    // any byte, and reports the error then.
    spdlog::debug("{}", e.what());
    s.next_end = 0;
  }
  return {Status::kMoved, moved};
}

void Journal::Writer::Append(std::string_view bytes) {
  State& s = *state_;
  Impl& impl = *journal_->impl_;
  if (s.sealed) throw std::logic_error("journal: Append on a sealed writer");
  // Append never refuses bytes: with block_when_full and no room, segments are kept beyond
  // max_segments instead.
  while (!bytes.empty()) {
    JournalLimits limits = journal_->limits();
    s.MaybeRotate(impl, limits, false);
    std::size_t n = Budget(limits, s.size, s.next_end, bytes.size());
    bool created = s.fd < 0;
    if (created) s.fd = CreateSegmentFile(s.path);
    PwriteFull(s.fd, bytes.data(), n, s.size, s.path);
    s.size += n;
    if (impl.Publish(s.seq, s.size)) s.rotate_now = true;
    if (created) impl.EvictWhileOver();
    bytes.remove_prefix(n);
  }
  s.MaybeRotate(impl, journal_->limits(), false);
}

void Journal::Writer::Seal() {
  State& s = *state_;
  if (s.sealed) return;
  Impl& impl = *journal_->impl_;
  uint64_t readable = 0;
  if (s.fd >= 0) {
    try {
      readable = ScanFrames(s.fd, s.boundary, s.size, s.path).boundary;
    } catch (const std::system_error& e) {
      spdlog::error("{}; the segment is read up to byte {}", e.what(), s.boundary);
      readable = s.boundary;
    }
    close(s.fd);
    s.fd = -1;
  }
  // A marker left behind names a FIFO that is gone: the next start seals the session again.
  if (unlink(impl.MarkerPath(s.seq).c_str()) != 0 && errno != ENOENT) {
    spdlog::error("journal: cannot remove {}: {}", impl.MarkerPath(s.seq).string(),
                  strerror(errno));
  }
  impl.Seal(s.seq, readable);
  s.sealed = true;
}

std::string Journal::Writer::CutAtFrameBoundary() {
  State& s = *state_;
  if (s.sealed || s.fd < 0) return {};
  FrameScan scan = ScanFrames(s.fd, s.boundary, s.size, s.path);
  if (scan.corrupt || scan.boundary >= s.size) return {};
  std::string tail(static_cast<std::size_t>(s.size - scan.boundary), '\0');
  tail.resize(PreadFull(s.fd, tail.data(), tail.size(), scan.boundary, s.path));
  if (ftruncate(s.fd, static_cast<off_t>(scan.boundary)) != 0) Fail(errno, "truncate", s.path);
  s.size = s.boundary = scan.boundary;
  s.next_end = 0;
  journal_->impl_->Publish(s.seq, s.size);
  return tail;
}

bool Journal::Writer::State::MaybeRotate(Impl& impl, const JournalLimits& limits, bool may_refuse) {
  State& s = *this;
  if (s.fd < 0) return true;
  if (!s.rotate_now) {
    if (limits.max_segment_bytes < 0) return true;
    if (s.size < static_cast<uint64_t>(limits.max_segment_bytes)) return true;
  }
  if (s.size < s.next_end) return true;  // the frame after `boundary` is not complete yet
  FrameScan scan = ScanFrames(s.fd, s.boundary, s.size, s.path);
  s.boundary = scan.boundary;
  s.next_end = scan.next_end;
  if (!scan.corrupt && s.boundary == 0) return true;  // one frame bigger than the limit
  if (may_refuse && limits.block_when_full && !impl.RoomFor(s.seq, s.boundary)) {
    s.next_end = 0;  // look again next time (the boundary is known, the scan is short)
    return false;
  }
  if (scan.corrupt) {
    spdlog::error(
        "journal: {}: length prefix over {} bytes at offset {}; the rest of the "
        "segment is skipped",
        s.path.string(), kMaxFrameBytes, s.boundary);
  }

  // The new segment: marker first, then the bytes of the frame cut by the limit, then the old
  // segment is cut at its boundary and sealed. A restart between two steps finds two markers
  // for one FIFO and finishes or undoes the rotation (Impl::RepairInterruptedRotation).
  uint64_t new_seq = impl.Reserve(s.fifo_path);
  fs::path new_path = impl.SegmentPath(new_seq);
  uint64_t tail = scan.corrupt ? 0 : s.size - s.boundary;
  int new_fd = -1;
  try {
    if (tail > 0) {
      new_fd = CreateSegmentFile(new_path);
      std::unique_ptr<char[]> buf(new char[tail]);
      std::size_t got = PreadFull(s.fd, buf.get(), tail, s.boundary, s.path);
      PwriteFull(new_fd, buf.get(), got, 0, new_path);
      tail = got;
    }
    if (!scan.corrupt && ftruncate(s.fd, static_cast<off_t>(s.boundary)) != 0)
      Fail(errno, "truncate", s.path);
  } catch (...) {
    // Nothing of the old segment changed yet: forget the new one, stay where we were.
    if (new_fd >= 0) close(new_fd);
    impl.Unreserve(new_seq);
    throw;
  }
  close(s.fd);
  if (unlink(impl.MarkerPath(s.seq).c_str()) != 0 && errno != ENOENT)
    spdlog::warn("journal: cannot remove {}: {}", impl.MarkerPath(s.seq).string(), strerror(errno));
  {
    std::lock_guard lock(impl.mu);
    auto& old_seg = impl.segments[s.seq];
    old_seg.size = scan.corrupt ? s.size : s.boundary;
    old_seg.readable = s.boundary;
    old_seg.live = false;
    old_seg.writer = false;
    auto& new_seg = impl.segments[new_seq];
    new_seg.size = tail;
    new_seg.has_file = tail > 0;
    ++impl.version;
  }
  impl.Notify();
  s.Switch(new_seq, new_path);
  s.fd = new_fd;
  s.size = tail;
  s.rotate_now = false;
  impl.EvictWhileOver();
  return true;
}

// ------------------------------------------------------------------------------------------
// JournalFrameReader

struct JournalFrameReader::State {
  std::shared_ptr<Journal> journal;
  uint64_t want;         // no segment open: the next one to read is the first >= want
  uint64_t want_offset;  // where to start in `want` itself
  uint64_t seq = 0;      // the segment open (fd >= 0)
  int fd = -1;
  uint64_t pos = 0;
  uint64_t limit = 0;      // bytes readable in `seq`, as last looked up
  bool sealed = false;     // `limit` is final
  uint64_t file_size = 0;  // sealed: the file's size (bytes past `limit` are a torn tail)
  std::unique_ptr<char[]> buf;
  std::size_t cap = 0;
  uint64_t buf_off = 0;  // buf holds the file's bytes [buf_off, buf_off + buf_len)
  std::size_t buf_len = 0;
  uint64_t skipped = 0;
  uint64_t lost = 0;

  // Gives up the segment `seq` (not open, or open at `pos`): counts what was not read of it
  // as lost and goes on with the next one. Only a file that is gone (ENOENT) is forgotten by
  // the journal; another error (EIO, EACCES) is this reader's alone.
  void GiveUp(Journal::Impl& impl, uint64_t seq, uint64_t from, const char* what, int err) {
    const std::optional<uint64_t> size =
        err == ENOENT ? impl.MarkUnreadable(seq) : impl.ListedSize(seq);
    const uint64_t left = size && *size > from ? *size - from : 0;
    lost += left;
    spdlog::error("journal: cannot {} {}: {}; {} unread bytes of it are lost", what,
                  impl.SegmentPath(seq).string(), strerror(err), left);
    if (fd >= 0) close(fd);
    fd = -1;
    want = seq + 1;
    want_offset = 0;
    buf_len = 0;
  }

  void CloseSegment() {
    if (fd >= 0) close(fd);
    fd = -1;
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

JournalFrameReader::~JournalFrameReader() {
  if (state_->fd >= 0) close(state_->fd);
}

JournalPosition JournalFrameReader::position() const {
  if (state_->fd >= 0) return {state_->seq, state_->pos};
  return {state_->want, state_->want_offset};
}

uint64_t JournalFrameReader::skipped_bytes() const { return state_->skipped; }

uint64_t JournalFrameReader::lost_bytes() const { return state_->lost; }

JournalFrameReader::Status JournalFrameReader::Next(std::string_view* body,
                                                    JournalPosition* start) {
  State& s = *state_;
  Journal::Impl& impl = *s.journal->impl_;
  for (;;) {
    if (s.fd < 0) {
      // Find the segment to read: the first one >= want (evicted ones in between are counted
      // as skipped; sequence numbers never used are not).
      uint64_t found;
      bool has_file;
      {
        std::lock_guard lock(impl.mu);
        auto it = impl.segments.lower_bound(s.want);
        if (it == impl.segments.end()) {
          bool any_live = std::any_of(impl.segments.begin(), impl.segments.end(),
                                      [](auto& e) { return e.second.live; });
          return any_live ? Status::kWait : Status::kEnd;
        }
        found = it->first;
        has_file = it->second.has_file;
        if (s.want > 0) {
          for (auto e = impl.evicted.lower_bound(s.want);
               e != impl.evicted.end() && e->first < found; ++e) {
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
      fs::path path = impl.SegmentPath(found);
      s.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (s.fd < 0) {
        const int err = errno;
        if (err == ENOENT) {
          std::lock_guard lock(impl.mu);
          if (!impl.segments.count(found)) continue;  // evicted meanwhile: counted next look
        }
        if (err == EMFILE || err == ENFILE || err == ENOMEM || err == EINTR || err == EAGAIN) {
          return Status::kRetry;  // out of descriptors or memory for a moment
        }
        s.GiveUp(impl, found, s.want_offset, "open", err);  // removed by hand, unreadable
        continue;
      }
      s.seq = found;
      s.pos = s.want_offset;
      s.limit = 0;
      s.sealed = false;
      s.buf_len = 0;
    }

    // A complete frame in the buffer, within what is readable?
    uint64_t avail_end = std::min(s.buf_off + s.buf_len, s.limit);
    uint64_t avail = s.pos >= s.buf_off && avail_end > s.pos ? avail_end - s.pos : 0;
    uint64_t needed = 4;
    if (avail >= 4) {
      uint32_t len = BigEndian32(s.buf.get() + (s.pos - s.buf_off));
      if (len > kMaxFrameBytes) {
        uint64_t end = s.sealed ? s.file_size : s.limit;
        spdlog::warn("journal: {}: length prefix {} at offset {}; skipping to the next segment",
                     impl.SegmentPath(s.seq).string(), len, s.pos);
        s.skipped += end > s.pos ? end - s.pos : 0;
        s.CloseSegment();
        return Status::kCorrupt;
      }
      needed = 4 + uint64_t{len};
      if (avail >= needed) {
        const char* p = s.buf.get() + (s.pos - s.buf_off);
        *body = std::string_view(p + 4, len);
        *start = {s.seq, s.pos};
        s.pos += needed;
        return Status::kFrame;
      }
    }

    // Read more of the file, if the readable part holds more than the buffer.
    if (s.limit > s.pos + avail) {
      std::size_t want = static_cast<std::size_t>(
          std::min<uint64_t>(s.limit - s.pos, std::max<uint64_t>(kReadBlock, needed)));
      if (want > s.cap) {
        s.cap = std::max(want, kReadBlock);
        s.buf.reset(new char[s.cap]);
      }
      s.buf_off = s.pos;
      try {
        s.buf_len = PreadFull(s.fd, s.buf.get(), want, s.pos, impl.SegmentPath(s.seq));
      } catch (const std::system_error& e) {
        s.GiveUp(impl, s.seq, s.pos, "read", e.code().value());
        continue;
      }
      if (s.buf_len > avail) continue;
      // The file is shorter than the journal said (truncated by a rotation): look again.
    }

    if (!s.sealed) {
      uint64_t old_limit = s.limit;
      bool exists, live;
      uint64_t size;
      {
        std::lock_guard lock(impl.mu);
        auto it = impl.segments.find(s.seq);
        exists = it != impl.segments.end();
        live = exists && it->second.live;
        size = exists ? it->second.size : 0;
      }
      if (!exists) {
        // Evicted while open: read what the file holds.
        struct stat st {};
        if (fstat(s.fd, &st) != 0) {
          s.GiveUp(impl, s.seq, s.pos, "stat", errno);
          continue;
        }
        s.sealed = true;
        s.file_size = s.limit = static_cast<uint64_t>(st.st_size);
      } else if (live) {
        s.limit = size;
      } else {
        s.sealed = true;
        s.file_size = size;
        s.limit = impl.SealedReadable(s.seq);
      }
      if (s.sealed || s.limit != old_limit) continue;
      return Status::kWait;
    }

    // Sealed, and what is left is not a complete frame: a torn tail.
    if (s.file_size > s.pos) {
      spdlog::warn("journal: {}: skipping a torn frame of {} bytes at offset {}",
                   impl.SegmentPath(s.seq).string(), s.file_size - s.pos, s.pos);
      s.skipped += s.file_size - s.pos;
    }
    s.CloseSegment();
  }
}

// ------------------------------------------------------------------------------------------
// JournalStore

JournalStore::JournalStore(fs::path root, uint64_t max_total_bytes)
    : root_(std::move(root)), max_total_bytes_(max_total_bytes) {
  fs::path containers = root_ / "containers";
  std::error_code ec;
  CreatePrivateDirectory(root_, ec);
  if (!ec) CreatePrivateDirectory(containers, ec);
  if (ec) Fail(ec.value(), "create", containers);
  if (access(containers.c_str(), W_OK | X_OK) != 0) Fail(errno, "write to", containers);
  const fs::path lock = root_ / "lock";
  lock_fd_ = open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd_ < 0) Fail(errno, "create", lock);
  if (flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    close(lock_fd_);
    lock_fd_ = -1;
    if (err == EWOULDBLOCK) {
      throw InUse("another process holds " + lock.string() +
                  ": a second copy of the plugin uses the same state directory");
    }
    Fail(err, "lock", lock);
  }
}

JournalStore::~JournalStore() {
  if (lock_fd_ >= 0) close(lock_fd_);  // releases the lock
}

const fs::path& JournalStore::root() const { return root_; }

fs::path JournalStore::ContainerDir(const std::string& container_id) const {
  return root_ / "containers" / container_id;
}

std::vector<std::string> JournalStore::ContainerIds() const {
  std::vector<std::string> ids;
  std::error_code ec;
  fs::path containers = root_ / "containers";
  auto it = fs::directory_iterator(containers, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_directory(type_ec)) ids.push_back(it->path().filename().string());
  }
  if (ec) spdlog::warn("journal: cannot list {}: {}", containers.string(), ec.message());
  std::sort(ids.begin(), ids.end());
  return ids;
}

uint64_t JournalStore::max_total_bytes() const { return max_total_bytes_; }

}  // namespace skald
