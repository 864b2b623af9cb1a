// PluginApiServer: the HTTP/1.1 API dockerd calls on the plugin's unix socket.
//
// Serves /Plugin.Activate, /LogDriver.StartLogging, /LogDriver.StopLogging,
// /LogDriver.Capabilities and /LogDriver.ReadLogs with the quirks of the real daemon
// (../shared/docs/DOCKER_PROTOCOL.md): any Host, any or no Content-Type, JSON bodies with a
// trailing newline, errors as {"Err":"..."}. Requests are served concurrently on a
// GrowingThreadPool. Bind() comes first in main, before any slow start-up work, because the
// daemon gives up on a plugin whose socket does not answer within a few seconds.
#pragma once

#include <memory>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace skald {

class Driver;

class PluginApiServer {
 public:
  explicit PluginApiServer(Driver& driver);
  ~PluginApiServer();

  // Removes a stale socket file and binds. Returns false (and logs why) on failure.
  bool Bind(const std::string& socket_path);
  // Serves on a background thread.
  void Start();
  void Stop();

 private:
  Driver& driver_;
  std::unique_ptr<httplib::Server> server_;
  std::string socket_path_;
  std::thread thread_;
};

}  // namespace skald
