// The command line as a user runs it (`skald check`, `dry-run`, `options`, `--help`): the real
// binary, its exit status and what it prints. `--plugin` reads a fake Docker daemon's answers over
// a unix socket.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

struct CliRun {
  int status = -1;
  std::string out;
};

// Runs the skald binary with `args` (shell words), `input` on its stdin; stdout only. The input
// goes through a file of this call's own: ctest runs the tests of this file in parallel
// processes, and one shared name let one test's input be replaced or removed by another's
// (Cli.DryRunOfPinoLines saw "0 lines in").
CliRun Skald(const std::string& args, const std::string& input = "") {
  std::string in_path = ::testing::TempDir() + "/skald-cli-in-XXXXXX";
  const int fd = mkstemp(in_path.data());
  if (fd < 0) return CliRun{};
  close(fd);
  std::ofstream(in_path) << input;
  const std::string cmd =
      std::string("env -u LOKI_URL ") + SKALD_BINARY + " " + args + " <" + in_path + " 2>/dev/null";
  CliRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int raw = pclose(p);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  std::filesystem::remove(in_path);
  return r;
}

const std::string kUrl = "--log-opt loki-url=http://127.0.0.1:3100/loki/api/v1/push";

TEST(Cli, CheckReportsTypoBrokenStageAndLintTogether) {
  const std::string stages = ::testing::TempDir() + "/skald-cli-stages.yaml";
  std::ofstream(stages) << "pipeline_stages:\n"
                           "  - json:\n"
                           "      expressions: {level: level, msg: msg, traceID: traceID}\n"
                           "  - labels: {level: , trace: traceID}\n"
                           "  - output: {source: msg}\n"
                           "  - timestmp: {source: time, format: RFC3339}\n";
  CliRun r = Skald("check " + kUrl + " --log-opt loki-batch-sise=400 --stages-file " + stages);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("error: unknown log-opt 'loki-batch-sise' (did you mean "
                               "'loki-batch-size'?)"));
  EXPECT_THAT(r.out, HasSubstr("error: invalid log-opt loki-pipeline-stage-file: pipeline stage "
                               "4: unknown stage \"timestmp\" (did you mean timestamp?)"));
  EXPECT_THAT(r.out, HasSubstr("skald check: 2 errors"));
  std::filesystem::remove(stages);

  // Fixed, the lint remains: a warning, exit 0.
  r = Skald("check " + kUrl +
            " --log-opt 'loki-pipeline-stages=- json: {expressions: {level: level, traceID: "
            "traceID}}\n- labels: {level: , trace_id: traceID}'");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("warning: log-opt loki-pipeline-stages: pipeline stage 2 "
                               "(labels): label \"trace_id\""));
  EXPECT_THAT(r.out, HasSubstr("structured_metadata"));

  r = Skald("check " + kUrl);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("ok:"));
}

TEST(Cli, CheckNeverPrintsSecrets) {
  CliRun r = Skald(
      "check --log-opt loki-url=http://bob:hunter2@127.0.0.1:3100/loki/api/v1/push "
      "--log-opt loki-bearer-token=tok-s3cr3t --log-opt loki-retries=x");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, AllOf(Not(HasSubstr("hunter2")), Not(HasSubstr("tok-s3cr3t"))));
}

TEST(Cli, BadArgumentsExitTwoWithUsage) {
  EXPECT_EQ(Skald("check --log-opt novalue").status, 2);
  EXPECT_EQ(Skald("check --frobnicate").status, 2);
  EXPECT_EQ(Skald("--frobnicate").status, 2);
  EXPECT_EQ(Skald("options extra").status, 2);
  EXPECT_EQ(Skald("--socket").status, 2) << "--socket needs a PATH";
  CliRun help = Skald("check --help");
  EXPECT_EQ(help.status, 0);
  EXPECT_THAT(help.out, HasSubstr("skald check   [--log-opt NAME=VALUE]"));
}

// One parser, one usage text: the program's help and each command's are the same, and name
// every command and every plugin setting.
TEST(Cli, OneUsageTextNamesEveryCommandAndSetting) {
  const CliRun help = Skald("--help");
  EXPECT_EQ(help.status, 0);
  for (const char* command : {"check --help", "dry-run --help", "quarantine --help"}) {
    EXPECT_EQ(Skald(command).out, help.out) << command;
  }
  for (const char* word :
       {"skald [--socket PATH]", "skald options", "skald --version", "skald check", "skald dry-run",
        "skald quarantine list", "skald quarantine release", "METRICS_ADDR", "LOG_LEVEL",
        "SHUTDOWN_FLUSH_SECONDS", "STATE_DIR", "JOURNAL_MAX_BYTES", "JOURNAL_MAX_AGE",
        "LOKI_URL"}) {
    EXPECT_THAT(help.out, HasSubstr(word));
  }
}

// `skald options` prints both tables: every --log-opt, then every plugin setting.
TEST(Cli, OptionsPrintsTheOptionsAndTheSettings) {
  const CliRun r = Skald("options");
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, AllOf(HasSubstr("| `loki-url` |"), HasSubstr("| `keep-file` |"),
                           HasSubstr("## Plugin settings"), HasSubstr("| `JOURNAL_MAX_AGE` |"),
                           HasSubstr("| `METRICS_ADDR` |")));
}

