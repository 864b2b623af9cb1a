#include "pipeline_stages/go/go_url.h"

#include <algorithm>
#include <cstdint>

#include "pipeline_stages/go/go_string.h"

namespace skald::stages {
namespace {

// net/url's encoding modes: which part of a URL a text is escaped for or read from.
enum class Mode { kPath, kPathSegment, kHost, kZone, kUserPassword, kQueryComponent, kFragment };

bool IsAlnum(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// `c` is one of `set` (never NUL).
bool In(std::string_view set, unsigned char c) {
  return c != 0 && set.find(static_cast<char>(c)) != std::string_view::npos;
}

bool IsHex(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

unsigned char Unhex(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

// net/url's shouldEscape (RFC 3986, as Go reads it).
bool ShouldEscape(unsigned char c, Mode mode) {
  if (IsAlnum(c)) return false;
  if ((mode == Mode::kHost || mode == Mode::kZone) && In("!$&'()*+,;=:[]<>\"", c)) return false;
  if (In("-_.~", c)) return false;  // unreserved
  if (In("$&+,/:;=?@", c)) {        // reserved
    switch (mode) {
      case Mode::kPath:
        return c == '?';
      case Mode::kPathSegment:
        return c == '/' || c == ';' || c == ',' || c == '?';
      case Mode::kUserPassword:
        return c == '@' || c == '/' || c == '?' || c == ':';
      case Mode::kQueryComponent:
        return true;
      case Mode::kFragment:
        return false;
      default:
        break;
    }
  }
  return !(mode == Mode::kFragment && In("!()*", c));
}

// net/url's unescape. On failure returns false with Go's message in *error.
bool Unescape(std::string_view s, Mode mode, std::string* out, std::string* error) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '%') {
      if (i + 2 >= s.size() || !IsHex(s[i + 1]) || !IsHex(s[i + 2])) {
        *error = "invalid URL escape " + GoQuoted(s.substr(i, 3));
        return false;
      }
      const unsigned char v = static_cast<unsigned char>(Unhex(s[i + 1]) << 4 | Unhex(s[i + 2]));
      if (mode == Mode::kHost && Unhex(s[i + 1]) < 8 && s.substr(i, 3) != "%25") {
        *error = "invalid URL escape " + GoQuoted(s.substr(i, 3));
        return false;
      }
      if (mode == Mode::kZone && s.substr(i, 3) != "%25" && v != ' ' &&
          ShouldEscape(v, Mode::kHost)) {
        *error = "invalid URL escape " + GoQuoted(s.substr(i, 3));
        return false;
      }
      i += 3;
      continue;
    }
    if ((mode == Mode::kHost || mode == Mode::kZone) && c < 0x80 && c != '+' &&
        ShouldEscape(c, mode)) {
      *error = "invalid character " + GoQuoted(s.substr(i, 1)) + " in host name";
      return false;
    }
    ++i;
  }
  out->clear();
  out->reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%') {
      out->push_back(static_cast<char>(Unhex(s[i + 1]) << 4 | Unhex(s[i + 2])));
      i += 2;
    } else if (s[i] == '+' && mode == Mode::kQueryComponent) {
      out->push_back(' ');
    } else {
      out->push_back(s[i]);
    }
  }
  return true;
}

// net/url's escape.
std::string Escape(std::string_view s, Mode mode) {
  static constexpr char kUpperHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == ' ' && mode == Mode::kQueryComponent) {
      out.push_back('+');
    } else if (ShouldEscape(c, mode)) {
      out.push_back('%');
      out.push_back(kUpperHex[c >> 4]);
      out.push_back(kUpperHex[c & 15]);
    } else {
      out.push_back(ch);
    }
  }
  return out;
}

// The escaped text `raw` may be written as it is (validEncoded).
bool ValidEncoded(std::string_view raw, Mode mode) {
  return std::all_of(raw.begin(), raw.end(), [mode](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return In("!$&'()*+,;=:@[]%", c) || !ShouldEscape(c, mode);
  });
}

