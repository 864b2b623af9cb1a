#include "tests/tools/fake_https_proxy.h"

#include <openssl/ssl.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace skald::testkit {
namespace {

constexpr std::size_t kMaxHead = 16 * 1024;

// The port of "host:port" or of "http://host:port/path" (0 when there is none).
int PortOf(const std::string& target) {
  std::string rest = target;
  if (const std::size_t scheme = rest.find("://"); scheme != std::string::npos) {
    rest = rest.substr(scheme + 3);
    rest = rest.substr(0, rest.find('/'));
  }
  const std::size_t colon = rest.rfind(':');
  return colon == std::string::npos ? 0 : std::atoi(rest.c_str() + colon + 1);
}

}  // namespace

FakeHttpsProxy::~FakeHttpsProxy() { Stop(); }

bool FakeHttpsProxy::Start(const std::string& cert_file, const std::string& key_file) {
  ctx_ = SSL_CTX_new(TLS_server_method());
  if (ctx_ == nullptr || SSL_CTX_use_certificate_chain_file(ctx_, cert_file.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(ctx_, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return false;
  }
  return server_.Start([this](int fd) { Serve(fd); });
}

void FakeHttpsProxy::Stop() {
  server_.Stop();
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
  ctx_ = nullptr;
}

std::vector<std::string> FakeHttpsProxy::RequestLines() const {
  std::lock_guard<std::mutex> lock(mu_);
  return request_lines_;
}

std::vector<std::string> FakeHttpsProxy::ProxyAuthorizations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return authorizations_;
}

void FakeHttpsProxy::Serve(int fd) {
  SSL* tls = SSL_new(ctx_);
  SSL_set_fd(tls, fd);
  int upstream = -1;
  std::string head;
  if (SSL_accept(tls) == 1) {
    ++handshakes_;
    // The request head, read a byte at a time so that nothing after it is taken.
    char c;
    while (head.size() < kMaxHead && head.find("\r\n\r\n") == std::string::npos &&
           SSL_read(tls, &c, 1) == 1) {
      head += c;
    }
  }
  if (head.find("\r\n\r\n") != std::string::npos) {
    const std::string line = head.substr(0, head.find("\r\n"));
    std::string authorization;
    for (std::size_t at = head.find("\r\n"); at != std::string::npos && at + 2 < head.size();) {
      const std::size_t end = head.find("\r\n", at + 2);
      const std::string header = head.substr(at + 2, end - at - 2);
      if (strncasecmp(header.c_str(), "Proxy-Authorization: ", 21) == 0) {
        authorization = header.substr(21);
      }
      at = end;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      request_lines_.push_back(line);
      authorizations_.push_back(authorization);
    }
    const std::size_t sp1 = line.find(' ');
    const std::size_t sp2 = line.find(' ', sp1 + 1);
    const std::string method = line.substr(0, sp1);
    const std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    upstream = ConnectLoopback(PortOf(target));
    if (upstream >= 0) {
      server_.Track(upstream);
      const bool started =
          method == "CONNECT"
              ? SSL_write(tls, "HTTP/1.1 200 Connection established\r\n\r\n", 39) == 39
              : SendAll(upstream, head.data(), head.size());
      if (started && !(method == "CONNECT" && close_tunnels_.load())) Relay(tls, fd, upstream);
    } else {
      SSL_write(tls, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n", 47);
    }
  }
  SSL_free(tls);
  ::shutdown(fd, SHUT_RDWR);
  if (upstream >= 0) ::shutdown(upstream, SHUT_RDWR);
}

// Copies bytes both ways, TLS on the client's side, until either side closes.
void FakeHttpsProxy::Relay(SSL* tls, int fd, int upstream) {
  char buf[16384];
  for (;;) {
    pollfd p[2] = {{fd, POLLIN, 0}, {upstream, POLLIN, 0}};
    if (SSL_pending(tls) == 0 && ::poll(p, 2, 200) < 0) return;
    if (SSL_pending(tls) > 0 || (p[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const int n = SSL_read(tls, buf, sizeof(buf));
      if (n <= 0 || !SendAll(upstream, buf, static_cast<std::size_t>(n))) return;
    }
    if ((p[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const ssize_t n = ::recv(upstream, buf, sizeof(buf), 0);
      if (n <= 0 || SSL_write(tls, buf, static_cast<int>(n)) != n) return;
    }
    if (server_.stopping()) return;
  }
}

}  // namespace skald::testkit
