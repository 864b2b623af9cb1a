// The journal's file operations, in the journal's error convention: every failure is a
// std::system_error whose message names the operation and the path ("journal: cannot read
// <path>"). Built on plugin/common/posix_file.h; shared by the journal's files only.
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

// Creates `dir` (and its missing parents) and makes `dir` itself owner-only. True when it made
// `dir` just now (so it is empty); false when `dir` was there already, or on an error (`ec`).
bool CreatePrivateDirectory(const std::filesystem::path& dir, std::error_code& ec);

// Asks the filesystem to place each directory made in `dir` apart from the rest of the disk, as it
// places directories made at its root (FS_TOPDIR_FL, `chattr +T`; ext2/3/4's Orlov allocator). A
// journal's files then live in a block group of their own, away from dockerd's churn: on an
// ext4 without a journal, creating a file scans past every inode its group freed in the last
// minutes, and under /var/lib/docker dockerd frees many. True when the flag is set (or was);
// false where the filesystem has no such flag, which changes nothing else.
bool SpreadSubdirectories(const std::filesystem::path& dir);

// PreadFull / PwriteFull (plugin/common/posix_file.h) that throw; `path` names the file.
std::size_t PreadOrThrow(int fd, char* buf, std::size_t n, uint64_t offset,
                         const std::filesystem::path& path);
void PwriteOrThrow(int fd, const char* buf, std::size_t n, uint64_t offset,
                   const std::filesystem::path& path);

// Replaces a metadata file (info.json, a marker) atomically, without fsync: the segments are
// not synced either, so a crash may lose the newest file, never leave it half written.
void ReplaceJournalFile(const std::filesystem::path& path, std::string_view data);

// The whole file, a regular one of at most `max_bytes` (a journal on disk is not trusted: a
// file swollen or replaced by a FIFO must not grow the plugin or stop it); nullopt when it
// cannot be read, with a warning naming the file when it is there but too large or not a file.
std::optional<std::string> ReadSmallFile(const std::filesystem::path& path, std::size_t max_bytes);

}  // namespace skald
