// HealthReport: what GET /healthz on the metrics listener answers.
//
// 200 while the plugin API socket serves the daemon, 503 when it does not (not started yet,
// stopping, or its listener ended). The JSON body names each Loki client in use and how it
// fares:
//   {"status": "ok" | "unavailable", "api": "serving" | "not serving",
//    "clients": [{"url": push URL without user info, "tenant_id": "" or the X-Scope-OrgID,
//                 "last_push": null | {"status": "204" | "500" | ... | "error", "time": RFC 3339},
//                 "oldest_undelivered_seconds": 0 when nothing waits, "pending_entries": n}],
//    "quarantined_journals": [names under <state>/quarantine: journals set aside because the
//                             plugin died twice in a row replaying them]}
// No credentials: the URL goes through RedactUrl, and headers and secrets are never part of it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace skald {

struct LokiClientHealth {
  std::string url;  // credentials removed
  std::string tenant_id;
  std::string last_push_status;  // "" before the first push attempt
  std::chrono::system_clock::time_point last_push_at;
  double oldest_undelivered_seconds = 0;
  uint64_t pending_entries = 0;
};

struct HealthReport {
  bool api_serving = false;
  std::vector<LokiClientHealth> clients;
  std::vector<std::string> quarantined_journals;

  int HttpStatus() const { return api_serving ? 200 : 503; }
  std::string Json() const;
};

// `t` as RFC 3339 in UTC with milliseconds: 2024-05-01T12:00:00.123Z.
std::string FormatRfc3339Millis(std::chrono::system_clock::time_point t);

}  // namespace skald
