// Loki behind TLS and credentials, as users reach Grafana Cloud or their own: the real Loki
// behind a real TLS terminator (Debian's nginx on loopback, with a CA the test makes) that
// requires a client certificate, a bearer token or basic auth. The files the plugin reads
// (CA, client certificate and key, token, password) are put where the managed plugin sees
// them: its files directory (/var/lib/skald/files inside). Also: the bundle's trust store, the
// journal's permissions, and that a password appears nowhere.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
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
            "2>/dev/null; openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr "
            "-subj /CN=skald-client 2>/dev/null; printf 'extendedKeyUsage=clientAuth\\n' "
            ">client.ext; openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key "
            "-CAcreateserial -out client.crt -days 2 -extfile client.ext 2>/dev/null",
        60s);
    ASSERT_TRUE(certs.ok()) << certs.Describe();
  }

  // nginx terminating TLS for the real Loki: on `mtls_port_` it requires a client certificate
  // signed by the CA, on `bearer_port_` the header "Bearer <kToken>", on `basic_port_` basic
  // auth of kUser/kPassword. Stopped by TearDown.
  void StartTerminator() {
    const std::string d = dir_.string();
    const std::string loki_port = loki().base_url().substr(loki().base_url().rfind(':') + 1);
    mtls_port_ = FreeTcpPort();
    bearer_port_ = FreeTcpPort();
    basic_port_ = FreeTcpPort();
    auto htpasswd = RunShell("cd " + d + " && printf '%s:%s\\n' " + kUser +
                                 " \"$(openssl passwd -apr1 '" + kPassword + "')\" >htpasswd",
                             30s);
    ASSERT_TRUE(htpasswd.ok()) << htpasswd.Describe();
    fs::create_directories(dir_ / "nginx-tmp");
    const std::string tls = "    ssl_certificate " + d + "/server.crt;\n    ssl_certificate_key " +
                            d + "/server.key;\n";
    std::ofstream(dir_ / "nginx.conf")
        << "worker_processes 1;\npid " << d << "/nginx.pid;\nerror_log " << d
        << "/nginx-error.log;\nevents {}\nhttp {\n  access_log off;\n  client_body_temp_path " << d
        << "/nginx-tmp;\n  proxy_temp_path " << d << "/nginx-tmp;\n  fastcgi_temp_path " << d
        << "/nginx-tmp;\n  uwsgi_temp_path " << d << "/nginx-tmp;\n  scgi_temp_path " << d
        << "/nginx-tmp;\n  client_max_body_size 64m;\n"
        << "  server {\n    listen 127.0.0.1:" << mtls_port_ << " ssl;\n"
        << tls << "    ssl_client_certificate " << d << "/ca.crt;\n    ssl_verify_client on;\n"
        << "    location / { proxy_pass http://127.0.0.1:" << loki_port << "; }\n  }\n"
        << "  server {\n    listen 127.0.0.1:" << bearer_port_ << " ssl;\n"
        << tls << "    location / {\n      if ($http_authorization != \"Bearer " << kToken
        << "\") { return 401; }\n      proxy_pass http://127.0.0.1:" << loki_port
        << ";\n    }\n  }\n"
        << "  server {\n    listen 127.0.0.1:" << basic_port_ << " ssl;\n"
        << tls << "    location / {\n      auth_basic loki;\n      auth_basic_user_file " << d
        << "/htpasswd;\n      proxy_pass http://127.0.0.1:" << loki_port << ";\n    }\n  }\n}\n";
    nginx_ = fork();
    if (nginx_ == 0) {
      execlp("nginx", "nginx", "-c", (dir_ / "nginx.conf").c_str(), "-g", "daemon off;",
             static_cast<char*>(nullptr));
      _exit(127);
    }
    ASSERT_TRUE(WaitUntil([&] { return TcpPortOpen(basic_port_) && TcpPortOpen(mtls_port_); }, 30s))
        << "nginx did not start";
  }

  // Puts `content` where the plugin under test reads /var/lib/skald/files/NAME; returns that.
  std::string PluginFile(const std::string& name, const std::string& content) {
    auto mount = PluginPropagatedMount();
    EXPECT_TRUE(mount);
    const fs::path host = fs::path(mount.value_or("/nonexistent")) / "files" / name;
    fs::create_directories(host.parent_path());
    std::ofstream(host) << content;
    fs::permissions(host, fs::perms::owner_read | fs::perms::owner_write,
                    fs::perm_options::replace);
    plugin_files_.push_back(host);
    return "/var/lib/skald/files/" + name;
  }
  std::string ReadText(const fs::path& p) {
    std::ifstream in(p);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  std::string Url(int port) {
    return "https://127.0.0.1:" + std::to_string(port) + "/loki/api/v1/push";
  }
  double Series(const std::string& series) {
    auto text = FetchMetrics();
    return text ? PrometheusSeries(*text, series) : -1;
  }

  static constexpr const char* kToken = "tok-3f9a-e2e";
  static constexpr const char* kUser = "skald-e2e";
  static constexpr const char* kPassword = "PlainPass123";
  int mtls_port_ = 0, bearer_port_ = 0, basic_port_ = 0;
  pid_t nginx_ = -1;
  std::vector<fs::path> plugin_files_;
  void TearDown() override {
    if (nginx_ > 0) {
      kill(nginx_, SIGQUIT);
      int status = 0;
      waitpid(nginx_, &status, 0);
    }
    for (const auto& f : plugin_files_) fs::remove(f);
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
  testkit::FakeLoki fake;
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

// (b) A Loki that requires a client certificate: with the CA, certificate and key files it
// delivers; without a certificate nothing is dropped, the pushes fail (the log says to set
// loki-tls-cert-file and loki-tls-key-file) and the lines wait in the journal.
TEST_F(Credentials, AClientCertificateWhereLokiRequiresOne) {
  StartTerminator();
  const std::string ca = PluginFile("ca.crt", ReadText(dir_ / "ca.crt"));
  const std::string cert = PluginFile("client.crt", ReadText(dir_ / "client.crt"));
  const std::string key = PluginFile("client.key", ReadText(dir_ / "client.key"));
  const std::string with_cert = NewContainer("with-cert");
  ASSERT_TRUE(Docker(RunArgs(with_cert,
                             {"loki-tls-ca-file=" + ca, "loki-tls-cert-file=" + cert,
                              "loki-tls-key-file=" + key},
                             {"loggen", "--lines", "100"}, Url(mtls_port_)),
                     60s)
                  .ok());
  EXPECT_EQ(loki().WaitForCount(Selector(with_cert), 100, 60s), 100u);

  // nginx answers a missing client certificate with 400 (a TLS 1.3 refusal would be a
  // transport error): either way the pushes fail and are retried.
  auto refused = [&] {
    return Series("skald_pushes_total{status_code=\"error\"}") +
           Series("skald_pushes_total{status_code=\"400\"}");
  };
  const double errors_before = refused();
  const auto dropped_before =
      ParsePrometheusTotals(FetchMetrics().value_or(""))["skald_entries_dropped_total"];
  const std::string without = NewContainer("without-cert");
  ASSERT_TRUE(Docker(RunArgs(without, {"loki-tls-ca-file=" + ca, "loki-min-backoff=100ms"},
                             {"loggen", "--lines", "100"}, Url(mtls_port_)),
                     60s)
                  .ok());
  EXPECT_TRUE(WaitUntil([&] { return refused() > errors_before; }, 30s));
  std::this_thread::sleep_for(2s);
  EXPECT_EQ(loki().Count(Selector(without)), 0u);
  EXPECT_EQ(ParsePrometheusTotals(FetchMetrics().value_or(""))["skald_entries_dropped_total"],
            dropped_before)
      << "lines refused by the TLS handshake were dropped, not kept";
}

// (c) A bearer token from a file and basic auth from a password file, checked by nginx. A
// rotated token works without a restart: after Loki's 401 the plugin reads the file again.
TEST_F(Credentials, ABearerTokenFileAndABasicAuthPasswordFile) {
  StartTerminator();
  const std::string ca = PluginFile("ca.crt", ReadText(dir_ / "ca.crt"));
  const std::string token = PluginFile("token", std::string("stale-token\n"));
  const std::string password = PluginFile("password", std::string(kPassword) + "\n");
  const std::string bearer = NewContainer("bearer");
  auto args = RunArgs(bearer,
                      {"loki-tls-ca-file=" + ca, "loki-bearer-token-file=" + token,
                       "loki-min-backoff=100ms", "loki-max-backoff=500ms"},
                      {"sh", "-c", "loggen --lines 100; exec sleep 60"}, Url(bearer_port_));
  args.insert(args.begin() + 1, "-d");
  ASSERT_TRUE(Docker(args, 60s).ok());
  EXPECT_TRUE(WaitUntil([&] { return Series("skald_pushes_total{status_code=\"401\"}") > 0; }, 30s))
      << "the stale token was not refused";
  EXPECT_EQ(loki().Count(Selector(bearer)), 0u);
  PluginFile("token", std::string(kToken) + "\n");  // rotated, no restart
  EXPECT_EQ(loki().WaitForCount(Selector(bearer), 100, 60s), 100u);

  const std::string basic = NewContainer("basic");
  ASSERT_TRUE(
      Docker(RunArgs(basic,
                     {"loki-tls-ca-file=" + ca, std::string("loki-basic-auth-username=") + kUser,
                      "loki-basic-auth-password-file=" + password},
                     {"loggen", "--lines", "100"}, Url(basic_port_)),
             60s)
          .ok());
  EXPECT_EQ(loki().WaitForCount(Selector(basic), 100, 60s), 100u);
  Docker({"rm", "-f", bearer}, 30s);
}

// A password in loki-url's user info (the way Grafana's driver takes it) reaches Loki and
// appears nowhere else: not in the state directory (but its one 0600 secrets file), not on
// /metrics, not in dockerd's log (which holds the plugin's); and no journal file is readable
// by an unprivileged user.
TEST_F(Credentials, APasswordAppearsNowhereAndJournalsAreNotReadableByOthers) {
  StartTerminator();
  const std::string ca = PluginFile("ca.crt", ReadText(dir_ / "ca.crt"));
  const std::string name = NewContainer();
  const std::string url = "https://" + std::string(kUser) + ":" + kPassword +
                          "@127.0.0.1:" + std::to_string(basic_port_) + "/loki/api/v1/push";
  ASSERT_TRUE(
      Docker(RunArgs(name, {"loki-tls-ca-file=" + ca}, {"loggen", "--lines", "100"}, url), 60s)
          .ok());
  EXPECT_EQ(loki().WaitForCount(Selector(name), 100, 60s), 100u);
  const auto state = PluginStateDir();
  ASSERT_TRUE(state);
  auto grep = RunCommand({"grep", "-rl", kPassword, *state}, 60s);
  for (const auto& file : SplitLines(grep.out)) {
    if (file.empty()) continue;
    EXPECT_EQ(fs::path(file).filename(), "secrets") << "the password is in " << file;
    EXPECT_EQ(fs::status(file).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write)
        << file;
  }
  EXPECT_EQ(FetchMetrics().value_or("").find(kPassword), std::string::npos);
  for (const char* log : {"/var/log/dockerd.log", "/var/log/skald-dockerd.log"}) {
    if (!fs::exists(log)) continue;
    auto in_log = RunCommand({"grep", "-c", kPassword, log}, 60s);
    EXPECT_EQ(Trim(in_log.out), "0") << "the password is in " << log;
  }
  // An unprivileged user reads no journal file.
  std::size_t files = 0;
  for (auto it = fs::recursive_directory_iterator(*state); it != fs::recursive_directory_iterator();
       ++it) {
    if (!it->is_regular_file()) continue;
    ++files;
    auto read = RunCommand(
        {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "cat", it->path().string()},
        30s);
    EXPECT_FALSE(read.ok()) << it->path() << " is readable by nobody";
  }
  EXPECT_GT(files, 2u);
}

}  // namespace
}  // namespace skald::e2e
