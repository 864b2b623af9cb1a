// JournalStore: all journals under one state directory (`<root>/containers/<id>/`). The
// plugin-wide budget over them and the age limit are plugin/journal/journal_retention.h's. A store
// holds an exclusive lock on
// `<root>/lock` for its life: two copies of the plugin (say `skald` and an alias `loki`) sharing a
// state directory would replay each other's journals.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "plugin/common/posix_file.h"

namespace skald {

class JournalStore {
 public:
  // Another process holds the state directory's lock.
  class InUse : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
  };

  // Throws std::system_error naming `root` when it cannot be created or written, InUse when
  // another process holds its lock.
  explicit JournalStore(std::filesystem::path root);
  ~JournalStore();
  JournalStore(const JournalStore&) = delete;
  JournalStore& operator=(const JournalStore&) = delete;

  const std::filesystem::path& root() const;
  std::filesystem::path ContainerDir(const std::string& container_id) const;
  // Container ids that have a journal directory.
  std::vector<std::string> ContainerIds() const;

 private:
  std::filesystem::path root_;
  UniqueFd lock_fd_;  // holds the flock
};

}  // namespace skald
