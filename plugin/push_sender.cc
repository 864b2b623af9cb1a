#include "plugin/push_sender.h"

#include <absl/time/time.h>
#include <httplib.h>
#include <netdb.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <optional>

#include "plugin/backoff.h"

namespace skald {
namespace {

// Loki answers a push with an empty body or a line of text; more is not read (the connection
// is closed), so that a wrong or hostile peer cannot fill the plugin's memory.
constexpr std::size_t kMaxResponseBodyBytes = 64 * 1024;

std::string HostForUrl(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
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

// What to check when a TLS connection failed, or "".
std::string TlsHint(const LokiClientConfig& config, const ParsedUrl& url, httplib::Error error) {
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

}  // namespace

PushSender::PushSender(PushTarget& target, LokiCredentials credentials, RequestWatchdog& watchdog)
    : target_(target),
      config_(target.config),
      watchdog_(watchdog),
      credentials_(std::move(credentials)) {
  const ParsedUrl& url = target_.url;
  const bool https = url.scheme == "https";
  // With a TLS server name, connect to that name (SNI and certificate check) and map it to the
  // URL host's address; the Host header still names the URL host.
  const std::string& connect_host =
      https && !config_.tls.server_name.empty() ? config_.tls.server_name : url.host;
  const std::string base =
      url.scheme + "://" + HostForUrl(connect_host) + ":" + std::to_string(url.port);
  if (https && !config_.tls.cert_file.empty()) {
    http_ = std::make_unique<httplib::Client>(base, config_.tls.cert_file, config_.tls.key_file);
  } else {
    http_ = std::make_unique<httplib::Client>(base);
  }
  http_->set_keep_alive(true);
  http_->set_tcp_nodelay(true);  // headers and body go out in separate writes
  http_->set_follow_location(false);
  http_->set_connection_timeout(config_.timeout);
  http_->set_read_timeout(config_.timeout);
  http_->set_write_timeout(config_.timeout);
  ApplyCredentials();
  if (!config_.proxy_url.empty()) {
    http_->set_proxy(target_.proxy.host, target_.proxy.port);
    if (target_.proxy.has_userinfo) {
      http_->set_proxy_basic_auth(target_.proxy.user, target_.proxy.password);
    }
  }
  if (https) {
    if (!config_.tls.ca_file.empty()) http_->set_ca_cert_path(config_.tls.ca_file);
    http_->enable_server_certificate_verification(!config_.tls.insecure_skip_verify);
    if (!config_.tls.server_name.empty()) RefreshServerNameAddress();
  }

  headers_.emplace_back("User-Agent", "skald");
  for (const auto& [name, value] : config_.headers) headers_.emplace_back(name, value);
  if (https && !config_.tls.server_name.empty()) {
    headers_.emplace_back("Host", url.port == 443
                                      ? HostForUrl(url.host)
                                      : HostForUrl(url.host) + ":" + std::to_string(url.port));
  }
}

PushSender::~PushSender() = default;

PushSender::Result PushSender::Send(std::string_view body, const std::string& tenant,
                                    std::size_t entries) {
  Result result;
  std::optional<Backoff> backoff;  // seeded from the random device only when a push fails
  for (int attempt = 0;; ++attempt) {
    {
      absl::MutexLock lock(&abort_mu_);
      if (aborted_) return result;  // kShutdown
      in_request_.store(true);
    }
    const auto started = Clock::now();
    Answer answer = Attempt(body, tenant);
    in_request_.store(false);
    target_.RecordAttempt(answer.answered, answer.status, Clock::now() - started);

    if (answer.answered) {
      result.status = answer.status;
      result.response = answer.body;
      if (answer.status >= 200 && answer.status < 300) {
        result.outcome = PushOutcome::kDelivered;
        return result;
      }
      if (answer.status == 413) {
        result.outcome = PushOutcome::kTooLarge;
        return result;
      }
      if (answer.status == 401 || answer.status == 403) ReloadCredentials();
      if (!IsRetriedAnswer(answer.status, answer.body)) {
        result.outcome = PushOutcome::kRejected;
        return result;
      }
    } else {
      result.status = 0;
      result.response = answer.error;
      if (!config_.tls.server_name.empty() && target_.url.scheme == "https") {
        RefreshServerNameAddress();
      }
    }

    if (Aborted()) return Result{PushOutcome::kShutdown, result.status, result.response};
    if (!config_.durable && config_.max_retries >= 0 && attempt >= config_.max_retries) {
      result.outcome = PushOutcome::kRetriesExhausted;
      return result;
    }
    if (!backoff) backoff.emplace(config_.min_backoff, config_.max_backoff);
    const std::chrono::milliseconds delay = backoff->Next();
    target_.batch_retries.Add();
    LogRetry(answer, entries, attempt, delay);
    if (!SleepUnlessAborted(delay)) {
      return Result{PushOutcome::kShutdown, result.status, result.response};
    }
  }
}

PushSender::Answer PushSender::Attempt(std::string_view body, const std::string& tenant) {
  httplib::Request req;
  req.method = "POST";
  req.path = target_.url.path;
  for (const auto& [name, value] : headers_) req.headers.emplace(name, value);
  if (!tenant.empty()) req.headers.emplace("X-Scope-OrgID", tenant);
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
    absl::MutexLock lock(&watch_mu_);
    deadline_ = Clock::now() + config_.timeout;
    armed_ = true;
    cut_ = false;
  }
  watchdog_.Poke();
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  const bool ok = http_->send(req, res, error);
  bool cut = false;
  {
    absl::MutexLock lock(&watch_mu_);
    armed_ = false;
    cut = cut_;
  }

  if (ok || (capped && res.status > 0)) {
    answer.answered = true;
    answer.status = res.status;
    if (capped) answer.body += "...";
    answer.location = res.get_header_value("Location");
  } else if (cut) {
    answer.error = "no complete answer within loki-timeout (" +
                   std::to_string(config_.timeout.count()) + " ms)";
  } else {
    answer.error =
        "transport error: " + httplib::to_string(error) + TlsHint(config_, target_.url, error);
  }
  return answer;
}

void PushSender::LogRetry(const Answer& answer, std::size_t entries, int attempt,
                          std::chrono::milliseconds delay) {
  const std::string& redacted_url = target_.redacted_url;
  const std::string retry =
      config_.durable || config_.max_retries < 0
          ? "retry " + std::to_string(attempt + 1)
          : "retry " + std::to_string(attempt + 1) + " of " + std::to_string(config_.max_retries);
  uint64_t suppressed = 0;
  if (!answer.answered || !IsConfigurationError(answer.status, answer.body)) {
    if (target_.log_limiter.Allow("retry", suppressed)) {
      spdlog::warn("loki client {}: push failed ({}), {} in {} ms{}", redacted_url,
                   answer.answered
                       ? std::to_string(answer.status) + ": " + AnswerForLog(answer.body)
                       : answer.error,
                   retry, delay.count(), Suppressed(suppressed));
    }
    return;
  }
  // Each configuration error is explained once per interval, whatever else fails meanwhile.
  if (!target_.log_limiter.Allow("config:" + std::to_string(answer.status), suppressed)) return;
  std::string why;
  if (answer.status >= 300 && answer.status < 400) {
    why = "a redirect";
    if (!answer.location.empty()) why += " to " + AnswerForLog(RedactUrl(answer.location));
    why += ": loki-url must name the push endpoint itself (redirects are not followed)";
  } else if (answer.status == 404) {
    why = "no push endpoint at this path: loki-url usually ends in /loki/api/v1/push";
  } else if (IsClientCertificateRefusal(answer.status, answer.body)) {
    why = config_.tls.cert_file.empty()
              ? "the server wants a client certificate: set loki-tls-cert-file and "
                "loki-tls-key-file"
              : "the server refused the client certificate in loki-tls-cert-file";
  } else {
    why = "check the credentials in loki-url and loki-tenant-id";
  }
  spdlog::error("loki client {}: Loki answered {} ({}), {}; {} entries kept{}, {} in {} ms{}",
                redacted_url, answer.status, AnswerForLog(answer.body), why, entries,
                config_.durable ? " in the journal" : " in memory", retry, delay.count(),
                Suppressed(suppressed));
}

bool PushSender::SleepUnlessAborted(std::chrono::milliseconds delay) {
  absl::MutexLock lock(&abort_mu_);
  return !abort_mu_.AwaitWithTimeout(absl::Condition(&aborted_), absl::FromChrono(delay));
}

bool PushSender::Aborted() const {
  absl::MutexLock lock(&abort_mu_);
  return aborted_;
}

void PushSender::Abort() {
  absl::MutexLock lock(&abort_mu_);
  aborted_ = true;
}

void PushSender::CutRequest() { http_->stop(); }

PushSender::Clock::time_point PushSender::CutIfOverdue(Clock::time_point now) {
  absl::MutexLock lock(&watch_mu_);
  if (!armed_) return Clock::time_point::max();
  if (deadline_ > now) return deadline_;
  // Send cannot disarm this attempt nor arm its next one until stop() returned: the cut hits
  // this attempt, or, when it has just ended, only closes the idle connection. stop() waits
  // while the attempt connects (httplib holds its socket lock there; the connect is bounded by
  // loki-timeout on its own).
  http_->stop();
  cut_ = true;
  armed_ = false;
  return Clock::time_point::max();
}

void PushSender::ApplyCredentials() {
  if (!credentials_.bearer.empty()) {
    http_->set_bearer_token_auth(credentials_.bearer);
  } else if (!credentials_.basic_user.empty() || !credentials_.basic_password.empty()) {
    http_->set_basic_auth(credentials_.basic_user, credentials_.basic_password);
  }
}

void PushSender::ReloadCredentials() {
  if (config_.auth.bearer_token_file.empty() && config_.auth.basic_password_file.empty()) return;
  LokiCredentials fresh;
  std::string err;
  uint64_t suppressed = 0;
  if (!LoadLokiCredentials(config_, target_.url, &fresh, &err)) {
    if (target_.log_limiter.Allow("credentials", suppressed)) {
      spdlog::error("loki client {}: {}{}", target_.redacted_url, err, Suppressed(suppressed));
    }
    return;
  }
  if (fresh == credentials_) return;
  credentials_ = std::move(fresh);
  ApplyCredentials();
  if (target_.log_limiter.Allow("credentials", suppressed)) {
    spdlog::info(
        "loki client {}: Loki refused the credentials; the secret file changed, using "
        "it from now on{}",
        target_.redacted_url, Suppressed(suppressed));
  }
}

void PushSender::RefreshServerNameAddress() {
  const std::string address = ResolveNumeric(target_.url.host);
  if (!address.empty()) http_->set_hostname_addr_map({{config_.tls.server_name, address}});
}

}  // namespace skald
