// JournalStore: all journals under one state directory (`<root>/containers/<id>/`), and the
// plugin-wide budget over them (max_total_bytes; plugin/journal/journal_retention.h enforces it and
// the age limit, when the driver's maintenance tick runs it). A store holds an exclusive lock on
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
  JournalStore(std::filesystem::path root, uint64_t max_total_bytes);
  ~JournalStore();
  JournalStore(const JournalStore&) = delete;
  JournalStore& operator=(const JournalStore&) = delete;

  const std::filesystem::path& root() const;
  std::filesystem::path ContainerDir(const std::string& container_id) const;
  // Container ids that have a journal directory.
  std::vector<std::string> ContainerIds() const;
  uint64_t max_total_bytes() const;

 private:
  std::filesystem::path root_;
  uint64_t max_total_bytes_;
  UniqueFd lock_fd_;  // holds the flock
};

}  // namespace skald
