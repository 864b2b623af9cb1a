#include "plugin/loki/loki_client_config.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "pipeline_stages/tenant_id.h"
#include "plugin/common/sha256_hex.h"
#include "plugin/common/user_files.h"
#include "plugin/loki/loki_credentials.h"
#include "plugin/loki/loki_url.h"
#include "plugin/loki/socks5_handshake.h"

namespace skald {
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
    // The name may be a key written in the wrong shape: not shown.
    return "a name that is not a header name (letters, digits and !#$%&'*+-.^_`|~; its text is "
           "not shown)";
  }
  const std::string lower = Lowered(name);
  // Hop-by-hop and framing headers belong to the connection, which the plugin runs: a user's
  // value would corrupt the request or speak for the proxy.
  if (lower == "transfer-encoding" || lower == "connection" || lower == "keep-alive" ||
      lower == "te" || lower == "trailer" || lower == "upgrade" || lower.rfind("proxy-", 0) == 0) {
    return name +
           " belongs to the connection, which the plugin runs (a proxy's credentials go "
           "in loki-proxy-url)";
  }
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

}  // namespace

std::string CheckLokiTlsFiles(const LokiClientConfig& config) {
  for (const auto& [option, path] : {std::pair{"loki-tls-ca-file", config.tls.ca_file},
                                     std::pair{"loki-tls-cert-file", config.tls.cert_file},
                                     std::pair{"loki-tls-key-file", config.tls.key_file}}) {
    std::string content;
    if (path.empty()) continue;
    if (std::string why = ReadUserFile(option, path, kMaxTlsFileBytes, content); !why.empty()) {
      return why;
    }
  }
  return "";
}

std::string CheckLokiClientFiles(const LokiClientConfig& config) {
  const ParsedUrl url = ParseCheckedUrl(config.url);
  LokiCredentials unused;
  if (std::string why = LoadLokiCredentials(config, url, unused); !why.empty()) return why;
  return CheckLokiTlsFiles(config);
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
    if (std::string err = ParseUrl(config.proxy_url, proxy, UrlRole::kProxy); !err.empty()) {
      return "loki-proxy-url '" + RedactUrl(config.proxy_url) + "': " + err;
    }
    if (proxy.scheme.rfind("socks5", 0) == 0) {
      Socks5Request request{url.host, url.port, proxy.has_userinfo, proxy.user, proxy.password};
      if (std::string err = Socks5RequestError(request); !err.empty()) {
        return "loki-proxy-url '" + RedactUrl(config.proxy_url) + "': " + err;
      }
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
  if (!proxy_url.empty() && ParseUrl(proxy_url, parsed, UrlRole::kProxy).empty() &&
      parsed.has_userinfo) {
    field("proxy_auth", Sha256Hex(parsed.user + '\0' + parsed.password, 16));
  }
  field("max_buffered", std::to_string(max_buffered_bytes));
  field("lanes", std::to_string(lanes));
  field("durable", durable ? "1" : "0");
  return key;
}

}  // namespace skald
