// Lines written by a container reach Loki: all of them, the last one after exit, a quiet
// stream's without waiting for the batch timer, long lines whole, and stdout apart from stderr.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "tests/e2e/e2e_support.h"

namespace skald::e2e {
namespace {

class Delivery : public SkaldTest {};

// The "seq" of a loggen JSON line, or -1.
long SeqOf(const std::string& line) {
  static const std::regex re(R"(^\{"seq":([0-9]+),)");
  std::smatch m;
  if (!std::regex_search(line, m, re)) return -1;
  return std::stol(m[1].str());
}

TEST_F(Delivery, EveryLineOfAHundredThousandArrivesWithTheStandardLabels) {
  constexpr long kLines = 100'000;
  const std::string name = NewContainer();
  auto run =
      Docker(RunArgs(name, {}, {"loggen", "--lines", std::to_string(kLines), "--json"}), 180s);
  ASSERT_TRUE(run.ok()) << run.Describe();

  const std::string sel = Selector(name);
  EXPECT_EQ(loki().WaitForCount(sel, kLines, 180s), uint64_t{kLines});

  // One stream, with the labels the Go driver sets.
  auto series = loki().Series(sel);
  ASSERT_EQ(series.size(), 1u);
  auto& labels = series[0];
  EXPECT_EQ(labels["container_name"], name);
  EXPECT_EQ(labels["source"], "stdout");
  EXPECT_FALSE(labels["host"].empty()) << "no host label";

  // Each line exactly once, in order.
  auto entries = loki().QueryAll(sel);
  ASSERT_EQ(entries.size(), size_t{kLines});
  long expect = 1;
  for (const auto& e : entries) {
    ASSERT_EQ(SeqOf(e.line), expect) << "entry " << expect << ": " << e.line.substr(0, 300);
    ++expect;
  }
}

TEST_F(Delivery, TheLastLineArrivesAfterAShortJobExits) {
  const std::string name = NewContainer();
  const std::string marker = "LAST-LINE-" + name;
  auto run = Docker(
      RunArgs(name, {}, {"loggen", "--lines", "4000", "--json", "--last-marker", marker}), 120s);
  ASSERT_TRUE(run.ok()) << run.Describe();
  EXPECT_EQ(DockerInspect(name, "{{.State.Running}}"), "false");

  const std::string sel = Selector(name);
  EXPECT_EQ(loki().WaitForCount(sel + " |= " + LogqlQuote(marker), 1, 60s), 1u)
      << "the line written just before exit never reached Loki";
  EXPECT_EQ(loki().WaitForCount(sel, 4001, 30s), 4001u);
}

// loki-batch-wait is the longest a line waits: a container that writes a line now and then
// (here with a batch wait of a minute) has each line in Loki as soon as its input goes quiet,
// while the container still runs. (Normally tens of milliseconds; the bound is for a slow
// machine.)
TEST_F(Delivery, ALineOnAQuietStreamIsQueryableLongBeforeTheBatchWait) {
  const std::string name = NewContainer();
  auto args = RunArgs(name, {"loki-batch-wait=60s"},
                      {"loggen", "--lines", "3", "--interval-ms", "3000", "--sleep", "60"});
  args.insert(args.begin() + 1, "-d");
  auto run = Docker(args, 60s);
  ASSERT_TRUE(run.ok()) << run.Describe();
  const std::string sel = Selector(name);
  for (uint64_t n = 1; n <= 3; ++n) {
    EXPECT_EQ(loki().WaitForCount(sel, n, 10s), n) << "line " << n << " waited for the batch timer";
  }
  EXPECT_EQ(DockerInspect(name, "{{.State.Running}}"), "true");
}

TEST_F(Delivery, AHundredKilobyteLineIsOneEntryOfExactlyThatLength) {
  constexpr std::size_t kBytes = 100'000;
  const std::string name = NewContainer();
  const std::string prefix = "LONG-" + name + "-";
  auto run = Docker(
      RunArgs(name, {}, {"loggen", "--line-bytes", std::to_string(kBytes), "--prefix", prefix}),
      120s);
  ASSERT_TRUE(run.ok()) << run.Describe();

  const std::string sel = Selector(name);
  loki().WaitForCount(sel, 1, 60s);
  // Give a wrongly split line time to show its other pieces.
  std::this_thread::sleep_for(3s);
  auto entries = loki().QueryAll(sel);
  ASSERT_EQ(entries.size(), 1u) << "the line was split into " << entries.size() << " entries";
  EXPECT_EQ(entries[0].line.size(), kBytes);
  EXPECT_EQ(entries[0].line.rfind(prefix, 0), 0u);
  std::string expected(kBytes, ' ');
  for (std::size_t i = 0; i < kBytes; ++i) expected[i] = static_cast<char>('a' + i % 26);
  expected.replace(0, prefix.size(), prefix);
  EXPECT_TRUE(entries[0].line == expected) << "the line's bytes differ from what was written";
}

TEST_F(Delivery, StdoutAndStderrAreToldApartByTheSourceLabel) {
  const std::string name = NewContainer();
  auto run =
      Docker(RunArgs(name, {}, {"loggen", "--lines", "1000", "--json", "--stderr-every", "4"}));
  ASSERT_TRUE(run.ok()) << run.Describe();

  const std::string sel = Selector(name);
  EXPECT_EQ(loki().WaitForCount(sel, 1000, 60s), 1000u);
  EXPECT_EQ(loki().Count(Selector(name, "source=\"stdout\"")), 750u);
  EXPECT_EQ(loki().Count(Selector(name, "source=\"stderr\"")), 250u);

  for (const auto& e : loki().QueryAll(Selector(name, "source=\"stderr\""))) {
    const long seq = SeqOf(e.line);
    ASSERT_EQ(seq % 4, 0) << "a stdout line is labelled stderr: " << e.line;
  }
  for (const auto& e : loki().QueryAll(Selector(name, "source=\"stdout\""))) {
    const long seq = SeqOf(e.line);
    ASSERT_TRUE(seq > 0 && seq % 4 != 0) << "a stderr line is labelled stdout: " << e.line;
  }
}

}  // namespace
}  // namespace skald::e2e
