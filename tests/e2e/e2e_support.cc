#include "tests/e2e/e2e_support.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#ifndef SKALD_SOURCE_DIR_DEFAULT
#define SKALD_SOURCE_DIR_DEFAULT "."
#endif

namespace skald::e2e {

std::string Trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

namespace {

using json = nlohmann::json;

std::string Abbreviate(const std::string& s, std::size_t max = 4000) {
  if (s.size() <= max) return s;
  return s.substr(0, max / 2) + "\n[... " + std::to_string(s.size() - max) + " bytes ...]\n" +
         s.substr(s.size() - max / 2);
}

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// Reads what is available; returns false at EOF or on a hard error.
bool DrainFd(int fd, std::string& into) {
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      into.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t AgoNs(std::chrono::system_clock::duration since) {
  return NowNs() - std::chrono::duration_cast<std::chrono::nanoseconds>(since).count();
}

json ParseLokiAnswer(const std::string& body, const std::string& what) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || j.value("status", "") != "success") {
    throw std::runtime_error("Loki " + what + ": unexpected answer: " + Abbreviate(body, 1000));
  }
  return j;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Commands

std::string CommandResult::Describe() const {
  std::ostringstream o;
  o << "`" << command << "` ";
  if (timed_out) {
    o << "timed out";
  } else {
    o << "exited " << exit_code;
  }
  o << " after " << duration.count() << " ms";
  o << "\n--- stdout:\n" << Abbreviate(out) << "\n--- stderr:\n" << Abbreviate(err);
  return o.str();
}

CommandResult RunCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  CommandResult r;
  for (const auto& a : argv) {
    if (!r.command.empty()) r.command += ' ';
    r.command += a.find_first_of(" \t\"'$") == std::string::npos ? a : "'" + a + "'";
  }
  if (argv.empty()) throw std::invalid_argument("RunCommand: empty argv");

  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  }
  const auto start = Clock::now();
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    signal(SIGPIPE, SIG_DFL);
    execvp(cargv[0], cargv.data());
    const char msg[] = "exec failed\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(127);
  }
  setpgid(pid, pid);  // also from the parent, so the kill below never misses
  close(out_pipe[1]);
  close(err_pipe[1]);
  SetNonBlocking(out_pipe[0]);
  SetNonBlocking(err_pipe[0]);

  bool out_open = true, err_open = true;
  int status = 0;
  const auto deadline = start + timeout;
  for (;;) {
    pollfd fds[2] = {{out_open ? out_pipe[0] : -1, POLLIN, 0},
                     {err_open ? err_pipe[0] : -1, POLLIN, 0}};
    poll(fds, 2, 20);
    if (out_open) out_open = DrainFd(out_pipe[0], r.out);
    if (err_open) err_open = DrainFd(err_pipe[0], r.err);
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      // The child is gone; take what is buffered but do not wait for grandchildren (a
      // daemon it started may hold the pipes open forever).
      if (out_open) DrainFd(out_pipe[0], r.out);
      if (err_open) DrainFd(err_pipe[0], r.err);
      r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      break;
    }
    if (Clock::now() >= deadline) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      r.timed_out = true;
      r.exit_code = -1;
      break;
    }
  }
  close(out_pipe[0]);
  close(err_pipe[0]);
  r.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  return r;
}

CommandResult RunShell(const std::string& script, std::chrono::milliseconds timeout) {
  return RunCommand({"sh", "-c", script}, timeout);
}

// ---------------------------------------------------------------------------------------------
// Small utilities

std::string UniqueName(std::string_view prefix) {
  static std::atomic<int> counter{0};
  static const uint32_t salt = std::random_device{}();
  char rnd[16];
  std::snprintf(rnd, sizeof rnd, "%06x",
                static_cast<unsigned>((salt ^ (NowNs() & 0xffffff)) & 0xffffff));
  std::string name = std::string(prefix) + "-" + std::to_string(getpid()) + "-" +
                     std::to_string(++counter) + "-" + rnd;
  for (char& c : name) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') c = '-';
  }
  return name;
}

std::string SourceDir() { return EnvOr("SKALD_SOURCE_DIR", SKALD_SOURCE_DIR_DEFAULT); }

std::string EnvOr(const char* name, std::string_view fallback) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? std::string(v) : std::string(fallback);
}

int FreeTcpPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    throw std::runtime_error("bind to 127.0.0.1:0 failed");
  }
  close(fd);
  return ntohs(addr.sin_port);
}

bool TcpPortOpen(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool open = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return open;
}

bool WaitUntil(const std::function<bool()>& pred, std::chrono::milliseconds timeout,
               std::chrono::milliseconds interval) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (pred()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(interval);
  }
}

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    auto nl = text.find('\n');
    lines.emplace_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// Docker

CommandResult Docker(const std::vector<std::string>& args, std::chrono::milliseconds timeout) {
  std::vector<std::string> argv{"docker"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, timeout);
}

namespace {
constexpr const char* kDaemonJson = "/etc/docker/daemon.json";
}  // namespace

DaemonJsonRestorer::DaemonJsonRestorer() {
  if (!std::filesystem::exists(kDaemonJson)) return;
  saved_ = (std::filesystem::temp_directory_path() /
            ("skald-e2e-daemon.json." + std::to_string(getpid()) + "." + std::to_string(NowNs())))
               .string();
  std::filesystem::copy_file(kDaemonJson, saved_);
}

DaemonJsonRestorer::~DaemonJsonRestorer() {
  const std::string script = SourceDir() + "/tests/e2e/restart-dockerd.sh";
  auto r = saved_.empty() ? RunCommand({script, "--no-daemon-json"}, 180s)
                          : RunCommand({script, "--daemon-json", saved_}, 180s);
  EXPECT_TRUE(r.ok()) << "daemon.json not restored: " << r.Describe();
  if (!saved_.empty()) {
    std::error_code ec;
    std::filesystem::remove(saved_, ec);
  }
}

ContainerGuard::~ContainerGuard() { RemoveAll(); }

void ContainerGuard::RemoveAll() {
  if (names_.empty() || EnvOr("SKALD_E2E_KEEP_CONTAINERS", "") == "1") return;
  std::vector<std::string> args{"rm", "-f", "-v"};
  args.insert(args.end(), names_.begin(), names_.end());
  Docker(args, 60s);
  names_.clear();
}

