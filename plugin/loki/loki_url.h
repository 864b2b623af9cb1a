// LokiUrl: the one parser of loki-url and loki-proxy-url, and their redaction for messages.
//
// A URL is scheme://[userinfo@]host[:port][/path][?query][#fragment]. Everything between "://"
// and the last '@' of the URL is user info, so a user name and password may hold any character
// ('/', '?', '#', '@' and ':' too, raw or percent-encoded; the user name ends at the first ':').
// In exchange an '@' in the path or query must be written %40. Parse errors and RedactUrl never
// show any part of the user info.
#pragma once

#include <string>
#include <string_view>

namespace skald {

struct ParsedUrl {
  std::string scheme;  // "http" or "https"; a proxy's: also "socks5" or "socks5h"
  std::string host;    // without brackets for IPv6
  int port = 0;
  std::string path;  // path and query, at least "/"; no fragment
  std::string user;  // percent-decoded
  std::string password;
  bool has_userinfo = false;
};

// What a URL names: Loki's endpoint (http, https), or the proxy before it (http, https; socks5 and
// socks5h, the same to the plugin: the proxy resolves the endpoint's name; port 1080 by default).
enum class UrlRole { kEndpoint, kProxy };

// Fills `out` and returns "" when `url` is a URL of the role's schemes with a valid host and
// port; otherwise returns why not (naming neither the URL nor its user info), e.g. "invalid port
// '3x'". The caller names the option and shows the URL through RedactUrl.
std::string ParseUrl(std::string_view url, ParsedUrl& out, UrlRole role = UrlRole::kEndpoint);

// ParseUrl of a URL already checked (the options, ValidateLokiClientConfig): where the result
// is used without its error. Throws std::invalid_argument with ParseUrl's reason when the URL
// was not checked after all, rather than going on with an empty host.
ParsedUrl ParseCheckedUrl(std::string_view url, UrlRole role = UrlRole::kEndpoint);

// `url` without its user info (`http://u:p@h/x` -> `http://h/x`), control characters shown
// as \xNN, for logs and errors. Follows ParseUrl's rule, also for URLs it refuses.
std::string RedactUrl(std::string_view url);

}  // namespace skald
