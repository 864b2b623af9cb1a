// Loki behind TLS, as users reach Grafana Cloud or their own: the plugin verifies Loki's
// certificate against the system trust store its bundle carries when no loki-tls-ca-file is
// given (OpenSSL inside the plugin looked for it where the bundle had nothing).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "tests/e2e/e2e_support.h"
#include "tests/tools/fake_loki.h"

namespace skald::e2e {
namespace {

namespace fs = std::filesystem;

class Credentials : public SkaldTest {
 protected:
  void SetUp() override {
    SkaldTest::SetUp();
    if (HasFatalFailure()) return;
    dir_ = fs::temp_directory_path() / ("skald-e2e-tls-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    // A CA of our own and a certificate for 127.0.0.1 signed by it.
    auto certs = RunShell(
        "set -e; cd " + dir_.string() +
            "; openssl req -x509 -newkey rsa:2048 -nodes -days 2 -keyout ca.key -out ca.crt "
            "-subj /CN=skald-e2e-tls-ca 2>/dev/null; openssl req -newkey rsa:2048 -nodes "
            "-keyout server.key -out server.csr -subj /CN=127.0.0.1 2>/dev/null; "
            "printf 'subjectAltName=IP:127.0.0.1\\n' >ext.cnf; openssl x509 -req -in server.csr "
            "-CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 -extfile ext.cnf "
            "2>/dev/null",
        60s);
    ASSERT_TRUE(certs.ok()) << certs.Describe();
  }
  void TearDown() override {
    Docker({"plugin", "disable", "-f", trusting_}, 60s);
    Docker({"plugin", "rm", "-f", trusting_}, 60s);
    fs::remove_all(dir_);
  }

  fs::path dir_;
  const std::string trusting_ = "skald-e2e-trust";
};

// (The CA installed into the host's trust store, then the bundle rebuilt: here, the bundle's
// copy of the trust store gets the CA.) A container with an https:// URL and no CA option
// delivers; a bundle whose trust store lacks the CA refuses the certificate.
TEST_F(Credentials, HttpsVerifiesAgainstTheTrustStoreTheBundleCarries) {
  testing::FakeLoki fake;
  ASSERT_TRUE(fake.StartTls({(dir_ / "server.crt").string(), (dir_ / "server.key").string(), ""}));
  const std::string url = "https://127.0.0.1:" + std::to_string(fake.port()) + "/loki/api/v1/push";

  const fs::path bundle = dir_ / "bundle";
  ASSERT_TRUE(RunCommand({"cp", "-a", E2eEnv::Get().Bundle(), bundle.string()}, 120s).ok());
  {
    std::ifstream ca(dir_ / "ca.crt");
    std::ofstream store(bundle / "rootfs/etc/ssl/certs/ca-certificates.crt", std::ios::app);
    store << "\n" << ca.rdbuf();
    // dockerd refuses to create a plugin whose rootfs layer it holds already.
    std::ofstream(bundle / "rootfs/etc/skald-e2e-tag") << "trust " << getpid() << "\n";
  }
  Docker({"plugin", "rm", "-f", trusting_}, 60s);
  ASSERT_TRUE(Docker({"plugin", "create", trusting_, bundle.string()}, 120s).ok());
  ASSERT_TRUE(Docker({"plugin", "set", trusting_,
                      "METRICS_ADDR=127.0.0.1:" + std::to_string(FreeTcpPort())},
                     60s)
                  .ok());
  ASSERT_TRUE(Docker({"plugin", "enable", trusting_}, 60s).ok());

  const std::string trusted = NewContainer("trusted");
  auto run = Docker({"run", "--name", trusted, "--network", "none", "--log-driver", trusting_,
                     "--log-opt", "loki-url=" + url, "--log-opt", "loki-batch-wait=100ms", image(),
                     "loggen", "--lines", "50", "--prefix", "trusted"},
                    60s);
  ASSERT_TRUE(run.ok()) << run.Describe();
  EXPECT_TRUE(fake.WaitForEntries(50, 30s)) << fake.TotalEntries() << " of 50 delivered";

  // The copy under test was built without the CA: its pushes fail verification, nothing lands.
  const std::string untrusted = NewContainer("untrusted");
  const double errors_before = [] {
    auto text = FetchMetrics();
    return text ? PrometheusSeries(*text, "skald_pushes_total{status_code=\"error\"}") : 0.0;
  }();
  ASSERT_TRUE(Docker(RunArgs(untrusted, {"loki-batch-wait=100ms", "loki-min-backoff=100ms"},
                             {"loggen", "--lines", "10", "--prefix", "untrusted"}, url),
                     60s)
                  .ok());
  EXPECT_TRUE(WaitUntil(
      [&] {
        auto text = FetchMetrics();
        return text &&
               PrometheusSeries(*text, "skald_pushes_total{status_code=\"error\"}") > errors_before;
      },
      30s))
      << "the certificate of an unknown CA was not refused";
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(fake.TotalEntries(), 50u);
}

}  // namespace
}  // namespace skald::e2e
