#include "tests/integration/fake_daemon.h"

#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "plugin/ingest/frame_codec.h"
#include "tests/tools/random_hex.h"

namespace skald::testkit {

namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

FakeDaemon::FakeDaemon(const std::string& binary, const std::vector<std::string>& env) {
  char tmpl[] = "/tmp/skald-it-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  socket_ = dir_ + "/skald.sock";
  metrics_port_ = FreePort();
  // One second of flush at SIGTERM unless a test asks for more: the destructor stops the
  // plugin with SIGTERM.
  std::vector<std::string> envs = {"SHUTDOWN_FLUSH_SECONDS=1", "SKALD_SOCKET=" + socket_,
                                   "METRICS_ADDR=127.0.0.1:" + std::to_string(metrics_port_),
                                   "LOG_LEVEL=info", "STATE_DIR=" + dir_ + "/state"};
  envs.insert(envs.end(), env.begin(), env.end());
  binary_ = binary;
  env_ = envs;
  Spawn();
}

void FakeDaemon::Spawn() {
  std::string log = dir_ + "/plugin.log";
  unlink(socket_.c_str());
  pid_ = fork();
  if (pid_ == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    for (const std::string& e : env_) putenv(const_cast<char*>(e.c_str()));
    execl(binary_.c_str(), binary_.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Ready when a connection is taken: the socket file appears at bind(), a moment before
  // listen(), and a call in between is refused.
  for (int i = 0; i < 500; ++i) {  // up to 5 s
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_.c_str());
    const bool up = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    if (fd >= 0) close(fd);
    if (up) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw std::runtime_error("the plugin did not create its socket; log:\n" + Log());
}

void FakeDaemon::KillAndRestartPlugin() {
  Signal(SIGKILL, std::chrono::seconds(5));
  Spawn();
}

FakeDaemon::~FakeDaemon() {
  // Stopped as Docker stops a plugin, so that its own exit runs (in the ASan build,
  // LeakSanitizer's check with it); killed only when it does not end in time.
  if (pid_ > 0) {
    const int status = Signal(SIGTERM, std::chrono::seconds(15));
    if (status == -1) {
      Signal(SIGKILL, std::chrono::seconds(5));
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      const std::string what = "the plugin did not exit cleanly at SIGTERM (wait status " +
                               std::to_string(status) + "); its log:\n" + Log();
      if (UncleanExitHandler()) {
        UncleanExitHandler()(what);
      } else {
        std::fprintf(stderr, "%s\n", what.c_str());
      }
    }
  }
  std::filesystem::remove_all(dir_);
}

std::function<void(const std::string&)>& FakeDaemon::UncleanExitHandler() {
  static std::function<void(const std::string&)> handler;
  return handler;
}

bool FakeDaemon::running() const { return pid_ > 0 && kill(pid_, 0) == 0; }

void FakeDaemon::KeepAlive(bool on) {
  if (!on) {
    client_.reset();
    return;
  }
  client_ = std::make_unique<httplib::Client>(socket_);
  client_->set_address_family(AF_UNIX);
  client_->set_read_timeout(30);
  client_->set_keep_alive(true);
}

nlohmann::json FakeDaemon::Call(const std::string& method, const nlohmann::json& body) {
  httplib::Client own(socket_);
  own.set_address_family(AF_UNIX);
  own.set_read_timeout(30);
  httplib::Client& cli = client_ ? *client_ : own;
  // As dockerd sends it: no Content-Type, a trailing newline.
  httplib::Headers headers = {{"Accept", "application/vnd.docker.plugins.v1.2+json"}};
  auto res = cli.Post(("/LogDriver." + method).c_str(), headers, body.dump() + "\n", "");
  if (!res) return {{"Err", "transport: " + httplib::to_string(res.error())}};
  auto reply = nlohmann::json::parse(res->body, nullptr, false);
  if (reply.is_discarded()) return {{"Err", "unparsable reply: " + res->body}};
  if (res->status != 200 && !reply.contains("Err")) reply["Err"] = res->body;
  return reply;
}

std::string FakeDaemon::StartContainer(Container& c,
                                       const std::map<std::string, std::string>& config,
                                       const std::map<std::string, std::string>& labels) {
  c.id = RandomHex(64);
  c.name = "it-" + std::to_string(next_container_++) + "-" + RandomHex(6);
  c.fifo = dir_ + "/" + c.id;
  if (mkfifo(c.fifo.c_str(), 0600) != 0) throw std::runtime_error("mkfifo failed");
  c.write_fd = open(c.fifo.c_str(), O_RDWR | O_CLOEXEC);  // the daemon holds it read-write
  nlohmann::json info = {{"Config", config},
                         {"ContainerID", c.id},
                         {"ContainerName", "/" + c.name},
                         {"ContainerEntrypoint", "sh"},
                         {"ContainerArgs", {"-c", "true"}},
                         {"ContainerImageID", "sha256:" + RandomHex(64)},
                         {"ContainerImageName", "busybox:local"},
                         {"ContainerCreated", "2026-11-30T09:48:27.511720058Z"},
                         {"ContainerEnv", nullptr},
                         {"ContainerLabels", labels},
                         {"LogPath", ""},
                         {"DaemonName", "docker"}};
  auto reply = Call("StartLogging", {{"File", c.fifo}, {"Info", info}});
  return reply.value("Err", "missing Err");
}

void FakeDaemon::WriteRaw(Container& c, const std::string& bytes) {
  std::size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = write(c.write_fd, bytes.data() + off, bytes.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("write to FIFO failed");
    }
    off += static_cast<std::size_t>(n);
  }
}

void FakeDaemon::WriteLine(Container& c, const std::string& line, const std::string& source,
                           int64_t time_nano) {
  LogEntryView e;
  e.source = source;
  e.time_nano = time_nano != 0 ? time_nano : NowNs();
  e.line = line;
  std::string frame;
  EncodeFrame(e, frame);
  WriteRaw(c, frame);
}

void FakeDaemon::WritePartialLine(Container& c, const std::string& line, std::size_t chunk,
                                  const std::string& source) {
  std::string id = RandomHex(16);
  int64_t ts = NowNs();
  std::string frames;
  int ordinal = 1;
  for (std::size_t off = 0; off < line.size(); off += chunk, ++ordinal) {
    LogEntryView e;
    e.source = source;
    e.time_nano = ts;
    e.line = std::string_view(line).substr(off, chunk);
    e.partial = true;
    e.has_partial_metadata = true;
    e.partial_id = id;
    e.partial_ordinal = ordinal;
    e.partial_last = off + chunk >= line.size();
    EncodeFrame(e, frames);
  }
  WriteRaw(c, frames);
}

std::string FakeDaemon::StopContainer(Container& c) {
  auto reply = Call("StopLogging", {{"File", c.fifo}});
  if (c.write_fd >= 0) close(c.write_fd);
  c.write_fd = -1;
  return reply.value("Err", "missing Err");
}

std::string FakeDaemon::MetricsText() const {
  httplib::Client cli("127.0.0.1", metrics_port_);
  auto res = cli.Get("/metrics");
  return res ? res->body : "";
}

double FakeDaemon::Metric(const std::string& name, const std::string& labels) const {
  std::istringstream in(MetricsText());
  std::string line;
  double sum = 0;
  bool found = false;
  for (; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    auto space = line.rfind(' ');
    std::string series = line.substr(0, space);
    std::string family = series.substr(0, series.find('{'));
    if (family != name) continue;
    if (!labels.empty() && series != name + "{" + labels + "}") continue;
    sum += std::stod(line.substr(space + 1));
    found = true;
  }
  return found ? sum : -1;
}

int FakeDaemon::Signal(int sig, std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  kill(pid_, sig);
  auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

std::string FakeDaemon::Log() const {
  std::ifstream in(dir_ + "/plugin.log");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace skald::testkit
