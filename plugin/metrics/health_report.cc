#include "plugin/metrics/health_report.h"

#include <time.h>

#include <cstdio>
#include <nlohmann/json.hpp>

namespace skald {

std::string FormatRfc3339Millis(std::chrono::system_clock::time_point t) {
  const auto ms = std::chrono::floor<std::chrono::milliseconds>(t.time_since_epoch()).count();
  const time_t secs = static_cast<time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  tm utc{};
  gmtime_r(&secs, &utc);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(ms - static_cast<int64_t>(secs) * 1000));
  return buf;
}

std::string HealthReport::Json() const {
  nlohmann::json clients_json = nlohmann::json::array();
  for (const LokiClientHealth& c : clients) {
    nlohmann::json last_push = nullptr;
    if (!c.last_push_status.empty()) {
      last_push = {{"status", c.last_push_status}, {"time", FormatRfc3339Millis(c.last_push_at)}};
    }
    clients_json.push_back({{"url", c.url},
                            {"tenant_id", c.tenant_id},
                            {"last_push", last_push},
                            {"oldest_undelivered_seconds", c.oldest_undelivered_seconds},
                            {"pending_entries", c.pending_entries}});
  }
  const nlohmann::json body = {{"status", api_serving ? "ok" : "unavailable"},
                               {"api", api_serving ? "serving" : "not serving"},
                               {"clients", clients_json},
                               {"quarantined_journals", quarantined_journals}};
  // Replace: a URL is shown as the user wrote it, bytes that are not UTF-8 included.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace skald
