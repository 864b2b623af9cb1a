#include "plugin/loki_client.h"

#include <httplib.h>
#include <netdb.h>
#include <openssl/evp.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <climits>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "pipeline_stages/tenant_id.h"
#include "plugin/backoff.h"
#include "plugin/log_limiter.h"
#include "plugin/push_encoder.h"
#include "plugin/thread_name.h"
#include "plugin/user_files.h"

namespace skald {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxLoggedBodyBytes = 1024;
// Loki answers a push with an empty body or a line of text; more is not read (the connection
// is closed), so that a wrong or hostile peer cannot fill the plugin's memory.
constexpr std::size_t kMaxResponseBodyBytes = 64 * 1024;

// Push request times: from a few milliseconds on a LAN to loki-timeout (10 s by default).
const std::vector<double> kPushDurationBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                  1,     2.5,  5,     10,   30,  60};

Histogram& PushDuration(MetricsRegistry& m, const std::string& status_class) {
  return m.GetHistogram("skald_push_duration_seconds",
                        "Push request time, from connecting to the end of the answer, by status "
                        "class (2xx, 3xx, 4xx, 5xx; error: no answer).",
                        kPushDurationBuckets, {{"status", status_class}});
}

// Threads that may still start, for tests (LokiClient::SetThreadLimitForTesting); -1: no limit.
std::atomic<int> thread_limit_for_testing{-1};

std::thread StartThread(const char* name, std::function<void()> body) {
  int left = thread_limit_for_testing.load();
  while (left >= 0) {
    if (left == 0) throw std::system_error(EAGAIN, std::generic_category(), "thread limit (test)");
    if (thread_limit_for_testing.compare_exchange_weak(left, left - 1)) break;
  }
  return std::thread([name, body = std::move(body)] {
    SetThreadName(name);
    body();
  });
}

// A redirect, a refused credential or a wrong path: the operator has to fix the configuration.
// Loki itself answers none of them to a good push.
// A TLS terminator in front of Loki (nginx) answers a missing or refused client certificate
// with 400 and a page saying so: not a verdict on the entries.
bool IsClientCertificateRefusal(int status, std::string_view body) {
  return status == 400 && body.find("SSL certificate") != std::string_view::npos;
}

// An answer that says the configuration is wrong (the URL, the credentials), not the entries:
// with the journal it is retried until the operator fixes it.
bool IsConfigurationError(int status, std::string_view body) {
  return (status >= 300 && status < 400) || status == 401 || status == 403 || status == 404 ||
         IsClientCertificateRefusal(status, body);
}

constexpr std::size_t kEntryOverheadBytes = 64;  // bookkeeping per buffered entry, roughly

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string HostForUrl(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

std::string Sha256Hex(std::string_view data, std::size_t hex_chars) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len && out.size() < hex_chars; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xF];
  }
  return out;
}

// Numeric address of `host` (itself when already numeric), "" when it does not resolve.
std::string ResolveNumeric(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &result) != 0 || result == nullptr) return "";
  char buf[NI_MAXHOST];
  std::string out;
  if (getnameinfo(result->ai_addr, result->ai_addrlen, buf, sizeof(buf), nullptr, 0,
                  NI_NUMERICHOST) == 0) {
    out = buf;
  }
  freeaddrinfo(result);
  return out;
}

// ---- accounting ----

std::size_t EntryBytes(const LokiEntry& e) {
  std::size_t n = e.line.size();
  for (const auto& [name, value] : e.structured_metadata) n += name.size() + value.size();
  return n;
}

// The selector is shared by the entries of a stream: not counted per entry.
std::size_t EntryMemory(const LokiEntry& e) {
  std::size_t n = kEntryOverheadBytes + e.tenant.size() + e.line.size();
  for (const auto& [name, value] : e.structured_metadata) n += 32 + name.size() + value.size();
  return n;
}

// Loki answers 400 with a plain-text reason; map the common ones to a drop reason.
std::string ClassifyBadRequest(const std::string& body) {
  const std::string text = Lower(body);
  const auto has = [&](std::string_view s) { return text.find(s) != std::string::npos; };
  if (has("structured metadata") && (has("disallowed") || has("not allowed"))) {
    return "structured_metadata_not_allowed";
  }
  if (has("max entry size") || has("line too long") || has("entry with length")) {
    return "line_too_long";
  }
  if (has("too old")) return "too_old";
  if (has("too new") || has("too far in the future") || has("in the future")) {
    return "too_far_in_future";
  }
  if (has("stream limit") || has("streams limit") || has("maximum active stream")) {
    return "stream_limit";
  }
  return "bad_request";
}

const char* const kDropReasons[] = {
    "buffer_full",  "retries_exhausted", "bad_request",  "line_too_long",
    "too_old",      "too_far_in_future", "stream_limit", "structured_metadata_not_allowed",
    "unauthorized", "too_large",         "shutdown",     "invalid_tenant",
    "wrong_url"};

// An answer's text as it goes into the plugin's log: at most kMaxLoggedBodyBytes, control
// bytes escaped (a Loki, or whatever answers at its URL, must not write lines of its own into
// the log dockerd keeps).
std::string Truncate(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  const bool cut = s.size() > kMaxLoggedBodyBytes;
  if (cut) s.resize(kMaxLoggedBodyBytes);
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (cut) out += "...";
  return out;
}

}  // namespace

namespace {

// RFC 9110 token characters (header names).
bool IsTokenChar(unsigned char c) {
  return std::isalnum(c) ||
         std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

std::string Lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Why a loki-headers entry cannot be sent, or "". Never shows the value (it may be a key).
std::string HeaderError(const std::string& name, const std::string& value) {
  if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) {
        return IsTokenChar(static_cast<unsigned char>(c));
      })) {
    return "'" + RedactUrl(name) + "' is not a header name (letters, digits and !#$%&'*+-.^_`|~)";
  }
  const std::string lower = Lowered(name);
  if (lower == "host") return "Host is set from loki-url (or loki-tls-server-name)";
  if (lower.rfind("content-", 0) == 0) return name + " is set by the plugin";
  if (lower == "authorization") {
    return "Authorization is set by loki-url's user:password@, loki-basic-auth-username with "
           "loki-basic-auth-password-file, or loki-bearer-token(-file)";
  }
  if (lower == "x-scope-orgid") return "X-Scope-OrgID is set by loki-tenant-id";
  for (unsigned char c : value) {
    if (c < 0x20 && c != '\t') return "the value of " + name + " holds a control character";
    if (c == 0x7f) return "the value of " + name + " holds a control character";
  }
  return "";
}

