#include "plugin/common/container_id.h"

#include <gtest/gtest.h>

namespace skald {
namespace {

TEST(ValidContainerIdTest, AcceptsWhatDockerProducesOnly) {
  EXPECT_TRUE(ValidContainerId(std::string(64, 'a')));
  EXPECT_TRUE(ValidContainerId("abc_123"));
  EXPECT_TRUE(ValidContainerId(std::string(128, '0')));
  EXPECT_FALSE(ValidContainerId(""));
  EXPECT_FALSE(ValidContainerId(std::string(129, '0')));
  EXPECT_FALSE(ValidContainerId("../etc"));
  EXPECT_FALSE(ValidContainerId("a/b"));
  EXPECT_FALSE(ValidContainerId("a.b"));
}

}  // namespace
}  // namespace skald
