// Loki's health never reaches the container: with nothing listening at loki-url, a container
// writes at full speed and `docker stop` is prompt.
#include <gtest/gtest.h>

#include <string>

#include "tests/e2e/e2e_support.h"

namespace skald::e2e {
namespace {

class LokiDown : public SkaldTest {
 protected:
  // A push URL on 127.0.0.1 where nothing listens.
  std::string ClosedUrl() {
    const int port = FreeTcpPort();
    return "http://127.0.0.1:" + std::to_string(port) + "/loki/api/v1/push";
  }
};

TEST_F(LokiDown, AContainerWritesFiftyThousandLinesWithinTenSeconds) {
  const std::string name = NewContainer();
  auto run = Docker(RunArgs(name, {}, {"loggen", "--lines", "50000", "--json"}, ClosedUrl()), 60s);
  ASSERT_TRUE(run.ok()) << run.Describe();
  RecordProperty("docker_run_ms", static_cast<int>(run.duration.count()));
  // `docker run` includes creating, starting and removing the container's streams.
  EXPECT_LT(run.duration, 10s) << "the container was slowed down by the unreachable Loki";
}

TEST_F(LokiDown, DockerStopOfASleepingContainerReturnsWithinThreeSeconds) {
  const std::string name = NewContainer();
  auto args =
      RunArgs(name, {}, {"sh", "-c", "loggen --lines 5000 --json; exec sleep 3600"}, ClosedUrl());
  args.insert(args.begin() + 1, "-d");
  auto run = Docker(args, 60s);
  ASSERT_TRUE(run.ok()) << run.Describe();
  // Let it write its lines and fall asleep; the plugin is retrying against the closed port.
  std::this_thread::sleep_for(2s);
  ASSERT_EQ(DockerInspect(name, "{{.State.Running}}"), "true");

  auto stop = Docker({"stop", "-t", "1", name}, 30s);
  ASSERT_TRUE(stop.ok()) << stop.Describe();
  RecordProperty("docker_stop_ms", static_cast<int>(stop.duration.count()));
  EXPECT_LT(stop.duration, 3s) << "docker stop hung on the unreachable Loki";
  EXPECT_EQ(DockerInspect(name, "{{.State.Running}}"), "false");
}

// Lines written during an outage arriving once Loki is back: Journal.* (journal_test.cc).

}  // namespace
}  // namespace skald::e2e
