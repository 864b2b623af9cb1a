// LokiClientConfig: what a LokiClient is made with (one Loki endpoint, its credentials and
// limits), its validation, and the key that lets containers with equal settings share a client.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace skald {

struct LokiTlsConfig {
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  std::string server_name;
  bool insecure_skip_verify = false;
};

// How the client proves who it is to Loki (or the proxy before it): at most one of the URL's
// user info, basic auth from these options, and a bearer token. Secret files are read when the
// client starts and again when Loki answers 401 or 403 (a rotated token works without a
// restart); their content, trailing white space removed, is the secret.
struct LokiAuthConfig {
  std::string bearer_token;         // loki-bearer-token
  std::string bearer_token_file;    // loki-bearer-token-file
  std::string basic_username;       // loki-basic-auth-username
  std::string basic_password_file;  // loki-basic-auth-password-file
};

struct LokiClientConfig {
  std::string url;        // full push URL, may carry user:password@ (basic auth)
  std::string tenant_id;  // X-Scope-OrgID; empty = no header; else a valid tenant ID
  std::chrono::milliseconds timeout{10'000};  // deadline of one push request
  std::chrono::milliseconds batch_wait{1'000};
  std::size_t batch_size_bytes = 1024 * 1024;
  std::chrono::milliseconds min_backoff{500};
  std::chrono::milliseconds max_backoff{300'000};
  int max_retries = 10;  // not durable: attempts after the first before a batch is dropped;
                         // < 0: forever
  LokiTlsConfig tls;
  LokiAuthConfig auth;
  // Sent with every push (loki-headers); never Host, Content-*, Authorization, X-Scope-OrgID.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string proxy_url;
  std::size_t max_buffered_bytes = 64 * 1024 * 1024;  // Push() drops oldest beyond this
  int lanes = 4;                                      // requests in flight at most
  // The entries are also on disk (a journal) and the caller bounds what it hands over: never
  // drop for a full buffer, retry every retried failure (above) forever, and at Stop() leave
  // unsent entries to be replayed (settled as not final, not counted as dropped).
  bool durable = false;

  // Clients are shared by containers whose keys are equal. Credentials enter the key only as
  // a digest, so the key can be logged.
  std::string Key() const;
};

// Empty when `config` can make a client; otherwise a message naming the bad field and value
// (credentials removed) and what would be accepted: http/https URL with a host, a valid port,
// a proxy URL, loki-tls-cert-file and loki-tls-key-file together, a valid tenant ID.
std::string ValidateLokiClientConfig(const LokiClientConfig& config);

// Empty when the files `config` names (password and token files, TLS CA, certificate and key)
// can be read now; otherwise a message naming the option, the path and why. What a client
// checks when it is made; `skald check` calls it without making one.
std::string CheckLokiClientFiles(const LokiClientConfig& config);
// The TLS part of it: the CA, certificate and key files. The client reads them only when the first
// request connects; a client checks them when it is made, so that a wrong path fails the
// container's start with its name rather than every push later.
std::string CheckLokiTlsFiles(const LokiClientConfig& config);

}  // namespace skald
