#include "plugin/journal/journal_files.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>

#include <fstream>
#include <sstream>

#include "plugin/common/posix_file.h"

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

std::optional<std::string> ReadSmallFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(out).str();
}

}  // namespace skald
