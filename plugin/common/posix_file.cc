#include "plugin/common/posix_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace skald {

namespace {

std::error_code Errno(int err) { return std::error_code(err, std::generic_category()); }

}  // namespace

void UniqueFd::reset(int fd) noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

std::size_t PreadFull(int fd, void* buf, std::size_t n, uint64_t offset, std::error_code& ec) {
  auto* p = static_cast<char*>(buf);
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = pread(fd, p + got, n - got, static_cast<off_t>(offset + got));
    if (r > 0) {
      got += static_cast<std::size_t>(r);
    } else if (r == 0) {
      break;
    } else if (errno != EINTR) {
      ec = Errno(errno);
      break;
    }
  }
  return got;
}

std::size_t PwriteFull(int fd, const void* buf, std::size_t n, uint64_t offset,
                       std::error_code& ec) {
  const auto* p = static_cast<const char*>(buf);
  std::size_t done = 0;
  while (done < n) {
    const ssize_t r = pwrite(fd, p + done, n - done, static_cast<off_t>(offset + done));
    if (r >= 0) {
      done += static_cast<std::size_t>(r);
    } else if (errno != EINTR) {
      ec = Errno(errno);
      break;
    }
  }
  return done;
}

std::size_t WriteFull(int fd, const void* buf, std::size_t n, std::error_code& ec) {
  const auto* p = static_cast<const char*>(buf);
  std::size_t done = 0;
  while (done < n) {
    const ssize_t r = write(fd, p + done, n - done);
    if (r >= 0) {
      done += static_cast<std::size_t>(r);
    } else if (errno != EINTR) {
      ec = Errno(errno);
      break;
    }
  }
  return done;
}

bool ReadToEnd(int fd, std::size_t max_bytes, std::size_t size_hint, std::string& out,
               std::error_code& ec) {
  out.clear();
  ec.clear();
  max_bytes = std::min(max_bytes, out.max_size() - 1);  // max_bytes + 1 below does not wrap
  // One byte past the hint (or the bound): a file that grew meanwhile reads on, and a read
  // past the bound says it is too large.
  std::size_t want = std::min(std::max<std::size_t>(size_hint, 4096), max_bytes) + 1;
  for (;;) {
    const std::size_t have = out.size();
    out.resize(want);
    ssize_t r;
    do {
      r = read(fd, out.data() + have, want - have);
    } while (r < 0 && errno == EINTR);
    if (r < 0) {
      ec = Errno(errno);
      break;
    }
    out.resize(have + static_cast<std::size_t>(r));
    if (out.size() > max_bytes) {
      ec = Errno(EFBIG);
      break;
    }
    if (r == 0) return true;  // the end of the file
    if (out.size() == want) want = std::min(max_bytes + 1, want * 2);
  }
  out.clear();
  return false;
}

bool ReadWholeFile(const std::filesystem::path& path, std::size_t max_bytes, std::string& out,
                   std::error_code& ec) {
  out.clear();
  ec.clear();
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  struct stat st {};
  if (!fd || fstat(fd.get(), &st) != 0) {
    ec = Errno(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    ec = Errno(EINVAL);
    return false;
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ec = Errno(EFBIG);
    return false;
  }
  // A regular file's reads wait as usual (a network filesystem may answer EAGAIN otherwise).
  if (const int fl = fcntl(fd.get(), F_GETFL);
      fl < 0 || fcntl(fd.get(), F_SETFL, fl & ~O_NONBLOCK) != 0) {
    ec = Errno(errno);
    return false;
  }
  return ReadToEnd(fd.get(), max_bytes, static_cast<std::size_t>(st.st_size), out, ec);
}

std::error_code WriteFileAtomically(const std::filesystem::path& path, std::string_view data,
                                    mode_t mode, FileSync sync) {
  std::filesystem::path tmp = path;
  tmp += kAtomicWriteTempSuffix;
  std::error_code ec;
  {
    UniqueFd fd(open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
    if (!fd) return Errno(errno);
    PwriteFull(fd.get(), data.data(), data.size(), 0, ec);
    if (!ec && sync == FileSync::kFsync && fsync(fd.get()) != 0) ec = Errno(errno);
  }
  if (!ec && rename(tmp.c_str(), path.c_str()) != 0) ec = Errno(errno);
  if (ec) {
    unlink(tmp.c_str());
    return ec;
  }
  if (sync == FileSync::kFsync) {
    const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
    UniqueFd dir_fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    // The new content is in place; a directory that cannot be synced is reported all the same
    // (the rename may not survive a crash).
    if (!dir_fd) return Errno(errno);
    if (fsync(dir_fd.get()) != 0) return Errno(errno);
  }
  return {};
}

}  // namespace skald