// Why the client's credentials are not usable as given, or "".
std::string AuthError(const LokiClientConfig& config, const ParsedUrl& url) {
  const LokiAuthConfig& a = config.auth;
  const bool basic = !a.basic_username.empty() || !a.basic_password_file.empty();
  const bool bearer = !a.bearer_token.empty() || !a.bearer_token_file.empty();
  std::vector<std::string> given;
  if (url.has_userinfo) given.push_back("loki-url's user:password@");
  if (basic) given.push_back("loki-basic-auth-username/-password-file");
  if (bearer) given.push_back("loki-bearer-token(-file)");
  if (given.size() > 1) {
    std::string list;
    for (const auto& g : given) list += (list.empty() ? "" : ", ") + g;
    return "authentication: give one way to authenticate, not several (" + list + ")";
  }
  if (!a.bearer_token.empty() && !a.bearer_token_file.empty()) {
    return "loki-bearer-token and loki-bearer-token-file: give one of them";
  }
  if (basic && (a.basic_username.empty() || a.basic_password_file.empty())) {
    return "loki-basic-auth-username and loki-basic-auth-password-file: give both";
  }
  for (unsigned char c : a.bearer_token) {
    if (c < 0x21 || c == 0x7f) return "loki-bearer-token: holds a space or control character";
  }
  for (unsigned char c : a.basic_username) {
    if (c < 0x20 || c == 0x7f || c == ':') {
      return "loki-basic-auth-username: holds ':' or a control character";
    }
  }
  return "";
}

// What the client authenticates with, the secret files read.
struct Credentials {
  std::string basic_user;
  std::string basic_password;
  std::string bearer;
  friend bool operator==(const Credentials&, const Credentials&) = default;
};

constexpr std::size_t kMaxSecretFileBytes = 64 * 1024;

// A secret file's content without trailing white space (a newline an editor adds).
bool ReadSecret(std::string_view option, const std::string& path, std::string* out,
                std::string* error) {
  if (!ReadUserFile(option, path, kMaxSecretFileBytes, out, error)) return false;
  while (!out->empty() && std::isspace(static_cast<unsigned char>(out->back()))) out->pop_back();
  if (out->empty()) {
    *error = std::string(option) + ": '" + path + "' is empty";
    return false;
  }
  for (unsigned char c : *out) {
    if (c < 0x20 || c == 0x7f) {
      *error = std::string(option) + ": '" + path + "' holds a control character";
      return false;
    }
  }
  return true;
}

// Reads what `config` authenticates with. False with *error naming the option and the file.
bool LoadCredentials(const LokiClientConfig& config, const ParsedUrl& url, Credentials* out,
                     std::string* error) {
  Credentials c;
  if (url.has_userinfo) {
    c.basic_user = url.user;
    c.basic_password = url.password;
  }
  const LokiAuthConfig& a = config.auth;
  if (!a.basic_username.empty()) {
    c.basic_user = a.basic_username;
    if (!ReadSecret("loki-basic-auth-password-file", a.basic_password_file, &c.basic_password,
                    error)) {
      return false;
    }
  }
  c.bearer = a.bearer_token;
  if (!a.bearer_token_file.empty() &&
      !ReadSecret("loki-bearer-token-file", a.bearer_token_file, &c.bearer, error)) {
    return false;
  }
  *out = std::move(c);
  return true;
}

void ApplyCredentials(httplib::Client& http, const Credentials& c) {
  if (!c.bearer.empty()) {
    http.set_bearer_token_auth(c.bearer);
  } else if (!c.basic_user.empty() || !c.basic_password.empty()) {
    http.set_basic_auth(c.basic_user, c.basic_password);
  }
}

// The TLS files are read when the first request connects: a client checks them when it is
// made, so that a wrong path fails the container's start with its name rather than every push
// later.
std::string CheckTlsFiles(const LokiClientConfig& config) {
  for (const auto& [option, path] : {std::pair{"loki-tls-ca-file", config.tls.ca_file},
                                     std::pair{"loki-tls-cert-file", config.tls.cert_file},
                                     std::pair{"loki-tls-key-file", config.tls.key_file}}) {
    std::string content, err;
    if (!path.empty() && !ReadUserFile(option, path, 16 * 1024 * 1024, &content, &err)) {
      return err;
    }
  }
  return "";
}

}  // namespace

std::string CheckLokiClientFiles(const LokiClientConfig& config) {
  ParsedUrl url;
  ParseUrl(config.url, url);
  Credentials unused;
  if (std::string err; !LoadCredentials(config, url, &unused, &err)) return err;
  return CheckTlsFiles(config);
}

std::string ValidateLokiClientConfig(const LokiClientConfig& config) {
  ParsedUrl url;
  if (std::string err = ParseUrl(config.url, url); !err.empty()) {
    return "loki-url '" + RedactUrl(config.url) + "': " + err;
  }
  if (std::string err = AuthError(config, url); !err.empty()) return err;
  for (const auto& [name, value] : config.headers) {
    if (std::string err = HeaderError(name, value); !err.empty()) return "loki-headers: " + err;
  }
  if (!config.proxy_url.empty()) {
    ParsedUrl proxy;
    if (std::string err = ParseUrl(config.proxy_url, proxy); !err.empty()) {
      return "loki-proxy-url '" + RedactUrl(config.proxy_url) + "': " + err;
    }
    if (proxy.scheme != "http") {
      return "loki-proxy-url '" + RedactUrl(config.proxy_url) +
             "': only http:// proxies are supported";
    }
  }
  if (config.tls.cert_file.empty() != config.tls.key_file.empty()) {
    return "loki-tls-cert-file and loki-tls-key-file: give both or neither";
  }
  if (std::string why = stages::TenantIdError(config.tenant_id); !why.empty()) {
    return "loki-tenant-id: " + why;
  }
  if (config.batch_size_bytes == 0) return "loki-batch-size: must be at least 1 byte";
  if (config.timeout.count() <= 0) return "loki-timeout: must be positive";
  if (config.min_backoff > config.max_backoff) {
    return "loki-min-backoff (" + std::to_string(config.min_backoff.count()) +
           "ms) is larger than loki-max-backoff (" + std::to_string(config.max_backoff.count()) +
           "ms)";
  }
  return "";
}

