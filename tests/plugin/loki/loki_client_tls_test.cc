// The Loki client over TLS: CA file, server name, skipping verification, client certificates,
// and https proxies (TLS to the proxy; Loki's own TLS inside it).
// Certificates are made with the openssl command at suite start (skipped when it is missing).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "plugin/loki/http_connection.h"
#include "plugin/loki/loki_client.h"
#include "tests/plugin/log_capture.h"
#include "tests/tools/fake_https_proxy.h"
#include "tests/tools/fake_loki.h"

namespace skald {
namespace {

using skald::testkit::FakeHttpsProxy;
using skald::testkit::FakeLoki;
using std::chrono::milliseconds;

constexpr milliseconds kLong{30'000};

class LokiClientTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::filesystem::path(std::filesystem::temp_directory_path() /
                                     ("skald-tls-" + std::to_string(::getpid())));
    std::filesystem::create_directories(*dir_);
    const std::string d = dir_->string();
    // A CA; a server certificate for the name loki.test only (not 127.0.0.1); a client one.
    const std::string script =
        "cd '" + d +
        "' && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 "
        "-subj '/CN=skald test CA' && "
        "openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr "
        "-subj '/CN=loki.test' && "
        "printf 'subjectAltName=DNS:loki.test\\nextendedKeyUsage=serverAuth\\n' > server.ext && "
        "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
        "-out server.pem -days 2 -extfile server.ext && "
        "openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr "
        "-subj '/CN=skald-client' && "
        "printf 'extendedKeyUsage=clientAuth\\n' > client.ext && "
        "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
        "-out client.pem -days 2 -extfile client.ext";
    have_certs_ = std::system(("(" + script + ") >/dev/null 2>&1").c_str()) == 0;
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    std::filesystem::remove_all(*dir_, ec);
    delete dir_;
  }
  void SetUp() override {
    if (!have_certs_) GTEST_SKIP() << "openssl command unavailable: no test certificates";
  }
  static std::string File(const char* name) { return (*dir_ / name).string(); }

