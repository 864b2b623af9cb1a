// The arm64 bundle on this host's dockerd (tests/e2e/run-e2e-arm64.sh runs this suite, with
// others, against the copy skald-arm64-e2e; `make e2e` does not): the plugin under test is the
// bundle's aarch64 binary (run by qemu through binfmt_misc on an amd64 host), it keeps a state
// directory and a metrics port of its own beside any other skald copy, and a container's lines,
// non-ASCII bytes included, go through a JSON pipeline to Loki and back out of `docker logs`.
#include <elf.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/e2e_support.h"

namespace skald::e2e {
namespace {

namespace fs = std::filesystem;

class Arm64 : public SkaldTest {};

// A plugin setting (NAME=value in `docker plugin inspect`'s Settings.Env), "" when unset.
std::string PluginSetting(const std::string& plugin, const std::string& name) {
  auto r =
      Docker({"plugin", "inspect", "--format", "{{range .Settings.Env}}{{.}} {{end}}", plugin});
  std::istringstream in(r.out);
  std::string item;
  while (in >> item) {
    if (item.rfind(name + "=", 0) == 0) return item.substr(name.size() + 1);
  }
  return "";
}

TEST_F(Arm64, ThePluginUnderTestRunsTheBundlesAarch64Binary) {
  const std::string binary = E2eEnv::Get().Bundle() + "/rootfs/usr/bin/skald";
  std::ifstream in(binary, std::ios::binary);
  Elf64_Ehdr header{};
  in.read(reinterpret_cast<char*>(&header), sizeof header);
  ASSERT_TRUE(in) << "cannot read the ELF header of " << binary;
  EXPECT_EQ(header.e_ident[EI_CLASS], ELFCLASS64);
  EXPECT_EQ(header.e_machine, EM_AARCH64) << binary << " is not an aarch64 program";

  const auto pid = PluginPid();
  ASSERT_TRUE(pid) << "no skald process for the plugin " << driver_;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/" + std::to_string(*pid) + "/exe", ec);
  ASSERT_FALSE(ec) << ec.message();
#if defined(__aarch64__)
  EXPECT_EQ(exe.filename(), "skald") << exe;
#else
  // binfmt_misc starts the registered emulator with the program: the process's executable.
  EXPECT_NE(exe.filename().string().find("qemu-aarch64"), std::string::npos) << exe;
#endif
}

TEST_F(Arm64, ItsStateDirectoryAndMetricsPortAreItsOwn) {
  const auto state = PluginStateDir();
  ASSERT_TRUE(state) << "no state directory for " << driver_;
  EXPECT_TRUE(fs::is_directory(*state)) << *state;
  auto id = Docker({"plugin", "inspect", "--format", "{{.Id}}", driver_});
  ASSERT_TRUE(id.ok()) << id.Describe();
  EXPECT_NE(state->find(Trim(id.out)), std::string::npos)
      << *state << " is not in the directory Docker keeps for " << driver_;

  const std::string metrics_addr = PluginSetting(driver_, "METRICS_ADDR");
  EXPECT_EQ(metrics_addr, "127.0.0.1:" + std::to_string(E2eEnv::Get().MetricsPort()));
  const auto metrics = FetchMetrics();
  ASSERT_TRUE(metrics) << "no /metrics on " << metrics_addr;
  EXPECT_NE(metrics->find("skald_"), std::string::npos) << metrics->substr(0, 500);

  // Every other skald copy installed here (the amd64 skald-e2e, an installed skald) has
  // another state directory and another metrics address.
  auto ls = Docker({"plugin", "ls", "--format", "{{.Name}}"});
  ASSERT_TRUE(ls.ok()) << ls.Describe();
  for (const std::string& other : SplitLines(ls.out)) {
    const std::string name = other.substr(0, other.find(':'));
    if (name.empty() || name == driver_ || other == driver_) continue;
    const auto other_state = PluginStateDir(other);
    if (!other_state) continue;  // not a skald copy
    EXPECT_NE(*other_state, *state) << other;
    const std::string other_metrics = PluginSetting(other, "METRICS_ADDR");
    EXPECT_TRUE(other_metrics.empty() || other_metrics != metrics_addr) << other;
  }
}

TEST_F(Arm64, LinesGoThroughAJsonPipelineToLokiAndBackOutOfDockerLogs) {
  constexpr int kLines = 3000;
  // The prefix lands in every line's msg field: bytes from 0x80 up, which a signed and an
  // unsigned `char` tell apart.
  const std::string prefix = "arm64-\xC3\xA9t\xC3\xA9-\xE2\x82\xAC";
  const std::string stages = R"(
- json:
    expressions:
      output: msg
      level: level
- labels:
    level:
- output:
    source: output
)";
  const std::string name = NewContainer();
  auto run = Docker(RunArgs(name, {"loki-pipeline-stages=" + stages},
                            {"loggen", "--lines", std::to_string(kLines), "--json", "--prefix",
                             prefix, "--stderr-every", "10"}),
                    180s);
  ASSERT_TRUE(run.ok()) << run.Describe();

  const std::string sel = Selector(name);
  ASSERT_EQ(loki().WaitForCount(sel, kLines, 120s), uint64_t{kLines});
  auto entries = loki().QueryAll(sel);
  ASSERT_EQ(entries.size(), size_t{kLines});
  for (const auto& e : entries) {
    ASSERT_EQ(e.line.rfind(prefix + " request handled GET /api/v1/items/", 0), 0u) << e.line;
    ASSERT_FALSE(e.labels.at("level").empty());
  }
  EXPECT_EQ(loki().Count(Selector(name, "source=\"stderr\"")), uint64_t{kLines / 10});

  // `docker logs` gives the lines as the container wrote them (the JSON), each on its stream.
  auto logs = Docker({"logs", name}, 120s);
  ASSERT_TRUE(logs.ok()) << logs.Describe();
  const auto out = SplitLines(logs.out);
  const auto err = SplitLines(logs.err);
  ASSERT_EQ(out.size(), size_t{kLines - kLines / 10});
  ASSERT_EQ(err.size(), size_t{kLines / 10});
  long seq = 1;
  for (const auto& l : out) {
    if (seq % 10 == 0) ++seq;
    ASSERT_EQ(l.rfind("{\"seq\":" + std::to_string(seq) + ",", 0), 0u) << l;
    ASSERT_NE(l.find("\"msg\":\"" + prefix + " "), std::string::npos) << l;
    ++seq;
  }
  seq = 10;
  for (const auto& l : err) {
    ASSERT_EQ(l.rfind("{\"seq\":" + std::to_string(seq) + ",", 0), 0u) << l;
    seq += 10;
  }
}

}  // namespace
}  // namespace skald::e2e
