// The Loki client over TLS: CA file, server name, skipping verification, client certificates.
// Certificates are made with the openssl command at suite start (skipped when it is missing).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "plugin/loki/loki_client.h"
#include "tests/tools/fake_loki.h"

namespace skald {
namespace {

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
  std::ostringstream log;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
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
  spdlog::default_logger()->flush();
  spdlog::set_default_logger(previous);
  const std::string text = log.str();
  EXPECT_THAT(text, ::testing::HasSubstr("set loki-tls-ca-file to the CA that signed it")) << text;
  EXPECT_THAT(text, ::testing::HasSubstr("loki-tls-cert-file and loki-tls-key-file")) << text;
}

}  // namespace
}  // namespace skald