bool ValidOptionalPort(std::string_view port) {
  if (port.empty()) return true;
  if (port[0] != ':') return false;
  return std::all_of(port.begin() + 1, port.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A netip parse error's text: the message and, when known, where in the input it was.
bool Why(std::string* why, std::string_view message, std::string_view at) {
  *why = std::string(message);
  if (!at.empty()) *why += " (at " + GoQuoted(at) + ")";
  return false;
}

// netip.ParseAddr's IPv4 fields of in[off, end) into `fields`.
bool ParseIPv4Fields(std::string_view s, uint8_t* fields, std::string* why) {
  int val = 0, pos = 0, digits = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] >= '0' && s[i] <= '9') {
      if (digits == 1 && val == 0) return *why = "IPv4 field has octet with leading zero", false;
      val = val * 10 + (s[i] - '0');
      ++digits;
      if (val > 255) return *why = "IPv4 field has value >255", false;
    } else if (s[i] == '.') {
      if (i == 0 || i == s.size() - 1 || s[i - 1] == '.') {
        return Why(why, "IPv4 field must have at least one digit", s.substr(i));
      }
      if (pos == 3) return *why = "IPv4 address too long", false;
      fields[pos++] = static_cast<uint8_t>(val);
      val = digits = 0;
    } else {
      return Why(why, "unexpected character", s.substr(i));
    }
  }
  if (pos < 3) return *why = "IPv4 address too short", false;
  fields[3] = static_cast<uint8_t>(val);
  return true;
}

int HexValue(char c) { return IsHex(static_cast<unsigned char>(c)) ? Unhex(c) : -1; }

// netip.parseIPv6's checks (the address itself is not needed).
bool ValidIPv6(std::string_view in, std::string* why) {
  std::string_view s = in;
  if (const std::size_t pct = s.find('%'); pct != std::string_view::npos) {
    if (pct + 1 == s.size()) return *why = "zone must be a non-empty string", false;
    s = s.substr(0, pct);
  }
  int ellipsis = -1;
  if (s.size() >= 2 && s[0] == ':' && s[1] == ':') {
    ellipsis = 0;
    s.remove_prefix(2);
    if (s.empty()) return true;
  }
  int i = 0;
  while (i < 16) {
    std::size_t off = 0;
    uint32_t acc = 0;
    for (; off < s.size(); ++off) {
      const int h = HexValue(s[off]);
      if (h < 0) break;
      acc = (acc << 4) + static_cast<uint32_t>(h);
      if (off > 3) return Why(why, "each group must have 4 or less digits", s);
    }
    if (off == 0) return Why(why, "each colon-separated field must have at least one digit", s);
    if (off < s.size() && s[off] == '.') {
      if (ellipsis < 0 && i != 12) {
        return Why(why, "embedded IPv4 address must replace the final 2 fields of the address", s);
      }
      if (i + 4 > 16) {
        return Why(why, "too many hex fields to fit an embedded IPv4 at the end of the address", s);
      }
      uint8_t fields[4];
      if (!ParseIPv4Fields(s, fields, why)) return false;
      s = {};
      i += 4;
      break;
    }
    i += 2;
    s.remove_prefix(off);
    if (s.empty()) break;
    if (s[0] != ':') return Why(why, "unexpected character, want colon", s);
    if (s.size() == 1) return Why(why, "colon must be followed by more characters", s);
    s.remove_prefix(1);
    if (s[0] == ':') {
      if (ellipsis >= 0) return Why(why, "multiple :: in address", s);
      ellipsis = i;
      s.remove_prefix(1);
      if (s.empty()) break;
    }
  }
  if (!s.empty()) return Why(why, "trailing garbage after address", s);
  if (i < 16 && ellipsis < 0) return *why = "address string too short", false;
  if (i >= 16 && ellipsis >= 0) {
    return *why = "the :: must expand to at least one field of zeros", false;
  }
  return true;
}

// netip.ParseAddr(s): whether it is an address, and whether an IPv4 one. Go's message in *error.
bool ParseAddr(std::string_view s, bool* is4, std::string* error) {
  std::string why = "unable to parse IP";
  bool ok = false;
  *is4 = false;
  for (const char c : s) {
    if (c == '.') {
      uint8_t fields[4];
      ok = ParseIPv4Fields(s, fields, &why);
      *is4 = ok;
      break;
    }
    if (c == ':') {
      ok = ValidIPv6(s, &why);
      break;
    }
    if (c == '%') {
      why = "missing IPv6 address";
      break;
    }
  }
  if (!ok) *error = "ParseAddr(" + GoQuoted(s) + "): " + why;
  return ok;
}

