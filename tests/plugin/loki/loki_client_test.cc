#include "plugin/loki/loki_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <thread>

#include "plugin/config/container_info.h"
#include "plugin/config/log_options.h"
#include "plugin/driver/driver.h"
#include "tests/plugin/log_capture.h"
#include "tests/tools/fake_loki.h"
#include "tests/tools/fake_socks5_proxy.h"
#include "tests/tools/prometheus_text_parser.h"
#include "tests/tools/scripted_http_peer.h"

namespace skald {
namespace {

using skald::testkit::FakeLoki;
using skald::testkit::ScriptedHttpPeer;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

// Liveness bounds: generous, so a slow CI machine does not fail them.
constexpr milliseconds kLong{30'000};

LokiClientConfig FastConfig(const FakeLoki& loki) {
  LokiClientConfig c;
  c.url = loki.PushUrl();
  c.timeout = milliseconds(5'000);
  c.batch_wait = milliseconds(20);
  c.batch_size_bytes = 64 * 1024;
  c.min_backoff = milliseconds(1);
  c.max_backoff = milliseconds(10);
  c.max_retries = 5;
  c.lanes = 2;
  return c;
}

LokiEntry Entry(std::string labels, int64_t ts, std::string line, std::string tenant = "") {
  LokiEntry e;
  e.labels = std::move(labels);
  e.timestamp_ns = ts;
  e.line = std::move(line);
  e.tenant = std::move(tenant);
  return e;
}

std::string Labels(int stream) { return "{job=\"s" + std::to_string(stream) + "\"}"; }

// A line that snappy cannot shrink much.
std::string RandomLine(std::mt19937& rng, std::size_t n) {
  static constexpr char kChars[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/";
  std::string s(n, ' ');
  for (char& c : s) c = kChars[rng() % 64];
  return s;
}

bool WaitForTrue(const std::function<bool()>& pred) {
  for (const auto until = steady_clock::now() + kLong; steady_clock::now() < until;) {
    if (pred()) return true;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return pred();
}

uint64_t Dropped(MetricsRegistry& m, const std::string& reason) {
  return m.GetCounter("skald_entries_dropped_total", "", {{"reason", reason}}).Value();
}

uint64_t Pushes(MetricsRegistry& m, const std::string& status) {
  return m.GetCounter("skald_pushes_total", "", {{"status_code", status}}).Value();
}

using skald::testkit::LogCapture;

class LokiClientTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(loki_.Start()); }

  // Every line of every stream, checking that each stream's lines arrive as "<n>" counting up.
  void ExpectInOrder(const std::string& labels, int count, const std::string& tenant = "") {
    const auto entries = loki_.EntriesOf(labels, tenant);
    ASSERT_EQ(entries.size(), static_cast<std::size_t>(count)) << labels;
    for (int i = 0; i < count; ++i) {
      ASSERT_EQ(entries[i].line, std::to_string(i)) << labels << " position " << i;
    }
  }

  FakeLoki loki_;
  MetricsRegistry metrics_;
};

TEST_F(LokiClientTest, DeliversEveryEntryInOrderPerStream) {
  LokiClientConfig c = FastConfig(loki_);
  c.lanes = 4;
  c.batch_size_bytes = 2'000;  // many small batches in flight at once
  LokiClient client(c, metrics_);
  constexpr int kStreams = 8, kPerStream = 1'000;
  for (int i = 0; i < kPerStream; ++i) {
    for (int s = 0; s < kStreams; ++s) client.Push(Entry(Labels(s), 1'000 + i, std::to_string(i)));
  }
  ASSERT_TRUE(client.Flush(kLong));
  EXPECT_EQ(client.Pending(), 0u);
  EXPECT_EQ(loki_.TotalEntries(), uint64_t{kStreams * kPerStream});
  EXPECT_EQ(loki_.Duplicates(), 0u);
  for (int s = 0; s < kStreams; ++s) ExpectInOrder(Labels(s), kPerStream);
  EXPECT_EQ(metrics_.CounterTotal("skald_entries_sent_total"), uint64_t{kStreams * kPerStream});
  EXPECT_EQ(metrics_.CounterTotal("skald_entries_dropped_total"), 0u);
  EXPECT_EQ(metrics_.GetGauge("skald_client_pending_entries", "").Value(), 0);
  EXPECT_GT(metrics_.CounterTotal("skald_encoded_bytes_total"), 0u);
  EXPECT_GE(Pushes(metrics_, "204"), 1u);
}

TEST_F(LokiClientTest, LabelsTimestampsAndStructuredMetadataArrive) {
  LokiClient client(FastConfig(loki_), metrics_);
  LokiEntry e = Entry(R"({app="web", env="prod \"eu\""})", 1'700'000'000'123'456'789, "hello");
  e.structured_metadata = {{"trace_id", "0af7651916cd43dd"}, {"user", "ü"}};
  client.Push(e);
  ASSERT_TRUE(client.Flush(kLong));
  const auto entries = loki_.EntriesOf(R"({app="web", env="prod \"eu\""})");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].timestamp_ns, 1'700'000'000'123'456'789);
  EXPECT_EQ(entries[0].line, "hello");
  EXPECT_EQ(entries[0].structured_metadata, e.structured_metadata);
  EXPECT_EQ(metrics_.CounterTotal("skald_sent_bytes_total"),
            uint64_t{5 + 8 + 16 + 4 + 2});  // line + metadata names and values
}

TEST_F(LokiClientTest, TenantsAreBatchedSeparatelyAndSentAsOrgIdHeader) {
  LokiClientConfig c = FastConfig(loki_);
  c.tenant_id = "team-a";
  LokiClient client(c, metrics_);
  for (int i = 0; i < 50; ++i) {
    client.Push(Entry(Labels(0), i, std::to_string(i)));            // config tenant
    client.Push(Entry(Labels(0), i, std::to_string(i), "team-b"));  // per-entry override
  }
  ASSERT_TRUE(client.Flush(kLong));
  ExpectInOrder(Labels(0), 50, "team-a");
  ExpectInOrder(Labels(0), 50, "team-b");
  EXPECT_THAT(loki_.Tenants(), ::testing::Each(::testing::AnyOf("team-a", "team-b")));
}

// A tenant that a line chose (tenant stage) goes into X-Scope-OrgID: one Loki would refuse, or
// one that would smuggle a header in, drops that entry alone, counted.
TEST_F(LokiClientTest, InvalidTenantFromALineDropsOnlyThatEntry) {
  LogCapture logs;
  LokiClientConfig c = FastConfig(loki_);
  c.tenant_id = "team-a";
  LokiClient client(c, metrics_);
  const std::vector<std::string> invalid = {"acme\r\nX-Injected: yes",
                                            "team-a|team-b",
                                            std::string(151, 'a'),
                                            ".",
                                            "..",
                                            "team a",
                                            "caf\xc3\xa9",
                                            "a:b",
                                            "a/b"};
  int pushed = 0;
  for (const std::string& tenant : invalid) {
    client.Push(Entry(Labels(0), pushed, std::to_string(pushed), "team-b"));
    ++pushed;
    client.Push(Entry(Labels(0), 1'000, "never sent", tenant));
  }
  client.Push(Entry(Labels(0), pushed, std::to_string(pushed), std::string(150, 'z')));
  client.Push(Entry(Labels(1), 0, "0", "AZaz09!-_.*'()"));
  client.Push(Entry(Labels(1), 1, "1"));  // the config's tenant
  ASSERT_TRUE(client.Flush(kLong));
  ExpectInOrder(Labels(0), pushed, "team-b");
  EXPECT_EQ(loki_.EntriesOf(Labels(0), std::string(150, 'z')).size(), 1u);
  EXPECT_EQ(loki_.EntriesOf(Labels(1), "AZaz09!-_.*'()").size(), 1u);
  EXPECT_EQ(loki_.EntriesOf(Labels(1), "team-a").size(), 1u);
  EXPECT_EQ(loki_.TotalEntries(), static_cast<uint64_t>(pushed) + 3);
  EXPECT_THAT(loki_.Tenants(), ::testing::Each(::testing::AnyOf(
                                   "team-a", "team-b", "AZaz09!-_.*'()", std::string(150, 'z'))));
  EXPECT_EQ(Dropped(metrics_, "invalid_tenant"), invalid.size());
  EXPECT_EQ(
      metrics_.GetCounter("skald_dropped_bytes_total", "", {{"reason", "invalid_tenant"}}).Value(),
      invalid.size() * std::string("never sent").size());
  EXPECT_EQ(client.Pending(), 0u);
  const std::string text = logs.Text();
  EXPECT_THAT(text, ::testing::HasSubstr("not a valid Loki tenant ID"));
  EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("\r\n")));  // shown escaped
}

TEST_F(LokiClientTest, NoTenantMeansNoOrgIdHeader) {
  LokiClient client(FastConfig(loki_), metrics_);
  client.Push(Entry(Labels(0), 1, "0"));
  ASSERT_TRUE(client.Flush(kLong));
  EXPECT_THAT(loki_.Tenants(), ::testing::ElementsAre(""));
}

TEST_F(LokiClientTest, SendsAFullBatchWithoutWaiting) {
  LokiClientConfig c = FastConfig(loki_);
  c.lanes = 1;
  c.batch_wait = milliseconds(3'600'000);  // only size can trigger a send
  c.batch_size_bytes = 1'000;
  LokiClient client(c, metrics_);
  for (int i = 0; i < 50; ++i) client.Push(Entry(Labels(0), i, std::string(100, 'a' + i % 26)));
  ASSERT_TRUE(loki_.WaitForEntries(50, kLong));
  EXPECT_EQ(loki_.Requests(), 5u);  // 10 entries of 100 bytes per batch
  client.Stop(milliseconds(0));
}

TEST_F(LokiClientTest, BatchNeverExceedsBatchSize) {
  LokiClientConfig c = FastConfig(loki_);
  c.lanes = 1;
  c.batch_size_bytes = 1'050;
  LokiClient client(c, metrics_);
  for (int i = 0; i < 100; ++i) client.Push(Entry(Labels(0), i, std::string(100, 'x')));
  ASSERT_TRUE(client.Flush(kLong));
  EXPECT_EQ(loki_.TotalEntries() + loki_.Duplicates(), 100u);
  EXPECT_GE(loki_.Requests(), 10u);  // at most 10 lines of 100 bytes fit 1050 bytes
}

TEST_F(LokiClientTest, SendsAPartialBatchAfterBatchWait) {
  LokiClientConfig c = FastConfig(loki_);
  c.batch_wait = milliseconds(50);
  c.batch_size_bytes = 1024 * 1024;
  LokiClient client(c, metrics_);
  for (int i = 0; i < 3; ++i) client.Push(Entry(Labels(0), i, std::to_string(i)));
  // No Flush: only the wait can trigger the send.
  ASSERT_TRUE(loki_.WaitForEntries(3, kLong));
  ExpectInOrder(Labels(0), 3);
}

TEST_F(LokiClientTest, RetriesServerErrorsThenDeliversWithoutDuplicates) {
  loki_.FailNext(500, 3);
  LokiClientConfig c = FastConfig(loki_);
  c.lanes = 1;
  LokiClient client(c, metrics_);
  for (int i = 0; i < 20; ++i) client.Push(Entry(Labels(0), i, std::to_string(i)));
  ASSERT_TRUE(client.Flush(kLong));
  ExpectInOrder(Labels(0), 20);
  EXPECT_EQ(loki_.Duplicates(), 0u);
  EXPECT_EQ(Pushes(metrics_, "500"), 3u);
  EXPECT_EQ(metrics_.CounterTotal("skald_batch_retries_total"), 3u);
  EXPECT_EQ(metrics_.CounterTotal("skald_entries_dropped_total"), 0u);
}

TEST_F(LokiClientTest, RetriesRateLimiting) {
  loki_.FailNext(429, 2, "Ingestion rate limit exceeded");
  LokiClient client(FastConfig(loki_), metrics_);
  for (int i = 0; i < 10; ++i) client.Push(Entry(Labels(0), i, std::to_string(i)));
  ASSERT_TRUE(client.Flush(kLong));
  ExpectInOrder(Labels(0), 10);
  EXPECT_EQ(Pushes(metrics_, "429"), 2u);
  EXPECT_EQ(metrics_.CounterTotal("skald_entries_dropped_total"), 0u);
}

TEST_F(LokiClientTest, RetriesServiceUnavailable) {
  loki_.FailNext(503, 2);
  LokiClient client(FastConfig(loki_), metrics_);
  client.Push(Entry(Labels(0), 1, "0"));
  ASSERT_TRUE(client.Flush(kLong));
  ExpectInOrder(Labels(0), 1);
  EXPECT_EQ(Pushes(metrics_, "503"), 2u);
}

TEST_F(LokiClientTest, BadRequestIsNotRetriedAndCountedWithReason) {
  LogCapture logs;
  loki_.FailNext(400, 1, "error at least one label pair is required per stream");
  LokiClientConfig c = FastConfig(loki_);
  c.lanes = 1;
  LokiClient client(c, metrics_);
  for (int i = 0; i < 5; ++i) client.Push(Entry(Labels(0), i, std::to_string(i)));
  ASSERT_TRUE(client.Flush(kLong));
  EXPECT_EQ(loki_.Requests(), 1u);
  EXPECT_EQ(Dropped(metrics_, "bad_request"), 5u);
  EXPECT_EQ(
      metrics_.GetCounter("skald_dropped_bytes_total", "", {{"reason", "bad_request"}}).Value(),
      5u);
  EXPECT_EQ(metrics_.CounterTotal("skald_batch_retries_total"), 0u);
  EXPECT_EQ(client.Pending(), 0u);
  EXPECT_THAT(logs.Text(), ::testing::HasSubstr("at least one label pair is required"));
}

TEST_F(LokiClientTest, BadRequestReasonsAreClassifiedFromLokisText) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Max entry size '256000' bytes exceeded for stream '{a=\"b\"}' while adding an entry with "
       "length '300000' bytes",
       "line_too_long"},
      {"entry for stream '{a=\"b\"}' has timestamp too old: 2020-01-01T00:00:00Z, oldest "
       "acceptable timestamp is: 2024-01-01T00:00:00Z",
       "too_old"},
      {"entry for stream '{a=\"b\"}' has timestamp too new: 2030-01-01T00:00:00Z",
       "too_far_in_future"},
      {"Maximum active stream limit exceeded, reduce the number of active streams", "stream_limit"},
  };
  LokiClientConfig c = FastConfig(loki_);
  c.lanes = 1;
  LokiClient client(c, metrics_);
  for (const auto& [text, reason] : cases) {
    loki_.FailNext(400, 1, text);
    client.Push(Entry(Labels(0), 1, "x"));
    ASSERT_TRUE(client.Flush(kLong));
    EXPECT_EQ(Dropped(metrics_, reason), 1u) << reason;
  }
  EXPECT_EQ(Dropped(metrics_, "bad_request"), 0u);
}

// Loki refuses part of a batch (entries over its line limit) and stores the rest: only the
// refused count as dropped, with Loki's reason; the rest count as delivered.
TEST_F(LokiClientTest, WhenLokiRefusesPartOfABatchTheRestCountsAsDelivered) {
  loki_.SetMaxLineBytes(100);
  LokiClientConfig c = FastConfig(loki_);
  c.lanes = 1;
  c.batch_wait = milliseconds(200);  // one batch
  LokiClient client(c, metrics_);
  for (int i = 0; i < 10; ++i) {
    client.Push(Entry(Labels(0), i, i % 3 == 0 ? std::string(300, 'x') : std::to_string(i)));
  }
  ASSERT_TRUE(client.Flush(kLong));
  EXPECT_EQ(loki_.Requests(), 1u);
  EXPECT_EQ(loki_.TotalEntries(), 6u);
  EXPECT_EQ(metrics_.CounterTotal("skald_entries_sent_total"), 6u);
  EXPECT_EQ(Dropped(metrics_, "line_too_long"), 4u);  // 0, 3, 6, 9
  EXPECT_EQ(client.Pending(), 0u);
}

TEST_F(LokiClientTest, RefusedStructuredMetadataIsExplainedInPlainWords) {
  LogCapture logs;
  loki_.SetRejectStructuredMetadata(true);
  LokiClient client(FastConfig(loki_), metrics_);
  LokiEntry e = Entry(Labels(0), 1, "x");
  e.structured_metadata = {{"trace_id", "1"}};
  client.Push(e);
  ASSERT_TRUE(client.Flush(kLong));
  EXPECT_EQ(Dropped(metrics_, "structured_metadata_not_allowed"), 1u);
  EXPECT_THAT(logs.Text(),
              ::testing::HasSubstr("Loki refused structured metadata: it needs schema "
                                   "v13+ and limits_config.allow_structured_metadata"));
}

TEST_F(LokiClientTest, UnprocessableIsNotRetried) {
  loki_.FailNext(422, 1, "push request contains no streams");
  LokiClient client(FastConfig(loki_), metrics_);
  client.Push(Entry(Labels(0), 1, "x"));
  ASSERT_TRUE(client.Flush(kLong));
  EXPECT_EQ(loki_.Requests(), 1u);
  EXPECT_EQ(Dropped(metrics_, "bad_request"), 1u);
}

// 3xx, 401, 403 and 404 are configuration errors (a redirect, a wrong token, a wrong path) that
// an operator fixes: with the journal the lines are kept and retried past loki-retries, each
// failure counted by status and explained in the log.
TEST_F(LokiClientTest, ConfigurationErrorsKeepJournaledLinesAndAreExplained) {
  struct Case {
    int status;
    std::string location;
    std::string hint;
  };
  for (const Case& k : std::vector<Case>{
           {307, "http://ceo:S3cr3t@elsewhere:3100/loki/api/v1/push", "to http://elsewhere:3100"},
           {301, "https://loki.example/loki/api/v1/push", "redirects are not followed"},
           {401, "", "check the credentials in loki-url and loki-tenant-id"},
           {403, "", "check the credentials in loki-url and loki-tenant-id"},
           {404, "", "/loki/api/v1/push"},
       }) {
    LogCapture logs;
    MetricsRegistry metrics;
    loki_.Reset();
    FakeLoki::Answer answer;
    answer.status = k.status;
    if (!k.location.empty()) answer.headers = {{"Location", k.location}};
    loki_.AnswerNext(answer, 4);
    LokiClientConfig c = FastConfig(loki_);
    c.lanes = 1;
    c.durable = true;
    c.max_retries = 1;  // no-file only: the journal keeps the lines
    LokiClient client(c, metrics);
    for (int i = 0; i < 3; ++i) client.Push(Entry(Labels(0), i, std::to_string(i)));
    ASSERT_TRUE(client.Flush(kLong)) << k.status;
    ExpectInOrder(Labels(0), 3);
    EXPECT_EQ(Pushes(metrics, std::to_string(k.status)), 4u) << k.status;
    EXPECT_EQ(metrics.CounterTotal("skald_batch_retries_total"), 4u) << k.status;
    EXPECT_EQ(metrics.CounterTotal("skald_entries_dropped_total"), 0u) << k.status;
    const std::string text = logs.Text();
    EXPECT_THAT(text, ::testing::HasSubstr("answered " + std::to_string(k.status))) << text;
    EXPECT_THAT(text, ::testing::HasSubstr(k.hint)) << text;
    EXPECT_THAT(text, ::testing::HasSubstr("kept")) << text;
    EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("S3cr3t")));
  }
}

