// LoopbackServer: what the test peers that are not HTTP servers share (the SOCKS5 and https
// proxies): a listening socket on 127.0.0.1 at a port the system chooses, a thread per accepted
// connection, and a Stop() that ends them all: it shuts every tracked socket down (the accepted
// ones and any a connection adds, such as its upstream) and joins the threads.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace skald::testkit {

class LoopbackServer {
 public:
  LoopbackServer() = default;
  ~LoopbackServer() { Stop(); }
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;

  // Listens; `serve` runs on its own thread for each accepted socket (closed after Stop()).
  bool Start(std::function<void(int fd)> serve);
  void Stop();

  int port() const { return port_; }
  bool stopping() const { return stopping_.load(); }
  // Another socket for Stop() to shut down and close.
  void Track(int fd);

 private:
  void AcceptLoop();

  std::function<void(int)> serve_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::vector<int> open_fds_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

// A socket connected to 127.0.0.1:port, or -1.
int ConnectLoopback(int port);
// Sends all of `data` (without SIGPIPE); false when the peer is gone.
bool SendAll(int fd, const char* data, std::size_t n);

}  // namespace skald::testkit
