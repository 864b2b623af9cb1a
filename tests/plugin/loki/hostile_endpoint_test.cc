// The Loki client against an endpoint that answers with hostile or broken bytes (a scripted
// peer): every answer is read within its bounds, the push fails as a transport error, is
// retried and counted, and nothing of the answer beyond the bounds is read. Answers that say the
// route is wrong keep the lines until the endpoint is mended.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <random>
#include <sstream>

#include "plugin/loki/loki_client.h"
#include "tests/plugin/log_capture.h"
#include "tests/tools/scripted_http_peer.h"

namespace skald {
namespace {

using skald::testkit::ScriptedHttpPeer;
using std::chrono::milliseconds;
using ::testing::HasSubstr;

constexpr milliseconds kLong{30'000};
// What a peer gets into loopback socket buffers before a client that stopped reading blocks
// it: a few MiB at most.
constexpr uint64_t kSocketBuffers = 16u << 20;

using skald::testkit::LogCapture;

LokiClientConfig Config(const ScriptedHttpPeer& peer) {
  LokiClientConfig c;
  c.url = peer.PushUrl();
  c.timeout = milliseconds(2'000);
  c.batch_wait = milliseconds(10);
  c.min_backoff = milliseconds(1);
  c.max_backoff = milliseconds(5);
  c.max_retries = 1;
  c.lanes = 1;
  return c;
}

LokiEntry Entry(int64_t ts) {
  LokiEntry e;
  e.labels = R"({job="hostile"})";
  e.timestamp_ns = ts;
  e.line = "line " + std::to_string(ts);
  return e;
}

uint64_t Dropped(MetricsRegistry& m, const std::string& reason) {
  return m.GetCounter("skald_entries_dropped_total", "", {{"reason", reason}}).Value();
}

uint64_t Pushes(MetricsRegistry& m, const std::string& status) {
  return m.GetCounter("skald_pushes_total", "", {{"status_code", status}}).Value();
}

std::string RandomBytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

struct Misbehaviour {
  const char* name;
  std::string answer;
  const char* logged;  // what the log says of it
  bool reset = false;
};

// Each answer fails the push as a transport error naming the bound or the fault; the client
// reads no more of it than its bounds (the peer gets at most socket buffers' worth out), retries
// once, then drops the entry under retries_exhausted (no journal here).
TEST(HostileEndpointTest, AnswersPastTheBoundsFailThePushAndAreReadNoFurther) {
  std::string many_headers = "HTTP/1.1 204 No Content\r\n";
  for (int i = 0; i < 1'000'000; ++i) many_headers += "A: b\r\n";
  const std::vector<Misbehaviour> cases = {
      {"20 MB status line", "HTTP/1.1 200 " + std::string(20 << 20, 'x') + "\r\n\r\n",
       "the status line is longer than 8192 bytes"},
      {"100 KB status line", "HTTP/1.1 200 " + std::string(100 << 10, 'x') + "\r\n\r\n",
       "the status line is longer than 8192 bytes"},
      {"a million header lines", many_headers + "\r\n", "more than 100 header lines"},
      {"a 20 MB header line", "HTTP/1.1 204 No Content\r\nX: " + std::string(20 << 20, 'y'),
       "a header line is longer than 8192 bytes"},
      {"random bytes", RandomBytes(1 << 20, 3), "not an HTTP answer"},
      {"a TLS alert to plain HTTP", std::string("\x15\x03\x01\x00\x02\x02\x50", 7),
       "closed in the middle"},
      {"a bad chunk size", "HTTP/1.1 500 X\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
       "a chunk size that is not hexadecimal"},
      {"reset mid-answer", "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 100\r\n\r\nab",
       "read failed", true},
  };
  for (const Misbehaviour& m : cases) {
    LogCapture logs;
    MetricsRegistry metrics;
    ScriptedHttpPeer peer;
    ScriptedHttpPeer::Script script;
    script.answer = m.answer;
    script.reset_after = m.reset;
    ASSERT_TRUE(peer.Start(script)) << m.name;
    {
      LokiClient client(Config(peer), metrics);
      client.Push(Entry(1));
      ASSERT_TRUE(client.Flush(kLong)) << m.name;
    }
    EXPECT_EQ(peer.Requests(), 2u) << m.name;  // the attempt and one retry
    EXPECT_EQ(Pushes(metrics, "error"), 2u) << m.name;
    EXPECT_EQ(Dropped(metrics, "retries_exhausted"), 1u) << m.name;
    EXPECT_LT(peer.BytesWritten(), std::min<uint64_t>(2 * m.answer.size() + 1, kSocketBuffers))
        << m.name;
    const std::string text = logs.Text();
    EXPECT_THAT(text, HasSubstr(m.logged)) << m.name << "\n" << text.substr(0, 2000);
    EXPECT_LT(text.size(), 8192u) << m.name;  // the hostile bytes are not copied into the log
  }
}

// An endless body is cut at the 64 KiB cap; its status still counts (a 500: retried).
TEST(HostileEndpointTest, AnEndlessBodyIsCutAtTheCap) {
  MetricsRegistry metrics;
  ScriptedHttpPeer peer;
  ScriptedHttpPeer::Script script;
  script.answer = "HTTP/1.1 500 X\r\n\r\n" + std::string(64 << 20, 'z');
  ASSERT_TRUE(peer.Start(script));
  {
    LokiClient client(Config(peer), metrics);
    client.Push(Entry(1));
    ASSERT_TRUE(client.Flush(kLong));
  }
  EXPECT_EQ(Pushes(metrics, "500"), 2u);
  EXPECT_LT(peer.BytesWritten(), kSocketBuffers);
}

// A slow answer is cut at loki-timeout, however steadily it drips.
TEST(HostileEndpointTest, ASlowAnswerIsCutAtTheTimeout) {
  MetricsRegistry metrics;
  ScriptedHttpPeer peer;
  ScriptedHttpPeer::Script script;
  script.answer = "HTTP/1.1 204 No Content\r\nX-Slow: " + std::string(10'000, 's') + "\r\n\r\n";
  script.drip = milliseconds(5);
  ASSERT_TRUE(peer.Start(script));
  LokiClientConfig c = Config(peer);
  c.timeout = milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  {
    LokiClient client(c, metrics);
    client.Push(Entry(1));
    ASSERT_TRUE(client.Flush(kLong));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(4'000));  // 2 x 200 ms
  EXPECT_EQ(Pushes(metrics, "error"), 2u);
}

// Answers that say the route is wrong (not the lines) are retried, with the journal for as long
// as it takes: once the endpoint is mended, every line arrives and nothing is dropped.
TEST(HostileEndpointTest, RouteErrorsKeepTheLinesUntilTheEndpointIsMended) {
  struct Case {
    std::string answer;
    const char* hint;
  };
  const std::vector<Case> cases = {
      {"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n", "no push endpoint"},
      {"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n",
       "the proxy wants credentials"},
      {"HTTP/1.1 410 Gone\r\nContent-Length: 0\r\n\r\n", "no push endpoint"},
      {"HTTP/1.1 411 Length Required\r\nContent-Length: 0\r\n\r\n", "not Loki's"},
      {"HTTP/1.1 415 Unsupported Media Type\r\nContent-Length: 0\r\n\r\n", "not Loki's"},
      {"HTTP/1.1 400 Bad Request\r\nContent-Length: 46\r\n\r\n"
       "<html><head><title>400</title></head></html>\r\n",
       "not Loki's"},
      {"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", "not Loki's"},
      {"HTTP/1.1 422 Unprocessable Entity\r\nContent-Length: 11\r\n\r\nBad Request", "not Loki's"},
      {"HTTP/1.1 400 Bad Request\r\nContent-Length: 10\r\n\r\nno org id\n",
       "Loki requires a tenant: set loki-tenant-id"},
  };
  for (const Case& k : cases) {
    LogCapture logs;
    MetricsRegistry metrics;
    ScriptedHttpPeer peer;
    ScriptedHttpPeer::Script script;
    script.answer = k.answer;
    script.times = 3;
    script.mended = "HTTP/1.1 204 No Content\r\n\r\n";
    ASSERT_TRUE(peer.Start(script));
    LokiClientConfig c = Config(peer);
    c.durable = true;  // the journal holds the lines: retried past loki-retries
    {
      LokiClient client(c, metrics);
      for (int i = 0; i < 3; ++i) client.Push(Entry(i));
      ASSERT_TRUE(client.Flush(kLong)) << k.answer;
    }
    EXPECT_EQ(peer.Requests(), 4u) << k.answer;
    EXPECT_EQ(Pushes(metrics, "204"), 1u) << k.answer;
    EXPECT_EQ(metrics.CounterTotal("skald_entries_sent_total"), 3u) << k.answer;
    EXPECT_EQ(metrics.CounterTotal("skald_entries_dropped_total"), 0u) << k.answer;
    EXPECT_THAT(logs.Text(), HasSubstr(k.hint)) << k.answer;
  }
}

// Loki's own verdict on the entries stays final: dropped at once, counted with Loki's reason.
TEST(HostileEndpointTest, LokisOwnBadRequestStillDropsTheBatch) {
  MetricsRegistry metrics;
  ScriptedHttpPeer peer;
  const std::string text =
      "entry for stream '{job=\"hostile\"}' has timestamp too old: 1970-01-01T00:00:00Z";
  ScriptedHttpPeer::Script script;
  script.answer = "HTTP/1.1 400 Bad Request\r\nContent-Length: " + std::to_string(text.size()) +
                  "\r\n\r\n" + text;
  ASSERT_TRUE(peer.Start(script));
  LokiClientConfig c = Config(peer);
  c.durable = true;
  {
    LokiClient client(c, metrics);
    client.Push(Entry(1));
    ASSERT_TRUE(client.Flush(kLong));
  }
  EXPECT_EQ(peer.Requests(), 1u);
  EXPECT_EQ(Dropped(metrics, "too_old"), 1u);
}

// A proxy that refuses a body over its limit answers 413 as soon as it has the head and closes
// without reading the body: the answer is read although the body could not be written whole,
// and the batch is split as for Loki's own 413 (here down to single entries, each refused).
TEST(HostileEndpointTest, AnAnswerGivenBeforeTheBodyWasTakenIsRead) {
  LogCapture logs;
  MetricsRegistry metrics;
  ScriptedHttpPeer peer;
  ScriptedHttpPeer::Script script;
  script.answer = "HTTP/1.1 413 Payload Too Large\r\nContent-Length: 0\r\n\r\n";
  script.answer_after_head = true;
  ASSERT_TRUE(peer.Start(script));
  LokiClientConfig c = Config(peer);
  c.batch_size_bytes = 64 << 20;
  {
    LokiClient client(c, metrics);
    for (int i = 0; i < 2; ++i) {
      LokiEntry e = Entry(i);
      e.line = RandomBytes(8 << 20, static_cast<unsigned>(i));  // far more than socket buffers
      client.Push(std::move(e));
    }
    ASSERT_TRUE(client.Flush(kLong));
  }
  EXPECT_EQ(Pushes(metrics, "error"), 0u) << logs.Text().substr(0, 3000);
  EXPECT_GE(Pushes(metrics, "413"), 2u);  // a batch of both then each, or each alone
  EXPECT_EQ(Dropped(metrics, "too_large"), 2u);
}

// A connection the peer keeps open is used again; one it closed after its answer is opened
// anew, and no push is lost or sent twice on the way.
TEST(HostileEndpointTest, KeptConnectionsAreReusedAndClosedOnesReopened) {
  for (bool close_after : {false, true}) {
    MetricsRegistry metrics;
    ScriptedHttpPeer peer;
    ScriptedHttpPeer::Script script;
    script.answer = "HTTP/1.1 204 No Content\r\n\r\n";
    script.close_after = close_after;
    ASSERT_TRUE(peer.Start(script));
    LokiClientConfig c = Config(peer);
    c.batch_size_bytes = 1;  // a push per entry
    {
      LokiClient client(c, metrics);
      for (int i = 0; i < 20; ++i) {
        client.Push(Entry(i));
        ASSERT_TRUE(client.Flush(kLong));
      }
    }
    EXPECT_EQ(peer.Requests(), 20u) << close_after;
    EXPECT_EQ(Pushes(metrics, "204"), 20u) << close_after;
    EXPECT_EQ(Pushes(metrics, "error"), 0u) << close_after;
  }
}

}  // namespace
}  // namespace skald
