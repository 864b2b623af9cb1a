#include "plugin/journal/journal_retention.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "plugin/ingest/frame_codec.h"
#include "plugin/journal/journal_writer.h"
#include "tests/plugin/plugin_test_support.h"

namespace skald {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string Frames(int n, std::size_t line_bytes) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    out += testkit::StdoutFrame(std::string(line_bytes, static_cast<char>('a' + i % 26)),
                                1700000000000000000);
  }
  return out;
}

// The driver's keep-file question answered from a list: the journals of `ids` are kept;
// `asked` collects whom it was asked about.
JournalRetention::KeepFile KeepOnly(std::vector<std::string> ids,
                                    std::vector<std::string>* asked = nullptr) {
  return [ids = std::move(ids), asked](const JournalRetention::Entry& e) {
    if (asked) asked->push_back(e.first);
    return std::find(ids.begin(), ids.end(), e.first) != ids.end();
  };
}

class JournalRetentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("skald-retention-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A journal of `segments` sealed segments of about `segment_bytes` each, last written `age`
  // ago.
  JournalRetention::Entry Make(const std::string& id, int segments, std::size_t segment_bytes,
                               std::chrono::seconds age) {
    auto journal = Journal::Open(dir_ / id, JournalLimits{-1, 100, false});
    for (int s = 0; s < segments; ++s) {
      auto writer = journal->StartWriter("/run/fifo-" + id);
      writer->Append(Frames(static_cast<int>(segment_bytes / 100), 80));
      writer->Seal();
    }
    SetAge(*journal, age);
    return {id, journal};
  }

  static void SetAge(const Journal& journal, std::chrono::seconds age) {
    const auto when = fs::file_time_type::clock::now() - age;
    for (const auto& f : fs::directory_iterator(journal.dir())) {
      if (f.path().extension() == ".seg") fs::last_write_time(f.path(), when);
    }
  }

  static std::vector<std::string> Sorted(std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  }

  fs::path dir_;
};

TEST_F(JournalRetentionTest, AgeLimitRemovesOldStoppedJournalsUnlessKeepFile) {
  std::vector<std::string> asked;
  JournalRetention retention(1ull << 40, std::chrono::hours(1), KeepOnly({"kept"}, &asked));
  auto old_one = Make("old", 1, 1000, std::chrono::hours(2));
  auto kept = Make("kept", 1, 1000, std::chrono::hours(2));
  auto young = Make("young", 1, 1000, std::chrono::minutes(20));
  auto live_old = Make("live", 1, 1000, std::chrono::hours(5));
  const uint64_t all = old_one.second->TotalBytes() + kept.second->TotalBytes() +
                       young.second->TotalBytes() + live_old.second->TotalBytes();

  auto out = retention.Apply({old_one, kept, young}, {live_old}, /*check_age=*/true,
                             fs::file_time_type::clock::now());
  EXPECT_EQ(out.remove, std::vector<std::string>{"old"});
  // Asked only of the stopped journals past the limit.
  EXPECT_EQ(Sorted(asked), (std::vector<std::string>{"kept", "old"}));
  EXPECT_EQ(out.total_bytes, all - old_one.second->TotalBytes());
  // The young one expires in about 40 minutes (the kept one never does).
  ASSERT_TRUE(out.next_expiry_in);
  EXPECT_GT(*out.next_expiry_in, 39min);
  EXPECT_LE(*out.next_expiry_in, 40min);
  // Apply only decides on removals: the journal is still there.
  EXPECT_TRUE(fs::is_directory(old_one.second->dir()));
}

TEST_F(JournalRetentionTest, WithoutTheAgeCheckOldJournalsStayWithinTheBudget) {
  JournalRetention retention(1ull << 40, std::chrono::hours(1), KeepOnly({"kept"}));
  auto old_one = Make("old", 1, 1000, std::chrono::hours(2));
  auto out = retention.Apply({old_one}, {}, /*check_age=*/false, fs::file_time_type::clock::now());
  EXPECT_TRUE(out.remove.empty());
  EXPECT_FALSE(out.next_expiry_in);
  EXPECT_EQ(out.total_bytes, old_one.second->TotalBytes());
}