// Without the journal (no-file) nothing keeps the lines: configuration errors are retried like
// 5xx, up to loki-retries, then dropped under a reason that names the cause.
TEST_F(LokiClientTest, ConfigurationErrorsWithoutTheJournalAreBoundedByRetries) {
  for (const auto& [status, reason] : std::vector<std::pair<int, std::string>>{
           {401, "unauthorized"}, {403, "unauthorized"}, {404, "wrong_url"}, {302, "wrong_url"}}) {
    MetricsRegistry metrics;
    loki_.Reset();
    loki_.FailAll(status);
    LokiClientConfig c = FastConfig(loki_);
    c.max_retries = 2;
    LokiClient client(c, metrics);
    client.Push(Entry(Labels(0), 1, "x"));
    ASSERT_TRUE(client.Flush(kLong));
    EXPECT_EQ(loki_.Requests(), 3u) << status;  // the first attempt and two retries
    EXPECT_EQ(Dropped(metrics, reason), 1u) << status;
    EXPECT_EQ(client.Pending(), 0u);
  }
}

// Loki's answer is read up to a cap: a peer answering a huge body cannot fill the plugin's
// memory, and its status still counts.
TEST_F(LokiClientTest, AHugeAnswerIsReadOnlyUpToACap) {
  LogCapture logs;
  FakeLoki::Answer huge;
  huge.status = 500;
  huge.body = "overloaded ";
  huge.filler_bytes = 128 << 20;
  loki_.AnswerNext(huge, 1);
  LokiClientConfig c = FastConfig(loki_);
  c.lanes = 1;
  LokiClient client(c, metrics_);
  client.Push(Entry(Labels(0), 1, "0"));
  ASSERT_TRUE(client.Flush(kLong));
  ExpectInOrder(Labels(0), 1);
  EXPECT_EQ(Pushes(metrics_, "500"), 1u);
  EXPECT_LT(loki_.AnswerBytesWritten(), uint64_t{32 << 20});  // socket buffers hold a few MiB
  EXPECT_THAT(logs.Text(), ::testing::HasSubstr("overloaded xxx"));
}

