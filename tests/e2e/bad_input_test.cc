// What one container, one disk or one client can do to the plugin, on the real daemon. Every
// row runs a well-behaved neighbour that ships to the real Loki meanwhile, and checks that the
// plugin kept its process (where the row is not a restart), that the neighbour delivered every
// line, that the plugin stayed under 100 MB resident, and that the bad stream's lines were
// delivered or counted with their reason.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "tests/e2e/docker_frames.h"
#include "tests/e2e/e2e_support.h"
#include "tests/tools/fake_loki.h"
#include "tests/tools/scripted_http_peer.h"
#include "tests/tools/yaml_alias_bomb.h"

namespace skald::e2e {
namespace {

namespace fs = std::filesystem;

constexpr long kMaxRssKb = 100 * 1024;
constexpr int kNeighbourLines = 3000;

// Samples the plugin's resident memory every 100 ms while alive; Max() is the most seen.
class RssSampler {
 public:
  explicit RssSampler(int pid) : pid_(pid) {
    thread_ = std::thread([this] {
      while (!stop_) {
        if (auto kb = VmRssKb(pid_); kb && *kb > max_) max_ = *kb;
        std::this_thread::sleep_for(100ms);
      }
    });
  }
  ~RssSampler() {
    stop_ = true;
    thread_.join();
  }
  long Max() const { return max_; }

 private:
  int pid_;
  std::atomic<bool> stop_{false};
  std::atomic<long> max_{0};
  std::thread thread_;
};

// Runs `fn` when the scope ends, however it ends.
struct AtScopeExit {
  std::function<void()> fn;
  ~AtScopeExit() { fn(); }
};

double Metric(const std::string& series) {
  auto text = FetchMetrics();
  return text ? PrometheusSeries(*text, series) : -1;
}

class BadInput : public SkaldTest {
 protected:
  void SetUp() override {
    SkaldTest::SetUp();
    if (HasFatalFailure()) return;
    RememberPlugin();
  }

  void RememberPlugin() {
    auto pid = PluginPid();
    ASSERT_TRUE(pid) << "the skald plugin has no process";
    pid_ = *pid;
    sampler_ = std::make_unique<RssSampler>(pid_);
  }

  // A well-behaved container beside the bad one: kNeighbourLines lines over about 10 s.
  void StartNeighbour() {
    neighbour_ = NewContainer("neighbour");
    auto args = RunArgs(neighbour_, {},
                        {"loggen", "--lines", std::to_string(kNeighbourLines), "--rate", "300",
                         "--prefix", neighbour_});
    args.insert(args.begin() + 1, "-d");
    auto run = Docker(args, 60s);
    ASSERT_TRUE(run.ok()) << run.Describe();
  }

  // The checks every row ends with.
  void ExpectNeighbourAndPlugin(bool same_process = true) {
    ASSERT_FALSE(neighbour_.empty());
    EXPECT_TRUE(WaitContainerExit(neighbour_, 60s));
    EXPECT_EQ(loki().WaitForCount(Selector(neighbour_), kNeighbourLines, 60s),
              static_cast<uint64_t>(kNeighbourLines))
        << "the neighbour lost lines";
    if (same_process) {
      EXPECT_EQ(PluginPid(), pid_) << "the plugin process changed";
    } else {
      EXPECT_TRUE(PluginPid()) << "the plugin is not running";
    }
    EXPECT_LT(sampler_->Max(), kMaxRssKb)
        << "plugin resident memory peaked at " << sampler_->Max() << " kB";
  }

  std::string ContainerId(const std::string& name) {
    return DockerInspect(name, "{{.Id}}").value_or("");
  }

  // Disables the plugin, runs `while_disabled` ("" or what went wrong) and enables the plugin
  // again: "" when all three went well.
  std::string WhileDisabled(const std::function<std::string()>& while_disabled) {
    auto d = Docker({"plugin", "disable", driver_}, 60s);
    const std::string done = while_disabled();
    auto e = Docker({"plugin", "enable", "--timeout", "30", driver_}, 60s);
    return d.ok() && done.empty() && e.ok() ? "" : done + d.Describe() + e.Describe();
  }

