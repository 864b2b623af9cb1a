// `docker logs` is served by the plugin (it reports ReadLogs) from its journal: every line, in
// order, on its own stream; --tail; --since/--until; long and blank lines as written; -f follows
// a running container to its end; no-file=true containers have none.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/e2e_support.h"

namespace skald::e2e {
namespace {

class DockerLogs : public SkaldTest {};

// "P seq=N ..." -> N, or -1.
long PlainSeq(const std::string& line) {
  auto at = line.find(" seq=");
  if (at == std::string::npos) return -1;
  return std::stol(line.substr(at + 5));
}

// Where two outputs first differ, for assertion messages.
std::string FirstDifference(const std::string& got, const std::string& want) {
  std::size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  if (i == got.size() && i == want.size()) return "equal";
  auto around = [&](const std::string& s) {
    std::size_t from = i < 60 ? 0 : i - 60;
    return testing::PrintToString(s.substr(from, 120));
  };
  return "sizes " + std::to_string(got.size()) + " and " + std::to_string(want.size()) +
         ", first difference at byte " + std::to_string(i) + ": got " + around(got) + ", want " +
         around(want);
}

// The lines of `text` that start with `prefix`, each with its newline.
std::string LinesStartingWith(const std::string& text, const std::string& prefix) {
  std::string out;
  for (const auto& l : SplitLines(text)) {
    if (l.rfind(prefix, 0) == 0) out += l + "\n";
  }
  return out;
}

// Now, as `docker logs --since` takes it: Unix seconds with nanoseconds.
std::string UnixTimestampNow() {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  char buf[64];
  std::snprintf(buf, sizeof buf, "%lld.%09lld", static_cast<long long>(ns / 1'000'000'000),
                static_cast<long long>(ns % 1'000'000'000));
  return buf;
}

TEST_F(DockerLogs, ReturnsEveryLineInOrderOnItsOwnStream) {
  const std::string name = NewContainer();
  auto run = Docker(RunArgs(name, {}, {"loggen", "--lines", "1000", "--stderr-every", "4"}));
  ASSERT_TRUE(run.ok()) << run.Describe();

  auto logs = Docker({"logs", name}, 60s);
  ASSERT_TRUE(logs.ok()) << logs.Describe();
  const auto out = SplitLines(logs.out);
  const auto err = SplitLines(logs.err);
  ASSERT_EQ(out.size(), 750u);
  ASSERT_EQ(err.size(), 250u);
  long want = 1;
  for (const auto& l : out) {
    if (want % 4 == 0) ++want;
    ASSERT_EQ(PlainSeq(l), want) << l;
    ++want;
  }
  want = 4;
  for (const auto& l : err) {
    ASSERT_EQ(PlainSeq(l), want) << l;
    want += 4;
  }
}

TEST_F(DockerLogs, TailReturnsTheLastLines) {
  const std::string name = NewContainer();
  auto run = Docker(RunArgs(name, {}, {"loggen", "--lines", "5000"}));
  ASSERT_TRUE(run.ok()) << run.Describe();

  auto logs = Docker({"logs", "--tail", "10", name}, 60s);
  ASSERT_TRUE(logs.ok()) << logs.Describe();
  const auto out = SplitLines(logs.out);
  ASSERT_EQ(out.size(), 10u) << logs.out;
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_EQ(PlainSeq(out[i]), 4991 + long(i));

  auto none = Docker({"logs", "--tail", "0", name}, 60s);
  ASSERT_TRUE(none.ok()) << none.Describe();
  EXPECT_EQ(none.out, "");
}

// The daemon's own local cache (what answers when a plugin has no ReadLogs) loses this newline.
TEST_F(DockerLogs, AHundredKilobyteLineComesBackWholeWithItsNewline) {
  // json-file gives back exactly what was written: the long line, its newline, the next line.
  const std::string name = NewContainer();
  auto run = Docker(
      RunArgs(name, {}, {"sh", "-c", "loggen --line-bytes 100000 --prefix LONG; echo next-line"}));
  ASSERT_TRUE(run.ok()) << run.Describe();
  ASSERT_EQ(run.out.size(), 100011u);
  auto logs = Docker({"logs", name}, 60s);
  ASSERT_TRUE(logs.ok()) << logs.Describe();
  EXPECT_EQ(logs.out.size(), run.out.size());
  const auto lines = SplitLines(logs.out);
  ASSERT_EQ(lines.size(), 2u) << "the long line is not followed by a newline in docker logs";
  EXPECT_EQ(lines[0].size(), 100000u);
  EXPECT_EQ(lines[1], "next-line");
  EXPECT_TRUE(logs.out == run.out) << "docker logs differs from what the container wrote";
}

TEST_F(DockerLogs, FollowStreamsARunningContainerToItsEnd) {
  const std::string name = NewContainer();
  auto args = RunArgs(
      name, {},
      {"sh", "-c", "loggen --lines 5 --prefix early; sleep 3; loggen --lines 5 --prefix late"});
  args.insert(args.begin() + 1, "-d");
  auto run = Docker(args);
  ASSERT_TRUE(run.ok()) << run.Describe();

  auto logs = Docker({"logs", "-f", name}, 60s);
  ASSERT_TRUE(logs.ok()) << logs.Describe();
  EXPECT_GE(logs.duration, 1s) << "docker logs -f did not wait for the container";
  const auto out = SplitLines(logs.out);
  ASSERT_EQ(out.size(), 10u) << logs.out;
  EXPECT_EQ(out.front().rfind("early seq=1 ", 0), 0u) << out.front();
  EXPECT_EQ(out.back().rfind("late seq=5 ", 0), 0u) << out.back();
}

// `docker logs -f` started while the container runs ends when it exits, and what it printed is
// byte for byte what the container wrote: blank lines, a 40 KB line and both streams included.
TEST_F(DockerLogs, FollowStartedWhileRunningEndsAtExitWithEverythingTheContainerWrote) {
  const std::string name = NewContainer();
  const std::string script =
      "loggen --lines 300 --prefix early --stderr-every 7; echo; echo '   '; sleep 3; "
      "loggen --line-bytes 40000 --prefix LONG; echo >&2; "
      "loggen --lines 500 --prefix late --stderr-every 5 --rate 1000; sleep 1";
  // Attached, `docker run` prints exactly what the container writes: the reference.
  auto run = std::async(std::launch::async, [&] {
    return Docker(RunArgs(name, {}, {"sh", "-c", script}), 120s);
  });
  ASSERT_TRUE(
      WaitUntil([&] { return DockerInspect(name, "{{.State.Running}}") == "true"; }, 30s, 50ms))
      << "the container did not start";

  auto logs = Docker({"logs", "-f", name}, 90s);
  auto ran = run.get();
  ASSERT_TRUE(ran.ok()) << ran.Describe();
  ASSERT_TRUE(logs.ok()) << logs.Describe();
  EXPECT_EQ(DockerInspect(name, "{{.State.Running}}"), "false");
  EXPECT_GE(logs.duration, 2s) << "docker logs -f did not wait for the container";
  ASSERT_EQ(SplitLines(ran.out).size() + SplitLines(ran.err).size(), 300u + 2 + 1 + 1 + 500);
  EXPECT_TRUE(logs.out == ran.out) << "stdout: " << FirstDifference(logs.out, ran.out);
  EXPECT_TRUE(logs.err == ran.err) << "stderr: " << FirstDifference(logs.err, ran.err);
}

TEST_F(DockerLogs, FollowWithTailZeroPrintsOnlyNewLines) {
  const std::string name = NewContainer();
  auto args = RunArgs(
      name, {},
      {"sh", "-c", "loggen --lines 20 --prefix old; sleep 3; loggen --lines 5 --prefix new"});
  args.insert(args.begin() + 1, "-d");
  auto run = Docker(args);
  ASSERT_TRUE(run.ok()) << run.Describe();
  ASSERT_TRUE(WaitUntil([&] { return SplitLines(Docker({"logs", name}).out).size() >= 20; }, 30s));

  auto logs = Docker({"logs", "-f", "--tail", "0", name}, 60s);
  ASSERT_TRUE(logs.ok()) << logs.Describe();
  const auto out = SplitLines(logs.out);
  ASSERT_EQ(out.size(), 5u) << logs.out;
  for (std::size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].rfind("new seq=" + std::to_string(i + 1) + " ", 0), 0u) << out[i];
  }
}

// --since and --until split the log at a moment between two batches, the same way while the
// container runs and after it stopped.
TEST_F(DockerLogs, SinceAndUntilSplitTheLogOnARunningAndOnAStoppedContainer) {
  const std::string name = NewContainer();
  auto args = RunArgs(name, {},
                      {"sh", "-c",
                       "loggen --lines 50 --prefix first --stderr-every 10; sleep 4; "
                       "loggen --lines 50 --prefix second --stderr-every 10; sleep 300"});
  args.insert(args.begin() + 1, "-d");
  auto run = Docker(args);
  ASSERT_TRUE(run.ok()) << run.Describe();

  auto lines_now = [&] {
    auto l = Docker({"logs", name});
    return SplitLines(l.out).size() + SplitLines(l.err).size();
  };
  ASSERT_TRUE(WaitUntil([&] { return lines_now() >= 50; }, 30s)) << "the first batch is missing";
  std::this_thread::sleep_for(1s);
  const std::string between = UnixTimestampNow();
  ASSERT_TRUE(WaitUntil([&] { return lines_now() >= 100; }, 30s)) << "the second batch is missing";

  auto all = Docker({"logs", name});
  ASSERT_TRUE(all.ok()) << all.Describe();
  const std::string first_out = LinesStartingWith(all.out, "first ");
  const std::string first_err = LinesStartingWith(all.err, "first ");
  const std::string second_out = LinesStartingWith(all.out, "second ");
  const std::string second_err = LinesStartingWith(all.err, "second ");
  ASSERT_EQ(SplitLines(second_out).size(), 45u) << all.out;
  ASSERT_EQ(SplitLines(second_err).size(), 5u) << all.err;
  ASSERT_EQ(all.out, first_out + second_out);
  ASSERT_EQ(all.err, first_err + second_err);

  for (const bool stopped : {false, true}) {
    SCOPED_TRACE(stopped ? "stopped container" : "running container");
    if (stopped) {
      auto stop = Docker({"stop", "-t", "1", name});
      ASSERT_TRUE(stop.ok()) << stop.Describe();
    }
    auto since = Docker({"logs", "--since", between, name}, 60s);
    ASSERT_TRUE(since.ok()) << since.Describe();
    EXPECT_TRUE(since.out == second_out) << FirstDifference(since.out, second_out);
    EXPECT_TRUE(since.err == second_err) << FirstDifference(since.err, second_err);

    auto until = Docker({"logs", "--until", between, name}, 60s);
    ASSERT_TRUE(until.ok()) << until.Describe();
    EXPECT_TRUE(until.out == first_out) << FirstDifference(until.out, first_out);
    EXPECT_TRUE(until.err == first_err) << FirstDifference(until.err, first_err);

    auto tail = Docker({"logs", "--since", between, "--tail", "3", name}, 60s);
    ASSERT_TRUE(tail.ok()) << tail.Describe();
    const auto tail_lines = SplitLines(tail.out + tail.err);
    EXPECT_EQ(tail_lines.size(), 3u) << tail.out << tail.err;
    for (const auto& l : tail_lines) EXPECT_EQ(l.rfind("second ", 0), 0u) << l;
  }
}

TEST_F(DockerLogs, AContainerWithNoFileHasNoDockerLogsAndSaysWhy) {
  const std::string name = NewContainer();
  auto run = Docker(RunArgs(name, {"no-file=true"}, {"loggen", "--lines", "3"}));
  ASSERT_TRUE(run.ok()) << run.Describe();
  auto logs = Docker({"logs", name}, 60s);
  EXPECT_FALSE(logs.ok()) << logs.Describe();
  EXPECT_NE(logs.err.find("no-file"), std::string::npos) << logs.Describe();
}

}  // namespace
}  // namespace skald::e2e
