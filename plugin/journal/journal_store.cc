#include "plugin/journal/journal_store.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "plugin/journal/journal_files.h"

namespace skald {

namespace fs = std::filesystem;

JournalStore::JournalStore(fs::path root) : root_(std::move(root)) {
  fs::path containers = root_ / "containers";
  std::error_code ec;
  CreatePrivateDirectory(root_, ec);
  if (!ec) CreatePrivateDirectory(containers, ec);
  if (ec) ThrowJournalError(ec.value(), "create", containers);
  if (access(containers.c_str(), W_OK | X_OK) != 0)
    ThrowJournalError(errno, "write to", containers);
  SpreadSubdirectories(containers);
  const fs::path lock = root_ / "lock";
  lock_fd_.reset(open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!lock_fd_) ThrowJournalError(errno, "create", lock);
  if (flock(lock_fd_.get(), LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    lock_fd_.reset();
    if (err == EWOULDBLOCK) {
      throw InUse("another process holds " + lock.string() +
                  ": a second copy of the plugin uses the same state directory");
    }
    ThrowJournalError(err, "lock", lock);
  }
}

JournalStore::~JournalStore() = default;  // closing lock_fd_ releases the lock

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

}  // namespace skald
