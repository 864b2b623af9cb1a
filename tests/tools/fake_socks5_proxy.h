// FakeSocks5Proxy: a SOCKS5 proxy on 127.0.0.1 (RFC 1928 CONNECT, RFC 1929 user name and
// password when asked) that connects every request to 127.0.0.1 at the requested port, whatever
// the requested host, and relays the bytes both ways. It records what each CONNECT asked for,
// so a test can see the name the client let the proxy resolve. Start() before use; Stop() (or
// the destructor) ends every connection.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "tests/tools/loopback_server.h"

namespace skald::testkit {

class FakeSocks5Proxy {
 public:
  struct Options {
    std::string user, password;  // non-empty: only this user name and password are let in
    int refuse_with = 0;         // non-zero: every CONNECT is answered with this reply code
  };

  FakeSocks5Proxy() = default;
  FakeSocks5Proxy(const FakeSocks5Proxy&) = delete;
  FakeSocks5Proxy& operator=(const FakeSocks5Proxy&) = delete;

  bool Start(Options options);
  void Stop() { server_.Stop(); }

  int port() const { return server_.port(); }
  // "host:port" of every CONNECT, in order; an address as its text (IPv6 in brackets).
  std::vector<std::string> Connects() const;
  uint64_t RefusedCredentials() const { return refused_credentials_.load(); }

 private:
  void Serve(int fd);
  bool Handshake(int fd, int* upstream);

  Options options_;
  std::atomic<uint64_t> refused_credentials_{0};
  mutable std::mutex mu_;
  std::vector<std::string> connects_;
  LoopbackServer server_;  // last: stopped (its threads joined) before the rest goes
};

}  // namespace skald::testkit
