// URLs as Go's net/url (Go 1.26) reads and writes them: what sprig's `urlParse` and `urlJoin`
// template functions call. No template code here: the template functions are
// go_template/go_template_sprig_urls.cc.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace skald::stages {

// A url.URL's fields, with url.Parse's and URL.String's rules.
struct GoUrl {
  struct User {
    std::string username;
    std::string password;
    bool password_set = false;

    // Userinfo.String(): the name and password escaped for a URL's userinfo ("a%40b:pw").
    std::string String() const;
  };

  std::string scheme;  // lower case after Parse
  std::string opaque;  // encoded opaque data ("mailto:" + opaque)
  std::optional<User> user;
  std::string host;  // "host" or "host:port", unescaped
  std::string path;  // unescaped
  std::string raw_path;
  std::string raw_query;  // without the '?'
  std::string fragment;   // unescaped, without the '#'
  std::string raw_fragment;
  bool force_query = false;  // a '?' with nothing after it
  bool omit_host = false;    // "scheme:/path": no "//" to write back

  // url.Parse(text). On failure returns nullopt and sets *error to Go's message, e.g.
  // `parse "http://a b": invalid character " " in host name`.
  static std::optional<GoUrl> Parse(std::string_view text, std::string* error);

  // URL.String(): the URL's text, its parts escaped as Go does.
  std::string String() const;
  // URL.Hostname(): the host without a port and without an IPv6 literal's brackets.
  std::string Hostname() const;
  // URL.EscapedPath() and URL.EscapedFragment().
  std::string EscapedPath() const;
  std::string EscapedFragment() const;
};

}  // namespace skald::stages