std::string LokiClientConfig::Key() const {
  std::string key;
  const auto field = [&](std::string_view name, const std::string& value) {
    key += name;
    key += '=';
    key += value;
    key += ';';
  };
  ParsedUrl parsed;
  field("url", RedactUrl(url));
  if (ParseUrl(url, parsed).empty() && parsed.has_userinfo) {
    field("auth", Sha256Hex(parsed.user + '\0' + parsed.password, 16));
  }
  field("tenant", tenant_id);
  field("timeout_ms", std::to_string(timeout.count()));
  field("batch_wait_ms", std::to_string(batch_wait.count()));
  field("batch_size", std::to_string(batch_size_bytes));
  field("min_backoff_ms", std::to_string(min_backoff.count()));
  field("max_backoff_ms", std::to_string(max_backoff.count()));
  field("retries", std::to_string(max_retries));
  field("ca", tls.ca_file);
  field("cert", tls.cert_file);
  field("key", tls.key_file);
  field("server_name", tls.server_name);
  field("insecure", tls.insecure_skip_verify ? "1" : "0");
  field("basic_user", auth.basic_username);
  field("basic_password_file", auth.basic_password_file);
  field("bearer_token_file", auth.bearer_token_file);
  if (!auth.bearer_token.empty()) field("bearer", Sha256Hex(auth.bearer_token, 16));
  if (!headers.empty()) {
    std::string all;
    for (const auto& [n, v] : headers) all += n + '\0' + v + '\0';
    field("headers", Sha256Hex(all, 16));  // values may be keys: only a digest
  }
  field("proxy", RedactUrl(proxy_url));
  if (!proxy_url.empty() && ParseUrl(proxy_url, parsed).empty() && parsed.has_userinfo) {
    field("proxy_auth", Sha256Hex(parsed.user + '\0' + parsed.password, 16));
  }
  field("max_buffered", std::to_string(max_buffered_bytes));
  field("lanes", std::to_string(lanes));
  field("durable", durable ? "1" : "0");
  return key;
}

// ---- the client ----

struct LokiClient::Impl {
  struct Queued {
    LokiEntry entry;  // entry.tenant holds the effective tenant
    uint64_t seq;
    Clock::time_point enqueued;
    std::size_t bytes;   // line + structured metadata
    std::size_t memory;  // counted against max_buffered_bytes
  };
  // Entries of one tenant waiting in one lane, oldest first.
  struct TenantQueue {
    std::deque<Queued> entries;
    std::size_t bytes = 0;
  };
  struct Lane {
    std::map<std::string, TenantQueue> tenants;
    Credentials credentials;  // what `http` authenticates with (this lane's thread)
    std::condition_variable cv;
    uint64_t inflight_min_seq = UINT64_MAX;  // oldest entry of the batch being sent
    Clock::time_point inflight_since;        // when that entry was pushed
    std::thread thread;
    std::unique_ptr<httplib::Client> http;
    std::atomic<bool> in_request{false};
    std::atomic<bool> finished{false};
    // The request deadline. The watchdog cuts a request (http->stop()) while holding watch_mu,
    // and a lane arms its next request under watch_mu: a cut can never reach a later request.
    std::mutex watch_mu;
    Clock::time_point deadline;  // guarded by watch_mu
    bool armed = false;          // guarded by watch_mu: a request is in flight
    bool cut = false;            // guarded by watch_mu: the watchdog cut it
    PushEncoder encoder;
    // Scratch for grouping a batch by stream.
    std::unordered_map<std::string_view, std::size_t> stream_index;
    std::vector<std::string_view> stream_labels;
    std::vector<std::vector<const LokiEntry*>> stream_entries;
    std::vector<PushStream> streams;
  };
  enum class Outcome { kDelivered, kTooLarge, kRejected, kRetriesExhausted, kShutdown };
  // What one push attempt got back.
  struct Answer {
    bool answered = false;  // a status line and headers arrived (the body may be capped)
    int status = 0;
    std::string body;      // at most kMaxResponseBodyBytes
    std::string location;  // the Location header of a redirect
    std::string error;     // why there is no answer
  };
  struct DropCounters {
    Counter* entries;
    Counter* bytes;
  };

  Impl(LokiClientConfig c, MetricsRegistry& m);
  ~Impl();

  void Push(LokiEntry entry);
  void PushAll(std::vector<LokiEntry>& entries);
  bool Flush(std::chrono::milliseconds deadline);
  void SendBuffered();
  void Stop(std::chrono::milliseconds deadline);

  void LaneLoop(Lane& lane);
  // Delivers `batch` (one tenant), splitting on 413; accounts for every entry.
  void Deliver(Lane& lane, std::span<Queued> batch);
  Outcome SendWithRetries(Lane& lane, std::string_view body, const std::string& tenant,
                          std::size_t entries, int& status, std::string& response);
  Answer Attempt(Lane& lane, std::string_view body, const httplib::Headers& headers);
  // Logs (rate-limited) why a push failed and when it is tried again.
  void LogRetry(const Answer& answer, std::size_t entries, int attempt,
                std::chrono::milliseconds delay);
  // Cuts requests that outlive loki-timeout.
  void WatchdogLoop();
  // Ends the lanes (a request in flight is cut) and the watchdog, and joins those started.
  void StopThreads();
  bool SleepUnlessAborted(Lane& lane, std::chrono::milliseconds delay);
  std::unique_ptr<httplib::Client> MakeHttpClient();
  void RefreshServerNameAddress(httplib::Client& http);
  // What to check when a TLS connection failed, or "".
  std::string TlsHint(httplib::Error error) const;
  // Loki refused the credentials: reads the secret files again and, when they changed (a
  // rotated token), uses them from the next attempt on (the lane's thread).
  void ReloadCredentials(Lane& lane);

  // Counts a push attempt that took `elapsed` in skald_push_duration_seconds; LastPush().
  void RecordAttempt(const Answer& answer, Clock::duration elapsed);
  std::optional<Clock::time_point> OldestPendingSince() const;

  // Account entries that leave the client. Lock-free.
  void CountDropped(const std::string& reason, uint64_t entries, uint64_t bytes);
  void CountDropped(const std::string& reason, std::span<const Queued> batch);
  void Settle(uint64_t entries);
  // Tells the producers of `batch` (their tickets' listeners) that the entries left.
  static void Notify(std::span<const Queued> batch, bool final);
  static void Notify(const LokiEntry& entry, bool final);
  // Removes the oldest entry of the fullest queue (caller holds mu_). False when none is.
  bool DropOldestLocked();
  bool FlushedLocked(uint64_t target) const;

  LokiClientConfig config;
  MetricsRegistry& metrics;
  ParsedUrl url;
  ParsedUrl proxy;
  std::string redacted_url;
  Credentials credentials_;  // as read when the client started (lanes keep their own)

  Counter& entries_sent;
  Counter& sent_bytes;
  Counter& encoded_bytes;
  Counter& batch_retries;
  Gauge& pending_gauge;
  std::map<std::string, DropCounters> drops;
  std::map<std::string, Histogram*> push_durations;  // by status class
  mutable std::mutex last_push_mu_;
  LokiClient::PushResult last_push_;  // guarded by last_push_mu_
  LogLimiter log_limiter;

  mutable std::mutex mu_;
  std::condition_variable done_cv_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  uint64_t next_seq_ = 0;
  uint64_t flush_target_ = 0;  // entries with seq below this are sent without waiting
  std::size_t queued_memory_ = 0;
  bool closed_ = false;   // Push() refused
  bool aborted_ = false;  // lanes stop sending
  bool stopped_ = false;
  std::atomic<uint64_t> pending_{0};