// loki-timeout bounds a whole request, not each read: an answer dripped a byte every 10 ms is
// cut at the deadline and the batch retried.
TEST_F(LokiClientTest, ADrippedAnswerIsCutAtTheRequestDeadline) {
  FakeLoki::Answer drip;
  drip.status = 500;
  drip.filler_bytes = 400;  // 4 s in all
  drip.drip = milliseconds(10);
  loki_.AnswerNext(drip, 1);
  LokiClientConfig c = FastConfig(loki_);
  c.lanes = 1;
  c.timeout = milliseconds(300);
  LokiClient client(c, metrics_);
  const auto start = steady_clock::now();
  client.Push(Entry(Labels(0), 1, "0"));
  ASSERT_TRUE(client.Flush(kLong));
  EXPECT_LT(steady_clock::now() - start, milliseconds(2'500));
  ExpectInOrder(Labels(0), 1);
  EXPECT_EQ(Pushes(metrics_, "error"), 1u);
  EXPECT_EQ(Pushes(metrics_, "500"), 0u);
  EXPECT_EQ(Pushes(metrics_, "204"), 1u);
}

TEST_F(LokiClientTest, DrippedHeadersAreCutAtTheRequestDeadline) {
  ScriptedHttpPeer peer;
  ASSERT_TRUE(
      peer.Start({"HTTP/1.1 204 No Content\r\nX-Slow: " + std::string(300, 'a') + "\r\n\r\n",
                  milliseconds(10), true}));
  LokiClientConfig c = FastConfig(loki_);
  c.url = peer.PushUrl();
  c.lanes = 1;
  c.timeout = milliseconds(300);
  c.max_retries = 1;
  LokiClient client(c, metrics_);
  const auto start = steady_clock::now();
  client.Push(Entry(Labels(0), 1, "0"));
  ASSERT_TRUE(client.Flush(kLong));
  EXPECT_LT(steady_clock::now() - start, milliseconds(2'500));  // two attempts of 300 ms
  EXPECT_EQ(peer.Requests(), 2u);
  EXPECT_EQ(Pushes(metrics_, "error"), 2u);
  EXPECT_EQ(Dropped(metrics_, "retries_exhausted"), 1u);
}

// A request cut at its deadline must not cut the next one: fast requests right after a cut
// all succeed.
TEST_F(LokiClientTest, OnlyTheSlowRequestIsCut) {
  FakeLoki::Answer drip;
  drip.drip = milliseconds(50);
  drip.filler_bytes = 100;
  loki_.AnswerNext(drip, 1);
  LokiClientConfig c = FastConfig(loki_);
  c.lanes = 1;
  c.batch_size_bytes = 1;  // one request per entry
  c.timeout = milliseconds(200);
  c.min_backoff = milliseconds(0);
  c.max_backoff = milliseconds(1);
  LokiClient client(c, metrics_);
  for (int i = 0; i < 200; ++i) client.Push(Entry(Labels(0), i, std::to_string(i)));
  ASSERT_TRUE(client.Flush(kLong));
  ExpectInOrder(Labels(0), 200);
  EXPECT_EQ(Pushes(metrics_, "error"), 1u);
  EXPECT_EQ(Pushes(metrics_, "204"), 200u);
}

TEST_F(LokiClientTest, GarbageInPlaceOfAnAnswerIsATransportError) {
  ScriptedHttpPeer peer;
  ASSERT_TRUE(peer.Start({"SSH-2.0-OpenSSH_9.6\r\n\r\n", {}, true}));
  LokiClientConfig c = FastConfig(loki_);
  c.url = peer.PushUrl();
  c.max_retries = 2;
  LokiClient client(c, metrics_);
  client.Push(Entry(Labels(0), 1, "0"));
  ASSERT_TRUE(client.Flush(kLong));
  EXPECT_EQ(peer.Requests(), 3u);
  EXPECT_EQ(Pushes(metrics_, "error"), 3u);
  EXPECT_EQ(Dropped(metrics_, "retries_exhausted"), 1u);
}

TEST_F(LokiClientTest, TooLargeBatchIsSplitInHalves) {
  std::mt19937 rng(1);
  LokiClientConfig c = FastConfig(loki_);
  c.lanes = 1;
  c.batch_size_bytes = 1024 * 1024;
  LokiClient client(c, metrics_);
  loki_.SetMaxBodyBytes(4'000);
  for (int i = 0; i < 64; ++i)
    client.Push(Entry(Labels(0), i, std::to_string(i) + " " + RandomLine(rng, 200)));
  ASSERT_TRUE(client.Flush(kLong));
  const auto entries = loki_.EntriesOf(Labels(0));
  ASSERT_EQ(entries.size(), 64u);
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(entries[i].line.substr(0, entries[i].line.find(' ')), std::to_string(i));
  EXPECT_GT(Pushes(metrics_, "413"), 0u);
  EXPECT_EQ(metrics_.CounterTotal("skald_entries_dropped_total"), 0u);
  for (std::size_t size : loki_.BodySizes()) EXPECT_GT(size, 0u);
}

TEST_F(LokiClientTest, SingleEntryTooLargeIsDropped) {
  std::mt19937 rng(2);
  LokiClient client(FastConfig(loki_), metrics_);
  loki_.SetMaxBodyBytes(2'000);
  client.Push(Entry(Labels(0), 1, RandomLine(rng, 10'000)));
  client.Push(Entry(Labels(1), 2, "small"));
  ASSERT_TRUE(client.Flush(kLong));
  EXPECT_EQ(Dropped(metrics_, "too_large"), 1u);
  EXPECT_EQ(loki_.EntriesOf(Labels(1)).size(), 1u);
}

TEST_F(LokiClientTest, ExhaustedRetriesDropTheBatch) {
  loki_.FailAll(503);
  LokiClientConfig c = FastConfig(loki_);
  c.lanes = 1;
  c.max_retries = 2;
  LokiClient client(c, metrics_);
  for (int i = 0; i < 5; ++i) client.Push(Entry(Labels(0), i, std::to_string(i)));
  ASSERT_TRUE(client.Flush(kLong));
  EXPECT_EQ(loki_.Requests(), 3u);  // the first attempt and two retries
  EXPECT_EQ(Dropped(metrics_, "retries_exhausted"), 5u);
  EXPECT_EQ(metrics_.CounterTotal("skald_batch_retries_total"), 2u);
  EXPECT_EQ(client.Pending(), 0u);
}

TEST_F(LokiClientTest, TransportErrorsAreRetriedAndCountedAsError) {
  FakeLoki closed;
  ASSERT_TRUE(closed.Start());
  const std::string url = closed.PushUrl();
  closed.Stop();  // nothing listens there any more
  LokiClientConfig c = FastConfig(loki_);
  c.url = url;
  c.max_retries = 2;
  LokiClient client(c, metrics_);
  client.Push(Entry(Labels(0), 1, "x"));
  ASSERT_TRUE(client.Flush(kLong));
  EXPECT_EQ(Pushes(metrics_, "error"), 3u);
  EXPECT_EQ(Dropped(metrics_, "retries_exhausted"), 1u);
}

// loki-retries=0 with no-file=true: the Go driver retries forever, and so does skald; a count
// gives up after that many retries. Options parsed as dockerd passes them.
TEST_F(LokiClientTest, RetriesZeroRetriesABatchUntilDelivered) {
  auto options = [&](const std::string& retries) {
    LogOptions o = ParseLogOptions({{"loki-url", loki_.PushUrl()},
                                    {"no-file", "true"},
                                    {"loki-retries", retries},
                                    {"loki-min-backoff", "1ms"},
                                    {"loki-max-backoff", "5ms"},
                                    {"loki-batch-wait", "20ms"}},
                                   {});
    EXPECT_FALSE(o.client.durable);
    return o.client;
  };
  {
    loki_.FailNext(503, 25);  // far past the default of 10 retries
    LokiClient client(options("0"), metrics_);
    client.Push(Entry(Labels(0), 1, "x"));
    ASSERT_TRUE(client.Flush(kLong));
    client.Stop(kLong);
  }
  const auto delivered = loki_.EntriesOf(Labels(0));
  ASSERT_EQ(delivered.size(), 1u);
  EXPECT_EQ(delivered[0].line, "x");
  EXPECT_EQ(Pushes(metrics_, "503"), 25u);
  EXPECT_EQ(Dropped(metrics_, "retries_exhausted"), 0u);
  {
    loki_.FailNext(503, 25);
    LokiClient client(options("3"), metrics_);
    client.Push(Entry(Labels(1), 1, "y"));
    ASSERT_TRUE(client.Flush(kLong));
    client.Stop(kLong);
  }
  EXPECT_EQ(Pushes(metrics_, "503"), 25u + 4u);  // the first attempt and three retries
  EXPECT_EQ(Dropped(metrics_, "retries_exhausted"), 1u);
  EXPECT_TRUE(loki_.EntriesOf(Labels(1)).empty());
  loki_.ClearFailures();
}

// Every attempt is timed in skald_push_duration_seconds by status class; LastPush() tells the
// last one's status.
TEST_F(LokiClientTest, PushTimesAreObservedByStatusClass) {
  LokiClientConfig c = FastConfig(loki_);
  c.lanes = 1;
  LokiClient client(c, metrics_);
  EXPECT_EQ(client.LastPush().status, "");
  loki_.FailNext(500, 2);
  loki_.SetDelay(milliseconds(300));  // every answer: the request takes at least that
  client.Push(Entry(Labels(0), 1, "0"));
  ASSERT_TRUE(client.Flush(kLong));
  loki_.SetDelay(milliseconds(0));
  EXPECT_EQ(client.LastPush().status, "204");
  loki_.FailNext(400, 1);
  const auto before = std::chrono::system_clock::now();
  client.Push(Entry(Labels(0), 2, "1"));
  ASSERT_TRUE(client.Flush(kLong));
  EXPECT_EQ(client.LastPush().status, "400");
  EXPECT_GE(client.LastPush().at, before);

  FakeLoki closed;
  ASSERT_TRUE(closed.Start());
  LokiClientConfig away = FastConfig(loki_);
  away.url = closed.PushUrl();
  closed.Stop();
  away.max_retries = 1;
  LokiClient unreachable(away, metrics_);
  unreachable.Push(Entry(Labels(0), 1, "x"));
  ASSERT_TRUE(unreachable.Flush(kLong));
  EXPECT_EQ(unreachable.LastPush().status, "error");

  const auto families = testkit::ParsePrometheusText(metrics_.RenderPrometheus());
  const testkit::PrometheusFamily* h = testkit::FindFamily(families, "skald_push_duration_seconds");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->type, "histogram");
  std::map<std::string, double> count, sum, fast;  // fast: answered within 0.25 s
  for (const auto& sample : h->samples) {
    const std::string status = sample.Label("status");
    if (sample.name.ends_with("_count")) count[status] = sample.value;
    if (sample.name.ends_with("_sum")) sum[status] = sample.value;
    if (sample.Label("le") == "0.25") fast[status] = sample.value;
  }
  EXPECT_EQ(count, (std::map<std::string, double>{
                       {"2xx", 1}, {"3xx", 0}, {"4xx", 1}, {"5xx", 2}, {"error", 2}}));
  EXPECT_GE(sum["5xx"], 0.6);
  EXPECT_GE(sum["2xx"], 0.3);
  EXPECT_EQ(fast["5xx"], 0);
  EXPECT_EQ(fast["2xx"], 0);
}

// Taking() (a full disk's memory mode asks it: hold the container, or drop) is true before
// the first push, false from an attempt that is retried, true again once Loki settles one,
// also when Loki refuses a batch for good.
TEST_F(LokiClientTest, TakingIsFalseOnlyWhileAttemptsAreRetried) {
  LokiClientConfig c = FastConfig(loki_);
  c.lanes = 1;
  c.durable = true;  // retried until Loki answers well
  LokiClient client(c, metrics_);
  EXPECT_TRUE(client.Taking());
  loki_.FailAll(503);
  client.Push(Entry(Labels(0), 1, "0"));
  client.SendBuffered();
  EXPECT_TRUE(WaitForTrue([&] { return !client.Taking(); }));
  loki_.ClearFailures();
  ASSERT_TRUE(client.Flush(kLong));
  EXPECT_TRUE(client.Taking());
  loki_.FailNext(400, 1);
  client.Push(Entry(Labels(0), 2, "1"));
  ASSERT_TRUE(client.Flush(kLong));
  EXPECT_EQ(client.LastPush().status, "400");
  EXPECT_TRUE(client.Taking());
  client.Stop(kLong);
}

// What the client holds ages from when it was pushed, whether buffered or in flight.
TEST_F(LokiClientTest, TheOldestPendingEntryIsKnownUntilDelivered) {
  loki_.FailAll(503);
  LokiClientConfig c = FastConfig(loki_);
  c.lanes = 1;
  c.max_retries = -1;
  LokiClient client(c, metrics_);
  EXPECT_FALSE(client.OldestPendingSince());
  const auto before = steady_clock::now();
  client.Push(Entry(Labels(0), 1, "first"));
  ASSERT_TRUE(client.OldestPendingSince());
  const auto first = *client.OldestPendingSince();
  EXPECT_GE(first, before);
  ASSERT_TRUE(WaitForTrue([&] { return loki_.Requests() >= 1; }));  // now in flight
  client.Push(Entry(Labels(1), 2, "second"));
  EXPECT_EQ(client.OldestPendingSince(), first);
  loki_.ClearFailures();
  ASSERT_TRUE(client.Flush(kLong));
  EXPECT_FALSE(client.OldestPendingSince());
}

// One lane whose first batch stays in flight (retried without end) while Loki refuses
// everything, and a buffer of `max_buffered_bytes` behind it.
LokiClientConfig StuckLaneConfig(const FakeLoki& loki, std::size_t max_buffered_bytes) {
  LokiClientConfig c = FastConfig(loki);
  c.lanes = 1;
  c.max_retries = -1;
  c.batch_size_bytes = 100;
  c.max_buffered_bytes = max_buffered_bytes;
  return c;
}

// Each entry's line (a number) is larger than the one before.
void ExpectIncreasing(const std::vector<FakeLoki::Entry>& entries) {
  for (std::size_t i = 1; i < entries.size(); ++i) {
    EXPECT_LT(std::stoi(entries[i - 1].line), std::stoi(entries[i].line)) << "at " << i;
  }
}

TEST_F(LokiClientTest, FullBufferDropsTheOldestUnsentEntries) {
  loki_.FailAll(503);
  LokiClient client(StuckLaneConfig(loki_, 2'000), metrics_);
  constexpr int kPushed = 200;
  for (int i = 0; i < kPushed; ++i) client.Push(Entry(Labels(0), i, std::to_string(i)));
  EXPECT_GT(Dropped(metrics_, "buffer_full"), 0u);
  EXPECT_LT(client.Pending(), uint64_t{kPushed});
  loki_.ClearFailures();
  ASSERT_TRUE(client.Flush(kLong));
  EXPECT_EQ(client.Pending(), 0u);
  EXPECT_EQ(loki_.TotalEntries() + Dropped(metrics_, "buffer_full"), uint64_t{kPushed});
  // The newest entries survive, in order.
  const auto entries = loki_.EntriesOf(Labels(0));
  ASSERT_FALSE(entries.empty());
  EXPECT_EQ(entries.back().line, std::to_string(kPushed - 1));
  ExpectIncreasing(entries);
}

// Thousands dropped from the front of one queue (its storage compacted on the way): every
// entry is delivered or counted, the newest survive, in order and without a gap.
TEST_F(LokiClientTest, AFullBufferDropsThousandsOfTheOldestAndKeepsTheRestInOrder) {
  loki_.FailAll(503);
  LokiClient client(StuckLaneConfig(loki_, 10'000), metrics_);  // about a hundred entries
  constexpr int kPushed = 6'000;
  for (int i = 0; i < kPushed; ++i) client.Push(Entry(Labels(0), i, std::to_string(i)));
  EXPECT_GT(Dropped(metrics_, "buffer_full"), 4'000u);
  loki_.ClearFailures();
  ASSERT_TRUE(client.Flush(kLong));
  EXPECT_EQ(client.Pending(), 0u);
  EXPECT_EQ(loki_.TotalEntries() + Dropped(metrics_, "buffer_full"), uint64_t{kPushed});
  const auto entries = loki_.EntriesOf(Labels(0));
  ASSERT_GT(entries.size(), 50u);
  EXPECT_EQ(entries.back().line, std::to_string(kPushed - 1));
  // Past the batch that was in flight, the survivors are the newest, one after the other.
  const std::size_t tail = 50;
  for (std::size_t i = entries.size() - tail; i < entries.size(); ++i) {
    EXPECT_EQ(std::stoi(entries[i - 1].line) + 1, std::stoi(entries[i].line)) << "at " << i;
  }
  ExpectIncreasing(entries);
}

TEST_F(LokiClientTest, StopCountsUnsentEntriesAsShutdownDrops) {
  loki_.FailAll(503);
  LokiClientConfig c = FastConfig(loki_);
  c.max_retries = -1;
  LokiClient client(c, metrics_);
  for (int i = 0; i < 20; ++i) client.Push(Entry(Labels(i % 3), i, std::to_string(i)));
  const auto start = std::chrono::steady_clock::now();
  client.Stop(milliseconds(100));
  EXPECT_LT(std::chrono::steady_clock::now() - start, kLong);
  EXPECT_EQ(client.Pending(), 0u);
  EXPECT_EQ(Dropped(metrics_, "shutdown"), 20u);
  EXPECT_EQ(metrics_.GetGauge("skald_client_pending_entries", "").Value(), 0);
}

TEST_F(LokiClientTest, StopSendsWhatItCanWithinTheDeadline) {
  LokiClientConfig c = FastConfig(loki_);
  c.batch_wait = milliseconds(3'600'000);
  LokiClient client(c, metrics_);
  for (int i = 0; i < 10; ++i) client.Push(Entry(Labels(0), i, std::to_string(i)));
  client.Stop(kLong);
  ExpectInOrder(Labels(0), 10);
  EXPECT_EQ(Dropped(metrics_, "shutdown"), 0u);
}

TEST_F(LokiClientTest, StopDoesNotWaitForAHangingLoki) {
  loki_.SetDelay(milliseconds(20'000));
  LokiClientConfig c = FastConfig(loki_);
  c.timeout = milliseconds(60'000);
  LokiClient client(c, metrics_);
  client.Push(Entry(Labels(0), 1, "x"));
  std::this_thread::sleep_for(milliseconds(200));  // let the request start
  const auto start = std::chrono::steady_clock::now();
  client.Stop(milliseconds(50));
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(10'000));
  EXPECT_EQ(client.Pending(), 0u);
  EXPECT_EQ(Dropped(metrics_, "shutdown"), 1u);
}

TEST_F(LokiClientTest, PushAfterStopIsCountedAsShutdown) {
  LokiClient client(FastConfig(loki_), metrics_);
  client.Stop(milliseconds(0));
  client.Push(Entry(Labels(0), 1, "x"));
  EXPECT_EQ(Dropped(metrics_, "shutdown"), 1u);
  EXPECT_EQ(client.Pending(), 0u);
}

TEST_F(LokiClientTest, FlushTimesOutWhileLokiIsDown) {
  loki_.FailAll(500);
  LokiClientConfig c = FastConfig(loki_);
  c.max_retries = -1;
  LokiClient client(c, metrics_);
  client.Push(Entry(Labels(0), 1, "x"));
  EXPECT_FALSE(client.Flush(milliseconds(100)));
  EXPECT_EQ(client.Pending(), 1u);
  loki_.ClearFailures();
  EXPECT_TRUE(client.Flush(kLong));
  EXPECT_EQ(client.Pending(), 0u);
}

TEST_F(LokiClientTest, BasicAuthIsSentButNeverLogged) {
  LogCapture logs;
  LokiClientConfig c = FastConfig(loki_);
  c.url = loki_.PushUrl("loki-user:s3cr%40t-pass");  // password "s3cr@t-pass"
  c.max_retries = 1;
  LokiClient client(c, metrics_);
  loki_.FailNext(500, 1, "boom");  // logged retry
  client.Push(Entry(Labels(0), 1, "a"));
  ASSERT_TRUE(client.Flush(kLong));
  loki_.FailNext(400, 1, "bad stream");  // logged rejection
  client.Push(Entry(Labels(0), 2, "b"));
  ASSERT_TRUE(client.Flush(kLong));
  EXPECT_THAT(loki_.Authorizations(), ::testing::Each(std::string("loki-user:s3cr@t-pass")));
  const std::string text = logs.Text();
  EXPECT_THAT(text, ::testing::HasSubstr("127.0.0.1"));  // the URL is logged, without user info
  EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("s3cr")));
  EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("loki-user")));
  EXPECT_THAT(metrics_.RenderPrometheus(), ::testing::Not(::testing::HasSubstr("s3cr")));
  EXPECT_THAT(c.Key(), ::testing::Not(::testing::HasSubstr("s3cr")));
}

// User info runs to the last '@', so a password may hold the characters that end an authority
// in RFC 3986. Each must reach Loki as basic auth and never show in a log line or a metric.
TEST_F(LokiClientTest, PasswordsWithUrlDelimitersAuthenticateAndNeverShow) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"ceo:S3cr3t/Pa55==", "S3cr3t/Pa55=="},
      {"ceo:S3cr3t?Pa55", "S3cr3t?Pa55"},
      {"ceo:S3cr3t#Pa55", "S3cr3t#Pa55"},
      {"ceo:S3cr3t@Pa55", "S3cr3t@Pa55"},
      {"ceo:S3cr3t:Pa55", "S3cr3t:Pa55"},
      {"ceo:S3cr3t%2FPa%4055", "S3cr3t/Pa@55"},
      {"ceo:S3cr3t/?#@:%23Pa55", "S3cr3t/?#@:#Pa55"},
  };
  for (const auto& [userinfo, password] : cases) {
    LogCapture logs;
    LokiClientConfig c = FastConfig(loki_);
    c.url = loki_.PushUrl(userinfo);
    ASSERT_EQ(ValidateLokiClientConfig(c), "") << userinfo;
    loki_.Reset();
    loki_.FailNext(500, 1, "boom");  // a logged retry, naming the URL
    LokiClient client(c, metrics_);
    client.Push(Entry(Labels(0), 1, "a"));
    ASSERT_TRUE(client.Flush(kLong)) << userinfo;
    EXPECT_THAT(loki_.Authorizations(), ::testing::Each("ceo:" + password)) << userinfo;
    EXPECT_EQ(loki_.TotalEntries(), 1u) << userinfo;
    const std::string text = logs.Text();
    EXPECT_THAT(text, ::testing::HasSubstr("127.0.0.1")) << userinfo;
    EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("S3cr3t"))) << userinfo;
    EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("Pa55"))) << userinfo;
    EXPECT_THAT(c.Key(), ::testing::Not(::testing::HasSubstr("S3cr3t"))) << userinfo;
    client.Stop(milliseconds(0));
  }
  EXPECT_THAT(metrics_.RenderPrometheus(), ::testing::Not(::testing::HasSubstr("S3cr3t")));
}

TEST_F(LokiClientTest, SendsThroughAnHttpProxy) {
  // The fake accepts the proxy form of the request line, so it can stand in for the proxy.
  LokiClientConfig c = FastConfig(loki_);
  c.url = "http://loki.invalid:3100/loki/api/v1/push";
  c.proxy_url = "http://127.0.0.1:" + std::to_string(loki_.port());
  c.max_retries = 0;
  LokiClient client(c, metrics_);
  client.Push(Entry(Labels(0), 1, "0"));
  ASSERT_TRUE(client.Flush(kLong));
  ExpectInOrder(Labels(0), 1);
  EXPECT_EQ(loki_.ProxiedRequests(), 1u);
}

// As Go's client does for a socks5:// proxy: the proxy gets Loki's name to resolve, and the
// request goes through it as to Loki itself.
TEST_F(LokiClientTest, SendsThroughASocks5ProxyThatResolvesLokisName) {
  testkit::FakeSocks5Proxy proxy;
  ASSERT_TRUE(proxy.Start({}));
  LokiClientConfig c = FastConfig(loki_);
  c.url = "http://loki.invalid:" + std::to_string(loki_.port()) + "/loki/api/v1/push";
  c.proxy_url = "socks5://127.0.0.1:" + std::to_string(proxy.port());
  c.max_retries = 0;
  ASSERT_EQ(ValidateLokiClientConfig(c), "");
  LokiClient client(c, metrics_);
  client.Push(Entry(Labels(0), 1, "0"));
  ASSERT_TRUE(client.Flush(kLong));
  ExpectInOrder(Labels(0), 1);
  EXPECT_EQ(loki_.ProxiedRequests(), 0u) << "a socks5 proxy carries the request as it is";
  EXPECT_THAT(proxy.Connects(),
              ::testing::ElementsAre("loki.invalid:" + std::to_string(loki_.port())));
}

TEST_F(LokiClientTest, ASocks5ProxysCredentialsAreSentAndItsRefusalIsRetriedAndLogged) {
  testkit::FakeSocks5Proxy proxy;
  ASSERT_TRUE(proxy.Start({"ceo", "S3cr3t@x", 0}));
  LogCapture logs;
  LokiClientConfig c = FastConfig(loki_);
  c.url = loki_.PushUrl();
  c.proxy_url = "socks5h://ceo:S3cr3t%40x@127.0.0.1:" + std::to_string(proxy.port());
  c.max_retries = 0;
  {
    LokiClient client(c, metrics_);
    client.Push(Entry(Labels(0), 1, "0"));
    ASSERT_TRUE(client.Flush(kLong));
    EXPECT_EQ(loki_.TotalEntries(), 1u);
    EXPECT_EQ(proxy.RefusedCredentials(), 0u);
  }
  // Wrong credentials: refused, retried, never shown.
  c.proxy_url = "socks5://ceo:Wr0ng@127.0.0.1:" + std::to_string(proxy.port());
  c.max_retries = 2;
  c.min_backoff = milliseconds(1);
  c.max_backoff = milliseconds(2);
  LokiClient client(c, metrics_);
  client.Push(Entry(Labels(1), 1, "x"));
  client.Flush(kLong);
  EXPECT_EQ(loki_.TotalEntries(), 1u);
  EXPECT_EQ(proxy.RefusedCredentials(), 3u) << "the first try and two retries";
  const std::string text = logs.Text();
  EXPECT_THAT(text, ::testing::HasSubstr("socks5 proxy: the user name and password were refused"));
  EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("Wr0ng")));
  EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("S3cr3t")));
}

TEST_F(LokiClientTest, ManyProducersKeepOrderPerStreamAcrossRetries) {
  LokiClientConfig c = FastConfig(loki_);
  c.lanes = 3;
  c.batch_size_bytes = 500;
  c.max_retries = -1;  // ten failures may hit one lane in a row: retry until they pass
  LokiClient client(c, metrics_);
  loki_.FailNext(500, 10);
  constexpr int kThreads = 4, kPerThread = 2'000;
  std::vector<std::thread> producers;
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) client.Push(Entry(Labels(t), i, std::to_string(i)));
    });
  }
  for (auto& p : producers) p.join();
  ASSERT_TRUE(client.Flush(kLong));
  EXPECT_EQ(metrics_.CounterTotal("skald_entries_dropped_total"), 0u);
  for (int t = 0; t < kThreads; ++t) ExpectInOrder(Labels(t), kPerThread);
  EXPECT_EQ(loki_.Duplicates(), 0u);
  EXPECT_EQ(client.Pending(), 0u);
}