// url's parseHost: the host unescaped, or false with Go's message.
bool ParseHost(std::string_view scheme, std::string_view host, std::string* out,
               std::string* error) {
  const std::size_t open = host.rfind('[');
  if (open != std::string_view::npos && open > 0) return *error = "invalid IP-literal", false;
  if (open == 0) {
    const std::size_t close = host.rfind(']');
    if (close == std::string_view::npos) return *error = "missing ']' in host", false;
    const std::string_view colon_port = host.substr(close + 1);
    if (!ValidOptionalPort(colon_port)) {
      return *error = "invalid port " + GoQuoted(colon_port) + " after host", false;
    }
    const std::string_view hostname = host.substr(1, close - 1);
    std::string unescaped;
    if (const std::size_t zone = hostname.find("%25"); zone != std::string_view::npos) {
      std::string host_part, zone_part;
      if (!Unescape(hostname.substr(0, zone), Mode::kHost, &host_part, error)) return false;
      if (!Unescape(hostname.substr(zone), Mode::kZone, &zone_part, error)) return false;
      unescaped = host_part + zone_part;
    } else if (!Unescape(hostname, Mode::kHost, &unescaped, error)) {
      return false;
    }
    bool is4 = false;
    std::string why;
    if (!ParseAddr(unescaped, &is4, &why)) return *error = "invalid host: " + why, false;
    if (is4) return *error = "invalid IP-literal", false;
    *out = "[" + unescaped + "]" + std::string(colon_port);
    return true;
  }
  if (std::size_t i = host.find(':'); i != std::string_view::npos) {
    // Go 1.26's default (urlstrictcolons=1): an http(s) host has one colon, before the port;
    // other schemes take the last colon.
    if (scheme != "http" && scheme != "https") i = host.rfind(':');
    const std::string_view colon_port = host.substr(i);
    if (!ValidOptionalPort(colon_port)) {
      return *error = "invalid port " + GoQuoted(colon_port) + " after host", false;
    }
  }
  return Unescape(host, Mode::kHost, out, error);
}

// url's validUserinfo: RFC 3986's userinfo characters (and '@'), ASCII only.
bool ValidUserinfo(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return IsAlnum(c) || In("-._:~!$&'()*+,;=%@", c);
  });
}

bool ParseAuthority(std::string_view scheme, std::string_view authority, GoUrl& url,
                    std::string* error) {
  const std::size_t at = authority.rfind('@');
  const std::string_view host_text =
      at == std::string_view::npos ? authority : authority.substr(at + 1);
  if (!ParseHost(scheme, host_text, &url.host, error)) return false;
  if (at == std::string_view::npos) return true;
  const std::string_view userinfo = authority.substr(0, at);
  if (!ValidUserinfo(userinfo)) return *error = "net/url: invalid userinfo", false;
  GoUrl::User user;
  const std::size_t colon = userinfo.find(':');
  if (!Unescape(userinfo.substr(0, colon), Mode::kUserPassword, &user.username, error)) {
    return false;
  }
  if (colon != std::string_view::npos) {
    if (!Unescape(userinfo.substr(colon + 1), Mode::kUserPassword, &user.password, error)) {
      return false;
    }
    user.password_set = true;
  }
  url.user = std::move(user);
  return true;
}

bool SetPath(GoUrl& url, std::string_view p, std::string* error) {
  if (!Unescape(p, Mode::kPath, &url.path, error)) return false;
  url.raw_path = Escape(url.path, Mode::kPath) == p ? "" : std::string(p);
  return true;
}

bool SetFragment(GoUrl& url, std::string_view f, std::string* error) {
  if (!Unescape(f, Mode::kFragment, &url.fragment, error)) return false;
  url.raw_fragment = Escape(url.fragment, Mode::kFragment) == f ? "" : std::string(f);
  return true;
}

// url's getScheme: the scheme before the first ':' when the text starts with one.
bool SplitScheme(std::string_view raw, std::string* scheme, std::string_view* rest,
                 std::string* error) {
  *rest = raw;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) continue;
    if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.') {
      if (i == 0) return true;
      continue;
    }
    if (c == ':') {
      if (i == 0) return *error = "missing protocol scheme", false;
      scheme->assign(raw.substr(0, i));
      *rest = raw.substr(i + 1);
    }
    return true;
  }
  return true;
}

