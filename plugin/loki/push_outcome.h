// PushOutcome: how the push of one batch ended, and the table from that (and Loki's last
// answer) to what becomes of the batch: sent, split, dropped under a reason, or kept.
//
// Loki's answers: 2xx took the batch. 429, 408, 5xx and transport errors are overload and are
// retried, and so are the configuration errors, answers that say the route is wrong rather
// than the lines: 3xx (redirects are not followed), 401, 403, 404, 405, 407, 410, 411, 415,
// Loki's 400 "no org id", a TLS terminator's 400 about the client certificate, and a 400 or
// 422 whose text is not one of Loki's verdicts on entries (an HTML page, an empty body, a
// proxy's text). The operator fixes the URL, the proxy or the credentials, and the lines, in
// the journal, arrive then. 413 splits the batch down to single entries. Loki's own 400 and
// 422 (its text names the stream, entry, labels or limit at fault) and other 4xx drop the
// batch at once, under the reason Loki's text gives (ClassifyBadRequest).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace skald {

enum class PushOutcome {
  kDelivered,         // 2xx
  kTooLarge,          // 413
  kRejected,          // a 4xx that is not retried
  kRetriesExhausted,  // not durable: loki-retries used up (the last answer says why)
  kShutdown,          // the client stopped before the batch was delivered
};

enum class BatchFate {
  kSent,     // delivered
  kSplit,    // sent again as two halves
  kDropped,  // counted under DropReason(...)
  kKept,     // unsent, settled as not final: the journal replays it
};

// What becomes of a batch of `entries` after `outcome`.
BatchFate FateOf(PushOutcome outcome, std::size_t entries, bool durable);

// The skald_entries_dropped_total{reason} a dropped batch is counted under, from the outcome
// and Loki's last answer (`status` 0: there was none; `body`: its text):
//   kTooLarge          too_large
//   kRejected          400: ClassifyBadRequest(body); other 4xx: bad_request
//   kRetriesExhausted  401, 403, 407, no org id, a client-certificate refusal: unauthorized;
//                      another
//                      configuration error: wrong_url; else retries_exhausted
//   kShutdown          shutdown
std::string DropReason(PushOutcome outcome, int status, std::string_view body);

// Every drop reason the client counts under (also buffer_full and invalid_tenant, which Push
// decides), so that each counter exists from the start.
const std::vector<std::string_view>& AllDropReasons();

// How many entries of a batch of `batch_entries` Loki's 400 `body` refuses. Loki stores the
// valid entries of a request and names the refusals: its distributor groups equal errors
// ("N errors like: a; M errors like: b", or one error alone; older Lokis list them, "N errors:
// a; b"), an ingester counts per stream ("... total ignored: N out of M for stream: ..."). When
// every error is about one entry, that many were refused and the rest were stored. Otherwise
// (a refusal of a stream's labels, a text that is not Loki's) the whole batch counts as
// refused.
std::size_t RefusedEntries(std::string_view body, std::size_t batch_entries);

// Loki's 400 text mapped to a drop reason: structured_metadata_not_allowed, line_too_long,
// too_old, too_far_in_future, stream_limit, else bad_request.
std::string ClassifyBadRequest(std::string_view body);

// A TLS terminator in front of Loki (nginx) answers a missing or refused client certificate
// with 400 and a page saying so: not a verdict on the entries.
bool IsClientCertificateRefusal(int status, std::string_view body);
// Loki's verdict on the entries of a push: a text naming a stream, entry, labels, timestamp or
// limit, as Loki's validation errors do. Empty bodies and HTML pages are not.
bool IsLokiVerdict(std::string_view body);
// Loki's answer to a push without a tenant while it requires one (400 or 401 "no org id").
bool IsMissingTenant(int status, std::string_view body);
// The route to Loki is wrong, not the lines: 405, 407, 410, 411, 415, and a 400 or 422 that
// is not Loki's verdict (whatever answered is not Loki's push endpoint).
bool IsRouteError(int status, std::string_view body);
// A redirect, a refused credential, a missing tenant, a wrong path or route: the operator has
// to fix the configuration. Loki itself answers none of them to a good push.
bool IsConfigurationError(int status, std::string_view body);
// Retried: overload (429, 408, 5xx) and configuration errors.
bool IsRetriedAnswer(int status, std::string_view body);

// An answer's text as it goes into the plugin's log: at most 1 KiB, trailing line breaks
// removed, control bytes escaped (a Loki, or whatever answers at its URL, must not write lines
// of its own into the log dockerd keeps).
std::string AnswerForLog(std::string body);

// How the last push attempt of a client ended: its HTTP status ("204") or "error" (no answer
// within loki-timeout, or a transport error), and when. `status` is empty before the first.
struct PushAttemptStatus {
  std::string status;
  std::chrono::system_clock::time_point at;
};

}  // namespace skald
