#include "plugin/cli/installed_plugin.h"

#include <httplib.h>
#include <sys/socket.h>

#include <cctype>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

namespace skald {
namespace {

nlohmann::json GetJson(httplib::Client& docker, const std::string& path, const std::string& what) {
  // Over a unix socket the client's own Host header would be the socket's path, which dockerd
  // (Go's net/http) refuses: "400 Bad Request: malformed Host header". The Docker CLI sends a
  // placeholder name too.
  auto res = docker.Get(path, httplib::Headers{{"Host", "localhost"}});
  if (!res) {
    throw std::runtime_error("cannot reach the Docker daemon to read " + what + ": " +
                             httplib::to_string(res.error()));
  }
  if (res->status != 200) {
    std::string message = res->body;
    try {
      message = nlohmann::json::parse(res->body).value("message", res->body);
    } catch (const std::exception&) {
    }
    throw std::runtime_error("the Docker daemon answered " + std::to_string(res->status) + " for " +
                             what + ": " + message);
  }
  try {
    return nlohmann::json::parse(res->body);
  } catch (const std::exception& e) {
    throw std::runtime_error("the Docker daemon's answer for " + what +
                             " is not JSON: " + e.what());
  }
}

}  // namespace

InstalledPlugin InspectInstalledPlugin(const std::string& name, const std::string& docker_socket) {
  httplib::Client docker(docker_socket);
  docker.set_address_family(AF_UNIX);
  docker.set_connection_timeout(5);
  docker.set_read_timeout(10);
  const std::string what = "plugin " + name;
  // Plugin references are [registry/]name[:tag]; anything else would change the request.
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) &&
        std::string_view("._-/:@").find(c) == std::string_view::npos) {
      throw std::runtime_error("'" + name + "' is not a plugin name");
    }
  }
  nlohmann::json plugin = GetJson(docker, "/plugins/" + name + "/json", what);
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
    nlohmann::json info = GetJson(docker, "/info", "the daemon's settings");
    const std::string root = info.value("DockerRootDir", "/var/lib/docker");
    out.host_propagated_mount = root + "/plugins/" + out.id + "/propagated-mount";
  }
  return out;
}

}  // namespace skald
