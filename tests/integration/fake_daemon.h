// FakeDaemon: plays dockerd towards the real skald binary, without Docker.
//
// It starts the plugin process with its API on a unix socket in a temporary directory, creates
// FIFOs the way the daemon does (held open read-write by the daemon side), calls
// StartLogging / StopLogging over HTTP, and writes length-prefixed LogEntry frames.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace httplib {
class Client;
}  // namespace httplib

namespace skald::testkit {

class FakeDaemon {
 public:
  // Starts `binary` with the given extra environment (NAME=VALUE). Waits for the socket.
  FakeDaemon(const std::string& binary, const std::vector<std::string>& env);
  // Stops the plugin if still running (SIGTERM; a test fails when it does not exit 0; SIGKILL
  // after 15 s), removes the temp dir.
  ~FakeDaemon();
  // Told what went wrong when the plugin does not exit 0 at the destructor's SIGTERM (the test
  // programs make it fail the test; unset, it is printed to stderr).
  static std::function<void(const std::string&)>& UncleanExitHandler();

  bool running() const;
  pid_t pid() const { return pid_; }
  const std::string& socket() const { return socket_; }
  int metrics_port() const { return metrics_port_; }
  const std::string& dir() const { return dir_; }

  // POSTs /LogDriver.<method>; returns the parsed JSON reply (or {"Err": <transport error>}).
  // A connection per call, unless KeepAlive(true).
  nlohmann::json Call(const std::string& method, const nlohmann::json& body);
  // Calls reuse one connection as long as the plugin keeps it open, as dockerd's plugin client
  // does (Go's http.Transport keeps idle connections). Not thread-safe with Call.
  void KeepAlive(bool on);

  // A container: creates its FIFO, opens it read-write, sends StartLogging. Returns the Err
  // string ("" on success).
  struct Container {
    std::string id;
    std::string name;
    std::string fifo;
    int write_fd = -1;
  };
  std::string StartContainer(Container& c, const std::map<std::string, std::string>& config,
                             const std::map<std::string, std::string>& labels = {});
  // Writes one frame (blocking until the pipe takes it).
  void WriteLine(Container& c, const std::string& line, const std::string& source = "stdout",
                 int64_t time_nano = 0);
  void WriteRaw(Container& c, const std::string& bytes);
  // Writes a line as dockerd does past 16 KiB: partial chunks with a shared id.
  void WritePartialLine(Container& c, const std::string& line, std::size_t chunk,
                        const std::string& source = "stdout");
  // StopLogging while the FIFO is still open, then closes the write end (as the daemon does).
  std::string StopContainer(Container& c);

  // GET /metrics; the value of one series (sum over label sets when `labels` is empty and the
  // family has several), -1 when absent.
  double Metric(const std::string& name, const std::string& labels = "") const;
  std::string MetricsText() const;

  // SIGTERM (or SIGKILL) and wait for exit; returns the exit status or -1 after `timeout`.
  int Signal(int sig, std::chrono::milliseconds timeout);
  // SIGKILL, then start the plugin again as Docker does (same socket, environment and state
  // directory; StartLogging is not sent again). FIFOs stay open on the daemon side.
  void KillAndRestartPlugin();

  std::string Log() const;  // the plugin's stderr so far

 private:
  void Spawn();

  std::string binary_;
  std::vector<std::string> env_;
  std::string dir_;
  std::string socket_;
  pid_t pid_ = -1;
  int metrics_port_ = 0;
  int next_container_ = 0;
  std::vector<std::string> fifos_;
  std::unique_ptr<httplib::Client> client_;  // KeepAlive(true)
};

// A TCP port nobody listens on right now.
int FreePort();

}  // namespace skald::testkit