// url's parse(rawURL, viaRequest=false), the text before any '#'.
bool ParseWithoutFragment(std::string_view raw, GoUrl& url, std::string* error) {
  if (std::any_of(raw.begin(), raw.end(), [](char c) {
        return static_cast<unsigned char>(c) < ' ' || static_cast<unsigned char>(c) == 0x7f;
      })) {
    return *error = "net/url: invalid control character in URL", false;
  }
  if (raw == "*") {
    url.path = "*";
    return true;
  }
  std::string_view rest;
  if (!SplitScheme(raw, &url.scheme, &rest, error)) return false;
  std::transform(url.scheme.begin(), url.scheme.end(), url.scheme.begin(),
                 [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; });
  if (!rest.empty() && rest.back() == '?' && std::count(rest.begin(), rest.end(), '?') == 1) {
    url.force_query = true;
    rest.remove_suffix(1);
  } else if (const std::size_t q = rest.find('?'); q != std::string_view::npos) {
    url.raw_query = std::string(rest.substr(q + 1));
    rest = rest.substr(0, q);
  }
  if (!rest.starts_with('/')) {
    if (!url.scheme.empty()) {
      url.opaque = std::string(rest);
      return true;
    }
    if (rest.substr(0, rest.find('/')).find(':') != std::string_view::npos) {
      return *error = "first path segment in URL cannot contain colon", false;
    }
  }
  if ((!url.scheme.empty() || !rest.starts_with("///")) && rest.starts_with("//")) {
    std::string_view authority = rest.substr(2);
    rest = {};
    if (const std::size_t slash = authority.find('/'); slash != std::string_view::npos) {
      rest = authority.substr(slash);
      authority = authority.substr(0, slash);
    }
    if (!ParseAuthority(url.scheme, authority, url, error)) return false;
  } else if (!url.scheme.empty() && rest.starts_with('/')) {
    url.omit_host = true;
  }
  return SetPath(url, rest, error);
}

}  // namespace

std::string GoUrl::User::String() const {
  std::string s = Escape(username, Mode::kUserPassword);
  if (password_set) s += ":" + Escape(password, Mode::kUserPassword);
  return s;
}

std::optional<GoUrl> GoUrl::Parse(std::string_view text, std::string* error) {
  const std::size_t hash = text.find('#');
  const std::string_view before = text.substr(0, hash);
  GoUrl url;
  std::string why;
  if (!ParseWithoutFragment(before, url, &why)) {
    *error = "parse " + GoQuoted(before) + ": " + why;
    return std::nullopt;
  }
  if (hash != std::string_view::npos && hash + 1 < text.size() &&
      !SetFragment(url, text.substr(hash + 1), &why)) {
    *error = "parse " + GoQuoted(text) + ": " + why;
    return std::nullopt;
  }
  return url;
}

std::string GoUrl::EscapedPath() const {
  if (!raw_path.empty() && ValidEncoded(raw_path, Mode::kPath)) {
    std::string p, error;
    if (Unescape(raw_path, Mode::kPath, &p, &error) && p == path) return raw_path;
  }
  if (path == "*") return "*";
  return Escape(path, Mode::kPath);
}

std::string GoUrl::EscapedFragment() const {
  if (!raw_fragment.empty() && ValidEncoded(raw_fragment, Mode::kFragment)) {
    std::string f, error;
    if (Unescape(raw_fragment, Mode::kFragment, &f, &error) && f == fragment) {
      return raw_fragment;
    }
  }
  return Escape(fragment, Mode::kFragment);
}

std::string GoUrl::Hostname() const {
  std::string_view h = host;
  if (const std::size_t colon = h.rfind(':');
      colon != std::string_view::npos && ValidOptionalPort(h.substr(colon))) {
    h = h.substr(0, colon);
  }
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  return std::string(h);
}

std::string GoUrl::String() const {
  std::string out;
  if (!scheme.empty()) out += scheme + ":";
  if (!opaque.empty()) {
    out += opaque;
  } else {
    if (!scheme.empty() || !host.empty() || user) {
      if (!(omit_host && host.empty() && !user)) {
        if (!host.empty() || !path.empty() || user) out += "//";
        if (user) out += user->String() + "@";
        if (!host.empty()) out += Escape(host, Mode::kHost);
      }
    }
    const std::string p = EscapedPath();
    if (!p.empty() && p[0] != '/' && !host.empty()) out += "/";
    if (out.empty()) {
      // A first segment with a colon would read as a scheme: "./" keeps it a path.
      if (std::string_view(p).substr(0, p.find('/')).find(':') != std::string_view::npos) {
        out += "./";
      }
    }
    out += p;
  }
  if (force_query || !raw_query.empty()) out += "?" + raw_query;
  if (!fragment.empty()) out += "#" + EscapedFragment();
  return out;
}

}  // namespace skald::stages