  LokiClientConfig Config(const FakeLoki& loki) {
    LokiClientConfig c;
    c.url = loki.PushUrl();
    c.timeout = milliseconds(5'000);
    c.batch_wait = milliseconds(10);
    c.min_backoff = milliseconds(1);
    c.max_backoff = milliseconds(5);
    c.max_retries = 1;
    c.lanes = 1;
    return c;
  }

  // Pushes one entry and reports whether it was delivered.
  bool Delivers(const LokiClientConfig& c, FakeLoki& loki) {
    MetricsRegistry metrics;
    LokiClient client(c, metrics);
    LokiEntry e;
    e.labels = R"({job="tls"})";
    e.timestamp_ns = 1;
    e.line = "over tls";
    client.Push(e);
    EXPECT_TRUE(client.Flush(kLong));
    return metrics.CounterTotal("skald_entries_sent_total") == 1 && loki.TotalEntries() == 1;
  }

  static std::filesystem::path* dir_;
  static bool have_certs_;
};

std::filesystem::path* LokiClientTlsTest::dir_ = nullptr;
bool LokiClientTlsTest::have_certs_ = false;

TEST_F(LokiClientTlsTest, VerifiesAgainstCaFileWithServerName) {
  FakeLoki loki;
  ASSERT_TRUE(loki.StartTls({File("server.pem"), File("server.key"), ""}));
  LokiClientConfig c = Config(loki);
  c.tls.ca_file = File("ca.pem");
  c.tls.server_name = "loki.test";
  EXPECT_TRUE(Delivers(c, loki));
}

TEST_F(LokiClientTlsTest, RefusesACertificateForAnotherName) {
  FakeLoki loki;
  ASSERT_TRUE(loki.StartTls({File("server.pem"), File("server.key"), ""}));
  LokiClientConfig c = Config(loki);  // connects to 127.0.0.1; the certificate says loki.test
  c.tls.ca_file = File("ca.pem");
  EXPECT_FALSE(Delivers(c, loki));
}

TEST_F(LokiClientTlsTest, RefusesAnUnknownCa) {
  FakeLoki loki;
  ASSERT_TRUE(loki.StartTls({File("server.pem"), File("server.key"), ""}));
  LokiClientConfig c = Config(loki);
  c.tls.server_name = "loki.test";  // system roots do not know the test CA
  EXPECT_FALSE(Delivers(c, loki));
}

TEST_F(LokiClientTlsTest, InsecureSkipVerifyAcceptsAnyCertificate) {
  FakeLoki loki;
  ASSERT_TRUE(loki.StartTls({File("server.pem"), File("server.key"), ""}));
  LokiClientConfig c = Config(loki);
  c.tls.insecure_skip_verify = true;
  EXPECT_TRUE(Delivers(c, loki));
}

TEST_F(LokiClientTlsTest, PresentsAClientCertificate) {
  FakeLoki loki;
  ASSERT_TRUE(loki.StartTls({File("server.pem"), File("server.key"), File("ca.pem")}));
  LokiClientConfig c = Config(loki);
  c.tls.ca_file = File("ca.pem");
  c.tls.server_name = "loki.test";
  c.tls.cert_file = File("client.pem");
  c.tls.key_file = File("client.key");
  EXPECT_TRUE(Delivers(c, loki));
}

TEST_F(LokiClientTlsTest, ServerRequiringClientCertificateRefusesNone) {
  FakeLoki loki;
  ASSERT_TRUE(loki.StartTls({File("server.pem"), File("server.key"), File("ca.pem")}));
  LokiClientConfig c = Config(loki);
  c.tls.ca_file = File("ca.pem");
  c.tls.server_name = "loki.test";
  EXPECT_FALSE(Delivers(c, loki));
}

// A TLS failure is logged with what to set: the lines wait in the journal meanwhile, and an
// operator reading "transport error: SSL server verification failed" needs the option's name.
TEST_F(LokiClientTlsTest, TlsFailuresAreLoggedWithTheOptionToSet) {
  testkit::LogCapture log;
  {
    FakeLoki loki;
    ASSERT_TRUE(loki.StartTls({File("server.pem"), File("server.key"), ""}));
    LokiClientConfig c = Config(loki);
    c.tls.server_name = "loki.test";  // the system roots do not know the test CA
    EXPECT_FALSE(Delivers(c, loki));
  }
  {
    FakeLoki loki;
    ASSERT_TRUE(loki.StartTls({File("server.pem"), File("server.key"), File("ca.pem")}));
    LokiClientConfig c = Config(loki);
    c.tls.ca_file = File("ca.pem");
    c.tls.server_name = "loki.test";  // no client certificate for a Loki that requires one
    EXPECT_FALSE(Delivers(c, loki));
  }
  const std::string text = log.Text();
  EXPECT_THAT(text, ::testing::HasSubstr("set loki-tls-ca-file to the CA that signed it")) << text;
  EXPECT_THAT(text, ::testing::HasSubstr("loki-tls-cert-file and loki-tls-key-file")) << text;
}

// An https proxy before a plain-http Loki: TLS to the proxy, checked with the same settings as
// Loki's (Go's client does the same), then the request in the absolute form with the proxy's
// credentials, as to an http proxy.
TEST_F(LokiClientTlsTest, SendsPlainHttpThroughAnHttpsProxy) {
  FakeLoki loki;
  ASSERT_TRUE(loki.Start());
  FakeHttpsProxy proxy;
  ASSERT_TRUE(proxy.Start(File("server.pem"), File("server.key")));
  LokiClientConfig c = Config(loki);
  c.proxy_url = "https://ops:pr0xy%40pw@127.0.0.1:" + std::to_string(proxy.port());
  c.tls.ca_file = File("ca.pem");
  c.tls.server_name = "loki.test";
  EXPECT_TRUE(Delivers(c, loki));
  EXPECT_EQ(proxy.Handshakes(), 1);
  EXPECT_EQ(loki.ProxiedRequests(), 1u) << "the absolute form, as to an http proxy";
  ASSERT_EQ(proxy.RequestLines().size(), 1u);
  EXPECT_EQ(proxy.RequestLines()[0],
            "POST http://127.0.0.1:" + std::to_string(loki.port()) + "/loki/api/v1/push HTTP/1.1");
  EXPECT_EQ(proxy.ProxyAuthorizations()[0], BasicAuthorization("ops", "pr0xy@pw"));
}

// An https Loki behind an https proxy: CONNECT over the proxy's TLS, then Loki's TLS inside it.
// Several pushes of a megabyte each go over the one connection, kept between them.
TEST_F(LokiClientTlsTest, SendsHttpsThroughAnHttpsProxyWithTlsInsideTls) {
  FakeLoki loki;
  ASSERT_TRUE(loki.StartTls({File("server.pem"), File("server.key"), ""}));
  FakeHttpsProxy proxy;
  ASSERT_TRUE(proxy.Start(File("server.pem"), File("server.key")));
  LokiClientConfig c = Config(loki);
  c.proxy_url = "https://127.0.0.1:" + std::to_string(proxy.port());
  c.tls.ca_file = File("ca.pem");
  c.tls.server_name = "loki.test";
  c.batch_size_bytes = 1 << 20;
  MetricsRegistry metrics;
  {
    LokiClient client(c, metrics);
    std::string line(1000, 'x');
    for (int i = 0; i < 5000; ++i) {
      LokiEntry e;
      e.labels = R"({job="tunnel"})";
      e.timestamp_ns = i + 1;
      e.line = std::to_string(i) + line;
      client.Push(e);
    }
    EXPECT_TRUE(client.Flush(kLong));
  }
  EXPECT_EQ(metrics.CounterTotal("skald_entries_sent_total"), 5000u);
  EXPECT_EQ(loki.TotalEntries(), 5000u);
  EXPECT_EQ(loki.ProxiedRequests(), 0u) << "inside the tunnel the request is Loki's own";
  EXPECT_EQ(proxy.Handshakes(), 1) << "one connection kept for every push";
  const std::vector<std::string> lines = proxy.RequestLines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "CONNECT 127.0.0.1:" + std::to_string(loki.port()) + " HTTP/1.1");
}

// The proxy's certificate is checked: one the CA does not vouch for stops the push, and the log
// says it was the proxy's and what is checked (not advice about Loki's certificate).
TEST_F(LokiClientTlsTest, AnHttpsProxyWhoseCertificateDoesNotVerifyIsNamedInTheLog) {
  testkit::LogCapture log;
  FakeLoki loki;
  ASSERT_TRUE(loki.Start());
  FakeHttpsProxy proxy;
  ASSERT_TRUE(proxy.Start(File("server.pem"), File("server.key")));
  {
    LokiClientConfig c = Config(loki);
    c.proxy_url = "https://127.0.0.1:" + std::to_string(proxy.port());
    c.tls.ca_file = File("ca.pem");  // the certificate names loki.test, not 127.0.0.1
    EXPECT_FALSE(Delivers(c, loki));
  }
  const std::string text = log.Text();
  EXPECT_EQ(loki.TotalEntries(), 0u);
  EXPECT_TRUE(proxy.RequestLines().empty());
  EXPECT_THAT(text, ::testing::HasSubstr("the proxy's certificate did not verify")) << text;
  EXPECT_THAT(text, ::testing::HasSubstr("an https proxy's certificate is checked as Loki's"))
      << text;
  EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("Loki's certificate is not"))) << text;
}

