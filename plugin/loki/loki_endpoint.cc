#include "plugin/loki/loki_endpoint.h"

#include <vector>

namespace skald {
namespace {

// Push request times: from a few milliseconds on a LAN to loki-timeout (10 s by default).
const std::vector<double> kPushDurationBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                  1,     2.5,  5,     10,   30,  60};

Histogram& PushDuration(MetricsRegistry& m, const std::string& status_class) {
  return m.GetHistogram("skald_push_duration_seconds",
                        "Push request time, from connecting to the end of the answer, by status "
                        "class (2xx, 3xx, 4xx, 5xx; error: no answer).",
                        kPushDurationBuckets, {{"status", status_class}});
}

}  // namespace

LokiEndpoint::LokiEndpoint(const LokiClientConfig& c, MetricsRegistry& m, LogLimiter& limiter)
    : config(c),
      metrics(m),
      log_limiter(limiter),
      batch_retries(m.GetCounter("skald_batch_retries_total", "Push attempts retried.")) {
  url = ParseCheckedUrl(config.url);
  if (!config.proxy_url.empty()) proxy = ParseCheckedUrl(config.proxy_url, UrlRole::kProxy);
  redacted_url = RedactUrl(config.url);
  for (const char* status : {"2xx", "3xx", "4xx", "5xx", "error"}) {
    push_durations_[status] = &PushDuration(m, status);
  }
}

void LokiEndpoint::RecordAttempt(bool answered, int status_code, Clock::duration elapsed) {
  const std::string status = answered ? std::to_string(status_code) : "error";
  metrics
      .GetCounter("skald_pushes_total", "Push requests, by HTTP status.", {{"status_code", status}})
      .Add();
  const std::string status_class =
      answered && status_code >= 100 && status_code < 600 ? status.substr(0, 1) + "xx" : "error";
  auto it = push_durations_.find(status_class);
  Histogram& h = it != push_durations_.end() ? *it->second : PushDuration(metrics, status_class);
  h.Observe(std::chrono::duration<double>(elapsed).count());
  absl::MutexLock lock(&last_push_mu_);
  last_push_.status = status;
  last_push_.at = std::chrono::system_clock::now();
}

PushAttemptStatus LokiEndpoint::LastPush() const {
  absl::MutexLock lock(&last_push_mu_);
  return last_push_;
}

}  // namespace skald
