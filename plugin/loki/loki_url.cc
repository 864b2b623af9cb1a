#include "plugin/loki/loki_url.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "pipeline_stages/go/go_string.h"

namespace skald {
namespace {

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      const int hi = stages::HexDigitValue(s[i + 1]);
      const int lo = stages::HexDigitValue(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

bool IsControl(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7F;
}

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// A DNS name or IPv4 address (RFC 3986 unreserved characters; no percent-encoding).
bool IsRegName(std::string_view host) {
  return std::all_of(host.begin(), host.end(), [](char c) {
    return IsAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
  });
}

// The inside of [...]: hex digits, ':' and '.', and a zone after '%'.
bool IsIpLiteral(std::string_view host) {
  return !host.empty() && std::all_of(host.begin(), host.end(), [](char c) {
    return IsAlnum(c) || c == ':' || c == '.' || c == '%' || c == '-' || c == '_';
  });
}

}  // namespace

ParsedUrl ParseCheckedUrl(std::string_view url, UrlRole role) {
  ParsedUrl parsed;
  if (std::string why = ParseUrl(url, parsed, role); !why.empty()) {
    throw std::invalid_argument("a Loki or proxy URL used unchecked: " + why);
  }
  return parsed;
}

namespace {

// The host and port of `authority` (after the user info) into `out`; the port defaults to the
// scheme's. Returns why they are not valid ("" when they are).
std::string ParseHostPort(std::string_view authority, ParsedUrl& out) {
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return "unterminated IPv6 address";
    const std::string_view literal = authority.substr(1, close - 1);
    if (!IsIpLiteral(literal)) return "invalid IPv6 address '" + std::string(literal) + "'";
    out.host = std::string(literal);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return "unexpected text after the IPv6 address";
      port = after.substr(1);
    }
  } else {
    const std::size_t colon = authority.rfind(':');
    const std::string_view host = authority.substr(0, colon);
    if (!IsRegName(host)) return "invalid host '" + std::string(host) + "'";
    out.host = std::string(host);
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (out.host.empty()) return out.has_userinfo ? "no host after the user info" : "no host";
  if (port.empty()) {
    out.port = out.scheme == "https" ? 443 : out.scheme.rfind("socks5", 0) == 0 ? 1080 : 80;
  } else {
    int p = 0;
    for (char c : port) {
      if (c < '0' || c > '9' || p > 65535) return "invalid port '" + std::string(port) + "'";
      p = p * 10 + (c - '0');
    }
    if (p < 1 || p > 65535) return "port " + std::string(port) + " outside 1-65535";
    out.port = p;
  }
  return "";
}

}  // namespace

std::string ParseUrl(std::string_view url, ParsedUrl& out, UrlRole role) {
  out = ParsedUrl{};
  if (std::any_of(url.begin(), url.end(), IsControl)) return "contains a control character";
  const std::size_t scheme_end = url.find("://");
  const std::string_view scheme = url.substr(0, scheme_end);
  const bool scheme_chars =
      !scheme.empty() && std::all_of(scheme.begin(), scheme.end(), [](char c) {
        return IsAlnum(c) || c == '+' || c == '-' || c == '.';
      });
  if (scheme_end == std::string_view::npos || !scheme_chars) {
    return "not a URL; expected http://host[:port]/path or https://...";
  }
  for (char c : scheme)
    out.scheme += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (role == UrlRole::kProxy) {
    if (out.scheme != "http" && out.scheme != "https" && out.scheme != "socks5" &&
        out.scheme != "socks5h") {
      return "unsupported scheme '" + out.scheme + "'; expected http, https, socks5 or socks5h";
    }
  } else if (out.scheme != "http" && out.scheme != "https") {
    return "unsupported scheme '" + out.scheme + "'; expected http or https";
  }

  std::string_view rest = url.substr(scheme_end + 3);
  // The last '@' ends the user info: a password may hold '/', '?', '#' or '@' unescaped.
  if (const std::size_t at = rest.rfind('@'); at != std::string_view::npos) {
    const std::string_view userinfo = rest.substr(0, at);
    const std::size_t colon = userinfo.find(':');
    out.has_userinfo = true;
    out.user = PercentDecode(userinfo.substr(0, colon));
    if (colon != std::string_view::npos) out.password = PercentDecode(userinfo.substr(colon + 1));
    rest = rest.substr(at + 1);
  }
  const std::size_t authority_end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, authority_end);
  std::string_view path =
      authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  if (const std::size_t hash = path.find('#'); hash != std::string_view::npos) {
    path = path.substr(0, hash);
  }
  if (path.find(' ') != std::string_view::npos) return "the path contains a space";
  out.path =
      path.empty() ? "/" : (path.front() == '?' ? "/" + std::string(path) : std::string(path));

  return ParseHostPort(authority, out);
}

std::string RedactUrl(std::string_view url) {
  const std::size_t scheme_end = url.find("://");
  const std::size_t start = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
  const std::size_t at = url.rfind('@');
  std::string kept;
  if (at == std::string_view::npos) {
    kept = url;
  } else if (at >= start) {
    kept = std::string(url.substr(0, start)) + std::string(url.substr(at + 1));
  } else {
    kept = url.substr(at + 1);  // no "://" after the '@': everything before it may be secret
  }
  std::string out;
  for (char c : kept) {
    if (IsControl(c)) {
      stages::AppendHexEscape("\\x", static_cast<unsigned char>(c), 2, &out);
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace skald
