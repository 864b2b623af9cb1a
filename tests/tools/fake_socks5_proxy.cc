#include "tests/tools/fake_socks5_proxy.h"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace skald::testkit {

namespace {

bool ReadExact(int fd, void* into, std::size_t n) {
  auto* p = static_cast<char*>(into);
  while (n > 0) {
    const ssize_t got = ::recv(fd, p, n, 0);
    if (got <= 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

bool WriteAll(int fd, const std::string& bytes) { return SendAll(fd, bytes.data(), bytes.size()); }

// Copies bytes both ways until either side closes.
void Relay(int a, int b) {
  char buf[16384];
  for (;;) {
    pollfd p[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
    if (::poll(p, 2, 200) < 0) return;
    for (int k = 0; k < 2; ++k) {
      if ((p[k].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = ::recv(p[k].fd, buf, sizeof(buf), 0);
      if (n <= 0) return;
      if (!WriteAll(k == 0 ? b : a, std::string(buf, static_cast<std::size_t>(n)))) return;
    }
  }
}

}  // namespace

bool FakeSocks5Proxy::Start(Options options) {
  options_ = std::move(options);
  return server_.Start([this](int fd) { Serve(fd); });
}

std::vector<std::string> FakeSocks5Proxy::Connects() const {
  std::lock_guard<std::mutex> lock(mu_);
  return connects_;
}

void FakeSocks5Proxy::Serve(int fd) {
  int upstream = -1;
  const bool open = Handshake(fd, &upstream);
  if (upstream >= 0) server_.Track(upstream);
  if (open) Relay(fd, upstream);
  ::shutdown(fd, SHUT_RDWR);
  if (upstream >= 0) ::shutdown(upstream, SHUT_RDWR);
}

bool FakeSocks5Proxy::Handshake(int fd, int* upstream) {
  unsigned char head[2];
  if (!ReadExact(fd, head, 2) || head[0] != 5) return false;
  std::string methods(head[1], '\0');
  if (!ReadExact(fd, methods.data(), methods.size())) return false;
  const bool want_auth = !options_.user.empty();
  const char method = want_auth ? 2 : 0;
  if (methods.find(method) == std::string::npos) {
    WriteAll(fd, std::string{5, '\xFF'});
    return false;
  }
  if (!WriteAll(fd, std::string{5, method})) return false;
  if (want_auth) {
    unsigned char version_and_length[2];
    if (!ReadExact(fd, version_and_length, 2)) return false;
    std::string user(version_and_length[1], '\0');
    unsigned char plen;
    if (!ReadExact(fd, user.data(), user.size()) || !ReadExact(fd, &plen, 1)) return false;
    std::string password(plen, '\0');
    if (!ReadExact(fd, password.data(), password.size())) return false;
    const bool good = user == options_.user && password == options_.password;
    if (!good) ++refused_credentials_;
    if (!WriteAll(fd, std::string{1, good ? '\0' : '\1'}) || !good) return false;
  }
  unsigned char request[4];
  if (!ReadExact(fd, request, 4) || request[0] != 5 || request[1] != 1) return false;
  std::string host;
  if (request[3] == 1 || request[3] == 4) {
    unsigned char raw[16];
    const int family = request[3] == 1 ? AF_INET : AF_INET6;
    if (!ReadExact(fd, raw, family == AF_INET ? 4 : 16)) return false;
    char text[INET6_ADDRSTRLEN];
    ::inet_ntop(family, raw, text, sizeof(text));
    host = family == AF_INET ? text : "[" + std::string(text) + "]";
  } else if (request[3] == 3) {
    unsigned char length;
    if (!ReadExact(fd, &length, 1)) return false;
    host.resize(length);
    if (!ReadExact(fd, host.data(), length)) return false;
  } else {
    return false;
  }
  unsigned char port_bytes[2];
  if (!ReadExact(fd, port_bytes, 2)) return false;
  const int port = port_bytes[0] << 8 | port_bytes[1];
  {
    std::lock_guard<std::mutex> lock(mu_);
    connects_.push_back(host + ":" + std::to_string(port));
  }
  int code = options_.refuse_with;
  if (code == 0) {
    *upstream = ConnectLoopback(port);
    if (*upstream < 0) code = 5;
  }
  // The reply's bound address: a name, to make the client read one of that shape.
  std::string reply{5, static_cast<char>(code), 0, 3, 9};
  reply += "proxy.lan";
  reply += std::string{0, 0};
  return WriteAll(fd, reply) && code == 0;
}

}  // namespace skald::testkit