std::optional<int> WaitContainerExit(const std::string& name, std::chrono::milliseconds timeout) {
  auto r = Docker({"wait", name}, timeout);
  if (!r.ok()) return std::nullopt;
  try {
    return std::stoi(Trim(r.out));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<std::string> DockerInspect(const std::string& name, const std::string& format) {
  auto r = Docker({"inspect", "--format", format, name}, 30s);
  if (!r.ok()) return std::nullopt;
  return Trim(r.out);
}

namespace {
std::string PluginOrDefault(const std::string& plugin) {
  return plugin.empty() ? E2eEnv::Get().Driver() : plugin;
}
}  // namespace

std::optional<int> PluginPid(const std::string& plugin) {
  auto id = Docker({"plugin", "inspect", "--format", "{{.Id}}", PluginOrDefault(plugin)});
  if (!id.ok()) return std::nullopt;
  const std::string plugin_id = id.out.substr(0, id.out.find_first_of(" \n"));
  auto pids = RunCommand({"pgrep", "-x", "skald"});
  std::vector<std::string> all;
  for (const std::string& p : SplitLines(pids.out)) {
    if (p.empty()) continue;
    all.push_back(p);
    std::ifstream cgroup("/proc/" + p + "/cgroup");
    std::string text((std::istreambuf_iterator<char>(cgroup)), std::istreambuf_iterator<char>());
    if (text.find(plugin_id) != std::string::npos) return std::stoi(p);
  }
  if (all.size() == 1) return std::stoi(all[0]);
  return std::nullopt;
}

std::optional<int> SocketCount(int pid) {
  std::error_code ec;
  auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
  if (ec) return std::nullopt;
  int sockets = 0;
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    std::error_code link_ec;
    const auto target = std::filesystem::read_symlink(it->path(), link_ec);
    if (!link_ec && target.string().rfind("socket:", 0) == 0) ++sockets;
  }
  return sockets;
}

std::optional<std::string> PluginPropagatedMount(const std::string& plugin) {
  auto id = Docker({"plugin", "inspect", "--format", "{{.Id}}", PluginOrDefault(plugin)});
  auto root = Docker({"info", "--format", "{{.DockerRootDir}}"});
  if (!id.ok() || !root.ok()) return std::nullopt;
  return Trim(root.out) + "/plugins/" + Trim(id.out) + "/propagated-mount";
}

std::optional<std::string> PluginStateDir(const std::string& plugin) {
  auto r = Docker({"plugin", "inspect", "--format",
                   "{{.Config.PropagatedMount}} {{range .Settings.Env}}{{.}} {{end}}",
                   PluginOrDefault(plugin)});
  auto mount = PluginPropagatedMount(plugin);
  if (!r.ok() || !mount) return std::nullopt;
  std::istringstream in(r.out);
  std::string destination, item, state_dir;
  in >> destination;
  while (in >> item) {
    if (item.rfind("STATE_DIR=", 0) == 0) state_dir = item.substr(10);
  }
  if (destination.empty() || state_dir.rfind(destination, 0) != 0) return std::nullopt;
  return *mount + state_dir.substr(destination.size());
}

std::optional<long> VmRssKb(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Loki

std::string LogqlQuote(std::string_view value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

LokiQuery::LokiQuery(std::string base_url) : base_url_(std::move(base_url)) {
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
}

std::string LokiQuery::Get(const std::string& path,
                           const std::vector<std::pair<std::string, std::string>>& params) const {
  httplib::Client cli(base_url_);
  cli.set_connection_timeout(5s);
  cli.set_read_timeout(60s);
  httplib::Params p;
  for (const auto& [k, v] : params) p.emplace(k, v);
  auto res = cli.Get(path, p, httplib::Headers{});
  if (!res) {
    throw std::runtime_error("Loki GET " + base_url_ + path + " failed: " + to_string(res.error()));
  }
  if (res->status != 200) {
    throw std::runtime_error("Loki GET " + path + " answered " + std::to_string(res->status) +
                             ": " + Abbreviate(res->body, 1000));
  }
  return res->body;
}

bool LokiQuery::Ready(std::string* why) const {
  httplib::Client cli(base_url_);
  cli.set_connection_timeout(2s);
  cli.set_read_timeout(5s);
  auto res = cli.Get("/ready");
  if (!res) {
    if (why) *why = "GET /ready: " + to_string(res.error());
    return false;
  }
  if (res->status != 200) {
    if (why) *why = "GET /ready: " + std::to_string(res->status) + " " + Trim(res->body);
    return false;
  }
  return true;
}

uint64_t LokiQuery::Count(const std::string& selector, const std::string& range) const {
  const std::string query = "sum(count_over_time(" + selector + " [" + range + "]))";
  json j = ParseLokiAnswer(
      Get("/loki/api/v1/query", {{"query", query}, {"time", std::to_string(NowNs())}}),
      "query " + query);
  const auto& result = j["data"]["result"];
  if (!result.is_array() || result.empty()) return 0;
  const auto& value = result[0]["value"];
  if (!value.is_array() || value.size() != 2 || !value[1].is_string()) {
    throw std::runtime_error("Loki query " + query + ": unexpected result " + result.dump());
  }
  return static_cast<uint64_t>(std::stod(value[1].get<std::string>()));
}

uint64_t LokiQuery::Bytes(const std::string& selector, const std::string& range) const {
  const std::string query = "sum(bytes_over_time(" + selector + " [" + range + "]))";
  json j = ParseLokiAnswer(
      Get("/loki/api/v1/query", {{"query", query}, {"time", std::to_string(NowNs())}}),
      "query " + query);
  const auto& result = j["data"]["result"];
  if (!result.is_array() || result.empty()) return 0;
  const auto& value = result[0]["value"];
  if (!value.is_array() || value.size() != 2 || !value[1].is_string()) {
    throw std::runtime_error("Loki query " + query + ": unexpected result " + result.dump());
  }
  return static_cast<uint64_t>(std::stod(value[1].get<std::string>()));
}

std::vector<LokiEntry> LokiQuery::QueryAll(const std::string& selector,
                                           std::chrono::system_clock::duration since,
                                           std::size_t page_limit, std::size_t max_entries) const {
  // Loki's query_range is start-inclusive and returns the `limit` oldest entries (direction
  // forward) across all streams. The next page starts at the last timestamp seen; entries at
  // exactly that timestamp which we already hold are skipped.
  std::vector<LokiEntry> all;
  int64_t start = AgoNs(since);
  const int64_t end = NowNs() + std::chrono::nanoseconds(10min).count();
  std::set<std::string> seen_at_start;
  for (;;) {
    json j = ParseLokiAnswer(Get("/loki/api/v1/query_range", {{"query", selector},
                                                              {"start", std::to_string(start)},
                                                              {"end", std::to_string(end)},
                                                              {"limit", std::to_string(page_limit)},
                                                              {"direction", "forward"}}),
                             "query_range " + selector);
    const auto& data = j["data"];
    if (data.value("resultType", "") != "streams") {
      throw std::runtime_error("Loki query_range " + selector + ": not a log query");
    }
    std::vector<LokiEntry> page;
    for (const auto& stream : data["result"]) {
      std::map<std::string, std::string> labels;
      for (const auto& [k, v] : stream["stream"].items()) labels[k] = v.get<std::string>();
      for (const auto& v : stream["values"]) {
        page.push_back({labels, std::stoll(v[0].get<std::string>()), v[1].get<std::string>()});
      }
    }
    std::stable_sort(page.begin(), page.end(), [](const LokiEntry& a, const LokiEntry& b) {
      return a.timestamp_ns < b.timestamp_ns;
    });
    auto key = [](const LokiEntry& e) {
      std::string k;
      for (const auto& [n, v] : e.labels) k += n + "=" + v + ",";
      return k + "\n" + e.line;
    };
    std::size_t fresh = 0;
    for (const auto& e : page) {
      if (e.timestamp_ns == start && seen_at_start.count(key(e)) != 0) continue;
      all.push_back(e);
      ++fresh;
    }
    if (all.size() > max_entries) {
      throw std::runtime_error("Loki query_range " + selector + ": more than " +
                               std::to_string(max_entries) + " entries");
    }
    if (page.size() < page_limit) break;
    const int64_t last = page.back().timestamp_ns;
    if (last != start) seen_at_start.clear();
    for (const auto& e : page) {
      if (e.timestamp_ns == last) seen_at_start.insert(key(e));
    }
    if (fresh == 0) {
      throw std::runtime_error("Loki query_range " + selector + ": more than " +
                               std::to_string(page_limit) + " entries share timestamp " +
                               std::to_string(last) + "; cannot page");
    }
    start = last;
  }
  return all;
}

std::vector<std::string> LokiQuery::LabelValues(const std::string& name,
                                                std::chrono::system_clock::duration since) const {
  json j = ParseLokiAnswer(
      Get("/loki/api/v1/label/" + name + "/values",
          {{"start", std::to_string(AgoNs(since))}, {"end", std::to_string(NowNs())}}),
      "label values " + name);
  std::vector<std::string> values;
  if (j["data"].is_array()) {
    for (const auto& v : j["data"]) values.push_back(v.get<std::string>());
  }
  return values;
}

std::vector<LabelSet> LokiQuery::Series(const std::string& selector,
                                        std::chrono::system_clock::duration since) const {
  json j = ParseLokiAnswer(Get("/loki/api/v1/series", {{"match[]", selector},
                                                       {"start", std::to_string(AgoNs(since))},
                                                       {"end", std::to_string(NowNs())}}),
                           "series " + selector);
  std::vector<LabelSet> out;
  if (j["data"].is_array()) {
    for (const auto& s : j["data"]) {
      LabelSet ls;
      for (const auto& [k, v] : s.items()) ls[k] = v.get<std::string>();
      out.push_back(std::move(ls));
    }
  }
  return out;
}

uint64_t LokiQuery::WaitForCount(const std::string& selector, uint64_t want,
                                 std::chrono::milliseconds timeout) const {
  uint64_t last = 0;
  WaitUntil(
      [&] {
        last = Count(selector);
        return last >= want;
      },
      timeout, 500ms);
  return last;
}

int LokiQuery::PushJson(const LabelSet& labels,
                        const std::vector<std::pair<int64_t, std::string>>& entries) const {
  json values = json::array();
  for (const auto& [ts, line] : entries) values.push_back({std::to_string(ts), line});
  json body = {{"streams", json::array({{{"stream", labels}, {"values", values}}})}};
  httplib::Client cli(base_url_);
  cli.set_connection_timeout(5s);
  cli.set_read_timeout(30s);
  auto res = cli.Post("/loki/api/v1/push", body.dump(), "application/json");
  if (!res) return -1;
  return res->status;
}

// ---------------------------------------------------------------------------------------------
// Prometheus

std::map<std::string, double> ParsePrometheusTotals(std::string_view text) {
  std::map<std::string, double> totals;
  for (const auto& raw : SplitLines(text)) {
    std::string_view line = raw;
    if (line.empty() || line.front() == '#') continue;
    std::size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    std::string name(line.substr(0, i));
    if (i < line.size() && line[i] == '{') {
      bool quoted = false;
      for (++i; i < line.size(); ++i) {
        if (quoted && line[i] == '\\') {
          ++i;
        } else if (line[i] == '"') {
          quoted = !quoted;
        } else if (!quoted && line[i] == '}') {
          ++i;
          break;
        }
      }
    }
    while (i < line.size() && line[i] == ' ') ++i;
    std::string value(line.substr(i));
    char* end = nullptr;
    double v = std::strtod(value.c_str(), &end);
    if (end == value.c_str() || name.empty()) continue;
    totals[name] += v;
  }
  return totals;
}

double PrometheusSeries(std::string_view text, std::string_view series) {
  double sum = 0;
  for (const auto& raw : SplitLines(text)) {
    std::string_view line = raw;
    if (line.empty() || line.front() == '#') continue;
    if (line.size() <= series.size() || line.substr(0, series.size()) != series ||
        line[series.size()] != ' ') {
      continue;
    }
    sum += std::strtod(std::string(line.substr(series.size() + 1)).c_str(), nullptr);
  }
  return sum;
}

std::optional<std::string> FetchMetrics(int port) {
  if (port == 0) port = E2eEnv::Get().MetricsPort();
  httplib::Client cli("127.0.0.1", port);
  cli.set_connection_timeout(3s);
  cli.set_read_timeout(10s);
  auto res = cli.Get("/metrics");
  if (!res || res->status != 200) return std::nullopt;
  return res->body;
}

// ---------------------------------------------------------------------------------------------
// E2eEnv, ScopedLoki

namespace {

std::string MakeLokiDataDir() {
  char dir[] = "/tmp/skald-e2e-loki.XXXXXX";
  if (mkdtemp(dir) == nullptr) throw std::runtime_error("mkdtemp failed");
  return dir;
}

// Starts a Loki for `data_dir` via start-loki.sh; returns its base URL.
std::string StartLoki(const std::string& data_dir, int http_port) {
  const std::string script = SourceDir() + "/tests/e2e/loki/start-loki.sh";
  if (!std::filesystem::exists(script)) {
    throw std::runtime_error(script +
                             " is missing; set SKALD_E2E_LOKI_URL=http://127.0.0.1:PORT to "
                             "use a Loki that is already running");
  }
  int grpc_port = FreeTcpPort();
  while (grpc_port == http_port) grpc_port = FreeTcpPort();
  // The first start may build Loki: be patient.
  auto r = RunCommand({script, data_dir, std::to_string(http_port), std::to_string(grpc_port)},
                      std::chrono::minutes(30));
  if (!r.ok()) throw std::runtime_error("starting Loki failed: " + r.Describe());
  // The script prints the base URL as its last line.
  auto lines = SplitLines(Trim(r.out));
  return !lines.empty() && lines.back().rfind("http", 0) == 0
             ? lines.back()
             : "http://127.0.0.1:" + std::to_string(http_port);
}

void WaitLokiReady(const LokiQuery& q) {
  std::string why;
  if (!WaitUntil([&] { return q.Ready(&why); }, 120s, 500ms)) {
    throw std::runtime_error("Loki at " + q.base_url() + " is not ready after 120 s: " + why);
  }
}

void StopLoki(const std::string& data_dir) {
  RunCommand({SourceDir() + "/tests/e2e/loki/stop-loki.sh", data_dir}, 60s);
  if (EnvOr("SKALD_E2E_KEEP_LOKI", "") != "1") {
    std::error_code ec;
    std::filesystem::remove_all(data_dir, ec);
  }
}

}  // namespace

E2eEnv& E2eEnv::Get() {
  static E2eEnv* env = [] {
    auto* e = new E2eEnv();
    std::atexit([] { E2eEnv::Get().Shutdown(); });
    return e;
  }();
  return *env;
}

LokiQuery& E2eEnv::Loki() {
  if (loki_) return *loki_;
  std::string url = EnvOr("SKALD_E2E_LOKI_URL", "");
  if (url.empty()) {
    loki_data_dir_ = MakeLokiDataDir();
    loki_started_here_ = true;
    url = StartLoki(loki_data_dir_, TcpPortOpen(3100) ? FreeTcpPort() : 3100);
  }
  LokiQuery q(url);
  WaitLokiReady(q);
  loki_.emplace(std::move(q));
  return *loki_;
}

const std::string& E2eEnv::TestImage() {
  if (!image_.empty()) return image_;
  const std::string script = SourceDir() + "/tests/e2e/image/build-image.sh";
  auto r = RunCommand({script}, 10min);
  if (!r.ok()) throw std::runtime_error("building the test image failed: " + r.Describe());
  image_ = Trim(r.out);
  if (image_.empty()) image_ = "skald-test:latest";
  return image_;
}

std::string E2eEnv::Driver() const { return EnvOr("SKALD_E2E_DRIVER", "skald"); }

int E2eEnv::MetricsPort() const { return std::stoi(EnvOr("SKALD_E2E_METRICS_PORT", "9555")); }

std::string E2eEnv::Bundle() const {
  return EnvOr("SKALD_E2E_BUNDLE", SourceDir() + "/build-release/plugin-bundle");
}

std::string E2eEnv::PluginProblem() {
  const std::string name = Driver();
  auto r = Docker({"plugin", "inspect", "--format", "{{.Enabled}}", name}, 30s);
  if (!r.ok()) {
    return "the docker plugin '" + name +
           "' is not installed (docker plugin inspect failed: " + Trim(r.err) +
           "). Run `make install` first.";
  }
  if (Trim(r.out) != "true") {
    return "the docker plugin '" + name +
           "' is installed but disabled. Run `make install` (or `docker plugin enable "
           "--timeout 0 " +
           name + "`).";
  }
  return "";
}

void E2eEnv::Shutdown() {
  if (!loki_started_here_) return;
  loki_started_here_ = false;
  loki_.reset();
  StopLoki(loki_data_dir_);
}

ScopedLoki::ScopedLoki(int http_port)
    : data_dir_(MakeLokiDataDir()), query_(StartLoki(data_dir_, http_port)) {
  WaitLokiReady(query_);
}

ScopedLoki::~ScopedLoki() { StopLoki(data_dir_); }

}  // namespace skald::e2e

namespace skald::e2e {

// ---------------------------------------------------------------------------------------------
// Fixtures

void DockerLokiTest::SetUp() {
  try {
    image_ = E2eEnv::Get().TestImage();
  } catch (const std::exception& e) {
    GTEST_FAIL() << e.what();
  }
}

LokiQuery& DockerLokiTest::loki() {
  if (loki_ == nullptr) loki_ = &E2eEnv::Get().Loki();  // throws: the test fails with why
  return *loki_;
}

std::string DockerLokiTest::NewContainer(std::string_view tag) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string prefix = "e2e-";
  prefix += info != nullptr ? info->name() : "test";
  if (prefix.size() > 40) prefix.resize(40);
  if (!tag.empty()) {
    prefix += "-";
    prefix += tag;
  }
  std::string name = UniqueName(prefix);
  guard_.Add(name);
  return name;
}

void SkaldTest::SetUp() {
  driver_ = E2eEnv::Get().Driver();
  const std::string problem = E2eEnv::Get().PluginProblem();
  if (!problem.empty()) GTEST_FAIL() << problem;
  DockerLokiTest::SetUp();
  if (HasFatalFailure()) return;
  try {
    loki();
  } catch (const std::exception& e) {
    GTEST_FAIL() << e.what();
  }
}

std::vector<std::string> SkaldTest::RunArgs(const std::string& name,
                                            const std::vector<std::string>& opts,
                                            const std::vector<std::string>& cmd,
                                            std::optional<std::string> loki_url) const {
  std::vector<std::string> args{"run",  "--name",       name,   "--network",
                                "none", "--log-driver", driver_};
  const std::string url = loki_url.value_or(loki_->PushUrl());
  if (!url.empty()) {
    args.push_back("--log-opt");
    args.push_back("loki-url=" + url);
  }
  for (const auto& o : opts) {
    args.push_back("--log-opt");
    args.push_back(o);
  }
  args.push_back(image_);
  args.insert(args.end(), cmd.begin(), cmd.end());
  return args;
}

std::string SkaldTest::Selector(const std::string& container, const std::string& extra) {
  std::string s = "{container_name=" + LogqlQuote(container);
  if (!extra.empty()) s += ", " + extra;
  return s + "}";
}

}  // namespace skald::e2e
