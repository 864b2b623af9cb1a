// Installing skald as Docker plugins are installed: pushed to a registry (Debian's
// docker-registry on loopback, with a TLS certificate made here and trusted through
// /etc/docker/certs.d; the daemon refuses plain HTTP for plugins), installed with
// `--alias loki` so that a compose file written for Grafana's driver works unchanged, upgraded
// with lines still in its journals, two copies side by side, and the daemon-wide default.
// Everything made here (plugins, their state directories, the registry, the trust entry,
// daemon.json) is removed or put back as found.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "tests/e2e/e2e_support.h"

namespace skald::e2e {
namespace {

namespace fs = std::filesystem;

// A process of ours in the background (its output in `log`), killed when this goes.
class BackgroundProcess {
 public:
  BackgroundProcess(const std::vector<std::string>& argv, const std::string& log) {
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      FILE* out = std::fopen(log.c_str(), "a");
      if (out != nullptr) {
        dup2(fileno(out), 1);
        dup2(fileno(out), 2);
      }
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execvp(args[0], args.data());
      _exit(127);
    }
  }
  ~BackgroundProcess() {
    if (pid_ <= 0) return;
    kill(-pid_, SIGTERM);
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

 private:
  pid_t pid_ = -1;
};

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

// Removes plugin `name` (its journals with it) when it goes.
struct PluginGuard {
  PluginGuard() = default;
  PluginGuard(const PluginGuard&) = delete;
  PluginGuard& operator=(const PluginGuard&) = delete;
  std::string name;
  ~PluginGuard() {
    Docker({"plugin", "disable", "-f", name}, 60s);
    Docker({"plugin", "rm", "-f", name}, 60s);
  }
};

class Distribution : public SkaldTest {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(fs::temp_directory_path() /
                           ("skald-e2e-registry-" + std::to_string(getpid())));
    fs::create_directories(*dir_);
    const std::string d = *dir_;
    port_ = FreeTcpPort();
    registry_ = new std::string("127.0.0.1:" + std::to_string(port_));
    // A CA of our own and a certificate for 127.0.0.1 signed by it.
    auto certs = RunShell(
        "set -e; cd " + d +
            "; openssl req -x509 -newkey rsa:2048 -nodes -days 2 -keyout ca.key -out ca.crt "
            "-subj /CN=skald-e2e-ca 2>/dev/null; openssl req -newkey rsa:2048 -nodes "
            "-keyout server.key -out server.csr -subj /CN=127.0.0.1 2>/dev/null; "
            "printf 'subjectAltName=IP:127.0.0.1\\n' >ext.cnf; openssl x509 -req -in server.csr "
            "-CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 -extfile ext.cnf "
            "2>/dev/null",
        60s);
    if (!certs.ok()) {
      setup_problem_ = new std::string("cannot make certificates: " + certs.Describe());
      return;
    }
    WriteText(d + "/config.yml", "version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: " + d +
                                     "/data\nhttp:\n  addr: " + *registry_ +
                                     "\n  tls:\n    certificate: " + d +
                                     "/server.crt\n    key: " + d + "/server.key\n");
    registry_process_ =
        new BackgroundProcess({"docker-registry", "serve", d + "/config.yml"}, d + "/registry.log");
    trust_ = new std::string("/etc/docker/certs.d/" + *registry_);
    fs::create_directories(*trust_);
    fs::copy_file(d + "/ca.crt", *trust_ + "/ca.crt", fs::copy_options::overwrite_existing);
    const bool up = WaitUntil(
        [&] {
          return RunCommand(
                     {"curl", "-sf", "--cacert", d + "/ca.crt", "https://" + *registry_ + "/v2/"},
                     10s)
              .ok();
        },
        30s);
    if (!up) {
      setup_problem_ =
          new std::string("the registry did not start: " + ReadText(d + "/registry.log"));
      return;
    }
    // Tag 1: the bundle under test; tag 2: the same with another description. Each rootfs
    // gets a file naming its tag: dockerd refuses to create a plugin whose rootfs layer it
    // holds already (the copy under test was made from the same bundle).
    const std::string bundle = E2eEnv::Get().Bundle();
    if (!fs::exists(bundle + "/config.json")) {
      setup_problem_ = new std::string("no plugin bundle at " + bundle + " (make plugin)");
      return;
    }
    const std::string bundle1 = d + "/bundle1", bundle2 = d + "/bundle2";
    for (const auto& [tag, copy] : {std::pair{"1", bundle1}, std::pair{"2", bundle2}}) {
      RunCommand({"cp", "-a", bundle, copy}, 120s);
      WriteText(copy + "/rootfs/etc/skald-e2e-tag",
                std::string(tag) + " " + std::to_string(getpid()) + "\n");
    }
    std::string config = ReadText(bundle2 + "/config.json");
    const std::string marker = "\"description\": \"";
    config.insert(config.find(marker) + marker.size(), "(upgrade test) ");
    WriteText(bundle2 + "/config.json", config);
    for (const auto& [tag, from] : {std::pair{"1", bundle1}, std::pair{"2", bundle2}}) {
      const std::string ref = *registry_ + "/skald:" + tag;
      Docker({"plugin", "rm", "-f", ref}, 60s);
      for (const std::vector<std::string>& step :
           {std::vector<std::string>{"plugin", "create", ref, from},
            std::vector<std::string>{"plugin", "push", ref},
            std::vector<std::string>{"plugin", "rm", ref}}) {
        auto r = Docker(step, 300s);
        if (!r.ok()) {
          setup_problem_ = new std::string(r.Describe());
          return;
        }
        std::printf("docker %s %s\n%s", step[0].c_str(), step[1].c_str(), r.out.c_str());
      }
    }
  }

