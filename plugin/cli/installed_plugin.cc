#include "plugin/cli/installed_plugin.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

#include "plugin/loki/http_response_reader.h"

namespace skald {
namespace {

struct DockerAnswer {
  int status = 0;
  std::string body;
};

// GET `path` from the Docker daemon's API socket, within 10 s. The answer is read by the same
// bounded reader as Loki's (its body capped at HttpResponseReader::kMaxBodyBytes: a plugin's
// description is a few kilobytes).
DockerAnswer GetFromDocker(const std::string& socket_path, const std::string& path,
                           const std::string& what) {
  const auto fail = [&](const std::string& why) {
    return std::runtime_error("cannot reach the Docker daemon at " + socket_path + " to read " +
                              what + ": " + why);
  };
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket_path.empty() || socket_path.size() >= sizeof(address.sun_path)) {
    throw fail("not a socket path");
  }
  std::memcpy(address.sun_path, socket_path.data(), socket_path.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw fail(std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  // A full listen backlog would make connect wait: 5 s at most (Linux applies the send timeout).
  const timeval connect_timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &connect_timeout, sizeof(connect_timeout));
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    throw fail(std::strerror(errno));
  }
  // Go's net/http refuses the socket's path as a Host ("malformed Host header"); the Docker
  // CLI sends a placeholder name too.
  const std::string request =
      "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
  for (std::string_view left = request; !left.empty();) {
    const ssize_t n = ::send(fd, left.data(), left.size(), MSG_NOSIGNAL);
    if (n <= 0) throw fail(std::strerror(errno));
    left.remove_prefix(static_cast<std::size_t>(n));
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  HttpResponseReader reader;
  char buf[16 * 1024];
  while (reader.state() == HttpResponseReader::State::kReading) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) throw fail("no answer within 10 s");
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw fail(std::strerror(errno));
    if (n == 0) {
      reader.FeedEnd();
      break;
    }
    reader.Feed(std::string_view(buf, static_cast<std::size_t>(n)));
  }
  if (reader.state() != HttpResponseReader::State::kDone) throw fail(reader.error());
  if (reader.body_capped()) throw fail("the answer is larger than expected");
  return {reader.status(), reader.body()};
}

nlohmann::json GetJson(const std::string& socket_path, const std::string& path,
                       const std::string& what) {
  const DockerAnswer res = GetFromDocker(socket_path, path, what);
  if (res.status != 200) {
    std::string message = res.body;
    try {
      message = nlohmann::json::parse(res.body).value("message", res.body);
    } catch (const std::exception&) {
    }
    throw std::runtime_error("the Docker daemon answered " + std::to_string(res.status) + " for " +
                             what + ": " + message);
  }
  try {
    return nlohmann::json::parse(res.body);
  } catch (const std::exception& e) {
    throw std::runtime_error("the Docker daemon's answer for " + what +
                             " is not JSON: " + e.what());
  }
}

}  // namespace

InstalledPlugin InspectInstalledPlugin(const std::string& name, const std::string& docker_socket) {
  const std::string what = "plugin " + name;
  // Plugin references are [registry/]name[:tag]; anything else would change the request.
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) &&
        std::string_view("._-/:@").find(c) == std::string_view::npos) {
      throw std::runtime_error("'" + name + "' is not a plugin name");
    }
  }
  nlohmann::json plugin = GetJson(docker_socket, "/plugins/" + name + "/json", what);
  InstalledPlugin out;
  try {
    out.name = plugin.value("Name", name);
    out.id = plugin.at("Id").get<std::string>();
    out.enabled = plugin.value("Enabled", false);
    for (const auto& kv : plugin.at("Settings").value("Env", nlohmann::json::array())) {
      const std::string s = kv.get<std::string>();
      const auto eq = s.find('=');
      if (eq != std::string::npos) out.env[s.substr(0, eq)] = s.substr(eq + 1);
    }
    out.propagated_mount = plugin.at("Config").value("PropagatedMount", "");
  } catch (const std::exception& e) {
    throw std::runtime_error("the Docker daemon's description of " + what +
                             " lacks a field: " + e.what());
  }
  if (!out.propagated_mount.empty()) {
    nlohmann::json info = GetJson(docker_socket, "/info", "the daemon's settings");
    const std::string root = info.value("DockerRootDir", "/var/lib/docker");
    out.host_propagated_mount = root + "/plugins/" + out.id + "/propagated-mount";
  }
  return out;
}

}  // namespace skald
