#include "plugin/loki/lane_sender.h"

#include <absl/time/time.h>
#include <spdlog/spdlog.h>

#include <optional>
#include <tuple>

#include "plugin/common/user_files.h"
#include "plugin/loki/backoff.h"

namespace skald {
namespace {

// Loki answers a push with an empty body or a line of text; more is not read (the connection
// is closed), so that a wrong or hostile peer cannot fill the plugin's memory.
// What to check when a TLS connection failed, or "".
std::string TlsHint(const LokiClientConfig& config, const ParsedUrl& url,
                    const HttpConnection::Answer& got) {
  using Failure = HttpConnection::Failure;
  const Failure failure = got.failure;
  const std::string waiting = config.durable ? "; lines wait in the journal" : "";
  if (got.at_proxy) {
    // Only an https proxy's TLS has advice; reaching a proxy or its tunnel speaks for itself.
    if (failure != Failure::kTlsVerify) return "";
    return " (an https proxy's certificate is checked as Loki's: against loki-tls-ca-file or "
           "the system's CAs, for the name in loki-tls-server-name or else the proxy's host" +
           waiting + ")";
  }
  if (url.scheme != "https") return "";
  if (failure == Failure::kTlsVerify) {
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
  if (failure == Failure::kTlsHandshake || failure == Failure::kRead ||
      failure == Failure::kWrite) {
    return config.tls.cert_file.empty()
               ? " (if Loki requires a client certificate: set loki-tls-cert-file and "
                 "loki-tls-key-file" +
                     waiting + ")"
               : " (is the certificate in loki-tls-cert-file one Loki accepts?" + waiting + ")";
  }
  return "";
}

}  // namespace

LaneSender::LaneSender(LokiEndpoint& target, LokiCredentials credentials, RequestWatchdog& watchdog)
    : target_(target),
      config_(target.config),
      watchdog_(watchdog),
      credentials_(std::move(credentials)) {
  const ParsedUrl& url = target_.url;
  HttpEndpoint endpoint;
  endpoint.scheme = url.scheme;
  endpoint.host = url.host;
  endpoint.port = url.port;
  if (!config_.proxy_url.empty()) {
    endpoint.proxy_host = target_.proxy.host;
    endpoint.proxy_port = target_.proxy.port;
    endpoint.proxy_tls = target_.proxy.scheme == "https";
    endpoint.proxy_socks5 = target_.proxy.scheme.rfind("socks5", 0) == 0;  // socks5, socks5h
    if (target_.proxy.has_userinfo && endpoint.proxy_socks5) {
      endpoint.proxy_authenticate = true;
      endpoint.proxy_user = target_.proxy.user;
      endpoint.proxy_password = target_.proxy.password;
    } else if (target_.proxy.has_userinfo) {
      endpoint.proxy_authorization = BasicAuthorization(target_.proxy.user, target_.proxy.password);
    }
  }
  // With a TLS server name, the connection goes to the URL's host and the name is the one sent
  // (SNI) and checked in Loki's certificate; the Host header still names the URL's host.
  // The TLS files are read here, as option files are (plugin/common/user_files.h): from where they
  // must lie, regular, bounded; OpenSSL parses the text in memory.
  for (auto [option, path, pem] :
       {std::tuple{"loki-tls-ca-file", &config_.tls.ca_file, &endpoint.ca_pem},
        std::tuple{"loki-tls-cert-file", &config_.tls.cert_file, &endpoint.cert_pem},
        std::tuple{"loki-tls-key-file", &config_.tls.key_file, &endpoint.key_pem}}) {
    if ((url.scheme != "https" && !endpoint.proxy_tls) || path->empty()) continue;
    if (std::string why = ReadUserFile(option, *path, kMaxTlsFileBytes, *pem);
        !why.empty() && endpoint.tls_error.empty()) {
      endpoint.tls_error = why;
    }
  }
  endpoint.ca_file = config_.tls.ca_file;
  endpoint.cert_file = config_.tls.cert_file;
  endpoint.key_file = config_.tls.key_file;
  endpoint.server_name = config_.tls.server_name;
  endpoint.insecure_skip_verify = config_.tls.insecure_skip_verify;
  http_ = std::make_unique<HttpConnection>(std::move(endpoint));

  headers_.emplace_back("User-Agent", "skald");
  for (const auto& [name, value] : config_.headers) headers_.emplace_back(name, value);
}

LaneSender::~LaneSender() = default;

LaneSender::Result LaneSender::Send(std::string_view body, const std::string& tenant,
                                    std::size_t entries) {
  Result result;
  std::optional<Backoff> backoff;  // seeded from the random device only when a push fails
  for (int attempt = 0;; ++attempt) {
    {
      absl::MutexLock lock(&abort_mu_);
      if (aborted_) return result;  // kShutdown
      http_->Rearm();  // a cut that came before this attempt's deadline was armed is spent
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
        target_.SetTaking(true);
        result.outcome = PushOutcome::kDelivered;
        return result;
      }
      if (answer.status == 413) {
        target_.SetTaking(true);
        result.outcome = PushOutcome::kTooLarge;
        return result;
      }
      if (answer.status == 401 || answer.status == 403) ReloadCredentials();
      if (!IsRetriedAnswer(answer.status, answer.body)) {
        target_.SetTaking(true);
        result.outcome = PushOutcome::kRejected;
        return result;
      }
    } else {
      result.status = 0;
      result.response = answer.error;
    }

    target_.SetTaking(false);
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

LaneSender::Answer LaneSender::Attempt(std::string_view body, const std::string& tenant) {
  HttpConnection::Headers headers = headers_;
  if (!tenant.empty()) headers.emplace_back("X-Scope-OrgID", tenant);
  headers.emplace_back("Content-Type", "application/x-protobuf");
  if (!credentials_.bearer.empty()) {
    headers.emplace_back("Authorization", "Bearer " + credentials_.bearer);
  } else if (!credentials_.basic_user.empty() || !credentials_.basic_password.empty()) {
    headers.emplace_back("Authorization",
                         BasicAuthorization(credentials_.basic_user, credentials_.basic_password));
  }

  Clock::time_point deadline;
  {
    absl::MutexLock lock(&watch_mu_);
    // A day at most: a loki-timeout of 2562047h would overflow the clock.
    deadline = deadline_ =
        Clock::now() + std::min<std::chrono::milliseconds>(config_.timeout, std::chrono::hours(24));
    armed_ = true;
  }
  watchdog_.Poke();
  HttpConnection::Answer got = http_->Exchange("POST", target_.url.path, headers, body, deadline);
  {
    absl::MutexLock lock(&watch_mu_);
    armed_ = false;
  }

  Answer answer;
  using Failure = HttpConnection::Failure;
  if (got.failure == Failure::kNone) {
    answer.answered = true;
    answer.status = got.status;
    answer.body = std::move(got.body);
    if (got.body_capped) answer.body += "...";
    answer.location = std::move(got.location);
  } else if (got.failure == Failure::kTimeout || got.failure == Failure::kCut) {
    answer.error = "no complete answer within loki-timeout (" +
                   std::to_string(config_.timeout.count()) + " ms)";
  } else {
    answer.error = "transport error: " + got.error + TlsHint(config_, target_.url, got);
  }
  return answer;
}

void LaneSender::LogRetry(const Answer& answer, std::size_t entries, int attempt,
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
  } else if (answer.status == 404 || answer.status == 405 || answer.status == 410) {
    why = "no push endpoint at this path: loki-url usually ends in /loki/api/v1/push";
  } else if (answer.status == 407) {
    why = "the proxy wants credentials: give them in loki-proxy-url (http://user:password@host)";
  } else if (IsMissingTenant(answer.status, answer.body)) {
    why = "Loki requires a tenant: set loki-tenant-id";
  } else if (IsRouteError(answer.status, answer.body)) {
    why =
        "the answer is not Loki's (a proxy or another server at loki-url?): check loki-url "
        "and what stands between the plugin and Loki";
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

bool LaneSender::SleepUnlessAborted(std::chrono::milliseconds delay) {
  absl::MutexLock lock(&abort_mu_);
  return !abort_mu_.AwaitWithTimeout(absl::Condition(&aborted_), absl::FromChrono(delay));
}

bool LaneSender::Aborted() const {
  absl::MutexLock lock(&abort_mu_);
  return aborted_;
}

void LaneSender::Abort() {
  absl::MutexLock lock(&abort_mu_);
  aborted_ = true;
}

void LaneSender::CutRequest() { http_->Cut(); }

LaneSender::Clock::time_point LaneSender::CutIfOverdue(Clock::time_point now) {
  absl::MutexLock lock(&watch_mu_);
  if (!armed_) return Clock::time_point::max();
  if (deadline_ > now) return deadline_;
  // Send cannot disarm this attempt nor arm its next one until Cut() returned: the cut hits
  // this attempt, or, when it has just ended, only closes the idle connection (the next
  // attempt rearms the connection first).
  http_->Cut();
  armed_ = false;
  return Clock::time_point::max();
}

void LaneSender::ReloadCredentials() {
  if (config_.auth.bearer_token_file.empty() && config_.auth.basic_password_file.empty()) return;
  LokiCredentials fresh;
  uint64_t suppressed = 0;
  if (std::string err = LoadLokiCredentials(config_, target_.url, fresh); !err.empty()) {
    if (target_.log_limiter.Allow("credentials", suppressed)) {
      spdlog::error("loki client {}: {}{}", target_.redacted_url, err, Suppressed(suppressed));
    }
    return;
  }
  if (fresh == credentials_) return;
  credentials_ = std::move(fresh);
  if (target_.log_limiter.Allow("credentials", suppressed)) {
    spdlog::info(
        "loki client {}: Loki refused the credentials; the secret file changed, using "
        "it from now on{}",
        target_.redacted_url, Suppressed(suppressed));
  }
}

}  // namespace skald
