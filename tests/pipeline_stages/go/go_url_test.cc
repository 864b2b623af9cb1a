// Go's net/url (go1.26.8) through its own test inputs: every string literal of
// src/net/url/url_test.go (and a few more cases of hosts, ports, userinfo and escapes), each given
// to url.Parse by tests/e2e/loki/urloracle (a Go program built against that Go); its answers
// (the fields sprig's urlParse reads, URL.String(), and the URL sprig's urlJoin builds from those
// fields) are go_url_cases.jsonl, one JSON object per line.
#include "pipeline_stages/go/go_url.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace skald::stages {
namespace {

// The URL sprig's urlJoin builds from urlParse's fields: no raw path or fragment, no forced '?'.
GoUrl AsJoined(const GoUrl& u) {
  GoUrl j;
  j.scheme = u.scheme;
  j.host = u.host;
  j.path = u.path;
  j.raw_query = u.raw_query;
  j.opaque = u.opaque;
  j.fragment = u.fragment;
  j.user = u.user;
  return j;
}

TEST(GoUrl, ParsesAndWritesAsGoDoesForEveryInputOfGosOwnTests) {
  std::ifstream in(SKALD_GO_URL_CASES);
  ASSERT_TRUE(in) << SKALD_GO_URL_CASES;
  std::string line;
  int cases = 0, errors = 0, differences = 0;
  while (std::getline(in, line)) {
    const nlohmann::json want = nlohmann::json::parse(line);
    const std::string input = want.at("in");
    ++cases;
    std::string error;
    const std::optional<GoUrl> got = GoUrl::Parse(input, &error);
    nlohmann::json have = {{"in", input}};
    if (!got) {
      have["error"] = error;
      ++errors;
    } else {
      have["scheme"] = got->scheme;
      have["host"] = got->host;
      have["hostname"] = got->Hostname();
      have["path"] = got->path;
      have["query"] = got->raw_query;
      have["opaque"] = got->opaque;
      have["fragment"] = got->fragment;
      have["userinfo"] = got->user ? got->user->String() : "";
      have["string"] = got->String();
      have["joined"] = AsJoined(*got).String();
    }
    if (have != want && ++differences <= 20) {
      ADD_FAILURE() << "url.Parse(" << nlohmann::json(input).dump() << ")\n  Go:    " << want.dump()
                    << "\n  skald: " << have.dump();
    }
  }
  EXPECT_EQ(differences, 0) << "of " << cases;
  // The table is Go's own inputs: most parse, many are refused.
  EXPECT_GT(cases, 700);
  EXPECT_GT(errors, 150);
}

TEST(GoUrl, ReadsTheHostsPortAndUserinfo) {
  std::string error;
  const auto u = GoUrl::Parse("HTTPS://me:p%40ss@[fe80::1%25en0]:8443/a%2Fb?q#f", &error);
  ASSERT_TRUE(u) << error;
  EXPECT_EQ(u->scheme, "https");
  EXPECT_EQ(u->host, "[fe80::1%en0]:8443");
  EXPECT_EQ(u->Hostname(), "fe80::1%en0");
  EXPECT_EQ(u->path, "/a/b");
  EXPECT_EQ(u->EscapedPath(), "/a%2Fb");
  ASSERT_TRUE(u->user);
  EXPECT_EQ(u->user->password, "p@ss");
  EXPECT_EQ(u->String(), "https://me:p%40ss@[fe80::1%25en0]:8443/a%2Fb?q#f");
}

TEST(GoUrl, RefusesWhatGoRefusesWithGosMessage) {
  std::string error;
  EXPECT_FALSE(GoUrl::Parse("http://a:1:2/", &error));
  EXPECT_EQ(error, R"(parse "http://a:1:2/": invalid port ":1:2" after host)");
  EXPECT_FALSE(GoUrl::Parse("http://[1.2.3.4]/", &error));
  EXPECT_EQ(error, R"(parse "http://[1.2.3.4]/": invalid IP-literal)");
  EXPECT_FALSE(GoUrl::Parse("a b:c", &error));
  EXPECT_EQ(error, R"(parse "a b:c": first path segment in URL cannot contain colon)");
  EXPECT_FALSE(GoUrl::Parse("http://h/\x01", &error));
  EXPECT_EQ(error, R"(parse "http://h/\x01": net/url: invalid control character in URL)");
}

}  // namespace
}  // namespace skald::stages