// A client whose threads cannot all start (the system is out of threads) throws, leaving no
// thread running, whichever thread failed; the caller refuses StartLogging with the message.
TEST(LokiClientThreads, AClientWhoseThreadsCannotStartThrowsAndLeavesNothingRunning) {
  FakeLoki loki;
  ASSERT_TRUE(loki.Start());
  LokiClientConfig c = FastConfig(loki);
  c.url = loki.PushUrl("ceo:S3cr3t");
  c.lanes = 3;
  MetricsRegistry m;
  for (int started = 0; started <= c.lanes; ++started) {  // the lanes, then the watchdog
    LokiClient::SetThreadLimitForTesting(started);
    try {
      LokiClient client(c, m);
      ADD_FAILURE() << "started with a limit of " << started << " threads";
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("cannot create a thread")) << started;
      EXPECT_THAT(e.what(), ::testing::HasSubstr("127.0.0.1")) << started;
      EXPECT_THAT(e.what(), ::testing::Not(::testing::HasSubstr("S3cr3t"))) << started;
    }
  }
  LokiClient::SetThreadLimitForTesting(-1);
  EXPECT_EQ(m.GetGauge("skald_client_pending_entries", "").Value(), 0);
  LokiClient client(c, m);
  client.Push(Entry(Labels(0), 1, "0"));
  ASSERT_TRUE(client.Flush(kLong));
  EXPECT_EQ(loki.TotalEntries(), 1u);
}

