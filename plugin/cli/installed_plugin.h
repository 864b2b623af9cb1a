// InstalledPlugin: the settings of a plugin installed in the local Docker daemon, as
// `docker plugin inspect NAME` shows them, read over the daemon's socket (no docker CLI).
// `skald check --plugin NAME` uses them to see what StartLogging in that plugin would see: its
// plugin-wide option defaults (LOKI_URL, ...) and where its files are on the host.
#pragma once

#include <map>
#include <string>

namespace skald {

struct InstalledPlugin {
  std::string name;  // as the daemon names it, e.g. "skald:latest"
  std::string id;
  bool enabled = false;
  std::map<std::string, std::string> env;  // Settings.Env, NAME -> value
  // The directory the plugin keeps its state in as it sees it (Config.PropagatedMount, e.g.
  // /var/lib/skald), and where that directory is on the host
  // (<DockerRootDir>/plugins/<id>/propagated-mount). Empty when it has none.
  std::string propagated_mount;
  std::string host_propagated_mount;
};

// Throws std::runtime_error naming the plugin and the daemon's answer when it cannot be read.
InstalledPlugin InspectInstalledPlugin(const std::string& name,
                                       const std::string& docker_socket = "/var/run/docker.sock");

}  // namespace skald
