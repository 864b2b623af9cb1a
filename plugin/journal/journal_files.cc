#include "plugin/journal/journal_files.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "plugin/common/posix_file.h"

namespace skald {

namespace fs = std::filesystem;

void ThrowJournalError(int err, std::string_view op, const fs::path& path) {
  throw std::system_error(err, std::generic_category(),
                          "journal: cannot " + std::string(op) + " " + path.string());
}

bool CreatePrivateDirectory(const fs::path& dir, std::error_code& ec) {
  const auto mode = static_cast<mode_t>(kJournalDirPerms);
  bool created = false;
  // One mkdir in the common case (a container's journal under containers/); the parents only
  // when they are missing.
  if (mkdir(dir.c_str(), mode) == 0) {
    created = true;
  } else if (errno == ENOENT) {
    created = fs::create_directories(dir, ec);
    if (ec) return false;
  } else if (errno != EEXIST) {
    ec = std::error_code(errno, std::generic_category());
    return false;
  } else {
    // There already: a directory, or something else by that name (a file, a link to one),
    // which is neither made private nor taken for the directory.
    struct stat st {};
    if (stat(dir.c_str(), &st) != 0) {
      ec = std::error_code(errno, std::generic_category());
      return false;
    }
    if (!S_ISDIR(st.st_mode)) {
      ec = std::make_error_code(std::errc::not_a_directory);
      return false;
    }
  }
  // The umask may have taken bits from a new directory, and an old one may have others.
  fs::permissions(dir, kJournalDirPerms, fs::perm_options::replace, ec);
  return created && !ec;
}

bool SpreadSubdirectories(const fs::path& dir) {
  UniqueFd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  // The kernel reads and writes an int; the macro's type says long, and a filesystem that
  // went by it (FUSE on older kernels) would write 8 bytes: both fit.
  union {
    int flags;
    long room;
  } buf{};
  if (!fd || ioctl(fd.get(), FS_IOC_GETFLAGS, &buf) != 0) return false;
  if ((buf.flags & FS_TOPDIR_FL) != 0) return true;
  buf.flags |= FS_TOPDIR_FL;
  return ioctl(fd.get(), FS_IOC_SETFLAGS, &buf) == 0;
}

std::size_t PreadOrThrow(int fd, char* buf, std::size_t n, uint64_t offset, const fs::path& path) {
  std::error_code ec;
  const std::size_t got = PreadFull(fd, buf, n, offset, ec);
  if (ec) ThrowJournalError(ec.value(), "read", path);
  return got;
}

void PwriteOrThrow(int fd, const char* buf, std::size_t n, uint64_t offset, const fs::path& path) {
  std::error_code ec;
  PwriteFull(fd, buf, n, offset, ec);
  if (ec) ThrowJournalError(ec.value(), "write", path);
}

void ReplaceJournalFile(const fs::path& path, std::string_view data) {
  if (std::error_code ec = WriteFileAtomically(path, data, kJournalFileMode, FileSync::kNoFsync))
    ThrowJournalError(ec.value(), "replace", path);
}

std::optional<std::string> ReadSmallFile(const fs::path& path, std::size_t max_bytes) {
  std::string text;
  std::error_code ec;
  if (ReadWholeFile(path, max_bytes, text, ec)) return text;
  if (ec.value() == EFBIG) {
    spdlog::warn("journal: ignoring {}: larger than {} bytes", path.string(), max_bytes);
  } else if (ec.value() == EINVAL) {
    spdlog::warn("journal: ignoring {}: not a regular file", path.string());
  }
  return std::nullopt;
}

}  // namespace skald