  int pid_ = 0;
  std::unique_ptr<RssSampler> sampler_;
  std::string neighbour_;
};

// `yes | tr -d '\n'`: a line that never ends. It used to be assembled in memory without bound
// (526 MB after 15 s). It is sent in pieces of loki-max-line-size as they fill.
TEST_F(BadInput, ALineWithoutANewline) {
  StartNeighbour();
  const std::string name = NewContainer();
  const double split_before = Metric("skald_lines_split_total");
  constexpr uint64_t kBytes = 40'000'000;
  auto run = Docker(
      RunArgs(name, {}, {"sh", "-c", "yes | tr -d '\\n' | head -c " + std::to_string(kBytes)}),
      120s);
  ASSERT_TRUE(run.ok()) << run.Describe();
  const uint64_t pieces = (kBytes + 255'999) / 256'000;
  EXPECT_EQ(loki().WaitForCount(Selector(name), pieces, 60s), pieces);
  EXPECT_EQ(loki().Bytes(Selector(name)), kBytes);
  EXPECT_EQ(Metric("skald_lines_split_total") - split_before, 1);
  ExpectNeighbourAndPlugin();
}

// 16 MiB on one line: dockerd's 16 KiB chunks are joined, then cut at loki-max-line-size.
TEST_F(BadInput, ASixteenMebibyteLine) {
  StartNeighbour();
  const std::string name = NewContainer();
  constexpr uint64_t kBytes = 16 * 1024 * 1024;
  auto run = Docker(RunArgs(name, {}, {"loggen", "--line-bytes", std::to_string(kBytes)}), 120s);
  ASSERT_TRUE(run.ok()) << run.Describe();
  const uint64_t pieces = (kBytes + 255'999) / 256'000;
  EXPECT_EQ(loki().WaitForCount(Selector(name), pieces, 60s), pieces);
  EXPECT_EQ(loki().Bytes(Selector(name)), kBytes);
  ExpectNeighbourAndPlugin();
}

// NUL bytes, bytes that are not UTF-8, CR before LF: each line is delivered, or counted as
// dropped with the reason Loki gave.
TEST_F(BadInput, NulBytesInvalidUtf8AndCarriageReturns) {
  StartNeighbour();
  const std::string name = NewContainer();
  const auto dropped_before = ParsePrometheusTotals(FetchMetrics().value_or(""));
  auto run = Docker(RunArgs(name, {},
                            {"sh", "-c",
                             "for i in 1 2 3 4 5 6 7 8 9 10; do "
                             "printf 'nul \\000 byte %s\\n' $i; "
                             "printf 'bad \\377\\376 utf8 %s\\n' $i; "
                             "printf 'crlf %s\\r\\n' $i; done"}),
                    60s);
  ASSERT_TRUE(run.ok()) << run.Describe();
  const auto counted = [&] {
    const auto now = ParsePrometheusTotals(FetchMetrics().value_or(""));
    const auto delta = [&](const std::string& n) {
      auto a = now.find(n);
      auto b = dropped_before.find(n);
      return (a == now.end() ? 0 : a->second) - (b == dropped_before.end() ? 0 : b->second);
    };
    return delta("skald_entries_dropped_total");
  };
  uint64_t delivered = 0;
  WaitUntil(
      [&] {
        delivered = loki().Count(Selector(name));
        return delivered + static_cast<uint64_t>(counted()) >= 30;
      },
      60s);
  EXPECT_EQ(delivered + static_cast<uint64_t>(counted()), 30u)
      << delivered << " delivered, " << counted() << " counted as dropped";
  EXPECT_EQ(loki().Count(Selector(name) + " |= \"crlf\""), 10u);
  EXPECT_EQ(loki().Count(Selector(name) + " |= \"nul\""), 10u);
  ExpectNeighbourAndPlugin();
}

// The README tells users they may remove a journal by hand. Removed while its lines are
// replayed (Loki was away), it ends that stream: what was read is delivered, the rest counted
// as lost bytes. (The reader used to spin on the missing segment, and every container blocked.)
TEST_F(BadInput, AJournalRemovedWhileItIsReplayed) {
  testkit::FakeLoki fake;
  ASSERT_TRUE(fake.Start());
  fake.FailAll(503);
  const auto state = PluginStateDir();
  ASSERT_TRUE(state);
  StartNeighbour();
  const std::string name = NewContainer();
  constexpr uint64_t kLines = 100000;
  auto run =
      Docker(RunArgs(name, {"loki-min-backoff=100ms", "loki-max-backoff=200ms"},
                     {"loggen", "--lines", std::to_string(kLines), "--json"}, fake.PushUrl()),
             120s);
  ASSERT_TRUE(run.ok()) << run.Describe();
  const fs::path journal = fs::path(*state) / "containers" / ContainerId(name);
  ASSERT_TRUE(fs::is_directory(journal)) << journal;
  // Every frame the container wrote is in the journal (nothing was delivered or evicted yet).
  const auto segment_bytes = [&] {
    uint64_t bytes = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(journal, ec)) {
      if (e.path().extension() == ".seg") bytes += e.file_size(ec);
    }
    return bytes;
  };
  uint64_t journal_bytes = segment_bytes();
  for (int i = 0; i < 50; ++i) {  // until the FIFO's last bytes are in (the container exited)
    std::this_thread::sleep_for(100ms);
    if (const uint64_t now = segment_bytes(); now == journal_bytes && i >= 5) break;
    journal_bytes = segment_bytes();
  }
  const double lost_before = Metric("skald_journal_lost_bytes_total");
  const double skipped_before = Metric("skald_journal_skipped_bytes_total");
  fs::remove_all(journal);
  fake.ClearFailures();
  // Every byte of the journal is a frame of a line delivered, or counted as lost (the segments
  // the stream had not read) or skipped.
  const auto delivered_frames = [&] {
    uint64_t bytes = 0, lines = 0;
    for (const auto& stream : fake.Streams()) {
      for (const auto& e : stream.entries) {
        bytes += StdoutFrameBytes(e.timestamp_ns, e.line);
        ++lines;
      }
    }
    return std::pair{bytes, lines};
  };
  const auto counted = [&] {
    return static_cast<uint64_t>(Metric("skald_journal_lost_bytes_total") - lost_before +
                                 Metric("skald_journal_skipped_bytes_total") - skipped_before);
  };
  WaitUntil([&] { return delivered_frames().first + counted() >= journal_bytes; }, 60s);
  const auto [framed, delivered] = delivered_frames();
  EXPECT_GT(Metric("skald_journal_lost_bytes_total"), lost_before) << "no bytes were counted lost";
  EXPECT_GT(delivered, 0u) << "what the stream had read was not delivered";
  EXPECT_LT(delivered, kLines);
  EXPECT_EQ(framed + counted(), journal_bytes)
      << delivered << " lines delivered (" << framed << " frame bytes), " << counted()
      << " bytes counted lost or skipped, of " << journal_bytes << " journal bytes";
  EXPECT_EQ(fake.Duplicates(), 0u);
  std::cout << "journal removed while replayed: " << journal_bytes << " journal bytes = " << framed
            << " bytes of the " << delivered << " lines delivered + " << counted()
            << " bytes counted lost\n";
  ExpectNeighbourAndPlugin();
}

// A disk that fills: the plugin's state directory on an 8 MiB tmpfs (mounted on the directory
// Docker keeps for it while it is disabled, and removed the same way). Under
// loki-on-full=drop (the default) the lines go on in memory. With Loki taking lines, nothing is
// lost: a full memory queue holds the container at Loki's pace (seconds, not the minutes a
// blocked container would wait). With Loki away too, the container is not held up: the oldest
// lines beyond the queue's bound are dropped, counted as disk_full; the rest arrive later.
TEST_F(BadInput, AFullDisk) {
  const auto dir = PluginPropagatedMount();
  ASSERT_TRUE(dir);
  AtScopeExit restore{[&] {
    guard_.RemoveAll();
    EXPECT_EQ(WhileDisabled([&] {
                // Docker unmounts the directory's mounts when it disables the plugin.
                umount2(dir->c_str(), MNT_DETACH);
                return std::string();
              }),
              "");
  }};
  sampler_.reset();
  ASSERT_EQ(WhileDisabled([&] {
              return mount("tmpfs", dir->c_str(), "tmpfs", 0, "size=8m,mode=0700") == 0
                         ? std::string()
                         : "mount of a tmpfs on " + *dir + " failed; ";
            }),
            "");
  RememberPlugin();
  StartNeighbour();
  const auto dropped = [&] {  // every reason
    const auto totals = ParsePrometheusTotals(FetchMetrics().value_or(""));
    const auto it = totals.find("skald_entries_dropped_total");
    return it == totals.end() ? 0.0 : it->second;
  };
  const auto disk_full = [&] {
    return Metric("skald_entries_dropped_total{reason=\"disk_full\"}");
  };
  const double dropped_before = dropped();

  // Two containers whose journals are made while the disk has room, then fill it: one ships
  // to a Loki that is away (a fake answering 503), one to the real Loki.
  testkit::FakeLoki away;
  ASSERT_TRUE(away.Start());
  away.SetRetainEntries(false);
  away.FailAll(503);
  const std::string lost = NewContainer();
  constexpr int kAwayLines = 60000;  // about 14 MB of journal
  CommandResult run_away;
  std::thread away_thread([&] {
    run_away = Docker(
        RunArgs(lost, {"loki-min-backoff=100ms", "loki-max-backoff=200ms"},
                {"sh", "-c", "sleep 2; loggen --lines " + std::to_string(kAwayLines) + " --json"},
                away.PushUrl()),
        120s);
  });
  std::this_thread::sleep_for(1s);  // its journal is made now, before the disk is full
  const std::string name = NewContainer();
  constexpr int kLines = 150000;  // about 35 MB of journal: far more than the disk holds
  auto run =
      Docker(RunArgs(name, {}, {"loggen", "--lines", std::to_string(kLines), "--json"}), 300s);
  away_thread.join();
  ASSERT_TRUE(run.ok()) << run.Describe();
  ASSERT_TRUE(run_away.ok()) << run_away.Describe();
  EXPECT_GT(Metric("skald_journal_write_errors_total"), 0);

  // Loki up: every line arrives, none is dropped. A liveness bound: Loki's pace here is a few
  // seconds for these lines.
  EXPECT_LT(run.duration, 120s) << "the container was held longer than Loki's pace";
  EXPECT_EQ(loki().WaitForCount(Selector(name), kLines, 90s), static_cast<uint64_t>(kLines));

  // Loki away: the container is not held; the oldest lines beyond the memory queue are
  // dropped as disk_full (and only those: nothing of the other container), the rest arrive once
  // Loki answers.
  EXPECT_LT(run_away.duration, 60s) << "the container was held up although Loki was away";
  EXPECT_GT(disk_full(), 0) << "nothing was dropped";
  away.ClearFailures();
  uint64_t delivered = 0;
  WaitUntil(
      [&] {
        delivered = away.TotalEntries();
        return delivered + static_cast<uint64_t>(dropped() - dropped_before) >= kAwayLines;
      },
      90s);
  EXPECT_EQ(delivered + static_cast<uint64_t>(dropped() - dropped_before),
            static_cast<uint64_t>(kAwayLines))
      << delivered << " delivered, " << disk_full() << " dropped as disk_full, "
      << dropped() - dropped_before << " dropped in all";
  EXPECT_EQ(dropped() - dropped_before, disk_full());

  // A container started now, on the full disk, has no journal (it cannot be made): it logs
  // from memory, and while Loki takes lines it waits for them rather than lose any.
  const auto state = PluginStateDir();
  ASSERT_TRUE(state);
  const double dropped_before_late = dropped();
  const std::string late = NewContainer("late");
  auto run_late =
      Docker(RunArgs(late, {}, {"loggen", "--lines", std::to_string(kLines), "--json"}), 300s);
  ASSERT_TRUE(run_late.ok()) << run_late.Describe();
  EXPECT_EQ(loki().WaitForCount(Selector(late), kLines, 90s), static_cast<uint64_t>(kLines));
  EXPECT_EQ(dropped() - dropped_before_late, 0) << "lines dropped although Loki took them";
  const fs::path late_journal = fs::path(*state) / "containers" / ContainerId(late);
  EXPECT_FALSE(fs::exists(late_journal / "0000000001.seg"))
      << "the disk had room: this container was journaled, not the case meant here";
  std::cout << "full disk: Loki up: " << kLines << " lines, the container ran "
            << std::chrono::duration<double>(run.duration).count()
            << " s, none dropped; Loki away: " << delivered << " delivered, " << disk_full()
            << " dropped as disk_full, the container ran "
            << std::chrono::duration<double>(run_away.duration).count()
            << " s; started on the full disk: " << kLines << " lines, ran "
            << std::chrono::duration<double>(run_late.duration).count() << " s, none dropped\n";
  ExpectNeighbourAndPlugin();
}

// A state directory damaged while the plugin was disabled: in the journals of two stopped
// containers a FIFO stands where info.json, the cursor, a segment's live marker and the replay
// marker belong, or a file far over the size such metadata can have (sparse: no disk used), and
// a FIFO replaces the secrets file. Each read of one used to open it and wait for a writer for
// ever (the plugin's start, a stream or `docker logs` stuck), or read it whole into memory.
// The plugin starts, serves a neighbour, and `docker logs` of both containers still prints the
// lines their segments hold.
TEST_F(BadInput, ADamagedStateDirectory) {
  const auto state = PluginStateDir();
  ASSERT_TRUE(state);
  constexpr int kLines = 50;
  const std::string a = NewContainer("fifos"), b = NewContainer("oversized");
  for (const std::string& name : {a, b}) {
    auto run = Docker(RunArgs(name, {}, {"loggen", "--lines", std::to_string(kLines)}), 60s);
    ASSERT_TRUE(run.ok()) << run.Describe();
    ASSERT_EQ(loki().WaitForCount(Selector(name), kLines, 60s), static_cast<uint64_t>(kLines));
  }
  const fs::path containers = fs::path(*state) / "containers";
  const fs::path ja = containers / ContainerId(a), jb = containers / ContainerId(b);
  ASSERT_TRUE(fs::exists(ja / "0000000001.seg")) << ja;
  ASSERT_TRUE(fs::exists(jb / "0000000001.seg")) << jb;
  const auto logs_lines = [&](const std::string& name) {
    auto logs = Docker({"logs", name}, 30s);
    EXPECT_TRUE(logs.ok()) << logs.Describe();
    return SplitLines(logs.out).size();
  };
  ASSERT_EQ(logs_lines(a), static_cast<std::size_t>(kLines));

  const fs::path secrets = fs::path(*state) / "secrets";
  std::string secrets_text;
  {
    std::ifstream in(secrets);
    secrets_text.assign(std::istreambuf_iterator<char>(in), {});
  }
  AtScopeExit restore{[&] {
    guard_.RemoveAll();
    EXPECT_EQ(WhileDisabled([&] {
                std::error_code ec;
                fs::remove(secrets, ec);
                if (!secrets_text.empty()) std::ofstream(secrets) << secrets_text;
                fs::remove_all(ja, ec);
                fs::remove_all(jb, ec);
                return std::string();
              }),
              "");
  }};
  sampler_.reset();
  const auto fifo = [](const fs::path& p) {
    std::error_code ec;
    fs::remove(p, ec);
    return mkfifo(p.c_str(), 0600) == 0 ? "" : "mkfifo " + p.string() + " failed; ";
  };
  const auto oversized = [](const fs::path& p, uintmax_t bytes) {
    std::ofstream(p, std::ios::app).close();
    std::error_code ec;
    fs::resize_file(p, bytes, ec);
    return ec ? "cannot grow " + p.string() + ": " + ec.message() + "; " : std::string();
  };
  ASSERT_EQ(WhileDisabled([&] {
              return fifo(ja / "info.json") + fifo(ja / "cursor") + fifo(ja / "0000000001.live") +
                     fifo(ja / "replaying") + fifo(secrets) +
                     oversized(jb / "info.json", uintmax_t{1} << 30) +
                     oversized(jb / "cursor", uintmax_t{1} << 30) +
                     oversized(jb / "0000000001.live", uintmax_t{1} << 30) +
                     oversized(jb / "replaying", uintmax_t{1} << 30);
            }),
            "");
  RememberPlugin();
  StartNeighbour();
  // `docker logs` reads the segments (dockerd starts a logger for it: its StartLogging writes
  // info.json anew).
  EXPECT_EQ(logs_lines(a), static_cast<std::size_t>(kLines));
  EXPECT_EQ(logs_lines(b), static_cast<std::size_t>(kLines));
  // The segments stay: damaged metadata costs no line on disk.
  EXPECT_TRUE(fs::exists(ja / "0000000001.seg"));
  EXPECT_TRUE(fs::exists(jb / "0000000001.seg"));
  EXPECT_EQ(DockerInspect(driver_, "{{.Enabled}}").value_or(""), "true");
  ExpectNeighbourAndPlugin();
  std::cout << "damaged state directory: the plugin started on FIFOs and 1 GiB files in place of "
               "info.json, cursor, live and replay markers and secrets; docker logs printed "
            << kLines << " lines of each journal; the neighbour delivered " << kNeighbourLines
            << "\n";
}

// `docker logs -f` whose client goes away while the container is quiet: the plugin ends the
// answer (it used to keep its thread and socket until the container logged again), and the
// empty frames that find this out print nothing.
TEST_F(BadInput, ADockerLogsFollowerThatDisconnects) {
  StartNeighbour();
  const std::string name = NewContainer();
  auto args = RunArgs(name, {}, {"sh", "-c", "loggen --lines 10 --prefix quiet; exec sleep 300"});
  args.insert(args.begin() + 1, "-d");
  ASSERT_TRUE(Docker(args, 60s).ok());
  ASSERT_EQ(loki().WaitForCount(Selector(name), 10, 30s), 10u);
  const int before = SocketCount(pid_).value_or(0);
  // Five followers whose clients leave after 2 s.
  std::vector<std::thread> followers;
  for (int i = 0; i < 5; ++i) {
    followers.emplace_back([&] {
      RunCommand({"timeout", "2", "docker", "logs", "-f", name}, 30s);
    });
  }
  std::this_thread::sleep_for(1s);
  const int during = SocketCount(pid_).value_or(0);
  for (auto& f : followers) f.join();
  int after = during;
  EXPECT_TRUE(WaitUntil(
      [&] {
        after = SocketCount(pid_).value_or(0);
        return after <= before + 1;
      },
      30s, 1s))
      << "sockets: " << before << " before, " << during << " with 5 followers, " << after
      << " 30 s after they left";
  // Each follower held a connection of its own, which ends with it. dockerd may carry some on
  // connections it kept from earlier requests (the plugin keeps idle connections), and keeps up
  // to two of the followers' as idle ones when they end (Go's MaxIdleConnsPerHost): of the 5,
  // at least 3 end.
  EXPECT_GE(during - after, 3) << "the followers were not connected: " << before << " before, "
                               << during << " with 5 followers, " << after << " after";
  // A follower that stays idle for more than two heartbeats shows exactly the lines.
  auto follow = RunCommand({"timeout", "12", "docker", "logs", "-f", "--timestamps", name}, 60s);
  EXPECT_EQ(SplitLines(follow.out).size(), 10u) << follow.out;
  Docker({"rm", "-f", name}, 30s);
  ExpectNeighbourAndPlugin();
}

// Loki answering badly, for a while (the fake Loki; the neighbour ships to the real one): an
// answer that is not HTTP, a slow answer, a redirect, a wrong token, a wrong path, 413, 429
// and 500. With the journal, every line arrives once Loki answers well again, except what
// Loki refuses for good (413 for a single entry), which is counted with its reason; without
// the journal (no-file), a peer that never answers HTTP costs the lines after loki-retries,
// counted.
TEST_F(BadInput, ALokiThatMisbehaves) {
  StartNeighbour();
  struct Row {
    std::string name;
    testkit::FakeLoki::Answer answer;
    std::chrono::milliseconds delay{0};
  };
  auto answer = [](int status) {
    testkit::FakeLoki::Answer a;
    a.status = status;
    return a;
  };
  testkit::FakeLoki::Answer redirect = answer(307);
  redirect.headers = {{"Location", "http://127.0.0.1:1/elsewhere"}};
  testkit::FakeLoki::Answer huge = answer(500);
  huge.filler_bytes = 64 << 20;
  std::vector<Row> rows = {
      {"redirect", redirect, 0ms},     {"unauthorized", answer(401), 0ms},
      {"forbidden", answer(403), 0ms}, {"not-found", answer(404), 0ms},
      {"too-many", answer(429), 0ms},  {"server-error", answer(500), 0ms},
      {"huge-answer", huge, 0ms},      {"slow", answer(200), 3s},
  };
  constexpr int kLines = 200;
  const double too_large_before = Metric("skald_entries_dropped_total{reason=\"too_large\"}");
  std::vector<std::unique_ptr<testkit::FakeLoki>> fakes;
  std::vector<std::string> names;
  for (const Row& row : rows) {
    auto fake = std::make_unique<testkit::FakeLoki>();
    ASSERT_TRUE(fake->Start());
    if (row.delay.count() > 0) {
      fake->SetDelay(row.delay);
    } else {
      fake->AnswerNext(row.answer, -1);
    }
    names.push_back(NewContainer(row.name));
    auto run = Docker(RunArgs(names.back(),
                              {"loki-timeout=1s", "loki-min-backoff=100ms",
                               "loki-max-backoff=500ms", "loki-batch-wait=100ms"},
                              {"loggen", "--lines", std::to_string(kLines), "--prefix", row.name},
                              fake->PushUrl()),
                      60s);
    ASSERT_TRUE(run.ok()) << run.Describe();
    fakes.push_back(std::move(fake));
  }
  // 413 for everything: batches are split down to single entries, each refused for good.
  testkit::FakeLoki refusing;
  ASSERT_TRUE(refusing.Start());
  refusing.AnswerNext(answer(413), -1);
  const std::string refused = NewContainer("too-large");
  ASSERT_TRUE(
      Docker(RunArgs(refused, {"loki-batch-wait=100ms"},
                     {"loggen", "--lines", "20", "--prefix", "too-large"}, refusing.PushUrl()),
             60s)
          .ok());
  // An answer that is not HTTP, without the journal: dropped after loki-retries, counted.
  testkit::ScriptedHttpPeer garbage;
  testkit::ScriptedHttpPeer::Script not_http_script;
  not_http_script.answer = "this is not HTTP\r\n\r\n";
  ASSERT_TRUE(garbage.Start(not_http_script));
  const double exhausted_before =
      Metric("skald_entries_dropped_total{reason=\"retries_exhausted\"}");
  const std::string not_http = NewContainer("not-http");
  ASSERT_TRUE(
      Docker(RunArgs(not_http,
                     {"no-file=true", "loki-retries=2", "loki-min-backoff=100ms",
                      "loki-max-backoff=200ms", "loki-batch-wait=100ms"},
                     {"loggen", "--lines", "30", "--prefix", "not-http"}, garbage.PushUrl()),
             60s)
          .ok());

  std::this_thread::sleep_for(3s);  // Loki misbehaves a while
  for (std::size_t i = 0; i < rows.size(); ++i) {
    // (A slow Loki stores what the client gave up waiting for; the retry is a duplicate.)
    if (rows[i].delay.count() == 0) {
      EXPECT_EQ(fakes[i]->TotalEntries(), 0u) << rows[i].name << ": accepted while failing?";
    }
    fakes[i]->ClearFailures();
    fakes[i]->SetDelay(0ms);
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_TRUE(fakes[i]->WaitForEntries(kLines, 60s))
        << rows[i].name << ": " << fakes[i]->TotalEntries() << " of " << kLines
        << " delivered once Loki answered well";
    EXPECT_EQ(fakes[i]->TotalEntries(), static_cast<uint64_t>(kLines)) << rows[i].name;
  }
  EXPECT_TRUE(WaitUntil(
      [&] {
        return Metric("skald_entries_dropped_total{reason=\"too_large\"}") - too_large_before >= 20;
      },
      60s));
  // Every refused line counted once: exactly the 20 lines, as too_large.
  EXPECT_EQ(Metric("skald_entries_dropped_total{reason=\"too_large\"}") - too_large_before, 20);
  EXPECT_EQ(refusing.TotalEntries(), 0u);
  EXPECT_TRUE(WaitUntil(
      [&] {
        return Metric("skald_entries_dropped_total{reason=\"retries_exhausted\"}") -
                   exhausted_before >=
               30;
      },
      60s))
      << "lines sent to a peer that never answers HTTP were not counted";
  // ... and the 30 sent to the peer that never answers HTTP, as retries_exhausted.
  EXPECT_EQ(Metric("skald_entries_dropped_total{reason=\"retries_exhausted\"}") - exhausted_before,
            30);
  EXPECT_GT(garbage.Requests(), 0u);
  ExpectNeighbourAndPlugin();
}

// An endpoint that answers with hostile bytes (the issue that switched the plugin off: a 20 MB
// status line crashed it, its journal replayed the push, Docker disabled it). Each row's
// container ships to a scripted peer that answers its first pushes with the misbehaviour, then
// 204; the answers that say the route is wrong come from a fake Loki that counts what arrives
// once it is mended. The plugin keeps its process and stays under 100 MB, the neighbour ships
// to the real Loki, nothing is dropped, and every line of the route rows arrives.
double FamilyTotal(std::string_view text, std::string_view family);

TEST_F(BadInput, AnEndpointThatAnswersWithHostileBytes) {
  StartNeighbour();
  constexpr int kLines = 200;
  constexpr uint64_t kHostileAnswers = 3;
  std::string million_headers = "HTTP/1.1 204 No Content\r\n";
  for (int i = 0; i < 1'000'000; ++i) million_headers += "A: b\r\n";
  std::string random_bytes(1 << 20, '\0');
  for (std::size_t i = 0; i < random_bytes.size(); ++i) {
    random_bytes[i] = static_cast<char>((i * 2654435761u) >> 13);
  }
  struct Peer {
    std::string name;
    std::string answer;
    bool reset = false;
    bool https = false;
  };
  const std::vector<Peer> peers = {
      {"status-20mb", "HTTP/1.1 200 " + std::string(20 << 20, 'x') + "\r\n\r\n"},
      {"status-100kb", "HTTP/1.1 200 " + std::string(100 << 10, 'x') + "\r\n\r\n"},
      {"million-headers", million_headers + "\r\n"},
      {"header-line-20mb", "HTTP/1.1 204 No Content\r\nX: " + std::string(20 << 20, 'y')},
      {"endless-body", "HTTP/1.1 500 X\r\n\r\n" + std::string(64 << 20, 'z')},
      {"random-bytes", random_bytes},
      {"reset-mid-answer", "HTTP/1.1 500 X\r\nContent-Length: 100\r\n\r\nab", true},
      {"tls-garbage", random_bytes, false, true},  // never mended: its lines wait
  };
  const std::vector<std::string> opts = {"loki-timeout=2s", "loki-min-backoff=100ms",
                                         "loki-max-backoff=500ms", "loki-batch-wait=100ms"};
  const double dropped_before =
      FamilyTotal(FetchMetrics().value_or(""), "skald_entries_dropped_total");
  const double errors_before = Metric("skald_pushes_total{status_code=\"error\"}");
  std::vector<std::unique_ptr<testkit::ScriptedHttpPeer>> scripted;
  for (const Peer& p : peers) {
    auto peer = std::make_unique<testkit::ScriptedHttpPeer>();
    testkit::ScriptedHttpPeer::Script script;
    script.answer = p.answer;
    script.reset_after = p.reset;
    script.answer_at_connect = p.https;
    script.times = p.https ? 0 : kHostileAnswers;
    script.mended = "HTTP/1.1 204 No Content\r\n\r\n";
    ASSERT_TRUE(peer->Start(script));
    std::string url = peer->PushUrl();
    if (p.https) url.replace(0, 4, "https");
    auto run =
        Docker(RunArgs(NewContainer(p.name), opts,
                       {"loggen", "--lines", std::to_string(kLines), "--prefix", p.name}, url),
               60s);
    ASSERT_TRUE(run.ok()) << p.name << ": " << run.Describe();
    scripted.push_back(std::move(peer));
  }
  // Answers that say the route is wrong: kept and retried, every line arrives once mended.
  struct Route {
    std::string name;
    int status;
    std::string body;
  };
  const std::vector<Route> routes = {
      {"405", 405, "Method Not Allowed"},
      {"407", 407, "Proxy Authentication Required"},
      {"410", 410, "Gone"},
      {"411", 411, "Length Required"},
      {"415", 415, "Unsupported Media Type"},
      {"400-html", 400, "<html><body><h1>400 Bad Request</h1>nginx</body></html>"},
      {"422-proxy", 422, "Unprocessable Entity"},
  };
  std::vector<std::unique_ptr<testkit::FakeLoki>> fakes;
  for (const Route& r : routes) {
    auto fake = std::make_unique<testkit::FakeLoki>();
    ASSERT_TRUE(fake->Start());
    testkit::FakeLoki::Answer a;
    a.status = r.status;
    a.body = r.body;
    fake->AnswerNext(a, -1);
    auto run = Docker(
        RunArgs(NewContainer("route-" + r.name), opts,
                {"loggen", "--lines", std::to_string(kLines), "--prefix", r.name}, fake->PushUrl()),
        60s);
    ASSERT_TRUE(run.ok()) << r.name << ": " << run.Describe();
    fakes.push_back(std::move(fake));
  }
  std::this_thread::sleep_for(3s);  // the route stays wrong a while
  for (std::size_t i = 0; i < routes.size(); ++i) {
    EXPECT_EQ(fakes[i]->TotalEntries(), 0u) << routes[i].name << ": accepted while refusing?";
    fakes[i]->ClearFailures();
  }
  std::printf("%-18s %10s %10s\n", "endpoint", "requests", "answered");
  for (std::size_t i = 0; i < peers.size(); ++i) {
    // Every hostile answer was read within its bounds and retried; then the mended peer took
    // the lines (204).
    EXPECT_TRUE(WaitUntil([&] { return scripted[i]->Requests() > kHostileAnswers; }, 60s))
        << peers[i].name << ": " << scripted[i]->Requests() << " requests (connections for "
        << "tls-garbage)";
    std::printf("%-18s %10llu %10llu\n", peers[i].name.c_str(),
                static_cast<unsigned long long>(scripted[i]->Requests()),
                static_cast<unsigned long long>(scripted[i]->BytesWritten()));
  }
  for (std::size_t i = 0; i < routes.size(); ++i) {
    EXPECT_TRUE(fakes[i]->WaitForEntries(kLines, 60s))
        << routes[i].name << ": " << fakes[i]->TotalEntries() << " of " << kLines;
    EXPECT_EQ(fakes[i]->TotalEntries(), static_cast<uint64_t>(kLines)) << routes[i].name;
  }
  EXPECT_GE(Metric("skald_pushes_total{status_code=\"error\"}") - errors_before,
            static_cast<double>(peers.size()));
  EXPECT_EQ(FamilyTotal(FetchMetrics().value_or(""), "skald_entries_dropped_total"), dropped_before)
      << "lines were dropped";
  ExpectNeighbourAndPlugin();
  std::printf("plugin pid %d kept: %s; peak RSS %ld kB\n", pid_, PluginPid() == pid_ ? "yes" : "no",
              sampler_->Max());
}

// A journal whose replay crashes the plugin, on the real daemon: the test build's fault switch
// (SKALD_FAULT_ABORT_ON_LINE, set in a copy of the plugin under test) aborts on a poison line,
// live and then at each replay; Docker restarts the plugin each time. After two deaths in a row
// while replaying, the journal is quarantined: the plugin stays enabled, its neighbour's lines
// all arrive, and `docker run` with it works throughout.
TEST_F(BadInput, AJournalWhoseReplayCrashesThePluginIsQuarantined) {
  const std::string bundle = E2eEnv::Get().Bundle();
  ASSERT_TRUE(fs::exists(bundle + "/config.json")) << bundle;
  const auto version = RunCommand({bundle + "/rootfs/usr/bin/skald", "--version"}, 30s);
  if (version.out.find("fault switch") == std::string::npos) {
    GTEST_SKIP() << "this bundle (" << Trim(version.out)
                 << ") is a release build without the fault switch: make test runs this row";
  }
  const std::string poison = UniqueName("poison");
  const std::string copy = UniqueName("skald-e2e-crash");
  const std::string dir = (fs::temp_directory_path() / copy).string();
  ASSERT_TRUE(RunCommand({"cp", "-a", bundle, dir}, 120s).ok());
  // dockerd refuses to create a plugin whose rootfs layer it holds already (the plugin under
  // test was made from the same bundle): a file of its own makes the layer another.
  std::ofstream(dir + "/rootfs/etc/skald-e2e-crash") << copy << "\n";
  struct Cleanup {
    std::string copy, dir;
    ~Cleanup() {
      Docker({"plugin", "disable", "-f", copy}, 60s);
      Docker({"plugin", "rm", "-f", copy}, 60s);
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{copy, dir};
  const int metrics_port = FreeTcpPort();
  {
    std::ifstream in(dir + "/config.json");
    nlohmann::json config = nlohmann::json::parse(in);
    for (auto& env : config["env"]) {
      if (env["name"] == "METRICS_ADDR") env["value"] = "127.0.0.1:" + std::to_string(metrics_port);
    }
    config["env"].push_back({{"name", "SKALD_FAULT_ABORT_ON_LINE"},
                             {"description", "test builds: abort on a line holding this"},
                             {"settable", nlohmann::json::array({"value"})},
                             {"value", poison}});
    std::ofstream(dir + "/config.json") << config.dump(2);
  }
  const auto created = Docker({"plugin", "create", copy, dir}, 120s);
  ASSERT_TRUE(created.ok()) << created.Describe();
  const auto enabled = Docker({"plugin", "enable", copy}, 120s);
  ASSERT_TRUE(enabled.ok()) << enabled.Describe();
  const auto first_pid = PluginPid(copy);
  ASSERT_TRUE(first_pid);
  const auto run_with_copy = [&](const std::string& name, const std::vector<std::string>& cmd,
                                 bool detach) {
    std::vector<std::string> args = {"run", "--name", name, "--network", "none"};
    if (detach) args.push_back("-d");
    for (const std::string& a : {std::string("--log-driver"), copy, std::string("--log-opt"),
                                 "loki-url=" + loki().PushUrl(), std::string("--log-opt"),
                                 std::string("loki-batch-wait=100ms"), image()}) {
      args.push_back(a);
    }
    args.insert(args.end(), cmd.begin(), cmd.end());
    return Docker(args, 60s);
  };
  const std::string neighbour = NewContainer("crash-neighbour");
  ASSERT_TRUE(run_with_copy(neighbour,
                            {"loggen", "--lines", "3000", "--rate", "200", "--prefix", neighbour},
                            true)
                  .ok());
  const std::string bad = NewContainer("crash-bad");
  ASSERT_TRUE(
      run_with_copy(bad, {"sh", "-c", "echo before; echo " + poison + "; echo after"}, false).ok());
  // The switch fires (the process changes), then the quarantine ends the loop.
  EXPECT_TRUE(WaitUntil([&] { return PluginPid(copy) != first_pid; }, 30s))
      << "the fault switch did not fire";
  EXPECT_TRUE(WaitUntil(
      [&] {
        auto text = FetchMetrics(metrics_port);
        return text && PrometheusSeries(*text, "skald_journals_quarantined") == 1;
      },
      90s))
      << "no journal was quarantined";
  EXPECT_EQ(DockerInspect(copy, "{{.Enabled}}").value_or(""), "true") << "Docker disabled it";
  const auto state = PluginStateDir(copy);
  ASSERT_TRUE(state);
  const std::string bad_id = DockerInspect(bad, "{{.Id}}").value_or("?");
  EXPECT_TRUE(fs::is_directory(*state + "/quarantine/" + bad_id));
  // Up and serving: a new container's lines arrive, and so do all the neighbour's.
  const auto survivor = PluginPid(copy);
  const std::string fresh = NewContainer("crash-fresh");
  ASSERT_TRUE(run_with_copy(fresh, {"loggen", "--lines", "100", "--prefix", fresh}, false).ok());
  EXPECT_EQ(loki().WaitForCount(Selector(fresh), 100, 60s), 100u);
  EXPECT_TRUE(WaitContainerExit(neighbour, 60s));
  EXPECT_EQ(loki().WaitForCount(Selector(neighbour), 3000, 60s), 3000u)
      << "the neighbour lost lines";
  EXPECT_EQ(PluginPid(copy), survivor) << "the plugin died again after the quarantine";
  std::printf("crash loop: first pid %d, after the quarantine %d; quarantined %s\n", *first_pid,
              survivor.value_or(-1), bad_id.substr(0, 12).c_str());
}

// The sum of every series of one metric family (any labels) in a /metrics text.
double FamilyTotal(std::string_view text, std::string_view family) {
  double sum = 0;
  for (const auto& line : SplitLines(text)) {
    if (line.size() <= family.size() || line.compare(0, family.size(), family) != 0) continue;
    const char next = line[family.size()];
    if (next != '{' && next != ' ') continue;
    sum += std::strtod(line.substr(line.rfind(' ') + 1).c_str(), nullptr);
  }
  return sum;
}

// Two containers whose metrics stages declare one name with two types. The second used to
// share the first's slot (its counter read from the gauge table: a garbage value, a SEGV under
// ASan); now `docker run` of the second fails naming both declarations, and the first one's
// counter stays right.
TEST_F(BadInput, TwoContainersDeclaringOneMetricWithTwoTypes) {
  StartNeighbour();
  const std::string counter = NewContainer("counter");
  auto args = RunArgs(counter,
                      {"loki-pipeline-stages=- metrics:\n    e2e_clash_hits:\n      type: Counter\n"
                       "      description: lines seen\n      config:\n        match_all: true\n"
                       "        action: inc\n"},
                      {"sh", "-c", "loggen --lines 5 --prefix hit; exec sleep 300"});
  args.insert(args.begin() + 1, "-d");
  auto first = Docker(args, 60s);
  ASSERT_TRUE(first.ok()) << first.Describe();
  ASSERT_EQ(loki().WaitForCount(Selector(counter), 5, 30s), 5u);
  const std::string gauge = NewContainer("gauge");
  auto second =
      Docker(RunArgs(gauge,
                     {"loki-pipeline-stages=- metrics:\n    e2e_clash_hits:\n      type: Gauge\n"
                      "      description: lines seen\n      config:\n        action: inc\n"},
                     {"loggen", "--lines", "5"}),
             60s);
  EXPECT_FALSE(second.ok()) << "the clashing declaration was accepted";
  const std::string said = second.out + second.err;
  EXPECT_NE(said.find("promtail_custom_e2e_clash_hits"), std::string::npos) << said;
  EXPECT_NE(said.find("is already a counter"), std::string::npos) << said;
  EXPECT_NE(said.find("here it would be a gauge"), std::string::npos) << said;
  const auto text = FetchMetrics();
  ASSERT_TRUE(text);
  EXPECT_EQ(FamilyTotal(*text, "promtail_custom_e2e_clash_hits"), 5) << *text;
  Docker({"rm", "-f", counter}, 30s);
  ExpectNeighbourAndPlugin();
}

// 776 bytes of YAML whose aliases nest 8 deep with 10 uses each: 10^8 stages if every use were
// built. `docker run` fails at once naming the bound; the plugin does not notice.
TEST_F(BadInput, AYamlAliasBombInTheStages) {
  StartNeighbour();
  const std::string yaml = skald::testkit::YamlAliasBomb();
  const std::string name = NewContainer();
  auto run =
      Docker(RunArgs(name, {"loki-pipeline-stages=" + yaml}, {"loggen", "--lines", "5"}), 120s);
  EXPECT_FALSE(run.ok()) << "the alias bomb was accepted";
  EXPECT_LT(run.duration, 30s) << "the refusal took that long";
  const std::string said = run.out + run.err;
  EXPECT_NE(said.find("loki-pipeline-stages"), std::string::npos) << said;
  EXPECT_NE(said.find("more than 1000 stages"), std::string::npos) << said;
  ExpectNeighbourAndPlugin();
}

// dockerd kills a plugin that does not exit soon after SIGTERM. Idle keep-alive connections
// and `docker logs -f` answers used to hold the plugin for a minute; it must flush and exit
// within SHUTDOWN_FLUSH_SECONDS (5) + 1 s. Docker then starts it again, and the running
// neighbour's lines all arrive.
TEST_F(BadInput, SigtermWithConnectionsOpen) {
  StartNeighbour();
  const std::string name = NewContainer();
  auto args = RunArgs(name, {}, {"sh", "-c", "loggen --lines 10; exec sleep 300"});
  args.insert(args.begin() + 1, "-d");
  ASSERT_TRUE(Docker(args, 60s).ok());
  std::thread follower([&] { RunCommand({"timeout", "20", "docker", "logs", "-f", name}, 60s); });
  std::this_thread::sleep_for(1s);
  const auto start = Clock::now();
  ASSERT_EQ(kill(pid_, SIGTERM), 0);
  while (kill(pid_, 0) == 0 && Clock::now() - start < 30s) std::this_thread::sleep_for(20ms);
  const auto took = Clock::now() - start;
  EXPECT_LT(took, 6s) << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                      << " ms to exit after SIGTERM";
  follower.join();
  EXPECT_TRUE(WaitUntil([&] { return PluginPid().has_value(); }, 30s)) << "not restarted";
  // Its 10 lines arrive, once (sent before the stop, or replayed from the journal after).
  EXPECT_EQ(loki().WaitForCount(Selector(name), 10, 60s), 10u);
  Docker({"rm", "-f", name}, 30s);
  ExpectNeighbourAndPlugin(/*same_process=*/false);
}

}  // namespace
}  // namespace skald::e2e
