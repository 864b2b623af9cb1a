// FakeHttpsProxy: an https proxy on 127.0.0.1 (TLS to the proxy itself, with the given
// certificate) that serves both of a client's ways through it: CONNECT host:port (answered 200,
// then the bytes relayed, e.g. the endpoint's own TLS inside the proxy's) and a request in the
// absolute form (http://host:port/path, passed on as it came). Either way it connects to
// 127.0.0.1 at the requested port, whatever the host. It records each request line and the
// Proxy-Authorization sent with it. Start() before use; Stop() (or the destructor) ends every
// connection.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "tests/tools/loopback_server.h"

using SSL_CTX = struct ssl_ctx_st;
using SSL = struct ssl_st;

namespace skald::testkit {

class FakeHttpsProxy {
 public:
  FakeHttpsProxy() = default;
  ~FakeHttpsProxy();
  FakeHttpsProxy(const FakeHttpsProxy&) = delete;
  FakeHttpsProxy& operator=(const FakeHttpsProxy&) = delete;

  // Listens with the certificate and key in these PEM files; false when they do not load.
  bool Start(const std::string& cert_file, const std::string& key_file);
  void Stop();

  int port() const { return server_.port(); }
  // The first line of each request the proxy got (CONNECT's or the absolute form's), in order.
  std::vector<std::string> RequestLines() const;
  // The Proxy-Authorization value of each of those requests ("" when none), in the same order.
  std::vector<std::string> ProxyAuthorizations() const;
  // TLS handshakes that completed.
  int Handshakes() const { return handshakes_.load(); }
  // From now on, answer CONNECT with 200 and then close (as a proxy that cannot reach the host).
  void CloseTunnelsAtOnce() { close_tunnels_.store(true); }

 private:
  void Serve(int fd);
  void Relay(SSL* tls, int fd, int upstream);

  SSL_CTX* ctx_ = nullptr;
  std::atomic<int> handshakes_{0};
  std::atomic<bool> close_tunnels_{false};
  mutable std::mutex mu_;
  std::vector<std::string> request_lines_;
  std::vector<std::string> authorizations_;
  LoopbackServer server_;  // last: stopped (its threads joined) before the rest goes
};

}  // namespace skald::testkit
