#include "plugin/driver/stage_yaml_cache.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "pipeline_stages/common/config_error.h"
#include "pipeline_stages/pipeline.h"
#include "tests/tools/yaml_alias_bomb.h"

namespace skald {
namespace {

constexpr std::string_view kStages = R"(
- json:
    expressions:
      level: level
- labels:
    level:
)";

std::string Emit(const YAML::Node& node) {
  YAML::Emitter out;
  out << node;
  return out.c_str();
}

// A text seen before gives the same tree as parsing it, and each caller's tree is its own:
// changing one (a stage builder may add to what it reads) leaves the next caller's as parsed.
TEST(StageYamlCache, ATextSeenBeforeGivesTheParsedTreeAsACopyOfItsOwn) {
  StageYamlCache cache;
  const std::string parsed = Emit(stages::Pipeline::StagesFromYaml(kStages));
  YAML::Node first = cache.StagesOf(kStages);
  EXPECT_EQ(Emit(first), parsed);
  first[0]["json"]["expressions"]["added"] = "by a builder";
  first.push_back("another stage");
  YAML::Node second = cache.StagesOf(kStages);
  EXPECT_EQ(Emit(second), parsed);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(StageYamlCache, KeepsAtMostItsBoundOfTextsTheLeastRecentlyUsedGoingFirst) {
  StageYamlCache cache;
  const auto text = [](std::size_t i) {
    return "- static_labels:\n    n: \"" + std::to_string(i) + "\"\n";
  };
  for (std::size_t i = 0; i <= StageYamlCache::kMaxEntries; ++i) {
    EXPECT_EQ(cache.StagesOf(text(i))[0]["static_labels"]["n"].as<std::string>(),
              std::to_string(i));
  }
  EXPECT_EQ(cache.size(), StageYamlCache::kMaxEntries);
  // Text 0 went; asking again parses it anew, and it is right.
  EXPECT_EQ(cache.StagesOf(text(0))[0]["static_labels"]["n"].as<std::string>(), "0");
  EXPECT_EQ(cache.size(), StageYamlCache::kMaxEntries);
}

TEST(StageYamlCache, ALongTextIsParsedEachTimeAndNotKept) {
  StageYamlCache cache;
  std::string text =
      "- static_labels:\n    n: \"" + std::string(StageYamlCache::kMaxTextBytes, 'x') + "\"\n";
  EXPECT_EQ(cache.StagesOf(text)[0]["static_labels"]["n"].as<std::string>().size(),
            StageYamlCache::kMaxTextBytes);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(StageYamlCache, ATextThatDoesNotParseFailsEachTimeAndIsNotKept) {
  StageYamlCache cache;
  for (int i = 0; i < 2; ++i) {
    try {
      cache.StagesOf("- json: [unclosed");
      FAIL() << "no error";
    } catch (const stages::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("invalid YAML"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(cache.size(), 0u);
}

// An alias bomb copied from the kept tree keeps its aliases shared (YAML::Clone follows the
// anchors), so the stage builder refuses it at once, the first time and from the cache.
TEST(StageYamlCache, AnAliasBombFromTheCacheIsRefusedAtOnceAsWhenParsed) {
  StageYamlCache cache;
  const std::string bomb = testkit::YamlAliasBomb();
  for (int i = 0; i < 2; ++i) {
    const auto start = std::chrono::steady_clock::now();
    std::string error;
    try {
      stages::Pipeline::FromNode(cache.StagesOf(bomb), {});
    } catch (const stages::ConfigError& e) {
      error = e.what();
    }
    EXPECT_NE(error.find("the pipeline has more than 1000 stages"), std::string::npos)
        << "try " << i << ": " << error;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2)) << "try " << i;
  }
  // The text parses, but its list walks to far more than kMaxKeptNodes: not kept.
  EXPECT_EQ(cache.size(), 0u);
}

// Merge keys (a `<<` anywhere, even in a comment) expand the whole document's aliases into real
// nodes, up to 200,000 of them, here all in a key beside an empty stage list. What is kept is
// a copy of the stage list alone: the expanded document is freed once the caller drops its tree.
TEST(StageYamlCache, KeepsTheStageListAloneNotTheDocumentAroundIt) {
  std::string text = "# <<\npipeline_stages: []\nx0: &x0 [a,a,a,a,a,a,a,a,a,a]\n";
  for (int level = 1; level <= 3; ++level) {
    const std::string use = "*x" + std::to_string(level - 1);
    text += "x" + std::to_string(level) + ": &x" + std::to_string(level) + " [" + use;
    for (int k = 1; k < 10; ++k) text += "," + use;
    text += "]\n";
  }
  text += "x4: [*x3";
  for (int k = 1; k < 16; ++k) text += ",*x3";
  text += "]\n";
  ASSERT_LT(text.size(), 1024u);
  StageYamlCache cache;
  const std::size_t before = mallinfo2().uordblks;
  {
    YAML::Node stages = cache.StagesOf(text);
    EXPECT_TRUE(stages.IsSequence());
    EXPECT_EQ(stages.size(), 0u);
  }
  const std::size_t after = mallinfo2().uordblks;
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_LT(after, before + 1024 * 1024) << "the cache keeps " << (after - before) << " bytes";
}

// Containers start on several threads at once: each gets a whole tree.
TEST(StageYamlCache, ManyThreadsAskingAtOnceEachGetTheWholeTree) {
  StageYamlCache cache;
  const std::string parsed = Emit(stages::Pipeline::StagesFromYaml(kStages));
  std::vector<std::thread> threads;
  std::vector<int> wrong(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        YAML::Node n = cache.StagesOf(kStages);
        if (Emit(n) != parsed) ++wrong[t];
        n[0]["json"]["source"] = "x";  // each changes its own
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
  EXPECT_EQ(cache.size(), 1u);
}

}  // namespace
}  // namespace skald
