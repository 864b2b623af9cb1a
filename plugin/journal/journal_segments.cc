#include "plugin/journal/journal_segments.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <vector>

#include "plugin/common/posix_file.h"
#include "plugin/journal/journal_files.h"

namespace skald {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kEvictedRemembered = 1024;

}  // namespace

std::map<uint64_t, std::string> JournalSegments::ListFilesLocked() {
  std::error_code ec;
  std::map<uint64_t, std::string> markers;
  uint64_t max_seen = 0;  // also of files skipped: a new segment never takes a used name
  auto it = fs::directory_iterator(dir, ec);
  if (ec) ThrowJournalError(ec.value(), "read directory", dir);
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) ThrowJournalError(ec.value(), "read directory", dir);
    const fs::path& path = it->path();
    std::string name = path.filename().string();
    if (name.ends_with(kJournalTempExt)) {
      // An atomic replace that did not finish; the previous file (if any) is intact.
      if (!fs::remove(path, ec))
        spdlog::warn("journal: cannot remove {}: {}", path.string(), ec.message());
    } else if (auto seq = ParseJournalFileName(name, kJournalSegmentExt)) {
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
    } else if (auto seq = ParseJournalFileName(name, kJournalMarkerExt)) {
      max_seen = std::max(max_seen, *seq);
      auto fifo = ReadSmallFile(path, kJournalMarkerMaxBytes);
      while (fifo && !fifo->empty() && fifo->back() == '\n') fifo->pop_back();
      if (!fifo || fifo->empty()) {
        spdlog::warn("journal: ignoring unreadable or empty marker {}", path.string());
        continue;
      }
      markers[*seq] = std::move(*fifo);
    } else if (name != kJournalInfoFile && name != kJournalCursorFile &&
               name != kJournalReplayMarkerFile) {
      spdlog::warn("journal: ignoring unexpected file {}", path.string());
    }
  }
  next_seq = max_seen + 1;
  return markers;
}

