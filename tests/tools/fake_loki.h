// FakeLoki: an in-process stand-in for Loki's push endpoint, for tests and benchmarks.
//
// It serves POST /loki/api/v1/push on 127.0.0.1 (snappy block + protobuf PushRequest, as Loki
// does), keeps every stream's entries in arrival order per (tenant, labels), drops and counts
// duplicates the way an ingester does (same tenant, labels, timestamp, line and metadata), and
// records each request's X-Scope-OrgID and basic-auth credentials. Faults can be injected: an
// answer for the next K requests or for all of them (any status, headers such as a redirect's
// Location, a huge generated body, a body dripped byte by byte), a delay before answering, 413
// above a body size, Loki's 400 for structured metadata or long lines; the same faults can be
// set at run time over HTTP (POST /control/fail?status=S&count=K, /control/delay?ms=D,
// /control/clear, /control/reset). GET /stats answers a JSON summary. Answers that are not HTTP
// at all come from ScriptedHttpPeer (scripted_http_peer.h).
// Thread-safe; Start() before use, Stop() (or the destructor) joins the server thread.
#pragma once

#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

namespace httplib {
class Server;
struct Response;
}  // namespace httplib

namespace skald::testkit {

class FakeLoki {
 public:
  struct Entry {
    int64_t timestamp_ns = 0;
    std::string line;
    std::vector<std::pair<std::string, std::string>> structured_metadata;
  };
  struct Stream {
    std::string tenant;  // X-Scope-OrgID of the requests ("" when absent)
    std::string labels;
    std::vector<Entry> entries;  // arrival order, duplicates removed (if retained)
    uint64_t count = 0;          // entries stored, also when not retained
    int64_t newest_ns = INT64_MIN;
  };

  FakeLoki();
  ~FakeLoki();
  FakeLoki(const FakeLoki&) = delete;
  FakeLoki& operator=(const FakeLoki&) = delete;

  // Listens on host:port (port 0 = chosen by the OS). Returns false when it cannot bind.
  bool Start(int port = 0, const std::string& host = "127.0.0.1");
  // The same over TLS; with a client CA, clients must present a certificate it signed.
  struct TlsFiles {
    std::string cert_file;
    std::string key_file;
    std::string client_ca_file;
  };
  bool StartTls(const TlsFiles& files, int port = 0, const std::string& host = "127.0.0.1");
  void Stop();

  int port() const { return port_; }
  // http(s)://127.0.0.1:<port>/loki/api/v1/push, optionally with user info.
  std::string PushUrl(const std::string& userinfo = "") const;

  // --- fault injection ---
  // An answer given in place of handling a push request; nothing of the request is stored.
  struct Answer {
    int status = 500;
    std::string body;  // "" = "injected failure for stream '{fake=\"loki\"}'\n"
    std::vector<std::pair<std::string, std::string>> headers;  // e.g. {"Location", "http://..."}
    uint64_t filler_bytes = 0;          // bytes generated after `body`: a huge body
    std::chrono::milliseconds drip{0};  // > 0: the body goes out one byte per `drip`
  };
  // Gives `answer` to the next `count` push requests; count -1: to every one until
  // ClearFailures() or Reset().
  void AnswerNext(Answer answer, int count);
  // Answers `status` (with `body`) to the next `count` push requests.
  void FailNext(int status, int count, std::string body = "");
  // Answers `status` to every push request until ClearFailures() or Reset().
  void FailAll(int status, std::string body = "");
  void ClearFailures();
  // Waits this long before handling each push request.
  void SetDelay(std::chrono::milliseconds delay);
  // Answers 413 to bodies (compressed) larger than this; 0 = no limit.
  void SetMaxBodyBytes(std::size_t bytes);
  // Answers 400 with Loki's message when a request carries structured metadata.
  void SetRejectStructuredMetadata(bool reject);
  // Refuses lines longer than this with Loki's 400 (storing the other entries, as Loki does).
  void SetMaxLineBytes(std::size_t bytes);
  // false: only count entries (per stream, in order), keep neither lines nor the duplicate
  // index; for long benchmarks. Default true.
  void SetRetainEntries(bool retain);
  // Clears data, counters and faults.
  void Reset();

  // --- observation ---
  std::vector<Stream> Streams() const;
  // Entries of one stream, in arrival order (empty when unknown).
  std::vector<Entry> EntriesOf(const std::string& labels, const std::string& tenant = "") const;
  uint64_t TotalEntries() const;  // stored (deduplicated) entries
  uint64_t Duplicates() const;
  uint64_t OutOfOrder() const;  // entries older than their stream's newest at arrival
  uint64_t Requests() const;    // push requests received, whatever the answer
  // Push requests that came in proxy form (absolute URL in the request line).
  uint64_t ProxiedRequests() const;
  std::map<int, uint64_t> StatusCounts() const;
  std::vector<std::string> Tenants() const;  // per request, "" when absent
  // Per request: decoded "user:pass" (basic), "Bearer TOKEN" (bearer) or "".
  std::vector<std::string> Authorizations() const;
  // Per push request: its headers, as sent (a repeated name's values joined).
  std::vector<std::map<std::string, std::string>> RequestHeaders() const;
  std::vector<std::size_t> BodySizes() const;  // per request, compressed bytes
  // Body bytes of injected answers that were written to clients (a client that stops reading
  // a huge body leaves the rest unwritten).
  uint64_t AnswerBytesWritten() const;
  // Waits until TotalEntries() >= n; false on timeout.
  bool WaitForEntries(uint64_t n, std::chrono::milliseconds timeout) const;
  std::string StatsJson() const;

 private:
  struct Handled {
    int status;
    std::string body;
    std::shared_ptr<const Answer> injected;  // set when the answer was injected
  };
  bool Listen(int port, const std::string& host);
  // Puts an injected answer into `res` (headers, body, a generated or dripped body).
  void Inject(const std::shared_ptr<const Answer>& answer, httplib::Response& res);
  Handled HandlePush(const std::string& body, const std::string& tenant,
                     const std::string& authorization);

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  bool tls_ = false;

  mutable std::mutex mu_;
  mutable std::condition_variable entries_cv_;
  std::condition_variable stop_cv_;  // cuts injected delays short on Stop()
  bool stopping_ = false;
  // Faults.
  std::shared_ptr<const Answer> fail_answer_;  // held by a handler while it answers
  int64_t fail_remaining_ = 0;                 // -1 = every request
  std::atomic<uint64_t> answer_bytes_written_{0};
  std::chrono::milliseconds delay_{0};
  std::size_t max_body_bytes_ = 0;
  bool reject_structured_metadata_ = false;
  std::size_t max_line_bytes_ = 0;
  bool retain_entries_ = true;
  // Data.
  std::map<std::pair<std::string, std::string>, Stream> streams_;  // (tenant, labels)
  std::unordered_set<std::string> seen_;
  uint64_t total_entries_ = 0;
  uint64_t duplicates_ = 0;
  uint64_t out_of_order_ = 0;
  uint64_t requests_ = 0;
  uint64_t proxied_requests_ = 0;
  std::map<int, uint64_t> status_counts_;
  std::vector<std::string> tenants_;
  std::vector<std::string> authorizations_;
  std::vector<std::map<std::string, std::string>> request_headers_;
  std::vector<std::size_t> body_sizes_;
};

}  // namespace skald::testkit