TEST(LokiClientThreads, StartLoggingIsRefusedWhenTheClientCannotStart) {
  FakeLoki loki;
  ASSERT_TRUE(loki.Start());
  MetricsRegistry m;
  {
    Driver driver(DriverConfig{}, m);
    ContainerInfo info;
    info.container_id = std::string(64, 'a');
    info.container_name = "/web";
    info.config = {{"loki-url", loki.PushUrl()}, {"no-file", "true"}};
    LokiClient::SetThreadLimitForTesting(1);
    try {
      driver.StartLogging("/nonexistent/fifo", info);
      ADD_FAILURE() << "StartLogging accepted";
    } catch (const std::exception& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("cannot create a thread"));
    }
    LokiClient::SetThreadLimitForTesting(-1);
    EXPECT_EQ(driver.PendingEntries(), 0u);  // no half-made client is left behind
  }                                          // Shutdown stops every client it holds
}

}  // namespace
}  // namespace skald

namespace skald {
namespace {

class LokiClientCredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(loki_.Start());
    char tmpl[] = "/tmp/skald-credentials-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& content) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << content;
    return path;
  }
  static bool Eventually(const std::function<bool()>& pred) {
    for (auto until = steady_clock::now() + kLong; steady_clock::now() < until;) {
      if (pred()) return true;
      std::this_thread::sleep_for(milliseconds(10));
    }
    return pred();
  }
  FakeLoki loki_;
  std::string dir_;
  MetricsRegistry metrics_;
};

