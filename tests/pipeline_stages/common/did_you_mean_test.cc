#include "pipeline_stages/common/did_you_mean.h"

#include <gtest/gtest.h>

namespace skald::stages {
namespace {

TEST(DidYouMean, EditDistanceCountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("abc", "abc"), 0u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("loki-urll", "loki-url"), 1u);
}

TEST(DidYouMean, TheClosestWithinTheDistanceOrAPrefix) {
  const std::vector<std::string_view> names = {"json", "logfmt", "regex", "timestamp"};
  EXPECT_EQ(DidYouMean("jsno", names), "json");
  EXPECT_EQ(DidYouMean("regexp", names), "regex");
  EXPECT_EQ(DidYouMean("xml", names), "");
  EXPECT_EQ(DidYouMean("time", names), "timestamp");  // a prefix, 5 edits away
  EXPECT_EQ(DidYouMean("ti", names), "");             // too short to be a prefix guess
}

TEST(DidYouMean, TheRuleSetsTheDistanceAndThePrefixGuess) {
  const std::vector<std::string_view> names = {"loki-batch-size", "loki-url"};
  EXPECT_EQ(DidYouMean("loki-btch-sz", names), "");
  EXPECT_EQ(DidYouMean("loki-btch-sz", names, {.max_distance = 3, .prefixes = false}),
            "loki-batch-size");
  EXPECT_EQ(DidYouMean("loki-url-x-y-z", names, {.max_distance = 3, .prefixes = false}), "");
  EXPECT_EQ(DidYouMean("loki-url-x-y-z", names), "loki-url");
}

}  // namespace
}  // namespace skald::stages
