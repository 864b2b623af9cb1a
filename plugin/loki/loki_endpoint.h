// LokiEndpoint: what the lane senders of one Loki client share: the endpoint (configuration and
// parsed URLs), the log limiter, and the accounting of push attempts.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <atomic>
#include <chrono>
#include <map>
#include <string>

#include "plugin/common/log_limiter.h"
#include "plugin/loki/loki_client_config.h"
#include "plugin/loki/loki_url.h"
#include "plugin/loki/push_outcome.h"
#include "plugin/metrics/metrics.h"

namespace skald {

// Attempts are counted in skald_pushes_total{status_code}, skald_push_duration_seconds{status}
// (by status class: 2xx, 3xx, 4xx, 5xx, error) and skald_batch_retries_total. Thread-safe.
class LokiEndpoint {
 public:
  using Clock = std::chrono::steady_clock;

  // `config` is valid (ValidateLokiClientConfig) and outlives the target, as do the others.
  LokiEndpoint(const LokiClientConfig& config, MetricsRegistry& metrics, LogLimiter& log_limiter);

  const LokiClientConfig& config;
  MetricsRegistry& metrics;
  LogLimiter& log_limiter;
  ParsedUrl url;
  ParsedUrl proxy;
  std::string redacted_url;  // for logs: no user info
  Counter& batch_retries;

  // Counts an attempt that got `status` (0: no answer) after `elapsed`.
  void RecordAttempt(bool answered, int status, Clock::duration elapsed)
      ABSL_LOCKS_EXCLUDED(last_push_mu_);
  PushAttemptStatus LastPush() const ABSL_LOCKS_EXCLUDED(last_push_mu_);

  // Whether Loki takes this client's pushes: true until an attempt fails in a way that is
  // retried (no answer, 5xx, 429, a route error), and again once an attempt is settled by an
  // answer (delivered, or refused for good by Loki's own verdict).
  bool Taking() const { return taking_.load(std::memory_order_relaxed); }
  void SetTaking(bool taking) { taking_.store(taking, std::memory_order_relaxed); }

 private:
  std::map<std::string, Histogram*> push_durations_;  // by status class; fixed after creation
  mutable absl::Mutex last_push_mu_;
  PushAttemptStatus last_push_ ABSL_GUARDED_BY(last_push_mu_);
  std::atomic<bool> taking_{true};
};

}  // namespace skald