  std::thread watchdog_;
  std::mutex watchdog_mu_;
  std::condition_variable watchdog_cv_;
  uint64_t armed_seq_ = 0;      // guarded by watchdog_mu_: requests armed so far
  bool watchdog_quit_ = false;  // guarded by watchdog_mu_
};

LokiClient::Impl::Impl(LokiClientConfig c, MetricsRegistry& m)
    : config(std::move(c)),
      metrics(m),
      entries_sent(m.GetCounter("skald_entries_sent_total", "Entries delivered to Loki.")),
      sent_bytes(m.GetCounter("skald_sent_bytes_total",
                              "Line and structured-metadata bytes delivered to Loki.")),
      encoded_bytes(m.GetCounter("skald_encoded_bytes_total",
                                 "Bytes of push request bodies built (protobuf + snappy).")),
      batch_retries(m.GetCounter("skald_batch_retries_total", "Push attempts retried.")),
      pending_gauge(m.GetGauge("skald_client_pending_entries",
                               "Entries accepted and not yet delivered or dropped.")) {
  if (std::string err = ValidateLokiClientConfig(config); !err.empty()) {
    throw std::invalid_argument(err);
  }
  ParseUrl(config.url, url);
  if (!config.proxy_url.empty()) ParseUrl(config.proxy_url, proxy);
  redacted_url = RedactUrl(config.url);
  if (std::string err; !LoadCredentials(config, url, &credentials_, &err)) {
    throw std::invalid_argument(err);
  }
  if (std::string err = CheckTlsFiles(config); !err.empty()) throw std::invalid_argument(err);
  if (config.lanes < 1) config.lanes = 1;
  for (const char* reason : kDropReasons) {
    const MetricLabels labels = {{"reason", reason}};
    drops[reason] = {
        &m.GetCounter("skald_entries_dropped_total", "Entries dropped, by reason.", labels),
        &m.GetCounter("skald_dropped_bytes_total",
                      "Line and structured-metadata bytes of dropped entries, by reason.", labels)};
  }
  for (const char* status : {"2xx", "3xx", "4xx", "5xx", "error"}) {
    push_durations[status] = &PushDuration(m, status);
  }
  for (int i = 0; i < config.lanes; ++i) {
    auto lane = std::make_unique<Lane>();
    lane->credentials = credentials_;
    lane->http = MakeHttpClient();
    lanes_.push_back(std::move(lane));
  }
  // A thread that cannot start must not leave the others running (a joinable std::thread
  // destroyed by the unwinding would end the process): stop those started, then report.
  try {
    for (auto& lane : lanes_) {
      Lane* l = lane.get();
      l->thread = StartThread("skald-lane", [this, l] { LaneLoop(*l); });
    }
    watchdog_ = StartThread("skald-watchdog", [this] { WatchdogLoop(); });
  } catch (const std::exception& e) {
    StopThreads();
    throw std::runtime_error("skald: cannot start the Loki client for " + redacted_url +
                             ": cannot create a thread (" + e.what() + ")");
  }
}

LokiClient::Impl::~Impl() { Stop(std::chrono::milliseconds(0)); }

std::unique_ptr<httplib::Client> LokiClient::Impl::MakeHttpClient() {
  const bool https = url.scheme == "https";
  // With a TLS server name, connect to that name (SNI and certificate check) and map it to the
  // URL host's address; the Host header still names the URL host (see Deliver).
  const std::string& connect_host =
      https && !config.tls.server_name.empty() ? config.tls.server_name : url.host;
  const std::string base =
      url.scheme + "://" + HostForUrl(connect_host) + ":" + std::to_string(url.port);
  std::unique_ptr<httplib::Client> http;
  if (https && !config.tls.cert_file.empty()) {
    http = std::make_unique<httplib::Client>(base, config.tls.cert_file, config.tls.key_file);
  } else {
    http = std::make_unique<httplib::Client>(base);
  }
  http->set_keep_alive(true);
  http->set_tcp_nodelay(true);  // headers and body go out in separate writes
  http->set_follow_location(false);
  http->set_connection_timeout(config.timeout);
  http->set_read_timeout(config.timeout);
  http->set_write_timeout(config.timeout);
  ApplyCredentials(*http, credentials_);
  if (!config.proxy_url.empty()) {
    http->set_proxy(proxy.host, proxy.port);
    if (proxy.has_userinfo) http->set_proxy_basic_auth(proxy.user, proxy.password);
  }
  if (https) {
    if (!config.tls.ca_file.empty()) http->set_ca_cert_path(config.tls.ca_file);
    http->enable_server_certificate_verification(!config.tls.insecure_skip_verify);
    if (!config.tls.server_name.empty()) RefreshServerNameAddress(*http);
  }
  return http;
}

void LokiClient::Impl::ReloadCredentials(Lane& lane) {
  if (config.auth.bearer_token_file.empty() && config.auth.basic_password_file.empty()) return;
  Credentials fresh;
  std::string err;
  uint64_t suppressed = 0;
  if (!LoadCredentials(config, url, &fresh, &err)) {
    if (log_limiter.Allow("credentials", suppressed)) {
      spdlog::error("loki client {}: {}{}", redacted_url, err, Suppressed(suppressed));
    }
    return;
  }
  if (fresh == lane.credentials) return;
  lane.credentials = std::move(fresh);
  ApplyCredentials(*lane.http, lane.credentials);
  if (log_limiter.Allow("credentials", suppressed)) {
    spdlog::info(
        "loki client {}: Loki refused the credentials; the secret file changed, using "
        "it from now on{}",
        redacted_url, Suppressed(suppressed));
  }
}

void LokiClient::Impl::RefreshServerNameAddress(httplib::Client& http) {
  const std::string address = ResolveNumeric(url.host);
  if (!address.empty()) http.set_hostname_addr_map({{config.tls.server_name, address}});
}

void LokiClient::Impl::RecordAttempt(const Answer& answer, Clock::duration elapsed) {
  std::string status = "error";
  if (answer.answered) status = std::to_string(answer.status);
  const std::string status_class = answer.answered && answer.status >= 100 && answer.status < 600
                                       ? status.substr(0, 1) + "xx"
                                       : "error";
  auto it = push_durations.find(status_class);
  Histogram& h = it != push_durations.end() ? *it->second : PushDuration(metrics, status_class);
  h.Observe(std::chrono::duration<double>(elapsed).count());
  std::lock_guard lock(last_push_mu_);
  last_push_.status = std::move(status);
  last_push_.at = std::chrono::system_clock::now();
}

