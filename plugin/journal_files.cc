#include "plugin/journal_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "plugin/journal_format.h"

namespace skald {

namespace fs = std::filesystem;

void ThrowJournalError(int err, std::string_view op, const fs::path& path) {
  throw std::system_error(err, std::generic_category(),
                          "journal: cannot " + std::string(op) + " " + path.string());
}

void CreatePrivateDirectory(const fs::path& dir, std::error_code& ec) {
  fs::create_directories(dir, ec);
  if (!ec) fs::permissions(dir, kJournalDirPerms, fs::perm_options::replace, ec);
}

std::size_t PreadFull(int fd, char* buf, std::size_t n, uint64_t offset, const fs::path& path) {
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = pread(fd, buf + got, n - got, static_cast<off_t>(offset + got));
    if (r > 0) {
      got += static_cast<std::size_t>(r);
    } else if (r == 0) {
      break;
    } else if (errno != EINTR) {
      ThrowJournalError(errno, "read", path);
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
      ThrowJournalError(errno, "write", path);
    }
  }
}

void WriteFileAtomically(const fs::path& path, std::string_view data) {
  fs::path tmp = path;
  tmp += kJournalTempExt;
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, kJournalFileMode);
  if (fd < 0) ThrowJournalError(errno, "create", tmp);
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
    ThrowJournalError(err, "rename " + tmp.string() + " to", path);
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

FileCloser::~FileCloser() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace skald
