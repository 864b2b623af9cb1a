#include "plugin/metrics/metrics_http_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <list>
#include <vector>

#include "plugin/common/http_reason_phrase.h"
#include "plugin/common/thread_name.h"
#include "plugin/metrics/metrics.h"

namespace skald {
namespace {

using Clock = std::chrono::steady_clock;

// How long an answered connection is read (and what comes dropped) before it is closed.
constexpr std::chrono::milliseconds kDrainTime{1'000};

std::string Response(int status, const std::string& content_type, const std::string& body,
                     bool head_only) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + HttpReasonPhrase(status) +
                    "\r\nContent-Type: " + content_type +
                    "\r\nContent-Length: " + std::to_string(body.size()) +
                    "\r\nConnection: close\r\n\r\n";
  if (!head_only) out += body;
  return out;
}

std::string Plain(int status, const std::string& text) {
  return Response(status, "text/plain; charset=utf-8", text + "\n", false);
}

// Where the request head ends (just past its blank line), or npos.
std::size_t HeadEnd(const std::string& in) {
  const std::size_t crlf = in.find("\r\n\r\n");
  const std::size_t lf = in.find("\n\n");
  if (crlf == std::string::npos && lf == std::string::npos) return std::string::npos;
  if (lf == std::string::npos || (crlf != std::string::npos && crlf < lf)) return crlf + 4;
  return lf + 2;
}

}  // namespace

struct MetricsHttpServer::Connection {
  int fd = -1;
  std::string in;
  std::string out;
  std::size_t sent = 0;
  bool answering = false;
  // Answered: what the client still sends (a body that was refused) is read and dropped for a
  // moment before the close, so that the close does not reset the answer away.
  bool draining = false;
  Clock::time_point deadline;
};

MetricsHttpServer::MetricsHttpServer(MetricsRegistry& registry, std::function<void()> before_scrape,
                                     std::function<HealthReport()> health)
    : registry_(registry), before_scrape_(std::move(before_scrape)), health_(std::move(health)) {}

MetricsHttpServer::~MetricsHttpServer() { Stop(); }

namespace {

// A listening socket (non-blocking) on METRICS_ADDR `address` (HOST:PORT, [IPv6]:PORT, :PORT
// for every address); `host` is set to its host part. -1 when it cannot be had (logged: the
// metrics are off then).
int ListenOn(const std::string& address, std::string& host) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    spdlog::error("METRICS_ADDR '{}' is not HOST:PORT; metrics are off", address);
    return -1;
  }
  host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string port = address.substr(colon + 1);
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      std::stoi(port) > 65535) {
    spdlog::error("METRICS_ADDR '{}' has no valid port; metrics are off", address);
    return -1;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found) != 0 ||
      found == nullptr) {
    spdlog::error("METRICS_ADDR '{}': cannot resolve '{}'; metrics are off", address, host);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 64) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) {
    spdlog::error(
        "cannot listen for metrics on {} (METRICS_ADDR): the port is taken, perhaps by another "
        "copy of the plugin (give each copy its own METRICS_ADDR); metrics are off",
        address);
    return -1;
  }
  return fd;
}

}  // namespace

bool MetricsHttpServer::Start(const std::string& address) {
  std::string host;
  const int fd = ListenOn(address, host);
  if (fd < 0) return false;
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) {
    ::close(fd);
    spdlog::error("metrics: eventfd: {}; metrics are off", std::strerror(errno));
    return false;
  }
  listen_fd_ = fd;
  thread_ = std::thread([this] {
    SetThreadName("skald-metrics");
    Serve();
  });
  spdlog::info("metrics on http://{}:{}/metrics{}", host, port_,
               health_ ? ", health on /healthz" : "");
  return true;
}

void MetricsHttpServer::Stop() {
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t w = ::write(wake_fd_, &one, sizeof(one));
  }
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
  listen_fd_ = wake_fd_ = -1;
}

