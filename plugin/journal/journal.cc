#include "plugin/journal/journal.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <stdexcept>
#include <system_error>

#include "plugin/common/posix_file.h"
#include "plugin/journal/journal_files.h"
#include "plugin/journal/journal_format.h"
#include "plugin/journal/journal_segments.h"
#include "plugin/journal/journal_writer.h"

namespace skald {

namespace fs = std::filesystem;

namespace {

JournalLimits Sanitized(JournalLimits limits) {
  limits.max_segments = std::max(limits.max_segments, 1);
  return limits;
}

}  // namespace

Journal::Journal(std::unique_ptr<JournalSegments> segments) : segments_(std::move(segments)) {}
Journal::~Journal() = default;

std::shared_ptr<Journal> Journal::Open(const fs::path& dir, JournalLimits limits) {
  std::error_code ec;
  // A directory on success (something else by the name is ENOTDIR).
  const bool made = CreatePrivateDirectory(dir, ec);
  if (ec) ThrowJournalError(ec.value(), "create", dir);
  auto segments = std::make_unique<JournalSegments>();
  segments->dir = dir;
  {
    // Nobody else has the segments yet: the lock only states that the fields are guarded.
    absl::MutexLock lock(&segments->mu);
    segments->limits = Sanitized(limits);
    // A directory made just now holds nothing to scan (nor a cursor, below).
    if (!made) segments->ScanLocked();
  }
  auto journal = std::shared_ptr<Journal>(new Journal(std::move(segments)));
  journal->self_ = journal;
  if (made) return journal;
  if (auto cursor = journal->ReadCursor()) {
    JournalSegments& segs = *journal->segments_;
    absl::MutexLock lock(&segs.mu);
    segs.acknowledged = *cursor;
    segs.next_seq = std::max(segs.next_seq, cursor->segment + 1);
  }
  return journal;
}

const fs::path& Journal::dir() const { return segments_->dir; }

void Journal::SetLimits(JournalLimits limits) {
  absl::MutexLock lock(&segments_->mu);
  segments_->limits = Sanitized(limits);
}

JournalLimits Journal::limits() const {
  absl::MutexLock lock(&segments_->mu);
  return segments_->limits;
}

void Journal::WriteInfo(std::string_view json) {
  // Not written when it could not be read back.
  if (json.size() > kJournalInfoMaxBytes)
    ThrowJournalError(EFBIG, "write", dir() / kJournalInfoFile);
  ReplaceJournalFile(dir() / kJournalInfoFile, json);
}

std::optional<std::string> Journal::ReadInfo() const {
  return ReadSmallFile(dir() / kJournalInfoFile, kJournalInfoMaxBytes);
}

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
  const fs::path path = dir() / kJournalCursorFile;
  // Without waiting: a FIFO in the cursor's place (a damaged state directory) is refused, not
  // waited on for a reader.
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK, kJournalFileMode));
  if (!fd) ThrowJournalError(errno, "create", path);
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) ThrowJournalError(errno, "stat", path);
  if (!S_ISREG(st.st_mode)) ThrowJournalError(EINVAL, "write (not a regular file)", path);
  PwriteOrThrow(fd.get(), text, static_cast<std::size_t>(n), 0, path);
  if (st.st_size > n && ftruncate(fd.get(), n) != 0) ThrowJournalError(errno, "truncate", path);
}

std::optional<JournalPosition> Journal::ReadCursor() const {
  auto text = ReadSmallFile(dir() / kJournalCursorFile, kJournalCursorMaxBytes);
  if (!text) return std::nullopt;
  JournalPosition p;
  const char* begin = text->data();
  const char* end = begin + text->size();
  auto r = std::from_chars(begin, end, p.segment);
  if (r.ec != std::errc() || r.ptr == end || *r.ptr != ' ') return std::nullopt;
  r = std::from_chars(r.ptr + 1, end, p.offset);
  if (r.ec != std::errc() || r.ptr == end || *r.ptr != '\n' || r.ptr + 1 != end)
    return std::nullopt;
  if (p.segment >= kJournalSegmentLimit) {
    // No journal numbers that many segments: a damaged file (it would wrap the next number).
    spdlog::warn("journal {}: its cursor names segment {}; ignored", dir().string(), p.segment);
    return std::nullopt;
  }
  return p;
}

std::vector<uint64_t> Journal::Segments() const {
  absl::MutexLock lock(&segments_->mu);
  std::vector<uint64_t> out;
  out.reserve(segments_->segments.size());
  for (auto& [seq, s] : segments_->segments) out.push_back(seq);
  return out;
}

uint64_t Journal::ReadableBytes(uint64_t segment) const {
  return segments_->SealedReadable(segment);
}

bool Journal::IsSealed(uint64_t segment) const {
  absl::MutexLock lock(&segments_->mu);
  auto it = segments_->segments.find(segment);
  return it == segments_->segments.end() || !it->second.live;
}

uint64_t Journal::TotalBytes() const {
  absl::MutexLock lock(&segments_->mu);
  uint64_t total = 0;
  for (auto& [seq, s] : segments_->segments) total += s.size;
  return total;
}

JournalPosition Journal::End() const {
  absl::MutexLock lock(&segments_->mu);
  if (segments_->segments.empty()) return {};
  auto& [seq, s] = *segments_->segments.rbegin();
  return {seq, s.size};
}

JournalPosition Journal::Begin() const {
  absl::MutexLock lock(&segments_->mu);
  if (segments_->segments.empty()) return {};
  return {segments_->segments.begin()->first, 0};
}