std::optional<Clock::time_point> LokiClient::Impl::OldestPendingSince() const {
  std::lock_guard lock(mu_);
  std::optional<Clock::time_point> oldest;
  auto consider = [&oldest](Clock::time_point t) {
    if (!oldest || t < *oldest) oldest = t;
  };
  for (const auto& lane : lanes_) {
    if (lane->inflight_min_seq != UINT64_MAX) consider(lane->inflight_since);
    // Each queue is oldest first.
    for (const auto& [tenant, tq] : lane->tenants) {
      if (!tq.entries.empty()) consider(tq.entries.front().enqueued);
    }
  }
  return oldest;
}

void LokiClient::Impl::Settle(uint64_t entries) {
  pending_.fetch_sub(entries, std::memory_order_relaxed);
  pending_gauge.Add(-static_cast<int64_t>(entries));
}

void LokiClient::Impl::Notify(std::span<const Queued> batch, bool final) {
  std::vector<DeliveryTicket> tickets;
  for (const Queued& q : batch) {
    const DeliveryTicket& t = q.entry.ticket;
    if (t.listener == nullptr) continue;
    if (!tickets.empty() && tickets.front().listener != t.listener) {
      tickets.front().listener->OnSettled(tickets, final);
      tickets.clear();
    }
    tickets.push_back(t);
  }
  if (!tickets.empty()) tickets.front().listener->OnSettled(tickets, final);
}

void LokiClient::Impl::Notify(const LokiEntry& entry, bool final) {
  if (entry.ticket.listener != nullptr) entry.ticket.listener->OnSettled({entry.ticket}, final);
}

void LokiClient::Impl::CountDropped(const std::string& reason, uint64_t entries, uint64_t bytes) {
  auto it = drops.find(reason);
  if (it == drops.end()) it = drops.find("bad_request");
  it->second.entries->Add(entries);
  it->second.bytes->Add(bytes);
  Settle(entries);
}

void LokiClient::Impl::CountDropped(const std::string& reason, std::span<const Queued> batch) {
  uint64_t bytes = 0;
  for (const Queued& q : batch) bytes += q.bytes;
  CountDropped(reason, batch.size(), bytes);
}

void LokiClient::Impl::Push(LokiEntry entry) {
  std::vector<LokiEntry> one;
  one.push_back(std::move(entry));
  PushAll(one);
}

void LokiClient::Impl::PushAll(std::vector<LokiEntry>& entries) {
  if (entries.empty()) return;
  pending_.fetch_add(entries.size(), std::memory_order_relaxed);
  pending_gauge.Add(static_cast<int64_t>(entries.size()));

  std::unique_lock lock(mu_);
  if (closed_) {
    lock.unlock();
    for (LokiEntry& entry : entries) {
      if (config.durable) {
        Settle(1);
        Notify(entry, false);
      } else {
        CountDropped("shutdown", 1, EntryBytes(entry));
        Notify(entry, true);
      }
    }
    entries.clear();
    return;
  }
  const auto now = Clock::now();
  uint64_t dropped = 0;
  // Entries that could never fit, or whose tenant Loki would refuse, are settled after the lock
  // is released.
  std::vector<LokiEntry> too_big;
  std::vector<LokiEntry> invalid_tenant;
  std::string invalid_tenant_why;
  // Consecutive entries mostly share their stream and tenant: the lane and queue are looked
  // up again only when they change.
  const StreamSelector* last_labels = nullptr;
  Lane* lane = nullptr;
  TenantQueue* tq = nullptr;
  const std::string* tq_tenant = nullptr;
  for (LokiEntry& entry : entries) {
    if (entry.tenant.empty()) {
      entry.tenant = config.tenant_id;  // checked when the client was made
    } else if (entry.tenant != config.tenant_id) {
      // The tenant goes into a header unchanged: one Loki would refuse, or one holding a line
      // break that would add a header of its own, drops this entry alone.
      if (std::string why = stages::TenantIdError(entry.tenant); !why.empty()) {
        invalid_tenant_why = std::move(why);
        invalid_tenant.push_back(std::move(entry));
        continue;
      }
    }
    const std::size_t bytes = EntryBytes(entry);
    const std::size_t memory = EntryMemory(entry);
    if (!config.durable && memory > config.max_buffered_bytes) {
      too_big.push_back(std::move(entry));
      continue;
    }
    while (!config.durable && queued_memory_ + memory > config.max_buffered_bytes &&
           DropOldestLocked()) {
      ++dropped;
      tq = nullptr;  // DropOldestLocked may have erased it, or popped the entry last points to
      last_labels = nullptr;
    }
    if (last_labels == nullptr || !last_labels->SameText(entry.labels)) {
      Lane* l = lanes_[entry.labels.hash() % lanes_.size()].get();
      if (l != lane) tq = nullptr;
      lane = l;
    }
    if (tq == nullptr || *tq_tenant != entry.tenant) {
      auto it = lane->tenants.try_emplace(entry.tenant).first;
      tq = &it->second;
      tq_tenant = &it->first;
    }
    const bool was_empty = tq->entries.empty();
    tq->bytes += bytes;
    queued_memory_ += memory;
    tq->entries.push_back(Queued{std::move(entry), next_seq_++, now, bytes, memory});
    last_labels = &tq->entries.back().entry.labels;
    if (was_empty || tq->bytes >= config.batch_size_bytes) lane->cv.notify_one();
  }
  lock.unlock();
  entries.clear();
  for (LokiEntry& entry : too_big) {
    CountDropped("buffer_full", 1, EntryBytes(entry));
    Notify(entry, true);
    ++dropped;
  }
  for (LokiEntry& entry : invalid_tenant) {
    CountDropped("invalid_tenant", 1, EntryBytes(entry));
    Notify(entry, true);
  }
  if (!invalid_tenant.empty()) {
    done_cv_.notify_all();
    uint64_t suppressed = 0;
    if (log_limiter.Allow("invalid_tenant", suppressed)) {
      spdlog::error(
          "loki client {}: dropped {} entries whose tenant (tenant stage) is not a valid Loki "
          "tenant ID, e.g. {}{}",
          redacted_url, invalid_tenant.size(), invalid_tenant_why, Suppressed(suppressed));
    }
  }
  if (dropped > 0) {
    done_cv_.notify_all();
    uint64_t suppressed = 0;
    if (log_limiter.Allow("buffer_full", suppressed)) {
      spdlog::warn(
          "loki client {}: buffer full ({} bytes buffered at most), dropping the oldest unsent "
          "entries; is Loki reachable?{}",
          redacted_url, config.max_buffered_bytes, Suppressed(suppressed));
    }
  }
}