TEST(Cli, DryRunOfPinoLines) {
  std::ofstream(::testing::TempDir() + "/skald-cli-pino.yaml")
      << "pipeline_stages:\n"
         "  - json:\n"
         "      expressions: {level: level, time: time, msg: msg, traceID: traceID, context: "
         "context}\n"
         "  - labels: {level: , context: }\n"
         "  - structured_metadata: {trace_id: traceID}\n"
         "  - timestamp: {source: time, format: UnixMs}\n"
         "  - output: {source: msg}\n";
  CliRun r = Skald(
      "dry-run " + kUrl + " --stages-file " + ::testing::TempDir() + "/skald-cli-pino.yaml",
      R"({"level":30,"time":1764612000123,"pid":41,"hostname":"web-1","context":"http","traceID":"4bf92f3577b34da6","msg":"GET /health 200"})"
      "\n"
      R"({"level":50,"time":1764612000456,"pid":41,"hostname":"web-1","context":"db","traceID":"00f067aa0ba902b7","msg":"pool exhausted"})"
      "\n");
  std::filesystem::remove(::testing::TempDir() + "/skald-cli-pino.yaml");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("context=\"http\""));
  EXPECT_THAT(r.out, HasSubstr("level=\"50\""));
  EXPECT_THAT(r.out, HasSubstr("line:     \"pool exhausted\""));
  EXPECT_THAT(r.out, HasSubstr("metadata: trace_id=\"4bf92f3577b34da6\""));
  EXPECT_THAT(r.out, HasSubstr("time:     2025-12-01T18:00:00.456Z"));
  EXPECT_THAT(r.out, HasSubstr("2 lines in, 2 entries would be sent"));
}

TEST(Cli, DryRunRefusesBadOptions) {
  CliRun r = Skald("dry-run " + kUrl + " --log-opt loki-batch-wait=soon", "x\n");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, Not(HasSubstr("entries would be sent")));
}

// A Docker daemon that knows one plugin, as GET /plugins/NAME/json and /info answer. Like
// dockerd (Go's net/http), it refuses a request whose Host header is not a host name: a client
// that names the socket's path there gets "400 Bad Request: malformed Host header".
class FakeDockerSocket {
 public:
  FakeDockerSocket(std::string path, std::string root) : path_(std::move(path)) {
    server_.set_address_family(AF_UNIX);
    server_.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
      const std::string host = req.get_header_value("Host");
      if (!host.empty() && host.find_first_of("/ ") == std::string::npos) {
        return httplib::Server::HandlerResponse::Unhandled;
      }
      res.status = 400;
      res.set_content("400 Bad Request: malformed Host header", "text/plain");
      return httplib::Server::HandlerResponse::Handled;
    });
    server_.Get("/plugins/skald-test:latest/json",
                [](const httplib::Request&, httplib::Response& res) {
                  res.set_content(R"({"Id":"abc123","Name":"skald-test:latest","Enabled":true,
        "Settings":{"Env":["LOKI_URL=http://u:pw-s3cr3t@127.0.0.1:3100/loki/api/v1/push",
                           "LOKI_BATCH_SIZE=","STATE_DIR=/var/lib/skald"]},
        "Config":{"PropagatedMount":"/var/lib/skald"}})",
                                  "application/json");
                });
    server_.Get("/info", [root](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"DockerRootDir":")" + root + R"("})", "application/json");
    });
    std::filesystem::remove(path_);
    server_.bind_to_port(path_, 80);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakeDockerSocket() {
    server_.stop();
    thread_.join();
    std::filesystem::remove(path_);
  }

 private:
  std::string path_;
  httplib::Server server_;
  std::thread thread_;
};

TEST(Cli, PluginSettingsAreUsedAndItsFilesFoundOnTheHost) {
  const std::string root = ::testing::TempDir() + "/skald-cli-root";
  const std::string files = root + "/plugins/abc123/propagated-mount/files";
  std::filesystem::create_directories(files);
  std::ofstream(files + "/stages.yaml") << "pipeline_stages:\n  - json: {expressions: {a: a}}\n";
  const std::string sock = ::testing::TempDir() + "/skald-cli-docker.sock";
  FakeDockerSocket docker(sock, root);
  // No loki-url given: the plugin's LOKI_URL serves; the stage file is read from the host.
  CliRun r = Skald("check --plugin skald-test:latest --docker-socket " + sock +
                   " --log-opt loki-pipeline-stage-file=/var/lib/skald/files/stages.yaml");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("plugin skald-test:latest (enabled): plugin-wide settings used: "
                               "LOKI_URL"));
  EXPECT_THAT(r.out, HasSubstr("warning: log-opt loki-pipeline-stage-file: pipeline stage 1 "
                               "(json): no later stage reads"));
  EXPECT_THAT(r.out, Not(HasSubstr("pw-s3cr3t")));

  r = Skald("check --plugin nosuch --docker-socket " + sock);
  EXPECT_EQ(r.status, 2);
  std::filesystem::remove_all(root);
}

}  // namespace
