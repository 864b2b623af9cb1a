#include "plugin/metrics/metrics_http_server.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <nlohmann/json.hpp>

#include "plugin/metrics/metrics.h"

namespace skald {
namespace {

// /healthz answers what the health callback reports: 200 while the API serves, 503 otherwise;
// /metrics goes on either way.
TEST(MetricsHttpServer, HealthzFollowsTheApi) {
  MetricsRegistry metrics;
  metrics.GetCounter("skald_lines_read_total", "lines").Add(3);
  std::atomic<bool> serving{true};
  MetricsHttpServer server(metrics, nullptr, [&serving] {
    HealthReport r;
    r.api_serving = serving;
    LokiClientHealth c;
    c.url = "http://loki:3100/loki/api/v1/push";
    r.clients.push_back(c);
    return r;
  });
  ASSERT_TRUE(server.Start("127.0.0.1:0"));
  httplib::Client cli("127.0.0.1", server.port());
  auto res = cli.Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  auto body = nlohmann::json::parse(res->body);
  EXPECT_EQ(body["status"], "ok");
  ASSERT_EQ(body["clients"].size(), 1u);
  EXPECT_EQ(body["clients"][0]["url"], "http://loki:3100/loki/api/v1/push");

  serving = false;
  res = cli.Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(nlohmann::json::parse(res->body)["api"], "not serving");
  res = cli.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->body.find("skald_lines_read_total 3\n"), std::string::npos);
}

TEST(MetricsHttpServer, WithoutAHealthCallbackThereIsNoHealthz) {
  MetricsRegistry metrics;
  MetricsHttpServer server(metrics, nullptr);
  ASSERT_TRUE(server.Start("127.0.0.1:0"));
  httplib::Client cli("127.0.0.1", server.port());
  auto res = cli.Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
}

}  // namespace
}  // namespace skald

namespace skald {
namespace {

// A raw connection to the server: sends `bytes` and returns what comes back until the close
// (or `wait` passes).
std::string Exchange(int port, const std::string& bytes,
                     std::chrono::milliseconds wait = std::chrono::milliseconds(10'000)) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return "connect failed";
  }
  timeval tv{static_cast<time_t>(wait.count() / 1000),
             static_cast<suseconds_t>((wait.count() % 1000) * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  for (std::size_t at = 0; at < bytes.size();) {
    const ssize_t w = ::send(fd, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
    if (w <= 0) break;  // the server closed: what it answered is still there to read
    at += static_cast<std::size_t>(w);
  }
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

// Requests that would grow the plugin (a body, a compressed body, an endless head) are refused
// before their bytes are kept, with the status that names the limit (the plugin's memory is
// measured by the integration test PluginIntegration.TheMetricsPortTakesOnlySmallGets).
TEST(MetricsHttpServer, RequestsWithABodyOrAHugeHeadAreRefusedUnread) {
  MetricsRegistry metrics;
  MetricsHttpServer server(metrics, nullptr, [] { return HealthReport{true, {}, {}}; });
  ASSERT_TRUE(server.Start("127.0.0.1:0"));
  const std::string body(4 << 20, 'x');  // as if gzip's, it is never decompressed
  EXPECT_THAT(Exchange(server.port(),
                       "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Encoding: "
                       "gzip\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\n\r\n" + body),
              ::testing::StartsWith("HTTP/1.1 413"));
  EXPECT_THAT(Exchange(server.port(), "GET /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"),
              ::testing::StartsWith("HTTP/1.1 413"));
  EXPECT_THAT(Exchange(server.port(),
                       "GET /metrics HTTP/1.1\r\nTransfer-Encoding: "
                       "chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
              ::testing::StartsWith("HTTP/1.1 413"));
  EXPECT_THAT(Exchange(server.port(), "GET /metrics HTTP/1.1\r\nX: " + std::string(20 << 20, 'h')),
              ::testing::StartsWith("HTTP/1.1 431"));
  std::string many = "GET /healthz HTTP/1.1\r\n";
  for (int i = 0; i < 1'000'000; ++i) many += "A: b\r\n";
  EXPECT_THAT(Exchange(server.port(), many + "\r\n"), ::testing::StartsWith("HTTP/1.1 431"));
  EXPECT_THAT(Exchange(server.port(), "DELETE /metrics HTTP/1.1\r\n\r\n"),
              ::testing::StartsWith("HTTP/1.1 405"));
  const std::string tls_hello("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 15);
  EXPECT_THAT(Exchange(server.port(), tls_hello), ::testing::StartsWith("HTTP/1.1 400"));
  // A request that never ends is closed at the request timeout, unanswered.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Exchange(server.port(), "GET /metr"), "");
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            MetricsHttpServer::kRequestTimeout + std::chrono::seconds(3));
  const std::string head = Exchange(server.port(), "HEAD /healthz HTTP/1.1\r\n\r\n");
  EXPECT_THAT(head, ::testing::StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(head, ::testing::EndsWith("\r\n\r\n"));  // no body
}

// Idle connections and slow requests cannot starve /healthz: more than the server keeps open
// (the oldest go), and each lasts at most the request timeout.
TEST(MetricsHttpServer, IdleConnectionsCannotStarveHealthz) {
  MetricsRegistry metrics;
  MetricsHttpServer server(metrics, nullptr, [] { return HealthReport{true, {}, {}}; });
  ASSERT_TRUE(server.Start("127.0.0.1:0"));
  std::vector<int> idle;
  for (std::size_t i = 0; i < 3 * MetricsHttpServer::kMaxConnections; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server.port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    ASSERT_EQ(::send(fd, "GET /hea", 8, MSG_NOSIGNAL), 8);  // and never more
    idle.push_back(fd);
  }
  const auto start = std::chrono::steady_clock::now();
  httplib::Client cli("127.0.0.1", server.port());
  cli.set_read_timeout(10);
  auto res = cli.Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  for (int fd : idle) ::close(fd);
}

}  // namespace
}  // namespace skald
