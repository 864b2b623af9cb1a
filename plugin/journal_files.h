// The journal's file operations. Every failure is a std::system_error whose message names the
// operation and the path ("journal: cannot read <path>"). Shared by the journal's files only.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace skald {

// Journals hold every line a container wrote and info.json its options: readable by root only
// (dockerd keeps its own logs 0640 and the container's config 0600).
inline constexpr mode_t kJournalFileMode = 0600;
inline constexpr std::filesystem::perms kJournalDirPerms = std::filesystem::perms::owner_all;

// Throws std::system_error(err) "journal: cannot <op> <path>".
[[noreturn]] void ThrowJournalError(int err, std::string_view op,
                                    const std::filesystem::path& path);

// Creates `dir` and its missing parents, and makes `dir` itself owner-only.
void CreatePrivateDirectory(const std::filesystem::path& dir, std::error_code& ec);

// Reads up to `n` bytes at `offset`; fewer only at the end of the file. `path` names the file
// in errors.
std::size_t PreadFull(int fd, char* buf, std::size_t n, uint64_t offset,
                      const std::filesystem::path& path);
// Writes `n` bytes at `offset`.
void PwriteFull(int fd, const char* buf, std::size_t n, uint64_t offset,
                const std::filesystem::path& path);

// Replaces `path` atomically (write `<path>.tmp`, rename): readers see the old content or the
// new one, never a mix. No fsync: after a power loss the file may be lost, never half written.
void WriteFileAtomically(const std::filesystem::path& path, std::string_view data);

// The whole file; nullopt when it cannot be read.
std::optional<std::string> ReadSmallFile(const std::filesystem::path& path);

// Closes a descriptor when it goes out of scope.
class FileCloser {
 public:
  explicit FileCloser(int fd) : fd_(fd) {}
  ~FileCloser();
  FileCloser(const FileCloser&) = delete;
  FileCloser& operator=(const FileCloser&) = delete;

 private:
  int fd_;
};

}  // namespace skald
