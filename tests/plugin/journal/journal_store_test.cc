#include "plugin/journal/journal_store.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace skald
