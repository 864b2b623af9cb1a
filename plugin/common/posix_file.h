// POSIX file helpers: one owning type per descriptor, and the loops every read and write of a
// descriptor needs (EINTR, short transfers), written once.
//
// The functions report errors through a std::error_code (generic category, the errno) and do
// not throw or log: each caller words its own message (the journal's "journal: cannot write
// <path>", an option's "loki-tls-ca-file: cannot read ...").
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace skald {

// Owns one file descriptor: closes it in its destructor (or reset()). Move-only. An empty
// UniqueFd holds -1.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  // Gives the descriptor up without closing it.
  int release() noexcept {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes the descriptor held (if any) and holds `fd`. close(2)'s result is ignored: on Linux
  // the descriptor is released even when close reports an error, and retrying is wrong.
  void reset(int fd = -1) noexcept;

 private:
  int fd_ = -1;
};

// Reads up to `n` bytes at `offset` with pread(2), again after EINTR and short reads: fewer
// only at the end of the file. On an error, sets `ec` and returns the bytes read before it.
std::size_t PreadFull(int fd, void* buf, std::size_t n, uint64_t offset, std::error_code& ec);

// Writes `n` bytes at `offset` with pwrite(2), again after EINTR and short writes. On an
// error, sets `ec` and returns the bytes written before it.
std::size_t PwriteFull(int fd, const void* buf, std::size_t n, uint64_t offset,
                       std::error_code& ec);

// Writes `n` bytes at the descriptor's position with write(2) (files, pipes, sockets), again
// after EINTR and short writes. A non-blocking descriptor that is full is an error (EAGAIN).
// On an error, sets `ec` and returns the bytes written before it.
std::size_t WriteFull(int fd, const void* buf, std::size_t n, std::error_code& ec);

// Reads `fd` from its position to its end into `out`, refusing more than `max_bytes` (EFBIG):
// the one bounded read loop under every file the plugin reads whole. `size_hint` (the size
// fstat gave, or 0) sizes the first read. On failure, sets `ec` and returns false with `out`
// cleared.
bool ReadToEnd(int fd, std::size_t max_bytes, std::size_t size_hint, std::string& out,
               std::error_code& ec);

// Reads `path` whole into `out`: a regular file of at most `max_bytes`. Opened without waiting
// (a FIFO put in its place is refused, not waited on) and read to its end, however it changes
// meanwhile. On failure, sets `ec` (the errno; EINVAL: not a regular file; EFBIG: larger than
// `max_bytes`) and returns false with `out` cleared.
bool ReadWholeFile(const std::filesystem::path& path, std::size_t max_bytes, std::string& out,
                   std::error_code& ec);

// WriteFileAtomically writes `<path>` + this first (a leftover is an unfinished replace).
inline constexpr std::string_view kAtomicWriteTempSuffix = ".tmp";

// Whether WriteFileAtomically flushes to the disk.
enum class FileSync {
  kFsync,    // fsync the file before the rename and the directory after it
  kNoFsync,  // neither: a crash may lose the new content (never leave it half written)
};

// Replaces `path` with `data`: writes `<path>.tmp` (created with `mode`; an old temp file is
// overwritten), optionally fsyncs it, renames it over `path` and optionally fsyncs the
// directory. Readers see the old content or the new one, never a mix. On an error before the
// rename the old file is left as it was and the temp file is removed; an error of the
// directory's fsync is returned with the new content already in place.
std::error_code WriteFileAtomically(const std::filesystem::path& path, std::string_view data,
                                    mode_t mode, FileSync sync);

}  // namespace skald
