// LokiClient: batches finished entries per tenant and pushes them to one Loki endpoint.
//
// It owns batching (loki-batch-size bytes of line + structured metadata, loki-batch-wait, or
// sooner when its producer calls SendBuffered: a full window, a quiet input, a stream's end),
// encoding (protobuf logproto.PushRequest + snappy block: push_encoder.h), sending with
// several requests in flight (streams are sharded over sender lanes by label string, so each
// stream stays in order; each lane pushes through a LaneSender: lane_sender.h), 413 splitting,
// and delivery accounting in the MetricsRegistry. What becomes of a batch after its push is
// the table in push_outcome.h. It knows nothing of containers or Docker.
//
// A push request lives at most loki-timeout, from connecting to the last byte of the answer (a
// watchdog cuts it; only a connect still under way waits for its own timeout), and at most
// 64 KiB of an answer's body is read. Retried, with backoff up to loki-max-backoff: 429, 408,
// 5xx, transport errors and timeouts, and the configuration errors 3xx (redirects are not
// followed), 401, 403 and 404, which are logged with what to fix. With the journal (durable)
// retries go on until Loki takes the batch; without it (no-file) a batch is dropped after
// loki-retries, as a user who keeps no journal accepts losing lines to a long failure. Other
// 4xx (400, 422, ...) drop the batch at once; 413 splits it down to single entries.
//
// Push() never blocks on the network: entries wait in a bounded in-memory buffer; when the
// buffer is full the oldest unsent entries of the fullest queue (a lane's tenant) are dropped
// and counted (reason "buffer_full"), so a flooding stream loses its own lines first.
// Memory is bounded by max_buffered_bytes plus the batches in flight (lanes x batch size).
// Thread-safe. The registry must outlive the client.
//
// Metrics (shared by every client of a registry; counters unless noted):
//   skald_entries_sent_total, skald_sent_bytes_total        delivered entries, their line +
//                                                          structured-metadata bytes
//   skald_encoded_bytes_total                              request bodies built (compressed)
//   skald_entries_dropped_total{reason}, skald_dropped_bytes_total{reason}
//       reason: buffer_full, retries_exhausted, bad_request (400 not classified below, other
//       4xx), line_too_long, too_old, too_far_in_future, stream_limit,
//       structured_metadata_not_allowed (400 classified from Loki's text), unauthorized
//       (401/403) and wrong_url (3xx/404) after loki-retries without the journal, too_large (a
//       single entry still 413), shutdown, invalid_tenant (an entry's tenant is not a valid
//       tenant ID: pipeline_stages/tenant_id.h; the entry alone is dropped, never its batch)
//   skald_pushes_total{status_code}                        HTTP attempts; "error" = transport
//                                                          error or loki-timeout reached
//   skald_batch_retries_total                              retried attempts
//   skald_push_duration_seconds{status} (histogram)        time of each push attempt, from
//                                                          connecting to the end of the answer,
//                                                          by status class: 2xx, 3xx, 4xx, 5xx,
//                                                          error (as skald_pushes_total)
//   skald_client_pending_entries (gauge)                   accepted, not yet delivered/dropped
// Credentials in the URL (user:password@, see loki_url.h) are sent as basic auth and never
// logged: logs and errors name the URL without its user info. The configuration, its checks and
// its sharing key are in loki_client_config.h; the entry type in loki_entry.h.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "plugin/loki/loki_client_config.h"
#include "plugin/loki/loki_entry.h"
#include "plugin/loki/loki_url.h"
#include "plugin/loki/push_outcome.h"
#include "plugin/metrics/metrics.h"

namespace skald {

class LokiClient {
 public:
  // Throws std::invalid_argument (ValidateLokiClientConfig's message) for a bad config, and
  // std::runtime_error when its threads cannot all start; then none is left running.
  LokiClient(LokiClientConfig config, MetricsRegistry& metrics);
  ~LokiClient();  // Stop(0)
  LokiClient(const LokiClient&) = delete;
  LokiClient& operator=(const LokiClient&) = delete;

  void Push(LokiEntry entry);
  // Push() of each entry, in order, taking the client's lock once; `entries` is left empty.
  void PushAll(std::vector<LokiEntry>& entries);

  // Sends what is buffered now, waiting at most `deadline` for it to be acknowledged.
  // Returns true when everything pushed so far was delivered or dropped.
  bool Flush(std::chrono::milliseconds deadline);

  // Sends what is buffered now without waiting for loki-batch-wait or a full batch, and
  // returns at once. For a producer whose memory window is full: it gets room back only when
  // these entries are acknowledged.
  void SendBuffered();

  // Flush(deadline), then stops the lanes; entries still unsent are counted as dropped
  // (reason "shutdown"). No Push() after Stop().
  void Stop(std::chrono::milliseconds deadline);

  // Entries accepted by Push() and neither delivered nor dropped yet.
  uint64_t Pending() const;
  // When the oldest entry the client holds (buffered or being sent) was handed to Push();
  // nullopt when it holds none.
  std::optional<std::chrono::steady_clock::time_point> OldestPendingSince() const;
  // How the last push attempt ended: its HTTP status ("204") or "error" (no answer within
  // loki-timeout, or a transport error), and when. `status` is empty before the first.
  using PushResult = PushAttemptStatus;
  PushResult LastPush() const;
  // Whether Loki takes the pushes now: false from an attempt that failed and is retried (no
  // answer, 5xx, 429, a route error) until one is settled by Loki's answer; true before the
  // first.
  bool Taking() const;
  // The memory of the entries buffered and not yet in a push (what max_buffered_bytes bounds).
  std::size_t BufferedBytes() const;

  const LokiClientConfig& config() const;

  // From now on, creating a thread fails (std::system_error, as when the system has no more)
  // once `threads` more have started, in any client; -1 lifts the limit. For tests.
  static void SetThreadLimitForTesting(int threads);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace skald