TEST_F(JournalRetentionTest, OnlyKeepFileJournalsLeaveNoExpiryToWaitFor) {
  JournalRetention retention(1ull << 40, std::chrono::hours(1), KeepOnly({"kept"}));
  auto kept = Make("kept", 1, 1000, std::chrono::hours(2));
  auto out = retention.Apply({kept}, {}, true, fs::file_time_type::clock::now());
  EXPECT_TRUE(out.remove.empty());
  EXPECT_FALSE(out.next_expiry_in);
}

TEST_F(JournalRetentionTest, BudgetRemovesLeastRecentlyWrittenStoppedJournalsFirst) {
  auto a = Make("a", 1, 2000, std::chrono::minutes(1));
  auto b = Make("b", 1, 2000, std::chrono::minutes(30));  // written longest ago
  auto c = Make("c", 1, 2000, std::chrono::minutes(10));
  const uint64_t each = a.second->TotalBytes();
  ASSERT_GT(each, 0u);
  // Room for two of the three.
  JournalRetention retention(2 * each + each / 2, std::chrono::hours(24), KeepOnly({"kept"}));
  auto out = retention.Apply({a, b, c}, {}, true, fs::file_time_type::clock::now());
  EXPECT_EQ(out.remove, std::vector<std::string>{"b"});
  EXPECT_EQ(out.total_bytes, 2 * each);

  // Room for one: b, then c.
  JournalRetention tighter(each + each / 2, std::chrono::hours(24), KeepOnly({"kept"}));
  out = tighter.Apply({a, b, c}, {}, false, fs::file_time_type::clock::now());
  EXPECT_EQ(out.remove, (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(out.total_bytes, each);
}

TEST_F(JournalRetentionTest, BudgetEvictsTheOldestSegmentsOfTheLargestLiveJournal) {
  auto small = Make("small", 2, 2000, std::chrono::minutes(1));
  auto large = Make("large", 6, 2000, std::chrono::minutes(1));
  const uint64_t small_bytes = small.second->TotalBytes();
  const uint64_t large_bytes = large.second->TotalBytes();
  const uint64_t segment = large_bytes / 6;
  const auto large_first = large.second->Segments().front();
  // Three segments too many.
  JournalRetention retention(small_bytes + large_bytes - 3 * segment, std::chrono::hours(24),
                             KeepOnly({"kept"}));
  auto out = retention.Apply({}, {small, large}, true, fs::file_time_type::clock::now());
  EXPECT_TRUE(out.remove.empty());
  EXPECT_EQ(small.second->TotalBytes(), small_bytes);  // the largest loses segments first
  EXPECT_EQ(large.second->TotalBytes(), large_bytes - 3 * segment);
  EXPECT_EQ(large.second->Segments().front(), large_first + 3);  // the oldest went
  EXPECT_EQ(out.total_bytes, small_bytes + large_bytes - 3 * segment);
}

// What Loki has acknowledged goes before what it has not: a smaller journal's delivered
// segment is evicted before the larger journal's undelivered ones.
TEST_F(JournalRetentionTest, DeliveredBytesGoBeforeUndeliveredOnes) {
  auto delivered = Make("delivered", 2, 2000, std::chrono::minutes(1));
  auto undelivered = Make("undelivered", 6, 2000, std::chrono::minutes(1));
  delivered.second->SetAcknowledged(delivered.second->End());
  const uint64_t delivered_bytes = delivered.second->TotalBytes();
  const uint64_t undelivered_bytes = undelivered.second->TotalBytes();
  JournalRetention retention(delivered_bytes + undelivered_bytes - delivered_bytes / 2,
                             std::chrono::hours(24), KeepOnly({"kept"}));
  auto out = retention.Apply({}, {delivered, undelivered}, false, fs::file_time_type::clock::now());
  EXPECT_FALSE(out.over_budget);
  EXPECT_EQ(undelivered.second->TotalBytes(), undelivered_bytes);
  EXPECT_EQ(delivered.second->TotalBytes(), delivered_bytes / 2);
}

TEST_F(JournalRetentionTest, StoppedJournalsGoBeforeLiveOnesAreEvicted) {
  auto stopped = Make("stopped", 1, 2000, std::chrono::minutes(1));
  auto live = Make("live", 3, 2000, std::chrono::minutes(1));
  const uint64_t live_bytes = live.second->TotalBytes();
  JournalRetention retention(live_bytes, std::chrono::hours(24), KeepOnly({"kept"}));
  auto out = retention.Apply({stopped}, {live}, false, fs::file_time_type::clock::now());
  EXPECT_EQ(out.remove, std::vector<std::string>{"stopped"});
  EXPECT_EQ(live.second->TotalBytes(), live_bytes);
  EXPECT_EQ(out.total_bytes, live_bytes);
}

// A segment a writer appends to is never evicted; but max-size -1 (no rotation by size) is no
// exemption from the plugin-wide budget: a live segment over it is sealed at the writer's next
// write, and the next round evicts it (loki-on-full=drop: undelivered, counted by the reader).
TEST_F(JournalRetentionTest, ALiveSegmentOverTheBudgetIsSealedThenEvicted) {
  auto journal = Journal::Open(dir_ / "writing", JournalLimits{-1, 100, false});
  auto writer = journal->StartWriter("/run/fifo");
  writer->Append(Frames(200, 80));
  const uint64_t written = journal->TotalBytes();
  JournalRetention retention(4096, std::chrono::hours(24), KeepOnly({"kept"}));
  auto out = retention.Apply({}, {{"writing", journal}}, false, fs::file_time_type::clock::now());
  EXPECT_TRUE(out.over_budget);
  EXPECT_EQ(journal->TotalBytes(), written);  // live: not evicted, but to be sealed
  writer->Append(Frames(1, 80));
  EXPECT_EQ(journal->Segments().size(), 2u) << "the next write did not seal the live segment";
  out = retention.Apply({}, {{"writing", journal}}, false, fs::file_time_type::clock::now());
  EXPECT_FALSE(out.over_budget);
  EXPECT_LT(journal->TotalBytes(), 4096u);
  EXPECT_EQ(out.total_bytes, journal->TotalBytes());
  writer->Seal();
}

// loki-on-full=block: when the budget is spent and nothing of the journal can go (Loki has not
// acknowledged it), its writer takes no bytes (the container waits); once Loki has them, the
// next round frees the budget and the bytes move again.
TEST_F(JournalRetentionTest, ABlockingJournalTakesNoBytesWhileTheBudgetIsSpent) {
  auto journal = Journal::Open(dir_ / "blocking", JournalLimits{-1, 100, true});
  auto writer = journal->StartWriter("/run/fifo");
  writer->Append(Frames(200, 80));
  JournalRetention retention(4096, std::chrono::hours(24), KeepOnly({"kept"}));
  auto out = retention.Apply({}, {{"blocking", journal}}, false, fs::file_time_type::clock::now());
  EXPECT_TRUE(out.over_budget);
  EXPECT_TRUE(journal->OverBudget());
  int pipe_fds[2];
  ASSERT_EQ(pipe2(pipe_fds, O_NONBLOCK | O_CLOEXEC), 0);
  const std::string frame = Frames(1, 80);
  ASSERT_EQ(write(pipe_fds[1], frame.data(), frame.size()), static_cast<ssize_t>(frame.size()));
  EXPECT_EQ(writer->SpliceFrom(pipe_fds[0], 1 << 16).status, Journal::Writer::Status::kFull);
  EXPECT_EQ(journal->Segments().size(), 2u);  // the live part was sealed meanwhile
  out = retention.Apply({}, {{"blocking", journal}}, false, fs::file_time_type::clock::now());
  EXPECT_TRUE(out.over_budget) << "evicted what Loki had not acknowledged";
  journal->SetAcknowledged(journal->End());
  out = retention.Apply({}, {{"blocking", journal}}, false, fs::file_time_type::clock::now());
  EXPECT_FALSE(out.over_budget);
  EXPECT_FALSE(journal->OverBudget());
  EXPECT_EQ(writer->SpliceFrom(pipe_fds[0], 1 << 16).status, Journal::Writer::Status::kMoved);
  writer->Seal();
  close(pipe_fds[0]);
  close(pipe_fds[1]);
}

TEST(JournalRetentionExpiry, UntilExpiry) {
  JournalRetention retention(0, std::chrono::hours(1), KeepOnly({"kept"}));
  const auto now = fs::file_time_type::clock::now();
  EXPECT_EQ(retention.UntilExpiry(now - 2h, now), Clock::duration::zero());
  EXPECT_EQ(retention.UntilExpiry(fs::file_time_type::min(), now), Clock::duration::zero());
  EXPECT_EQ(retention.UntilExpiry(now - 15min, now),
            std::chrono::duration_cast<Clock::duration>(45min));
}

}  // namespace
}  // namespace skald