// A rotated token works without a restart: Loki's 401 makes the client read the file again.
TEST_F(LokiClientCredentialsTest, ABearerTokenFileIsReadAgainWhenLokiRefusesIt) {
  const std::string token = Write("token", "first-token\n");
  LokiClientConfig c = FastConfig(loki_);
  c.durable = true;
  c.lanes = 1;
  c.auth.bearer_token_file = token;
  loki_.FailAll(401);
  LokiClient client(c, metrics_);
  client.Push(Entry(Labels(0), 1, "0"));
  ASSERT_TRUE(Eventually([&] { return loki_.Requests() >= 1; }));
  EXPECT_EQ(loki_.Authorizations().front(), "Bearer first-token");
  Write("token", "second-token\n");  // rotated
  ASSERT_TRUE(Eventually([&] {
    auto a = loki_.Authorizations();
    return !a.empty() && a.back() == "Bearer second-token";
  }));
  loki_.ClearFailures();
  ASSERT_TRUE(loki_.WaitForEntries(1, kLong));
  EXPECT_EQ(loki_.Authorizations().back(), "Bearer second-token");
  EXPECT_EQ(Dropped(metrics_, "unauthorized"), 0u);
}

// nginx in front of Loki answers a missing client certificate with 400 and a page saying so:
// a configuration error, retried with the journal, not a verdict dropping the entries.
TEST_F(LokiClientCredentialsTest, ATerminatorRefusingTheClientCertificateKeepsTheLines) {
  LokiClientConfig c = FastConfig(loki_);
  c.durable = true;
  FakeLoki::Answer refusal;
  refusal.status = 400;
  refusal.body =
      "<html><head><title>400 No required SSL certificate was sent</title></head></html>";
  loki_.AnswerNext(refusal, 3);
  LokiClient client(c, metrics_);
  client.Push(Entry(Labels(0), 1, "0"));
  ASSERT_TRUE(loki_.WaitForEntries(1, kLong));
  EXPECT_EQ(Pushes(metrics_, "400"), 3u);
  EXPECT_EQ(Dropped(metrics_, "bad_request"), 0u);
}

