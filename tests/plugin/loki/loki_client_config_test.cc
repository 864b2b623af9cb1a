#include "plugin/loki/loki_client_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "plugin/loki/loki_client.h"
#include "plugin/loki/loki_url.h"
#include "plugin/metrics/metrics.h"

namespace skald {
namespace {

TEST(LokiClientConfigTest, ValidationNamesTheBadOption) {
  LokiClientConfig c;
  c.url = "ftp://u:pw@host/x";
  std::string err = ValidateLokiClientConfig(c);
  EXPECT_THAT(err, ::testing::HasSubstr("loki-url"));
  EXPECT_THAT(err, ::testing::HasSubstr("http or https"));
  EXPECT_THAT(err, ::testing::Not(::testing::HasSubstr("pw")));
  c.url = "http://host:99999/loki/api/v1/push";
  EXPECT_THAT(ValidateLokiClientConfig(c), ::testing::HasSubstr("port"));
  c.url = "localhost:3100";
  EXPECT_THAT(ValidateLokiClientConfig(c), ::testing::HasSubstr("not a URL"));
  c.url = "https://[::1]:3100/loki/api/v1/push";
  EXPECT_EQ(ValidateLokiClientConfig(c), "");
  c.proxy_url = "gopher://proxy:8443";
  EXPECT_THAT(ValidateLokiClientConfig(c), ::testing::HasSubstr("loki-proxy-url"));
  c.proxy_url = "";
  c.tls.cert_file = "/c.pem";
  EXPECT_THAT(ValidateLokiClientConfig(c), ::testing::HasSubstr("loki-tls-key-file"));
  MetricsRegistry m;
  EXPECT_THROW(LokiClient(c, m), std::invalid_argument);
}

// Whatever is wrong with a URL, the error names the option and what is wrong, never the user
// info, whatever characters the password holds.
TEST(LokiClientConfigTest, ErrorsNeverShowUserInfo) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"http://ceo:S3cr3t/Pa55==@127.0.0.1:99999/loki/api/v1/push", "port"},
      {"http://ceo:S3cr3t/Pa55==@127.0.0.1:31x/loki/api/v1/push", "invalid port '31x'"},
      {"http://ceo:S3cr3t?Pa55@/loki/api/v1/push", "no host"},
      {"http://ceo:S3cr3t#Pa55@lo ki/loki/api/v1/push", "invalid host 'lo ki'"},
      {"ftp://ceo:S3cr3t/Pa55==@loki/x", "unsupported scheme 'ftp'"},
      {"ceo:S3cr3t/Pa55==@loki:3100/x", "not a URL"},
      {"http://ceo:S3cr3t\r\nPa55@loki/x", "control character"},
      {"http://ceo:S3cr3t:Pa55:@loki:3100/a b", "space"},
  };
  MetricsRegistry m;
  for (const auto& [url, why] : cases) {
    LokiClientConfig c;
    c.url = url;
    const std::string err = ValidateLokiClientConfig(c);
    EXPECT_THAT(err, ::testing::HasSubstr("loki-url")) << url;
    EXPECT_THAT(err, ::testing::HasSubstr(why)) << url;
    EXPECT_THAT(err, ::testing::Not(::testing::HasSubstr("S3cr3t"))) << url;
    EXPECT_THAT(err, ::testing::Not(::testing::HasSubstr("Pa55"))) << url;
    try {
      LokiClient client(c, m);
      ADD_FAILURE() << "accepted " << err;
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), ::testing::Not(::testing::HasSubstr("S3cr3t"))) << url;
    }
    c.url = "http://127.0.0.1:3100/loki/api/v1/push";
    c.proxy_url = url;
    const std::string proxy_err = ValidateLokiClientConfig(c);
    EXPECT_THAT(proxy_err, ::testing::HasSubstr("loki-proxy-url")) << url;
    EXPECT_THAT(proxy_err, ::testing::Not(::testing::HasSubstr("S3cr3t"))) << url;
  }
}

TEST(LokiClientConfigTest, InvalidTenantIsRefused) {
  LokiClientConfig c;
  c.url = "http://127.0.0.1:3100/loki/api/v1/push";
  for (const std::string tenant : {"acme\r\nX-Injected: yes", "a|b", "team a", ".."}) {
    c.tenant_id = tenant;
    const std::string err = ValidateLokiClientConfig(c);
    EXPECT_THAT(err, ::testing::HasSubstr("loki-tenant-id")) << tenant;
    EXPECT_THAT(err, ::testing::HasSubstr("a-z A-Z 0-9")) << tenant;
    MetricsRegistry m;
    EXPECT_THROW(LokiClient(c, m), std::invalid_argument) << tenant;
  }
  c.tenant_id = "team-a";
  EXPECT_EQ(ValidateLokiClientConfig(c), "");
}