// A proxy that accepts CONNECT and then closes the tunnel (it cannot reach Loki): the log says
// the proxy closed it, without advice about Loki's client certificate.
TEST_F(LokiClientTlsTest, AnHttpsProxyClosingTheTunnelIsBlamedOnTheProxy) {
  testkit::LogCapture log;
  FakeLoki loki;
  ASSERT_TRUE(loki.StartTls({File("server.pem"), File("server.key"), ""}));
  FakeHttpsProxy proxy;
  ASSERT_TRUE(proxy.Start(File("server.pem"), File("server.key")));
  proxy.CloseTunnelsAtOnce();
  {
    LokiClientConfig c = Config(loki);
    c.proxy_url = "https://127.0.0.1:" + std::to_string(proxy.port());
    c.tls.ca_file = File("ca.pem");
    c.tls.server_name = "loki.test";
    EXPECT_FALSE(Delivers(c, loki));
  }
  const std::string text = log.Text();
  EXPECT_FALSE(proxy.RequestLines().empty());
  EXPECT_THAT(text, ::testing::HasSubstr("the proxy closed the tunnel to 127.0.0.1:" +
                                         std::to_string(loki.port())))
      << text;
  EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("loki-tls-cert-file"))) << text;
}

}  // namespace
}  // namespace skald
