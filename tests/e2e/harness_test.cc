// Checks of the harness itself, without the plugin: the test image and docker plumbing (with
// Docker's json-file driver), and the Loki client against the real Loki (JSON push).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "tests/e2e/e2e_support.h"

namespace skald::e2e {
namespace {

class Harness : public DockerLokiTest {};

TEST(HarnessCommands, RunCommandCapturesOutputExitCodeAndTimeout) {
  auto r = RunShell("echo out; echo err >&2; exit 3");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(r.timed_out);

  // A background grandchild holding the pipes must not hold RunCommand up.
  auto bg = RunShell("sleep 30 & echo started", 10s);
  EXPECT_TRUE(bg.ok()) << bg.Describe();
  EXPECT_LT(bg.duration, 5s);

  auto slow = RunShell("sleep 30", 500ms);
  EXPECT_TRUE(slow.timed_out);
  EXPECT_LT(slow.duration, 5s);
}

TEST(HarnessCommands, PrometheusTextIsSummedPerFamily) {
  auto totals = ParsePrometheusTotals(
      "# HELP a_total x\n# TYPE a_total counter\n"
      "a_total{reason=\"x}y\"} 3\na_total{reason=\"z\"} 4\nb 1.5e3\n");
  EXPECT_EQ(totals["a_total"], 7);
  EXPECT_EQ(totals["b"], 1500);
}

TEST_F(Harness, ImageRunsLoggenWithJsonFile) {
  const std::string name = NewContainer();
  auto r = Docker({"run", "--name", name, "--network", "none", "--log-driver", "json-file", image(),
                   "loggen", "--lines", "3"});
  ASSERT_TRUE(r.ok()) << r.Describe();
  EXPECT_EQ(SplitLines(r.out).size(), 3u) << r.out;
  EXPECT_NE(r.out.find("loggen seq=3 "), std::string::npos) << r.out;
}

TEST_F(Harness, JsonFileKeepsEveryLineAndSeparatesStderr) {
  const std::string name = NewContainer();
  // This daemon's default json-file options (daemon.json) rotate at 10 MB: keep it all.
  auto r = Docker({"run", "-d", "--name", name, "--network", "none", "--log-driver", "json-file",
                   "--log-opt", "max-size=200m", image(), "loggen", "--lines", "100000", "--json",
                   "--stderr-every", "4"});
  ASSERT_TRUE(r.ok()) << r.Describe();
  ASSERT_EQ(WaitContainerExit(name, 60s), 0);
  auto logs = Docker({"logs", name});
  ASSERT_TRUE(logs.ok()) << logs.Describe();
  const auto out = SplitLines(logs.out);
  const auto err = SplitLines(logs.err);
  EXPECT_EQ(out.size(), 75000u);
  EXPECT_EQ(err.size(), 25000u);
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out.front().rfind("{\"seq\":1,", 0), 0u) << out.front();
  EXPECT_EQ(out.back().rfind("{\"seq\":99999,", 0), 0u) << out.back();
  ASSERT_FALSE(err.empty());
  EXPECT_EQ(err.back().rfind("{\"seq\":100000,", 0), 0u) << err.back();
}

TEST_F(Harness, ComposeRunsAServiceWithJsonFile) {
  const std::string project = UniqueName("e2e-harness");
  char dir[] = "/tmp/skald-e2e-compose.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string file = std::string(dir) + "/docker-compose.yml";
  {
    std::ofstream f(file);
    f << "version: \"2.4\"\n"
         "services:\n"
         "  app:\n"
         "    image: "
      << image()
      << "\n"
         "    network_mode: none\n"
         "    command: [\"loggen\", \"--lines\", \"20\", \"--prefix\", \"compose\"]\n"
         "    logging:\n"
         "      driver: json-file\n";
  }
  auto up = RunCommand({"docker-compose", "-f", file, "-p", project, "up", "--no-color"}, 120s);
  auto ps = Docker({"ps", "-a", "--filter", "label=com.docker.compose.project=" + project,
                    "--format", "{{.Names}}"});
  auto down = RunCommand({"docker-compose", "-f", file, "-p", project, "down", "-v"}, 120s);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(up.ok()) << up.Describe();
  EXPECT_NE(up.out.find("compose seq=20 "), std::string::npos) << up.Describe();
  EXPECT_NE(ps.out.find(project), std::string::npos) << ps.Describe();
  EXPECT_TRUE(down.ok()) << down.Describe();
}

TEST_F(Harness, LokiClientPagesThroughEveryEntry) {
  // More entries than one page, several sharing a timestamp at page boundaries.
  const std::string job = UniqueName("e2e-harness");
  const int64_t base = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count() -
                       std::chrono::nanoseconds(5min).count();
  const int kLines = 12345;
  std::vector<std::pair<int64_t, std::string>> entries;
  for (int i = 1; i <= kLines; ++i) {
    entries.emplace_back(base + (i / 3) * 1000, "line " + std::to_string(i));
    if (entries.size() == 4000 || i == kLines) {
      ASSERT_EQ(loki().PushJson({{"job", job}, {"source", "stdout"}}, entries), 204);
      entries.clear();
    }
  }
  ASSERT_EQ(loki().PushJson({{"job", job}, {"source", "stderr"}}, {{base + 7, "other stream"}}),
            204);

  const std::string sel = "{job=" + LogqlQuote(job) + "}";
  EXPECT_EQ(loki().WaitForCount(sel, kLines + 1, 30s), uint64_t{kLines + 1});
  EXPECT_EQ(loki().Count("{job=" + LogqlQuote(job) + ", source=\"stderr\"}"), 1u);
  EXPECT_EQ(loki().Count(sel + " |= \"line 12345\""), 1u);

  auto all = loki().QueryAll(sel, 1h, /*page_limit=*/1000);
  ASSERT_EQ(all.size(), size_t{kLines + 1});
  std::set<std::string> lines;
  for (const auto& e : all) lines.insert(e.line);
  EXPECT_EQ(lines.size(), size_t{kLines + 1});
  for (std::size_t i = 1; i < all.size(); ++i) {
    ASSERT_LE(all[i - 1].timestamp_ns, all[i].timestamp_ns);
  }

  auto jobs = loki().LabelValues("job");
  EXPECT_NE(std::find(jobs.begin(), jobs.end(), job), jobs.end());
  auto series = loki().Series(sel);
  EXPECT_EQ(series.size(), 2u);
}

}  // namespace
}  // namespace skald::e2e