bool LokiClient::Impl::DropOldestLocked() {
  TenantQueue* oldest = nullptr;
  Lane* oldest_lane = nullptr;
  std::string oldest_tenant;
  // The oldest entry of the fullest queue: a stream flooding the buffer (its lane) loses its
  // own lines first, not a quiet neighbour's that happen to be older.
  for (auto& lane : lanes_) {
    for (auto& [tenant, tq] : lane->tenants) {
      if (tq.entries.empty()) continue;
      if (oldest == nullptr || tq.bytes > oldest->bytes) {
        oldest = &tq;
        oldest_lane = lane.get();
        oldest_tenant = tenant;
      }
    }
  }
  if (oldest == nullptr) return false;
  const Queued& q = oldest->entries.front();
  queued_memory_ -= q.memory;
  oldest->bytes -= q.bytes;
  CountDropped("buffer_full", 1, q.bytes);
  Notify(q.entry, true);  // mu_ held: listeners never call back into the client
  oldest->entries.pop_front();
  if (oldest->entries.empty()) oldest_lane->tenants.erase(oldest_tenant);
  return true;
}

bool LokiClient::Impl::FlushedLocked(uint64_t target) const {
  for (const auto& lane : lanes_) {
    if (lane->inflight_min_seq < target) return false;
    for (const auto& [tenant, tq] : lane->tenants) {
      if (!tq.entries.empty() && tq.entries.front().seq < target) return false;
    }
  }
  return true;
}

bool LokiClient::Impl::Flush(std::chrono::milliseconds deadline) {
  std::unique_lock lock(mu_);
  const uint64_t target = next_seq_;
  flush_target_ = std::max(flush_target_, target);
  for (auto& lane : lanes_) lane->cv.notify_one();
  return done_cv_.wait_for(lock, deadline, [&] { return FlushedLocked(target); });
}

void LokiClient::Impl::SendBuffered() {
  std::lock_guard lock(mu_);
  if (flush_target_ >= next_seq_) return;
  flush_target_ = next_seq_;
  for (auto& lane : lanes_) lane->cv.notify_one();
}

void LokiClient::Impl::Stop(std::chrono::milliseconds deadline) {
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    closed_ = true;
  }
  Flush(deadline);
  StopThreads();

  uint64_t entries = 0, bytes = 0;
  std::vector<Queued> left;
  {
    std::lock_guard lock(mu_);
    for (auto& lane : lanes_) {
      for (auto& [tenant, tq] : lane->tenants) {
        entries += tq.entries.size();
        bytes += tq.bytes;
        for (Queued& q : tq.entries) left.push_back(std::move(q));
      }
      lane->tenants.clear();
    }
    queued_memory_ = 0;
  }
  if (config.durable) {
    Settle(entries);
    Notify(left, false);
    if (entries > 0) {
      spdlog::info("loki client {}: stopped with {} entries unsent; they stay in the journal",
                   redacted_url, entries);
    }
  } else if (entries > 0) {
    Notify(left, true);
    CountDropped("shutdown", entries, bytes);
    spdlog::warn("loki client {}: stopped with {} entries unsent; counted as dropped (shutdown)",
                 redacted_url, entries);
  }
  done_cv_.notify_all();
}

