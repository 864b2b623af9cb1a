#include "plugin/metrics/health_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace skald {
namespace {

TEST(HealthReport, TheBodyNamesEachClientAndHowItFares) {
  HealthReport report;
  report.api_serving = true;
  LokiClientHealth pushed;
  pushed.url = "https://loki.example/loki/api/v1/push";
  pushed.tenant_id = "team-a";
  pushed.last_push_status = "204";
  pushed.last_push_at =
      std::chrono::system_clock::time_point(std::chrono::milliseconds(1'714'564'800'123));
  pushed.oldest_undelivered_seconds = 1.5;
  pushed.pending_entries = 7;
  LokiClientHealth fresh;
  fresh.url = "http://127.0.0.1:3100/loki/api/v1/push";
  report.clients = {pushed, fresh};
  report.quarantined_journals = {"0123abcd"};
  EXPECT_EQ(report.HttpStatus(), 200);
  const nlohmann::json body = nlohmann::json::parse(report.Json());
  EXPECT_EQ(body, nlohmann::json::parse(R"({
    "status": "ok", "api": "serving",
    "clients": [
      {"url": "https://loki.example/loki/api/v1/push", "tenant_id": "team-a",
       "last_push": {"status": "204", "time": "2024-05-01T12:00:00.123Z"},
       "oldest_undelivered_seconds": 1.5, "pending_entries": 7},
      {"url": "http://127.0.0.1:3100/loki/api/v1/push", "tenant_id": "",
       "last_push": null, "oldest_undelivered_seconds": 0.0, "pending_entries": 0}
    ],
    "quarantined_journals": ["0123abcd"]})"));
}

TEST(HealthReport, WithoutTheApiItIsUnavailable) {
  HealthReport report;
  EXPECT_EQ(report.HttpStatus(), 503);
  const nlohmann::json body = nlohmann::json::parse(report.Json());
  EXPECT_EQ(body["status"], "unavailable");
  EXPECT_EQ(body["api"], "not serving");
  EXPECT_EQ(body["clients"], nlohmann::json::array());
}

TEST(HealthReport, TimesAreRfc3339InUtc) {
  using std::chrono::milliseconds;
  using std::chrono::system_clock;
  EXPECT_EQ(FormatRfc3339Millis(system_clock::time_point(milliseconds(0))),
            "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatRfc3339Millis(system_clock::time_point(milliseconds(951'782'400'007))),
            "2000-02-29T00:00:00.007Z");
}

}  // namespace
}  // namespace skald