fs::file_time_type Journal::LastWrite() const {
  std::optional<fs::path> newest;
  {
    absl::MutexLock lock(&segments_->mu);
    for (auto it = segments_->segments.rbegin(); it != segments_->segments.rend(); ++it) {
      if (it->second.has_file) {
        newest = segments_->SegmentPath(it->first);
        break;
      }
    }
  }
  std::error_code ec;
  if (newest) {
    auto t = fs::last_write_time(*newest, ec);
    if (!ec) return t;
  }
  auto t = fs::last_write_time(segments_->dir, ec);
  return ec ? fs::file_time_type::min() : t;
}

std::vector<Journal::LiveSession> Journal::LiveSessions() const {
  absl::MutexLock lock(&segments_->mu);
  std::vector<LiveSession> out;
  for (auto& [seq, s] : segments_->segments)
    if (s.live && !s.writer) out.push_back({seq, s.fifo_path});
  return out;
}

// Writer construction lives here (the Writer's constructor only takes the segment it was
// given); what a Writer does is in plugin/journal/journal_writer.cc.

std::unique_ptr<Journal::Writer> Journal::StartWriter(const std::string& fifo_path) {
  uint64_t seq = segments_->Reserve(fifo_path);
  return std::unique_ptr<Writer>(new Writer(self_.lock(), seq, fifo_path, UniqueFd(), 0));
}

std::unique_ptr<Journal::Writer> Journal::ResumeWriter(const LiveSession& session) {
  std::string fifo_path;
  bool has_file;
  {
    absl::MutexLock lock(&segments_->mu);
    auto it = segments_->segments.find(session.segment);
    if (it == segments_->segments.end() || !it->second.live || it->second.writer)
      throw std::invalid_argument("journal: " + segments_->dir.string() + ": segment " +
                                  std::to_string(session.segment) + " is not a resumable session");
    it->second.writer = true;
    has_file = it->second.has_file;
    fifo_path = it->second.fifo_path;
  }
  const fs::path path = segments_->SegmentPath(session.segment);
  UniqueFd fd;
  uint64_t size = 0;
  if (has_file) {
    fd.reset(open(path.c_str(), O_RDWR | O_CLOEXEC));
    struct stat st {};
    if (!fd || fstat(fd.get(), &st) != 0) {
      int err = errno;
      fd.reset();
      absl::MutexLock lock(&segments_->mu);
      segments_->segments[session.segment].writer = false;
      ThrowJournalError(err, "open", path);
    }
    size = static_cast<uint64_t>(st.st_size);
  }
  return std::unique_ptr<Writer>(
      new Writer(self_.lock(), session.segment, std::move(fifo_path), std::move(fd), size));
}

void Journal::SealSession(const LiveSession& session) {
  fs::path path = segments_->SegmentPath(session.segment);
  uint64_t size;
  {
    absl::MutexLock lock(&segments_->mu);
    auto it = segments_->segments.find(session.segment);
    if (it == segments_->segments.end() || !it->second.live || it->second.writer)
      throw std::invalid_argument("journal: " + segments_->dir.string() + ": segment " +
                                  std::to_string(session.segment) + " is not a resumable session");
    size = it->second.has_file ? it->second.size : 0;
  }
  uint64_t readable = 0;
  if (size > 0) {
    UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) ThrowJournalError(errno, "open", path);
    readable = ScanFrames(fd.get(), 0, size, path).boundary;
  }
  if (unlink(segments_->MarkerPath(session.segment).c_str()) != 0 && errno != ENOENT)
    ThrowJournalError(errno, "remove", segments_->MarkerPath(session.segment));
  segments_->Seal(session.segment, readable);
}

uint64_t Journal::SetEvictHook(std::function<void(uint64_t)> hook) {
  absl::MutexLock lock(&segments_->mu);
  segments_->evict_hook = std::move(hook);
  return ++segments_->evict_hook_owner;
}

void Journal::ClearEvictHook(uint64_t owner) {
  absl::MutexLock lock(&segments_->mu);
  if (segments_->evict_hook_owner == owner) segments_->evict_hook = nullptr;
}

void Journal::SetAcknowledged(JournalPosition position) {
  absl::MutexLock lock(&segments_->mu);
  segments_->acknowledged = position;
}

uint64_t Journal::EvictOldest(bool acknowledged_only) {
  return segments_->EvictOldest(acknowledged_only);
}

bool Journal::OldestIsLive() const {
  absl::MutexLock lock(&segments_->mu);
  return !segments_->segments.empty() && segments_->segments.begin()->second.live;
}

void Journal::RequestRotation() { segments_->rotation_requested = true; }

void Journal::SetOverBudget(bool over) { segments_->over_budget = over; }

bool Journal::OverBudget() const { return segments_->over_budget; }

void Journal::Remove() {
  {
    absl::MutexLock lock(&segments_->mu);
    segments_->segments.clear();
    ++segments_->version;
  }
  segments_->Notify();
  std::error_code ec;
  fs::remove_all(segments_->dir, ec);
  if (ec) ThrowJournalError(ec.value(), "remove", segments_->dir);
}

uint64_t Journal::Version() const {
  absl::MutexLock lock(&segments_->mu);
  return segments_->version;
}

void Journal::Interrupt() {
  {
    absl::MutexLock lock(&segments_->mu);
    ++segments_->version;
  }
  segments_->Notify();
}

uint64_t Journal::WaitForChange(uint64_t seen, std::chrono::milliseconds timeout) const {
  JournalSegments& segs = *segments_;
  const auto until = std::chrono::steady_clock::now() + timeout;
  absl::MutexLock lock(&segs.mu);
  while (segs.version == seen) {
    const auto left = until - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) break;
    segs.changed.WaitWithTimeout(&segs.mu, absl::FromChrono(left));
  }
  return segs.version;
}

}  // namespace skald
