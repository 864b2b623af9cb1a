#include "pipeline_stages/yaml_merge_keys.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pipeline_stages/common/config_error.h"
#include "tests/tools/yaml_alias_bomb.h"

namespace skald::stages {
namespace {

using ::testing::HasSubstr;

YAML::Node Apply(const std::string& text) {
  return ApplyYamlMergeKeys(YAML::Load(text), text, "pipeline stages");
}

// As go-yaml: the map's own keys win, then the merged maps in their order.
TEST(YamlMergeKeys, OwnKeysWinThenEarlierMaps) {
  const YAML::Node n = Apply(R"(
base: &base {a: 1, b: 1}
more: &more {b: 2, c: 2}
m:
  <<: [*base, *more]
  c: 3
)");
  EXPECT_EQ(n["m"]["a"].as<int>(), 1);
  EXPECT_EQ(n["m"]["b"].as<int>(), 1);
  EXPECT_EQ(n["m"]["c"].as<int>(), 3);
  EXPECT_FALSE(n["m"]["<<"]);
}

TEST(YamlMergeKeys, NestedMergesAndAQuotedKeyThatIsNotOne) {
  const YAML::Node n = Apply(R"(
inner: &inner {x: 1}
outer: &outer {<<: *inner, y: 2}
m: {<<: *outer, '<<': literal}
)");
  EXPECT_EQ(n["m"]["x"].as<int>(), 1);
  EXPECT_EQ(n["m"]["y"].as<int>(), 2);
  EXPECT_EQ(n["m"]["<<"].as<std::string>(), "literal");
}

TEST(YamlMergeKeys, AMergeOfSomethingElseIsAnErrorNamingTheLine) {
  try {
    Apply("a: 1\nm: {<<: scalar}\n");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("pipeline stages: a merge key (<<) at line 2"));
  }
}

TEST(YamlMergeKeys, WithoutAMergeKeyTheDocumentIsLeftAsItIs) {
  const std::string text = "- json: {expressions: {a: a}}\n";
  const YAML::Node root = YAML::Load(text);
  EXPECT_TRUE(ApplyYamlMergeKeys(root, text, "x").is(root));
}

// Aliases are copied at every use: nested ones with a merge key stop at the bound (10^8 stages
// if every use were built).
TEST(YamlMergeKeys, AnAliasBombStopsAtTheBound) {
  const std::string text = testkit::YamlAliasBomb() + "- {static_labels: {<<: {a: b}}}\n";
  EXPECT_THROW(
      {
        try {
          Apply(text);
        } catch (const ConfigError& e) {
          EXPECT_THAT(e.what(), HasSubstr("expands to more than 200000 nodes"));
          throw;
        }
      },
      ConfigError);
}

}  // namespace
}  // namespace skald::stages