TEST(LokiClientConfigTest, KeySeparatesCredentialsWithoutShowingThem) {
  LokiClientConfig a, b;
  a.url = "http://alice:one@h/loki/api/v1/push";
  b.url = "http://alice:two@h/loki/api/v1/push";
  EXPECT_NE(a.Key(), b.Key());
  EXPECT_THAT(a.Key(), ::testing::Not(::testing::HasSubstr("one")));
  b.url = a.url;
  EXPECT_EQ(a.Key(), b.Key());
  b.tenant_id = "x";
  EXPECT_NE(a.Key(), b.Key());
  // A proxy's credentials too, whatever its scheme: containers with other credentials for the
  // same proxy must not share a client (it would send the first one's).
  for (const std::string scheme : {"http", "https", "socks5", "socks5h"}) {
    b = a;
    a.proxy_url = scheme + "://alice:one@proxy:1080";
    b.proxy_url = scheme + "://alice:two@proxy:1080";
    EXPECT_NE(a.Key(), b.Key()) << scheme;
    EXPECT_THAT(a.Key(), ::testing::Not(::testing::HasSubstr("one"))) << scheme;
  }
}

TEST(LokiClientConfigTest, OneWayToAuthenticate) {
  LokiClientConfig c;
  c.url = "http://user:secret-pw@127.0.0.1:3100/loki/api/v1/push";
  c.auth.bearer_token = "secret-token";
  std::string err = ValidateLokiClientConfig(c);
  EXPECT_THAT(err, ::testing::HasSubstr("one way to authenticate"));
  EXPECT_THAT(err, ::testing::Not(::testing::HasSubstr("secret")));
  c.url = "http://127.0.0.1:3100/loki/api/v1/push";
  c.auth = {};
  c.auth.basic_username = "u";
  EXPECT_THAT(ValidateLokiClientConfig(c),
              ::testing::HasSubstr("loki-basic-auth-username and loki-basic-auth-password-file"));
  c.auth = {};
  c.auth.bearer_token = "has space";
  EXPECT_THAT(ValidateLokiClientConfig(c), ::testing::HasSubstr("loki-bearer-token"));
  EXPECT_THAT(ValidateLokiClientConfig(c), ::testing::Not(::testing::HasSubstr("has space")));
}

TEST(LokiClientConfigTest, HeadersOtherOptionsSetAreRefusedNamingThoseOptions) {
  LokiClientConfig c;
  c.url = "http://127.0.0.1:3100/loki/api/v1/push";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Authorization", "loki-bearer-token"},
      {"x-scope-orgid", "loki-tenant-id"},
      {"Host", "loki-url"},
      {"Content-Type", "set by the plugin"},
      {"Transfer-Encoding", "belongs to the connection"},
      {"connection", "belongs to the connection"},
      {"Proxy-Authorization", "loki-proxy-url"},
      {"Upgrade", "belongs to the connection"}};
  for (const auto& [name, option] : cases) {
    c.headers = {{name, "v"}};
    EXPECT_THAT(ValidateLokiClientConfig(c), ::testing::HasSubstr(option)) << name;
  }
  c.headers = {{"X-Ok", "a\r\nX-Injected: yes"}};
  EXPECT_THAT(ValidateLokiClientConfig(c), ::testing::HasSubstr("control character"));
  EXPECT_THAT(ValidateLokiClientConfig(c), ::testing::Not(::testing::HasSubstr("Injected")));
  c.headers = {{"Bad Name", "v"}};
  EXPECT_THAT(ValidateLokiClientConfig(c), ::testing::HasSubstr("not a header name"));
  // A key in the wrong shape ("X-Api-Key:s3cr3t=x") is a bad name: it is not repeated.
  c.headers = {{"X-Api-Key:s3cr3t", "x"}};
  EXPECT_THAT(ValidateLokiClientConfig(c), ::testing::HasSubstr("not a header name"));
  EXPECT_THAT(ValidateLokiClientConfig(c), ::testing::Not(::testing::HasSubstr("s3cr3t")));
  c.headers = {{"X-Ok", "fine value"}};
  EXPECT_EQ(ValidateLokiClientConfig(c), "");
}

}  // namespace
}  // namespace skald