void JournalSegments::ScanLocked() {
  const std::map<uint64_t, std::string> markers = ListFilesLocked();
  std::map<std::string, std::vector<uint64_t>> by_fifo;  // ascending seqs per FIFO
  for (const auto& [seq, fifo] : markers) {
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
      RepairInterruptedRotationLocked(older, newer);
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
void JournalSegments::RepairInterruptedRotationLocked(uint64_t older, uint64_t newer) {
  Segment& old_seg = segments.at(older);
  Segment& new_seg = segments.at(newer);
  fs::path old_path = SegmentPath(older);
  bool finish = true;
  uint64_t boundary = old_seg.size;
  try {
    if (old_seg.has_file) {
      UniqueFd fd(open(old_path.c_str(), O_RDWR | O_CLOEXEC));
      if (!fd) ThrowJournalError(errno, "open", old_path);
      FrameScan scan = ScanFrames(fd.get(), 0, old_seg.size, old_path);
      boundary = scan.boundary;
      uint64_t tail = scan.corrupt ? 0 : old_seg.size - boundary;
      finish = new_seg.size >= tail;
      if (finish && !scan.corrupt && ftruncate(fd.get(), static_cast<off_t>(boundary)) != 0)
        ThrowJournalError(errno, "truncate", old_path);
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

uint64_t JournalSegments::Reserve(const std::string& fifo_path) {
  uint64_t seq;
  {
    absl::MutexLock lock(&mu);
    // Only damaged files (a cursor or a segment name near the limit) lead here; a segment
    // numbered past it would not be found again.
    if (next_seq >= kJournalSegmentLimit)
      ThrowJournalError(EOVERFLOW, "number another segment in", dir);
    seq = next_seq++;
    Segment& s = segments[seq];
    s.live = true;
    s.writer = true;
    s.fifo_path = fifo_path;
    ++version;
  }
  try {
    ReplaceJournalFile(MarkerPath(seq), fifo_path);
  } catch (...) {
    absl::MutexLock lock(&mu);
    segments.erase(seq);
    throw;
  }
  Notify();
  return seq;
}

uint64_t JournalSegments::Walked(uint64_t seq) const {
  absl::MutexLock lock(&mu);
  auto it = segments.find(seq);
  return it == segments.end() ? 0 : it->second.walked;
}

void JournalSegments::Unreserve(uint64_t seq) {
  unlink(SegmentPath(seq).c_str());
  unlink(MarkerPath(seq).c_str());
  {
    absl::MutexLock lock(&mu);
    segments.erase(seq);
    ++version;
  }
  Notify();
}

bool JournalSegments::Publish(uint64_t seq, uint64_t size) {
  bool unreadable;
  {
    absl::MutexLock lock(&mu);
    Segment& s = segments[seq];
    s.size = size;
    s.has_file = true;
    unreadable = s.unreadable;
    ++version;
  }
  Notify();
  return unreadable;
}

std::optional<uint64_t> JournalSegments::ListedSize(uint64_t seq) const {
  absl::MutexLock lock(&mu);
  auto it = segments.find(seq);
  if (it == segments.end()) return std::nullopt;
  return it->second.size;
}

std::optional<uint64_t> JournalSegments::MarkUnreadable(uint64_t seq) {
  uint64_t size;
  {
    absl::MutexLock lock(&mu);
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
void JournalSegments::Seal(uint64_t seq, uint64_t readable) {
  bool remove_file = false;
  {
    absl::MutexLock lock(&mu);
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
bool JournalSegments::RoomFor(uint64_t rotating_seq, uint64_t rotating_boundary) {
  absl::MutexLock lock(&mu);
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

uint64_t JournalSegments::EvictOldest(bool acknowledged_only) {
  absl::MutexLock evicting(&evict_mu);
  uint64_t seq, size;
  std::function<void(uint64_t)> hook;
  {
    absl::MutexLock lock(&mu);
    if (segments.empty()) return 0;
    auto& [oldest, s] = *segments.begin();
    if (s.live) return 0;
    if ((limits.block_when_full || acknowledged_only) &&
        !AcknowledgedLocked(oldest, s.readable.value_or(s.size)))
      return 0;
    seq = oldest;
    size = s.size;
    hook = evict_hook;
  }
  if (hook) hook(seq);
  fs::path path = SegmentPath(seq);
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    spdlog::error("journal: cannot remove {}: {}", path.string(), strerror(errno));
    return 0;
  }
  {
    absl::MutexLock lock(&mu);
    segments.erase(seq);
    evicted[seq] = size;
    if (evicted.size() > kEvictedRemembered) evicted.erase(evicted.begin());
    ++version;
  }
  Notify();
  return size;
}

void JournalSegments::EvictWhileOver() {
  for (;;) {
    {
      absl::MutexLock lock(&mu);
      if (segments.size() <= static_cast<std::size_t>(limits.max_segments)) return;
    }
    if (EvictOldest() == 0) return;
  }
}

uint64_t JournalSegments::SealedReadable(uint64_t seq) {
  uint64_t size;
  {
    absl::MutexLock lock(&mu);
    auto it = segments.find(seq);
    if (it == segments.end()) return 0;
    if (it->second.live) return it->second.size;
    if (it->second.readable) return *it->second.readable;
    size = it->second.size;
  }
  fs::path path = SegmentPath(seq);
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    if (errno != ENOENT)
      spdlog::warn("journal: cannot open {}: {}", path.string(), strerror(errno));
    return 0;
  }
  FrameScan scan;
  try {
    scan = ScanFrames(fd.get(), 0, size, path);
  } catch (const std::system_error& e) {
    spdlog::warn("{}", e.what());
    return 0;
  }
  absl::MutexLock lock(&mu);
  auto it = segments.find(seq);
  if (it != segments.end() && !it->second.live && !it->second.readable)
    it->second.readable = scan.boundary;
  return scan.boundary;
}
}  // namespace skald
