#include "plugin/metrics_http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <nlohmann/json.hpp>

#include "plugin/metrics.h"

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