  static void TearDownTestSuite() {
    delete registry_process_;
    registry_process_ = nullptr;
    if (trust_ != nullptr) fs::remove_all(*trust_);
    if (dir_ != nullptr) fs::remove_all(*dir_);
    for (std::string** s : {&dir_, &registry_, &trust_, &setup_problem_}) {
      delete *s;
      *s = nullptr;
    }
  }

  void SetUp() override {
    SkaldTest::SetUp();
    if (HasFatalFailure()) return;
    if (setup_problem_ != nullptr) GTEST_FAIL() << *setup_problem_;
  }

  // `docker plugin install REGISTRY/skald:TAG --alias NAME`, with a metrics port of its own
  // (a machine may run `skald` and the copy under test already); its journals are in the
  // directory Docker keeps for it.
  std::unique_ptr<PluginGuard> Install(const std::string& tag, const std::string& name,
                                       std::vector<std::string> settings = {}) {
    auto guard = std::make_unique<PluginGuard>();  // no temporary: its destructor would run
    guard->name = name;
    Docker({"plugin", "rm", "-f", name}, 60s);
    if (settings.empty()) {
      settings.push_back("METRICS_ADDR=127.0.0.1:" + std::to_string(FreeTcpPort()));
    }
    std::vector<std::string> args = {"plugin",
                                     "install",
                                     "--alias",
                                     name,
                                     "--grant-all-permissions",
                                     *registry_ + "/skald:" + tag};
    args.insert(args.end(), settings.begin(), settings.end());
    auto r = Docker(args, 300s);
    EXPECT_TRUE(r.ok()) << r.Describe();
    std::printf("docker plugin install --alias %s %s/skald:%s\n%s", name.c_str(),
                registry_->c_str(), tag.c_str(), r.out.c_str());
    return guard;
  }