std::string MetricsHttpServer::Answer(const std::string& head) {
  const std::size_t line_end = head.find_first_of("\r\n");
  const std::string line = head.substr(0, line_end);
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string::npos || line.compare(sp2 + 1, 7, "HTTP/1.") != 0) {
    return Plain(400, "not an HTTP/1.x request");
  }
  const std::string method = line.substr(0, sp1);
  std::string path = line.substr(sp1 + 1, sp2 - sp1 - 1);
  path = path.substr(0, path.find('?'));
  // A body is never read: any header announcing one refuses the request.
  for (std::size_t at = line_end; at != std::string::npos && at < head.size();) {
    const std::size_t start = head.find_first_not_of("\r\n", at);
    if (start == std::string::npos) break;
    const std::size_t end = head.find_first_of("\r\n", start);
    const std::string header = head.substr(start, end - start);
    at = end;
    const std::size_t colon = header.find(':');
    if (colon == std::string::npos) return Plain(400, "a malformed header line");
    const std::string name = header.substr(0, colon);
    std::string value = header.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    if (strcasecmp(name.c_str(), "Transfer-Encoding") == 0 ||
        strcasecmp(name.c_str(), "Content-Encoding") == 0 ||
        (strcasecmp(name.c_str(), "Content-Length") == 0 &&
         value.find_first_not_of("0 \t") != std::string::npos)) {
      return Plain(413, "this endpoint takes no request body");
    }
  }
  const bool head_only = method == "HEAD";
  if (method != "GET" && !head_only) return Plain(405, "only GET and HEAD");
  if (path == "/metrics") {
    if (before_scrape_) before_scrape_();
    return Response(200, "text/plain; version=0.0.4", registry_.RenderPrometheus(), head_only);
  }
  if (path == "/healthz" && health_) {
    const HealthReport report = health_();
    return Response(report.HttpStatus(), "application/json", report.Json(), head_only);
  }
  return Plain(404, "not found: /metrics" + std::string(health_ ? " and /healthz" : "") +
                        " are served here");
}

void MetricsHttpServer::Serve() {
  std::list<Connection> connections;  // oldest first
  std::vector<pollfd> fds;
  std::vector<Connection*> polled;
  for (;;) {
    const auto now = Clock::now();
    // Overdue: a request that did not arrive, or an answer not taken, in time.
    for (auto it = connections.begin(); it != connections.end();) {
      if (it->deadline <= now) {
        ::close(it->fd);
        it = connections.erase(it);
      } else {
        ++it;
      }
    }
    fds.clear();
    polled.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    int timeout = -1;
    for (Connection& c : connections) {
      fds.push_back({c.fd, static_cast<short>(c.answering && !c.draining ? POLLOUT : POLLIN), 0});
      polled.push_back(&c);
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(c.deadline - now).count();
      timeout = timeout < 0 ? static_cast<int>(left) : std::min(timeout, static_cast<int>(left));
    }
    if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) break;  // Stop()
    for (std::size_t i = 0; i < polled.size(); ++i) {
      if (fds[i + 2].revents != 0) Step(*polled[i]);
    }
    if (fds[1].revents != 0) AcceptWaiting(connections);
  }
  for (Connection& c : connections) ::close(c.fd);
}

void MetricsHttpServer::Step(Connection& c) {
  if (c.draining) {
    char buf[16384];
    const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      c.deadline = Clock::time_point::min();
    }
    return;
  }
  if (!c.answering) {
    char buf[4096];
    const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      c.deadline = Clock::time_point::min();  // closed at the next round
      return;
    }
    if (n < 0) return;
    c.in.append(buf, static_cast<std::size_t>(n));
    const std::size_t end = HeadEnd(c.in);
    if (end == std::string::npos && c.in.size() < kMaxRequestBytes) return;
    c.out = end == std::string::npos || end > kMaxRequestBytes
                ? Plain(431, "a request head holds at most " + std::to_string(kMaxRequestBytes) +
                                 " bytes")
                : Answer(c.in.substr(0, end));
    c.in.clear();
    c.in.shrink_to_fit();
    c.answering = true;
    c.deadline = Clock::now() + kRequestTimeout;
  }
  // Answer as far as the socket takes it; the rest when it is writable again.
  while (c.sent < c.out.size()) {
    const ssize_t w = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (errno != EAGAIN) c.deadline = Clock::time_point::min();
      break;
    }
    c.sent += static_cast<std::size_t>(w);
  }
  if (c.sent == c.out.size()) {
    ::shutdown(c.fd, SHUT_WR);
    c.out.clear();
    c.out.shrink_to_fit();
    c.draining = true;
    c.deadline = std::min(c.deadline, Clock::now() + kDrainTime);
  }
}

void MetricsHttpServer::AcceptWaiting(std::list<Connection>& connections) {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    if (connections.size() >= kMaxConnections) {
      // The newest request is always heard.
      auto oldest = std::find_if(connections.begin(), connections.end(),
                                 [](const Connection& c) { return !c.answering; });
      if (oldest == connections.end()) oldest = connections.begin();
      ::close(oldest->fd);
      connections.erase(oldest);
    }
    Connection c;
    c.fd = fd;
    c.deadline = Clock::now() + kRequestTimeout;
    connections.push_back(std::move(c));
  }
}

}  // namespace skald
