#include "plugin/loki/loki_url.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

namespace skald {
namespace {

using ::testing::HasSubstr;

ParsedUrl Parse(const std::string& url) {
  ParsedUrl out;
  const std::string err = ParseUrl(url, out);
  EXPECT_EQ(err, "") << url;
  return out;
}

std::string ErrorOf(const std::string& url) {
  ParsedUrl out;
  return ParseUrl(url, out);
}

TEST(LokiUrl, SplitsSchemeHostPortAndPath) {
  ParsedUrl u = Parse("HTTP://loki.example:3100/loki/api/v1/push?x=1#frag");
  EXPECT_EQ(u.scheme, "http");
  EXPECT_EQ(u.host, "loki.example");
  EXPECT_EQ(u.port, 3100);
  EXPECT_EQ(u.path, "/loki/api/v1/push?x=1");
  EXPECT_FALSE(u.has_userinfo);
  EXPECT_EQ(Parse("https://loki").port, 443);
  EXPECT_EQ(Parse("http://loki").port, 80);
  EXPECT_EQ(Parse("http://loki").path, "/");
  EXPECT_EQ(Parse("http://loki?a=b").path, "/?a=b");
  u = Parse("https://[::1]:3100/x");
  EXPECT_EQ(u.host, "::1");
  EXPECT_EQ(u.port, 3100);
}

TEST(LokiUrl, UserInfoRunsToTheLastAt) {
  ParsedUrl u = Parse("http://ceo:S3cr3t/Pa55==@127.0.0.1:3100/loki/api/v1/push");
  EXPECT_TRUE(u.has_userinfo);
  EXPECT_EQ(u.user, "ceo");
  EXPECT_EQ(u.password, "S3cr3t/Pa55==");
  EXPECT_EQ(u.host, "127.0.0.1");
  EXPECT_EQ(u.port, 3100);
  EXPECT_EQ(u.path, "/loki/api/v1/push");
  EXPECT_EQ(Parse("http://u:a?b#c@d:e@h/x").password, "a?b#c@d:e");
  EXPECT_EQ(Parse("http://u%3Ax:p%2F%40%25@h/x").user, "u:x");
  EXPECT_EQ(Parse("http://u%3Ax:p%2F%40%25@h/x").password, "p/@%");
  EXPECT_EQ(Parse("http://token@h/x").user, "token");
  EXPECT_EQ(Parse("http://token@h/x").password, "");
  // An '@' in a path or query is read as the end of user info: it must be written %40.
  EXPECT_EQ(Parse("http://h/x?a=b@c").host, "c");
  EXPECT_EQ(Parse("http://h/x?a=b%40c").path, "/x?a=b%40c");
}

TEST(LokiUrl, RefusesWhatHttpCannotCarry) {
  EXPECT_THAT(ErrorOf("localhost:3100"), HasSubstr("not a URL"));
  EXPECT_THAT(ErrorOf("ftp://h/x"), HasSubstr("unsupported scheme 'ftp'"));
  EXPECT_THAT(ErrorOf("http://h:0/x"), HasSubstr("outside 1-65535"));
  EXPECT_THAT(ErrorOf("http://h:65536/x"), HasSubstr("outside 1-65535"));
  EXPECT_THAT(ErrorOf("http://h:http/x"), HasSubstr("invalid port 'http'"));
  EXPECT_THAT(ErrorOf("http:///x"), HasSubstr("no host"));
  EXPECT_THAT(ErrorOf("http://u:p@/x"), HasSubstr("no host after the user info"));
  EXPECT_THAT(ErrorOf("http://h x/"), HasSubstr("invalid host 'h x'"));
  EXPECT_THAT(ErrorOf("http://h/a b"), HasSubstr("space"));
  EXPECT_THAT(ErrorOf("http://h/a\r\nX-Injected: yes"), HasSubstr("control character"));
  EXPECT_THAT(ErrorOf("http://[::1/x"), HasSubstr("unterminated IPv6"));
}

TEST(LokiUrl, ErrorsNeverHoldTheUserInfo) {
  for (const std::string url :
       {"http://ceo:S3cr3t@h:99999/x", "http://ceo:S3cr3t/x@:1/", "http://ceo:S3cr3t@h x/",
        "http://ceo:S3cr3t\n@h/", "ftp://ceo:S3cr3t@h/"}) {
    const std::string err = ErrorOf(url);
    EXPECT_NE(err, "") << url;
    EXPECT_THAT(err, ::testing::Not(HasSubstr("S3cr3t"))) << url;
    EXPECT_THAT(RedactUrl(url), ::testing::Not(HasSubstr("S3cr3t"))) << url;
  }
}

TEST(LokiUrl, RedactionShowsControlCharactersEscaped) {
  EXPECT_EQ(RedactUrl("http://u:p@h/a\r\nb"), "http://h/a\\x0d\\x0ab");
  EXPECT_EQ(RedactUrl("http://h/x"), "http://h/x");
  EXPECT_EQ(RedactUrl("u:p@h"), "h");
  EXPECT_EQ(RedactUrl("a@b://u:p@h/x"), "a@b://h/x");
  EXPECT_EQ(RedactUrl("u:p@h://x"), "h://x");
}

TEST(LokiClientConfigTest, RedactUrlRemovesUserInfo) {
  EXPECT_EQ(RedactUrl("http://u:p@h:3100/loki/api/v1/push"), "http://h:3100/loki/api/v1/push");
  EXPECT_EQ(RedactUrl("https://user@h/x"), "https://h/x");
  // The last '@' ends the user info, also after a '/', '?' or '#': an '@' in a path or query
  // must be written %40.
  EXPECT_EQ(RedactUrl("http://h/x?a=b@c"), "http://c");
  EXPECT_EQ(RedactUrl("http://h/x?a=b%40c"), "http://h/x?a=b%40c");
  EXPECT_EQ(RedactUrl("http://h:1/x"), "http://h:1/x");
  EXPECT_EQ(RedactUrl("http://a:b@c@h/"), "http://h/");
  EXPECT_EQ(RedactUrl("http://ceo:S3cr3t/Pa55==@h:1/x"), "http://h:1/x");
  EXPECT_EQ(RedactUrl("http://ceo:S3#cr?3t@h/x"), "http://h/x");
  EXPECT_EQ(RedactUrl("ceo:S3cr3t@h:3100/x"), "h:3100/x");
}

// Where a checked URL's parse is used without its error, an unchecked one throws (naming no
// part of the user info) instead of going on with an empty host.
TEST(LokiUrl, ACheckedUrlParsesAndAnUncheckedOneThrows) {
  const ParsedUrl url = ParseCheckedUrl("https://u:p@loki.example:3100/loki/api/v1/push");
  EXPECT_EQ(url.host, "loki.example");
  EXPECT_EQ(url.port, 3100);
  EXPECT_EQ(url.user, "u");
  try {
    ParseCheckedUrl("ftp://u:s3cret@loki.example/");
    FAIL() << "an ftp URL parsed";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).find("s3cret"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace skald
