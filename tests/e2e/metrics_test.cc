// The plugin's /metrics (127.0.0.1:9555) accounts for every line: after a run settles,
// read == sent + dropped + pending.
#include <gtest/gtest.h>

#include <initializer_list>
#include <optional>
#include <string>

#include "tests/e2e/e2e_support.h"

namespace skald::e2e {
namespace {

const int kMetricsPort = E2eEnv::Get().MetricsPort();

// Metric family names the plugin may use for each quantity (the first present wins).
// Values are summed over all label sets (e.g. dropped{reason=...}).
const std::initializer_list<const char*> kRead = {
    "skald_lines_read_total", "skald_entries_read_total", "skald_read_lines_total"};
const std::initializer_list<const char*> kSent = {
    "skald_lines_sent_total", "skald_entries_sent_total", "promtail_sent_entries_total"};
const std::initializer_list<const char*> kDropped = {
    "skald_lines_dropped_total", "skald_entries_dropped_total", "promtail_dropped_entries_total"};
const std::initializer_list<const char*> kPending = {"skald_lines_pending", "skald_entries_pending",
                                                     "skald_pending_lines"};

struct Accounting {
  double read = 0, sent = 0, dropped = 0, pending = 0;
  std::string missing;  // names of quantities not found
  std::string text;
};

std::optional<double> Pick(const std::map<std::string, double>& totals,
                           std::initializer_list<const char*> names) {
  for (const char* n : names) {
    auto it = totals.find(n);
    if (it != totals.end()) return it->second;
  }
  return std::nullopt;
}

std::optional<Accounting> Scrape() {
  auto text = FetchMetrics(kMetricsPort);
  if (!text) return std::nullopt;
  auto totals = ParsePrometheusTotals(*text);
  Accounting a;
  a.text = *text;
  auto take = [&](double& into, std::initializer_list<const char*> names, const char* what) {
    if (auto v = Pick(totals, names)) {
      into = *v;
    } else {
      // "dropped" may be absent until something is dropped.
      if (std::string(what) != "dropped") a.missing += std::string(what) + " ";
    }
  };
  take(a.read, kRead, "read");
  take(a.sent, kSent, "sent");
  take(a.dropped, kDropped, "dropped");
  take(a.pending, kPending, "pending");
  return a;
}

std::string Whole(double v) { return std::to_string(static_cast<long long>(v)); }

class Metrics : public SkaldTest {};

TEST_F(Metrics, LinesReadEqualSentPlusDroppedPlusPendingAfterARunSettles) {
  auto before = Scrape();
  ASSERT_TRUE(before) << "nothing answers http://127.0.0.1:" << kMetricsPort << "/metrics";
  // Families may appear only once used (e.g. sent, after a restart): absent counts as 0 here.

  const std::string name = NewContainer();
  auto run = Docker(RunArgs(name, {}, {"loggen", "--lines", "2000", "--json"}), 60s);
  ASSERT_TRUE(run.ok()) << run.Describe();
  ASSERT_EQ(loki().WaitForCount(Selector(name), 2000, 60s), 2000u);

  std::optional<Accounting> after;
  const bool balanced = WaitUntil(
      [&] {
        after = Scrape();
        return after && after->read == after->sent + after->dropped + after->pending;
      },
      30s, 500ms);
  ASSERT_TRUE(after);
  ASSERT_TRUE(after->missing.empty())
      << "metrics not found: " << after->missing << "\n--- /metrics:\n"
      << after->text;
  EXPECT_TRUE(balanced) << "read " << after->read << " != sent " << after->sent << " + dropped "
                        << after->dropped << " + pending " << after->pending << "\n--- /metrics:\n"
                        << after->text;
  RecordProperty("lines_read", Whole(after->read));
  RecordProperty("entries_sent", Whole(after->sent));
  RecordProperty("entries_dropped", Whole(after->dropped));
  RecordProperty("entries_pending", Whole(after->pending));
  EXPECT_GE(after->read - before->read, 2000);
  EXPECT_GE(after->sent - before->sent, 2000);
}

}  // namespace
}  // namespace skald::e2e
