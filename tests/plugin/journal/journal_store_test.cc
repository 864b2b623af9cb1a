#include "plugin/journal/journal_store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <optional>

#include "plugin/journal/journal_files.h"
#include "tests/plugin/journal/journal_fixture.h"

namespace skald {
namespace {

namespace fs = std::filesystem;
using namespace journal_testkit;

TEST(JournalStoreTest, ListsContainerDirectories) {
  char tmpl[] = "/tmp/journal_store_test.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  fs::path root = fs::path(tmpl) / "state";
  {
    JournalStore store(root);
    EXPECT_TRUE(fs::is_directory(root / "containers"));
    EXPECT_EQ(store.ContainerDir("abc"), root / "containers" / "abc");
    EXPECT_TRUE(store.ContainerIds().empty());
    Journal::Open(store.ContainerDir("b"), {});
    Journal::Open(store.ContainerDir("a"), {});
    WriteFile(root / "containers" / "stray-file", "x");
    EXPECT_EQ(store.ContainerIds(), (std::vector<std::string>{"a", "b"}));
  }
  fs::remove_all(tmpl);
}

// The inode flags of `dir`; nullopt where its filesystem keeps none.
std::optional<int> InodeFlags(const fs::path& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  int flags = 0;
  const bool ok = ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
  close(fd);
  return ok ? std::optional<int>(flags) : std::nullopt;
}

// Each container's journal is a directory of its own in a block group of its own (ext4's
// FS_TOPDIR_FL on containers/), also when the directory was made by an earlier version.
TEST(JournalStoreTest, AsksTheFilesystemToSpreadTheJournalDirectories) {
  char tmpl[] = "/tmp/journal_store_test.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  // Where the filesystem keeps no such flag (xfs, tmpfs), setting it is refused: nothing to see.
  const fs::path probe = fs::path(tmpl) / "probe";
  fs::create_directories(probe);
  if (!SpreadSubdirectories(probe)) {
    fs::remove_all(tmpl);
    GTEST_SKIP() << tmpl << " is on a filesystem without FS_TOPDIR_FL";
  }
  const fs::path root = fs::path(tmpl) / "state";
  fs::create_directories(root / "containers");  // as a version before the flag made it
  ASSERT_EQ(InodeFlags(root / "containers").value_or(0) & FS_TOPDIR_FL, 0);
  {
    JournalStore store(root);
    EXPECT_NE(InodeFlags(root / "containers").value_or(0) & FS_TOPDIR_FL, 0);
  }
  fs::remove_all(root);
  {
    JournalStore store(root);  // a new state directory
    EXPECT_NE(InodeFlags(root / "containers").value_or(0) & FS_TOPDIR_FL, 0);
  }
  fs::remove_all(tmpl);
}

}  // namespace
}  // namespace skald
