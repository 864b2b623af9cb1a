#include "tests/tools/scripted_http_peer.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace skald::testkit {
namespace {

constexpr int kPollMs = 20;  // how often blocked loops look at the stop flag

// Content-Length of a request head, 0 when absent.
std::size_t ContentLength(const std::string& head) {
  std::string lower(head);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::size_t at = lower.find("\r\ncontent-length:");
  if (at == std::string::npos) return 0;
  return std::strtoull(lower.c_str() + at + 17, nullptr, 10);
}

}  // namespace

ScriptedHttpPeer::~ScriptedHttpPeer() { Stop(); }

bool ScriptedHttpPeer::Start(Script script) {
  script_ = std::move(script);
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_fd_, 16) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
    return false;
  }
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
  return true;
}

void ScriptedHttpPeer::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (acceptor_.joinable()) acceptor_.join();
  for (std::thread& t : connections_) t.join();
  connections_.clear();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  listen_fd_ = -1;
}

std::string ScriptedHttpPeer::PushUrl() const {
  return "http://127.0.0.1:" + std::to_string(port_) + "/loki/api/v1/push";
}

bool ScriptedHttpPeer::Wait(std::chrono::milliseconds d) {
  std::unique_lock lock(mu_);
  return !stop_cv_.wait_for(lock, d, [this] { return stopping_; });
}

void ScriptedHttpPeer::AcceptLoop() {
  while (Wait(std::chrono::milliseconds(0))) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, kPollMs) <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::lock_guard lock(mu_);
    connections_.emplace_back([this, fd] { Serve(fd); });
  }
}

void ScriptedHttpPeer::Serve(int fd) {
  if (script_.answer_at_connect) {
    ++requests_;
    for (std::size_t at = 0; at < script_.answer.size();) {
      const ssize_t w =
          ::send(fd, script_.answer.data() + at,
                 std::min<std::size_t>(script_.answer.size() - at, 64 * 1024), MSG_NOSIGNAL);
      if (w <= 0) break;
      bytes_written_ += static_cast<uint64_t>(w);
      at += static_cast<std::size_t>(w);
    }
    ::close(fd);
    return;
  }
  std::string in;
  bool open = true;
  while (open && Wait(std::chrono::milliseconds(0))) {
    // One request: its head, then Content-Length bytes of body.
    std::size_t head_end = std::string::npos;
    while ((head_end = in.find("\r\n\r\n")) == std::string::npos ||
           (!script_.answer_after_head &&
            in.size() < head_end + 4 + ContentLength(in.substr(0, head_end + 2)))) {
      pollfd p{fd, POLLIN, 0};
      if (!Wait(std::chrono::milliseconds(0))) break;
      if (::poll(&p, 1, kPollMs) <= 0) continue;
      char buf[64 * 1024];
      const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) {
        open = false;
        break;
      }
      in.append(buf, static_cast<std::size_t>(n));
    }
    if (!open || head_end == std::string::npos) break;
    if (script_.answer_after_head) {
      in.clear();  // the body is not read; the connection closes after the answer
    } else {
      in.erase(0, head_end + 4 + ContentLength(in.substr(0, head_end + 2)));
    }
    const uint64_t request = ++requests_;
    const std::string& answer =
        script_.times > 0 && request > script_.times ? script_.mended : script_.answer;
    if (script_.drip.count() > 0) {
      for (char c : answer) {
        if (::send(fd, &c, 1, MSG_NOSIGNAL) != 1 || !Wait(script_.drip)) {
          open = false;
          break;
        }
        ++bytes_written_;
      }
    } else {
      // In pieces, so that BytesWritten() shows how far a client that stopped reading let it.
      for (std::size_t at = 0; at < answer.size() && open;) {
        const std::size_t n = std::min<std::size_t>(answer.size() - at, 64 * 1024);
        const ssize_t w = ::send(fd, answer.data() + at, n, MSG_NOSIGNAL);
        if (w <= 0) {
          open = false;
          break;
        }
        bytes_written_ += static_cast<uint64_t>(w);
        at += static_cast<std::size_t>(w);
      }
    }
    // How the scripted answer ends its connection; a mended one keeps it.
    const bool scripted = script_.times == 0 || request <= script_.times;
    if (scripted && script_.reset_after) {
      const linger reset{1, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
      open = false;
    }
    if (scripted && (script_.close_after || script_.answer_after_head)) open = false;
  }
  ::close(fd);
}

}  // namespace skald::testkit
