#include <chrono>
#include <string>

#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using testkit::OnlyLine;
using testkit::RecordingObserver;
using testkit::RunLines;

// Each capture may render up to the bound: the line as a whole is held to it too.
TEST(ReplaceStage, AResultOverTheBoundLeavesTheLineAndIsReported) {
  RecordingObserver obs;
  const std::string line = "a b c d e";
  auto out = RunLines("- replace: {expression: '(\\w)', replace: '{{ repeat 300000 .Value }}'}",
                      {line, "a"}, {}, &obs);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].line, line);
  EXPECT_EQ(out[1].line.size(), 300000u);
  EXPECT_EQ(obs.failures, (std::vector<std::string>{"replace: output_too_long"}));
}

TEST(ReplaceStage, ReplacesEachGroupOfEachMatch) {
  EXPECT_EQ(OnlyLine("- replace: {expression: '(\\d+)-(\\d+)', replace: '<{{ .Value }}>'}",
                     "1-2 and 33-44"),
            "<1>-<2> and <33>-<44>");
}

TEST(ReplaceStage, EmptyMatchesDoNotLoop) {
  EXPECT_EQ(OnlyLine("- replace: {expression: '(x*)', replace: '-'}", "ab"), "-a-b-");
}

// A line is read once however many matches it holds: replacing every byte of a 64 KiB line,
// one of them not UTF-8, takes ~10 ms (under ASan some 10x more). Reading the whole line again
// for each match took 38 s here: the bound is a liveness bound, not a speed target.
TEST(ReplaceStage, ALongLineWithAMatchAtEveryByteIsSearchedInOnePass) {
  std::string line(64 * 1024, '7');
  line[10] = '\xff';
  const auto start = std::chrono::steady_clock::now();
  const std::string out = OnlyLine("- replace: {expression: '(\\d)', replace: 'x'}", line);
  const auto took = std::chrono::steady_clock::now() - start;
  std::string expected(64 * 1024, 'x');
  expected[10] = '\xff';
  EXPECT_EQ(out, expected);
  EXPECT_LT(took, std::chrono::seconds(3));
}

}  // namespace
}  // namespace skald::stages