TEST_F(LokiClientCredentialsTest, BasicAuthTakesItsPasswordFromAFile) {
  LokiClientConfig c = FastConfig(loki_);
  c.auth.basic_username = "team-a";
  c.auth.basic_password_file = Write("password", "p@ss:w/o#rd?\n");
  LokiClient client(c, metrics_);
  client.Push(Entry(Labels(0), 1, "0"));
  ASSERT_TRUE(loki_.WaitForEntries(1, kLong));
  EXPECT_EQ(loki_.Authorizations().front(), "team-a:p@ss:w/o#rd?");
}

TEST_F(LokiClientCredentialsTest, ExtraHeadersGoWithEveryPush) {
  LokiClientConfig c = FastConfig(loki_);
  c.headers = {{"X-Api-Key", "k3y"}, {"X-Team", "a"}};
  LokiClient client(c, metrics_);
  client.Push(Entry(Labels(0), 1, "0"));
  ASSERT_TRUE(loki_.WaitForEntries(1, kLong));
  const auto headers = loki_.RequestHeaders().front();
  EXPECT_EQ(headers.at("X-Api-Key"), "k3y");
  EXPECT_EQ(headers.at("X-Team"), "a");
}

TEST_F(LokiClientCredentialsTest, ASecretFileThatCannotBeReadFailsTheStartNamingIt) {
  LokiClientConfig c = FastConfig(loki_);
  c.auth.bearer_token_file = dir_ + "/missing";
  try {
    LokiClient client(c, metrics_);
    FAIL() << "started without its token";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("loki-bearer-token-file"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr(dir_ + "/missing"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("No such file"));
  }
}

}  // namespace
}  // namespace skald