  static std::string* dir_;
  static std::string* registry_;
  static std::string* trust_;
  static std::string* setup_problem_;
  static BackgroundProcess* registry_process_;
  static int port_;
};

std::string* Distribution::dir_ = nullptr;
std::string* Distribution::registry_ = nullptr;
std::string* Distribution::trust_ = nullptr;
std::string* Distribution::setup_problem_ = nullptr;
BackgroundProcess* Distribution::registry_process_ = nullptr;
int Distribution::port_ = 0;

// The compose file of Grafana's documentation for its driver, unchanged but for the image.
TEST_F(Distribution, InstalledWithTheAliasLokiItRunsAComposeFileWrittenForGrafanasDriver) {
  auto plugin = Install("1", "loki");
  const std::string project = UniqueName("e2e-compose");
  const fs::path dir = fs::path(*dir_) / project;
  fs::create_directories(dir);
  WriteText(dir / "docker-compose.yml",
            "version: \"3.7\"\n"
            "services:\n"
            "  app:\n"
            "    image: " +
                image() +
                "\n"
                "    network_mode: none\n"
                "    command: [\"loggen\", \"--lines\", \"600\", \"--json\"]\n"
                "    logging:\n"
                "      driver: loki\n"
                "      options:\n"
                "        loki-url: \"" +
                loki().PushUrl() +
                "\"\n"
                "        loki-pipeline-stages: |\n"
                "          - json:\n"
                "              expressions:\n"
                "                level: level\n"
                "          - labels:\n"
                "              level:\n");
  auto up = RunCommand(
      {"docker-compose", "-p", project, "-f", (dir / "docker-compose.yml").string(), "up"}, 180s);
  RunCommand({"docker-compose", "-p", project, "-f", (dir / "docker-compose.yml").string(), "down"},
             120s);
  ASSERT_TRUE(up.ok()) << up.Describe();
  const std::string selector =
      "{compose_project=" + LogqlQuote(project) + ", compose_service=\"app\"}";
  EXPECT_EQ(loki().WaitForCount(selector, 600, 60s), 600u);
  // loggen --json cycles through info, info, info, debug, warn, error.
  for (const auto& [level, want] : {std::pair{"info", 300u}, std::pair{"debug", 100u},
                                    std::pair{"warn", 100u}, std::pair{"error", 100u}}) {
    EXPECT_EQ(
        loki().Count("{compose_project=" + LogqlQuote(project) + ", level=\"" + level + "\"}"),
        want)
        << level;
  }
}

// Lines left undelivered by a stopped container (Loki away during the upgrade) arrive after
// `docker plugin upgrade`: the journals are on the host and the new version replays them.
TEST_F(Distribution, AnUpgradeKeepsTheLinesItsJournalsHold) {
  const std::string plugin_name = "skald-e2e-upgrade";
  auto plugin = Install("1", plugin_name);
  const int loki_port = FreeTcpPort();  // nobody listens there until after the upgrade
  const std::string name = NewContainer();
  auto run =
      Docker({"run", "--name", name, "--network", "none", "--log-driver", plugin_name, "--log-opt",
              "loki-url=http://127.0.0.1:" + std::to_string(loki_port) + "/loki/api/v1/push",
              "--log-opt", "loki-max-backoff=1s", image(), "loggen", "--lines", "2000"},
             60s);
  ASSERT_TRUE(run.ok()) << run.Describe();
  auto disable = Docker({"plugin", "disable", plugin_name}, 60s);
  ASSERT_TRUE(disable.ok()) << disable.Describe();
  auto upgrade = Docker({"plugin", "upgrade", "--grant-all-permissions", "--skip-remote-check",
                         plugin_name, *registry_ + "/skald:2"},
                        300s);
  ASSERT_TRUE(upgrade.ok()) << upgrade.Describe();
  std::printf("docker plugin upgrade %s %s/skald:2\n%s", plugin_name.c_str(), registry_->c_str(),
              upgrade.out.c_str());
  ASSERT_TRUE(Docker({"plugin", "enable", plugin_name}, 60s).ok());
  EXPECT_NE(DockerInspect(plugin_name, "{{.Config.Description}}")
                .value_or("")
                .find("(upgrade "
                      "test)"),
            std::string::npos)
      << "not upgraded";
  ScopedLoki late(loki_port);
  EXPECT_EQ(late.query().WaitForCount(Selector(name), 2000, 90s), 2000u)
      << "the lines journaled before the upgrade did not arrive after it";
}

// Two copies (say `skald` and an alias `loki`) side by side: each journals in the directory
// Docker keeps for it, so neither replays the other's containers; a copy given the metrics
// port of another ships all the same (its metrics are off, its log says METRICS_ADDR), and
// the first keeps its port.
TEST_F(Distribution, TwoCopiesSideBySideKeepTheirOwnJournals) {
  const std::string twin_name = "skald-e2e-twin";
  auto twin =
      Install("1", twin_name,
              {"METRICS_ADDR=127.0.0.1:" + std::to_string(E2eEnv::Get().MetricsPort())});  // taken
  const std::string by_twin = NewContainer("twin");
  const std::string by_first = NewContainer("first");
  ASSERT_TRUE(
      Docker({"run", "--name", by_twin, "--network", "none", "--log-driver", twin_name, "--log-opt",
              "loki-url=" + loki().PushUrl(), image(), "loggen", "--lines", "300"},
             60s)
          .ok());
  ASSERT_TRUE(Docker(RunArgs(by_first, {}, {"loggen", "--lines", "300"}), 60s).ok());
  EXPECT_EQ(loki().WaitForCount(Selector(by_twin), 300, 60s), 300u);
  EXPECT_EQ(loki().WaitForCount(Selector(by_first), 300, 60s), 300u);
  const auto twin_dir = PluginStateDir(twin_name);
  const auto first_dir = PluginStateDir();
  ASSERT_TRUE(twin_dir && first_dir);
  EXPECT_NE(*twin_dir, *first_dir);
  const std::string twin_id = DockerInspect(by_twin, "{{.Id}}").value_or("?");
  const std::string first_id = DockerInspect(by_first, "{{.Id}}").value_or("?");
  EXPECT_TRUE(fs::exists(*twin_dir + "/containers/" + twin_id));
  EXPECT_FALSE(fs::exists(*twin_dir + "/containers/" + first_id));
  EXPECT_TRUE(fs::exists(*first_dir + "/containers/" + first_id));
  EXPECT_FALSE(fs::exists(*first_dir + "/containers/" + twin_id));
  std::this_thread::sleep_for(2s);
  EXPECT_EQ(loki().Count(Selector(by_twin)), 300u) << "sent twice";
  EXPECT_EQ(loki().Count(Selector(by_first)), 300u) << "sent twice";
  EXPECT_TRUE(FetchMetrics()) << "the first copy lost its metrics port";
  // `docker plugin rm` takes the copy's journals with it.
  twin.reset();
  EXPECT_FALSE(fs::exists(*twin_dir));
}

// The third way of using skald: the daemon-wide default in /etc/docker/daemon.json. A
// container run without --log-driver ships its lines. dockerd is restarted twice (to switch
// the default to the plugin and back); daemon.json is put back as found.
TEST_F(Distribution, TheDaemonWideDefault) {
  const std::string script = SourceDir() + "/tests/e2e/restart-dockerd.sh";
  const fs::path conf = "/etc/docker/daemon.json";
  const bool had_conf = fs::exists(conf);
  DaemonJsonRestorer restore;

  nlohmann::json config = nlohmann::json::object();
  if (had_conf) config = nlohmann::json::parse(ReadText(conf), nullptr, false);
  if (!config.is_object()) config = nlohmann::json::object();
  std::string driver = driver_;
  if (driver.find(':') == std::string::npos) driver += ":latest";
  config["log-driver"] = driver;
  config["log-opts"] = {{"loki-url", loki().PushUrl()}, {"loki-batch-wait", "200ms"}};
  const fs::path wanted = fs::path(*dir_) / "daemon.json.skald";
  WriteText(wanted, config.dump(2));
  auto r = RunCommand({script, "--daemon-json", wanted.string()}, 180s);
  ASSERT_TRUE(r.ok()) << r.Describe();
  auto info = Docker({"info", "--format", "{{.LoggingDriver}}"});
  EXPECT_EQ(Trim(info.out), driver);
  ASSERT_TRUE(WaitUntil([&] { return E2eEnv::Get().PluginProblem().empty(); }, 60s))
      << E2eEnv::Get().PluginProblem();
  const std::string name = NewContainer();
  auto run =
      Docker({"run", "--name", name, "--network", "none", image(), "loggen", "--lines", "500"},
             60s);  // no --log-driver, no --log-opt
  ASSERT_TRUE(run.ok()) << run.Describe();
  EXPECT_EQ(DockerInspect(name, "{{.HostConfig.LogConfig.Type}}"), driver);
  EXPECT_EQ(loki().WaitForCount(Selector(name), 500, 60s), 500u);
}

}  // namespace
}  // namespace skald::e2e