void LokiClient::Impl::StopThreads() {
  {
    std::lock_guard lock(mu_);
    aborted_ = true;
    for (auto& lane : lanes_) lane->cv.notify_one();
  }
  // A lane may be inside a request (up to loki-timeout): shut its socket down. Repeat until
  // every lane has left, since a lane may start its request just after a stop().
  for (;;) {
    bool all_finished = true;
    for (auto& lane : lanes_) {
      if (!lane->thread.joinable() || lane->finished.load()) continue;
      all_finished = false;
      if (lane->in_request.load()) lane->http->stop();
    }
    if (all_finished) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (auto& lane : lanes_) {
    if (lane->thread.joinable()) lane->thread.join();
  }
  {
    std::lock_guard lock(watchdog_mu_);
    watchdog_quit_ = true;
  }
  watchdog_cv_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
}

void LokiClient::Impl::WatchdogLoop() {
  std::unique_lock wlock(watchdog_mu_);
  while (!watchdog_quit_) {
    const uint64_t seen = armed_seq_;
    wlock.unlock();
    auto next = Clock::time_point::max();
    const auto now = Clock::now();
    for (auto& lane : lanes_) {
      std::lock_guard lock(lane->watch_mu);
      if (!lane->armed) continue;
      if (lane->deadline > now) {
        next = std::min(next, lane->deadline);
        continue;
      }
      // The lane cannot disarm this request nor arm its next one until stop() returned: the
      // cut hits this request, or, when it has just ended, only closes the idle connection.
      // stop() waits while the lane connects (httplib holds its socket lock there; the connect
      // is bounded by loki-timeout on its own).
      lane->http->stop();
      lane->cut = true;
      lane->armed = false;
    }
    wlock.lock();
    const auto woken = [&] { return watchdog_quit_ || armed_seq_ != seen; };
    if (next == Clock::time_point::max()) {
      watchdog_cv_.wait(wlock, woken);
    } else {
      watchdog_cv_.wait_until(wlock, next, woken);
    }
  }
}

void LokiClient::Impl::LaneLoop(Lane& lane) {
  std::vector<Queued> batch;
  std::unique_lock lock(mu_);
  while (!aborted_) {
    // Pick the ready tenant queue whose oldest entry is oldest: full, flushed, or waited enough.
    const auto now = Clock::now();
    TenantQueue* ready = nullptr;
    std::string ready_tenant;
    auto wake = Clock::time_point::max();
    for (auto& [tenant, tq] : lane.tenants) {
      if (tq.entries.empty()) continue;
      const Queued& front = tq.entries.front();
      const auto due = front.enqueued + config.batch_wait;
      if (tq.bytes >= config.batch_size_bytes || front.seq < flush_target_ || due <= now) {
        if (ready == nullptr || front.seq < ready->entries.front().seq) {
          ready = &tq;
          ready_tenant = tenant;
        }
      } else {
        wake = std::min(wake, due);
      }
    }
    if (ready == nullptr) {
      if (wake == Clock::time_point::max()) {
        lane.cv.wait(lock);
      } else {
        lane.cv.wait_until(lock, wake);
      }
      continue;
    }

    // Take up to batch_size bytes (at least one entry) of that tenant, oldest first.
    batch.clear();
    std::size_t batch_bytes = 0;
    while (!ready->entries.empty()) {
      Queued& q = ready->entries.front();
      if (!batch.empty() && batch_bytes + q.bytes > config.batch_size_bytes) break;
      batch_bytes += q.bytes;
      ready->bytes -= q.bytes;
      queued_memory_ -= q.memory;
      batch.push_back(std::move(q));
      ready->entries.pop_front();
    }
    if (ready->entries.empty()) lane.tenants.erase(ready_tenant);
    lane.inflight_min_seq = batch.front().seq;
    lane.inflight_since = batch.front().enqueued;

    lock.unlock();
    Deliver(lane, batch);
    lock.lock();
    lane.inflight_min_seq = UINT64_MAX;
    done_cv_.notify_all();
  }
  lane.finished.store(true);
}

void LokiClient::Impl::Deliver(Lane& lane, std::span<Queued> batch) {
  if (batch.empty()) return;
  const std::string& tenant = batch.front().entry.tenant;

  // Group by stream, keeping each stream's entries in order.
  lane.stream_index.clear();
  lane.stream_labels.clear();
  for (auto& v : lane.stream_entries) v.clear();
  const StreamSelector* last = nullptr;
  std::size_t index = 0;
  for (const Queued& q : batch) {
    if (last == nullptr || !last->SameText(q.entry.labels)) {
      auto [it, inserted] =
          lane.stream_index.try_emplace(q.entry.labels.view(), lane.stream_labels.size());
      if (inserted) {
        lane.stream_labels.push_back(q.entry.labels.view());
        if (lane.stream_entries.size() < lane.stream_labels.size())
          lane.stream_entries.emplace_back();
      }
      index = it->second;
      last = &q.entry.labels;
    }
    lane.stream_entries[index].push_back(&q.entry);
  }
  lane.streams.clear();
  for (std::size_t i = 0; i < lane.stream_labels.size(); ++i) {
    lane.streams.push_back(PushStream{lane.stream_labels[i], lane.stream_entries[i]});
  }
  const std::string_view body = lane.encoder.Encode(lane.streams);
  encoded_bytes.Add(body.size());

  int status = 0;
  std::string response;
  const Outcome outcome = SendWithRetries(lane, body, tenant, batch.size(), status, response);
  switch (outcome) {
    case Outcome::kDelivered: {
      uint64_t bytes = 0;
      for (const Queued& q : batch) bytes += q.bytes;
      entries_sent.Add(batch.size());
      sent_bytes.Add(bytes);
      Settle(batch.size());
      Notify(batch, true);
      return;
    }
    case Outcome::kTooLarge: {
      if (batch.size() > 1) {
        const std::size_t half = batch.size() / 2;
        Deliver(lane, batch.first(half));
        Deliver(lane, batch.subspan(half));
        return;
      }
      uint64_t suppressed = 0;
      if (log_limiter.Allow("too_large", suppressed)) {
        spdlog::error(
            "loki client {}: Loki refused a single entry of {} bytes as too large (413: {}); "
            "dropped{}",
            redacted_url, batch.front().bytes, Truncate(response), Suppressed(suppressed));
      }
      CountDropped("too_large", batch);
      Notify(batch, true);
      return;
    }
    case Outcome::kRejected: {
      const std::string reason = status == 400 ? ClassifyBadRequest(response) : "bad_request";
      uint64_t suppressed = 0;
      if (log_limiter.Allow("rejected:" + reason, suppressed)) {
        if (reason == "structured_metadata_not_allowed") {
          spdlog::error(
              "loki client {}: Loki refused structured metadata: it needs schema v13+ and "
              "limits_config.allow_structured_metadata; {} entries dropped (Loki said: {}){}",
              redacted_url, batch.size(), Truncate(response), Suppressed(suppressed));
        } else {
          spdlog::error("loki client {}: Loki answered {} ({}), {} entries dropped: {}{}",
                        redacted_url, status, reason, batch.size(), Truncate(response),
                        Suppressed(suppressed));
        }
      }
      CountDropped(reason, batch);
      Notify(batch, true);
      return;
    }
    case Outcome::kRetriesExhausted: {
      // A configuration error names its cause; overload and transport errors are just retries.
      std::string reason = "retries_exhausted";
      if (status == 401 || status == 403 || IsClientCertificateRefusal(status, response)) {
        reason = "unauthorized";
      } else if (IsConfigurationError(status, response)) {
        reason = "wrong_url";
      }
      uint64_t suppressed = 0;
      if (log_limiter.Allow("retries_exhausted", suppressed)) {
        spdlog::error(
            "loki client {}: giving up on a batch of {} entries after {} retries (last: {}); "
            "dropped{}",
            redacted_url, batch.size(), config.max_retries,
            status > 0 ? std::to_string(status) + " " + Truncate(response) : response,
            Suppressed(suppressed));
      }
      CountDropped(reason, batch);
      Notify(batch, true);
      return;
    }
    case Outcome::kShutdown:
      if (config.durable) {
        Settle(batch.size());
        Notify(batch, false);
      } else {
        CountDropped("shutdown", batch);
        Notify(batch, true);
      }
      return;
  }
}

LokiClient::Impl::Outcome LokiClient::Impl::SendWithRetries(Lane& lane, std::string_view body,
                                                            const std::string& tenant,
                                                            std::size_t entries, int& status,
                                                            std::string& response) {
  httplib::Headers headers = {{"User-Agent", "skald"}};
  for (const auto& [name, value] : config.headers) headers.emplace(name, value);
  if (!tenant.empty()) headers.emplace("X-Scope-OrgID", tenant);
  if (url.scheme == "https" && !config.tls.server_name.empty()) {
    headers.emplace("Host", url.port == 443
                                ? HostForUrl(url.host)
                                : HostForUrl(url.host) + ":" + std::to_string(url.port));
  }
  std::optional<Backoff> backoff;  // seeded from the random device only when a push fails
  for (int attempt = 0;; ++attempt) {
    {
      std::lock_guard lock(mu_);
      if (aborted_) return Outcome::kShutdown;
      lane.in_request.store(true);
    }
    const auto started = Clock::now();
    Answer answer = Attempt(lane, body, headers);
    lane.in_request.store(false);
    RecordAttempt(answer, Clock::now() - started);

    if (answer.answered) {
      status = answer.status;
      response = answer.body;
      metrics
          .GetCounter("skald_pushes_total", "Push requests, by HTTP status.",
                      {{"status_code", std::to_string(status)}})
          .Add();
      if (status >= 200 && status < 300) return Outcome::kDelivered;
      if (status == 413) return Outcome::kTooLarge;
      if (status == 401 || status == 403) ReloadCredentials(lane);
      // Configuration errors are retried like overload: the operator fixes the URL or the
      // credentials, and the lines, in the journal, should still arrive then.
      const bool retryable =
          status == 429 || status == 408 || status >= 500 || IsConfigurationError(status, response);
      if (!retryable) return Outcome::kRejected;
    } else {
      status = 0;
      response = answer.error;
      metrics
          .GetCounter("skald_pushes_total", "Push requests, by HTTP status.",
                      {{"status_code", "error"}})
          .Add();
      if (!config.tls.server_name.empty() && url.scheme == "https") {
        RefreshServerNameAddress(*lane.http);
      }
    }

    {
      std::lock_guard lock(mu_);
      if (aborted_) return Outcome::kShutdown;
    }
    if (!config.durable && config.max_retries >= 0 && attempt >= config.max_retries) {
      return Outcome::kRetriesExhausted;
    }
    if (!backoff) backoff.emplace(config.min_backoff, config.max_backoff);
    const std::chrono::milliseconds delay = backoff->Next();
    batch_retries.Add();
    LogRetry(answer, entries, attempt, delay);
    if (!SleepUnlessAborted(lane, delay)) return Outcome::kShutdown;
  }
}

LokiClient::Impl::Answer LokiClient::Impl::Attempt(Lane& lane, std::string_view body,
                                                   const httplib::Headers& headers) {
  httplib::Request req;
  req.method = "POST";
  req.path = url.path;
  req.headers = headers;
  req.headers.emplace("Content-Type", "application/x-protobuf");
  req.body.assign(body.data(), body.size());
  Answer answer;
  bool capped = false;
  req.content_receiver = [&](const char* data, std::size_t n, uint64_t, uint64_t) {
    const std::size_t room = kMaxResponseBodyBytes - answer.body.size();
    answer.body.append(data, std::min(n, room));
    capped = n > room;
    return !capped;  // false: httplib stops reading and closes the connection
  };

  {
    std::lock_guard lock(lane.watch_mu);
    lane.deadline = Clock::now() + config.timeout;
    lane.armed = true;
    lane.cut = false;
  }
  {
    std::lock_guard lock(watchdog_mu_);
    ++armed_seq_;
  }
  watchdog_cv_.notify_one();
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  const bool ok = lane.http->send(req, res, error);
  bool cut = false;
  {
    std::lock_guard lock(lane.watch_mu);
    lane.armed = false;
    cut = lane.cut;
  }

  if (ok || (capped && res.status > 0)) {
    answer.answered = true;
    answer.status = res.status;
    if (capped) answer.body += "...";
    answer.location = res.get_header_value("Location");
  } else if (cut) {
    answer.error = "no complete answer within loki-timeout (" +
                   std::to_string(config.timeout.count()) + " ms)";
  } else {
    answer.error = "transport error: " + httplib::to_string(error) + TlsHint(error);
  }
  return answer;
}

std::string LokiClient::Impl::TlsHint(httplib::Error error) const {
  if (url.scheme != "https") return "";
  const std::string waiting = config.durable ? "; lines wait in the journal" : "";
  if (error == httplib::Error::SSLServerVerification) {
    return config.tls.ca_file.empty()
               ? " (Loki's certificate is not signed by a CA the system trusts: set "
                 "loki-tls-ca-file to the CA that signed it" +
                     waiting + ")"
               : " (Loki's certificate is not signed by the CA in loki-tls-ca-file " +
                     config.tls.ca_file + ", or does not name the host" + waiting + ")";
  }
  // TLS 1.3 refuses a missing or unknown client certificate after the handshake: the first
  // read fails, or the write of the request when Loki's refusal comes first (a slower client,
  // such as one run under emulation, sees that).
  if (error == httplib::Error::SSLConnection || error == httplib::Error::Read ||
      error == httplib::Error::Write) {
    return config.tls.cert_file.empty()
               ? " (if Loki requires a client certificate: set loki-tls-cert-file and "
                 "loki-tls-key-file" +
                     waiting + ")"
               : " (is the certificate in loki-tls-cert-file one Loki accepts?" + waiting + ")";
  }
  return "";
}

void LokiClient::Impl::LogRetry(const Answer& answer, std::size_t entries, int attempt,
                                std::chrono::milliseconds delay) {
  const std::string retry =
      config.durable || config.max_retries < 0
          ? "retry " + std::to_string(attempt + 1)
          : "retry " + std::to_string(attempt + 1) + " of " + std::to_string(config.max_retries);
  uint64_t suppressed = 0;
  if (!answer.answered || !IsConfigurationError(answer.status, answer.body)) {
    if (log_limiter.Allow("retry", suppressed)) {
      spdlog::warn("loki client {}: push failed ({}), {} in {} ms{}", redacted_url,
                   answer.answered ? std::to_string(answer.status) + ": " + Truncate(answer.body)
                                   : answer.error,
                   retry, delay.count(), Suppressed(suppressed));
    }
    return;
  }
  // Each configuration error is explained once per interval, whatever else fails meanwhile.
  if (!log_limiter.Allow("config:" + std::to_string(answer.status), suppressed)) return;
  std::string why;
  if (answer.status >= 300 && answer.status < 400) {
    why = "a redirect";
    if (!answer.location.empty()) why += " to " + Truncate(RedactUrl(answer.location));
    why += ": loki-url must name the push endpoint itself (redirects are not followed)";
  } else if (answer.status == 404) {
    why = "no push endpoint at this path: loki-url usually ends in /loki/api/v1/push";
  } else if (IsClientCertificateRefusal(answer.status, answer.body)) {
    why = config.tls.cert_file.empty()
              ? "the server wants a client certificate: set loki-tls-cert-file and "
                "loki-tls-key-file"
              : "the server refused the client certificate in loki-tls-cert-file";
  } else {
    why = "check the credentials in loki-url and loki-tenant-id";
  }
  spdlog::error("loki client {}: Loki answered {} ({}), {}; {} entries kept{}, {} in {} ms{}",
                redacted_url, answer.status, Truncate(answer.body), why, entries,
                config.durable ? " in the journal" : " in memory", retry, delay.count(),
                Suppressed(suppressed));
}

bool LokiClient::Impl::SleepUnlessAborted(Lane& lane, std::chrono::milliseconds delay) {
  std::unique_lock lock(mu_);
  lane.cv.wait_for(lock, delay, [&] { return aborted_; });
  return !aborted_;
}

// ---- public face ----

LokiClient::LokiClient(LokiClientConfig config, MetricsRegistry& metrics)
    : impl_(std::make_unique<Impl>(std::move(config), metrics)) {}

LokiClient::~LokiClient() = default;

void LokiClient::Push(LokiEntry entry) { impl_->Push(std::move(entry)); }

void LokiClient::PushAll(std::vector<LokiEntry>& entries) { impl_->PushAll(entries); }

bool LokiClient::Flush(std::chrono::milliseconds deadline) { return impl_->Flush(deadline); }

void LokiClient::SendBuffered() { impl_->SendBuffered(); }

void LokiClient::Stop(std::chrono::milliseconds deadline) { impl_->Stop(deadline); }

uint64_t LokiClient::Pending() const { return impl_->pending_.load(std::memory_order_relaxed); }

std::optional<std::chrono::steady_clock::time_point> LokiClient::OldestPendingSince() const {
  return impl_->OldestPendingSince();
}

LokiClient::PushResult LokiClient::LastPush() const {
  std::lock_guard lock(impl_->last_push_mu_);
  return impl_->last_push_;
}

const LokiClientConfig& LokiClient::config() const { return impl_->config; }

void LokiClient::SetThreadLimitForTesting(int threads) { thread_limit_for_testing.store(threads); }

}  // namespace skald
