// LaneSender: one lane's HTTP connection to Loki, and the send-with-retries of one request.
//
// Send() posts an encoded batch until Loki takes it, refuses it, the retries allowed are used
// up or the sender is aborted, and says how it ended (plugin/loki/push_outcome.h has which answers
// are retried). Between attempts it waits with capped jittered backoff (loki-min-backoff to
// loki-max-backoff); without the journal (not durable) it gives up after loki-retries. Each
// attempt lives at most loki-timeout, from connecting to the last byte of the answer: the
// connection (plugin/loki/http_connection.h) ends every wait at that deadline, and the sender also
// arms it with the RequestWatchdog, whose sweep calls CutIfOverdue. Answers are read within
// fixed bounds (plugin/loki/http_response_reader.h): at most 64 KiB of a body, 8 KiB per line. A
// 401 or 403 reads the secret files again (a rotated token is used from the next attempt on).
// Failures are logged, rate-limited, with what to fix.
//
// Send() is called by one thread (the lane's); Abort(), InRequest(), CutRequest() and
// CutIfOverdue() from others.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "plugin/loki/http_connection.h"
#include "plugin/loki/loki_client_config.h"
#include "plugin/loki/loki_credentials.h"
#include "plugin/loki/loki_endpoint.h"
#include "plugin/loki/loki_url.h"
#include "plugin/loki/push_outcome.h"
#include "plugin/loki/request_watchdog.h"

namespace skald {

class LaneSender {
 public:
  using Clock = std::chrono::steady_clock;

  // Throws nothing; `target` and `watchdog` outlive the sender.
  LaneSender(LokiEndpoint& target, LokiCredentials credentials, RequestWatchdog& watchdog);
  ~LaneSender();
  LaneSender(const LaneSender&) = delete;
  LaneSender& operator=(const LaneSender&) = delete;

  struct Result {
    PushOutcome outcome = PushOutcome::kShutdown;
    int status = 0;        // Loki's last answer; 0: there was none
    std::string response;  // its body (at most 64 KiB), or why there was none
  };
  // Pushes `body` (a batch of `entries` entries of `tenant`; empty: the config's) to Loki.
  Result Send(std::string_view body, const std::string& tenant, std::size_t entries)
      ABSL_LOCKS_EXCLUDED(abort_mu_, watch_mu_);

  // Send() returns kShutdown at its next step; a wait between attempts ends at once.
  void Abort() ABSL_LOCKS_EXCLUDED(abort_mu_);
  // True while an attempt is on the network.
  bool InRequest() const { return in_request_.load(); }
  // Shuts the connection down: the attempt in flight fails at once.
  void CutRequest();
  // The watchdog's sweep: cuts the attempt in flight when its deadline is past `now`. Returns
  // the deadline of the attempt still running, or Clock::time_point::max().
  Clock::time_point CutIfOverdue(Clock::time_point now) ABSL_LOCKS_EXCLUDED(watch_mu_);

 private:
  // What one push attempt got back.
  struct Answer {
    bool answered = false;  // a status line and headers arrived (the body may be capped)
    int status = 0;
    std::string body;      // at most 64 KiB
    std::string location;  // the Location header of a redirect
    std::string error;     // why there is no answer
  };

  Answer Attempt(std::string_view body, const std::string& tenant) ABSL_LOCKS_EXCLUDED(watch_mu_);
  // Logs (rate-limited) why a push failed and when it is tried again.
  void LogRetry(const Answer& answer, std::size_t entries, int attempt,
                std::chrono::milliseconds delay);
  // False when aborted during the wait.
  bool SleepUnlessAborted(std::chrono::milliseconds delay) ABSL_LOCKS_EXCLUDED(abort_mu_);
  bool Aborted() const ABSL_LOCKS_EXCLUDED(abort_mu_);
  // Loki refused the credentials: reads the secret files again and, when they changed (a
  // rotated token), uses them from the next attempt on.
  void ReloadCredentials();

  LokiEndpoint& target_;
  const LokiClientConfig& config_;
  RequestWatchdog& watchdog_;
  LokiCredentials credentials_;  // what requests authenticate with (Send's thread)
  std::unique_ptr<HttpConnection> http_;
  // Headers sent with every attempt (User-Agent, loki-headers).
  HttpConnection::Headers headers_;
  std::atomic<bool> in_request_{false};

  mutable absl::Mutex abort_mu_;
  bool aborted_ ABSL_GUARDED_BY(abort_mu_) = false;

  // The deadline of the attempt in flight. The watchdog cuts it (http_->Cut()) holding
  // watch_mu_, and Send arms its next attempt under watch_mu_: a cut never reaches a later one.
  absl::Mutex watch_mu_;
  Clock::time_point deadline_ ABSL_GUARDED_BY(watch_mu_);
  bool armed_ ABSL_GUARDED_BY(watch_mu_) = false;  // an attempt is in flight
};

}  // namespace skald
