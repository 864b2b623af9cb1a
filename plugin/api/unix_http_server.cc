#include "plugin/api/unix_http_server.h"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <system_error>

#include "plugin/common/http_reason_phrase.h"
#include "plugin/common/thread_name.h"

namespace skald {
namespace {

using Clock = UnixHttpServer::Clock;

// poll()'s timeout is an int of milliseconds (a streaming answer waits without a deadline).
constexpr int64_t kMaxPollMs = 24 * 3600 * 1000;

std::string Head(int status, std::string_view content_type, std::string_view length_or_coding,
                 bool close) {
  std::string head = "HTTP/1.1 " + std::to_string(status) + " " + HttpReasonPhrase(status) + "\r\n";
  head.append("Content-Type: ").append(content_type).append("\r\n");
  head.append(length_or_coding).append("\r\n");
  if (close) head.append("Connection: close\r\n");
  head.append("\r\n");
  return head;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

// --- Response ---

bool UnixHttpServer::Response::Write(std::string_view bytes, bool until_stop) {
  const Clock::time_point deadline = Clock::now() + kRequestTimeout;
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      // A streaming answer waits for its reader as long as it takes (`docker logs | less`);
      // another must be taken within the request timeout.
      const Clock::time_point until = until_stop ? Clock::time_point::max() : deadline;
      if (server_.WaitFor(fd_, POLLOUT, until, until_stop)) continue;
    }
    return false;
  }
  return true;
}

void UnixHttpServer::Response::Send(int status, std::string_view content_type,
                                    std::string_view body) {
  if (attempted_) return;
  attempted_ = true;
  std::string bytes =
      Head(status, content_type, "Content-Length: " + std::to_string(body.size()), !keep_alive_);
  bytes.append(body);
  whole_ = Write(bytes, false);
}

bool UnixHttpServer::Response::BeginChunked(int status, std::string_view content_type) {
  if (attempted_) return false;
  attempted_ = true;
  return Write(Head(status, content_type, "Transfer-Encoding: chunked", !keep_alive_), true);
}

bool UnixHttpServer::Response::WriteChunk(std::string_view bytes) {
  if (bytes.empty()) return true;  // an empty chunk would end the answer
  char size[24];
  const auto [end, ec] = std::to_chars(size, size + sizeof(size) - 2, bytes.size(), 16);
  (void)ec;
  std::string_view head(size, static_cast<std::size_t>(end - size));
  return Write(std::string(head) + "\r\n", true) && Write(bytes, true) && Write("\r\n", true);
}

bool UnixHttpServer::Response::EndChunked() {
  whole_ = Write("0\r\n\r\n", true);
  return whole_;
}

// --- Server ---

UnixHttpServer::~UnixHttpServer() {
  Stop();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

UnixHttpServer::ConnectionCount::~ConnectionCount() {
  if (park_fd >= 0) ::close(park_fd);
}

void UnixHttpServer::ConnectionCount::Closed(std::size_t n) {
  absl::MutexLock lock(&mu);
  open -= n;
  ended.SignalAll();
}

void UnixHttpServer::Pause() const {
  pollfd wake{wake_fd_, POLLIN, 0};
  ::poll(&wake, 1, 100);
}

void UnixHttpServer::Handle(const std::string& path, Handler handler) {
  handlers_[path] = std::move(handler);
}

std::string UnixHttpServer::Bind(const std::string& socket_path) {
  socket_path_ = socket_path;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket_path.empty() || socket_path.size() >= sizeof(address.sun_path)) {
    return "the socket path must be 1 to " + std::to_string(sizeof(address.sun_path) - 1) +
           " bytes long";
  }
  std::memcpy(address.sun_path, socket_path.data(), socket_path.size());
  if (listen_fd_ >= 0) return "already bound";
  ::unlink(socket_path.c_str());
  if (wake_fd_ < 0) wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (connections_->park_fd < 0) connections_->park_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (wake_fd_ < 0 || connections_->park_fd < 0 || listen_fd_ < 0 ||
      ::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(listen_fd_, SOMAXCONN) != 0) {
    const std::string why = std::strerror(errno);
    if (listen_fd_ >= 0) ::close(listen_fd_);
    listen_fd_ = -1;
    return why;
  }
  ::chmod(socket_path.c_str(), 0660);
  listening_ = true;
  return "";
}

void UnixHttpServer::Start(const char* thread_name) {
  acceptor_ = std::thread([this, thread_name] {
    SetThreadName(thread_name);
    AcceptLoop();
  });
}

void UnixHttpServer::AcceptLoop() {
  std::vector<int> watched;  // parked connections this loop polls
  std::vector<pollfd> p;
  while (!stopping_) {
    bool at_bound = false;
    {
      absl::MutexLock lock(&connections_->mu);
      watched.insert(watched.end(), connections_->parked.begin(), connections_->parked.end());
      connections_->parked.clear();
      at_bound = connections_->open >= kMaxConnections;
    }
    // At the bound, new connections wait in the listen backlog until one ends (looked at again
    // every 100 ms); parked ones are still served when they speak.
    p.clear();
    p.push_back({at_bound ? -1 : listen_fd_, POLLIN, 0});  // poll skips a negative descriptor
    p.push_back({wake_fd_, POLLIN, 0});
    p.push_back({connections_->park_fd, POLLIN, 0});
    for (int fd : watched) p.push_back({fd, POLLIN, 0});
    if (::poll(p.data(), p.size(), at_bound ? 100 : -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (stopping_) break;
    if (p[2].revents & POLLIN) {
      uint64_t parked = 0;
      [[maybe_unused]] const ssize_t n = ::read(connections_->park_fd, &parked, sizeof(parked));
    }
    // A parked connection with a request (or closed) gets a thread again; when none can be had,
    // it stays parked and is tried again (dockerd may have sent a request on it already).
    std::size_t kept = 0;
    bool retry = false;
    for (std::size_t i = 0; i < watched.size(); ++i) {
      if (p[3 + i].revents != 0 && Spawn(watched[i])) continue;
      if (p[3 + i].revents != 0) retry = true;
      watched[kept++] = watched[i];
    }
    watched.resize(kept);
    if (retry) Pause();
    if ((p[0].revents & POLLIN) == 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      // Out of descriptors (EMFILE, ENFILE) or memory: the connection waits in the backlog;
      // pause instead of spinning on a listener that stays readable.
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) Pause();
      continue;
    }
    {
      absl::MutexLock lock(&connections_->mu);
      ++connections_->open;
    }
    if (!Spawn(fd)) {
      // No thread to be had (a limit met): this new connection is refused, the server goes on.
      ::close(fd);
      connections_->Closed();
    }
  }
  listening_ = false;
  ::close(listen_fd_);
  listen_fd_ = -1;
  // Parked connections end with the acceptor; one parked from now on is closed by its thread.
  {
    absl::MutexLock lock(&connections_->mu);
    connections_->acceptor_done = true;
    watched.insert(watched.end(), connections_->parked.begin(), connections_->parked.end());
    connections_->parked.clear();
  }
  for (int fd : watched) ::close(fd);
  connections_->Closed(watched.size());
}

bool UnixHttpServer::Spawn(int fd) {
  try {
    std::thread([this, fd, count = connections_] {
      bool parked = false;
      try {
        parked = Serve(fd, *count);        // the last use of the server
      } catch (const std::exception& e) {  // memory exhausted: this connection ends (closed)
        spdlog::warn("plugin API: a connection ended: {}", e.what());
      }
      if (!parked) count->Closed();  // else still open, counted, and the acceptor's
    }).detach();
    return true;
  } catch (const std::system_error& e) {
    spdlog::warn("plugin API: no thread to serve a connection: {}", e.what());
    return false;
  }
}

bool UnixHttpServer::Park(ConnectionCount& count, int fd) {
  absl::MutexLock lock(&count.mu);
  if (count.acceptor_done) return false;
  count.parked.push_back(fd);
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(count.park_fd, &one, sizeof(one));
  return true;
}

bool UnixHttpServer::WaitFor(int fd, short events, Clock::time_point deadline,
                             bool until_stop) const {
  for (;;) {
    if (stopping_) {
      if (until_stop) return false;
      deadline = std::min(deadline, Clock::time_point(Clock::duration(stopped_at_.load())) +
                                        std::chrono::duration_cast<Clock::duration>(kStopGrace));
    }
    const Clock::time_point now = Clock::now();
    if (now >= deadline) return false;
    // One poll for the whole wait (an idle connection costs no wake-up); the wake descriptor
    // ends it at once when the server stops.
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    pollfd p[2] = {{fd, events, 0}, {wake_fd_, POLLIN, 0}};
    const int r = ::poll(p, stopping_ ? 1 : 2,
                         static_cast<int>(std::min<int64_t>(left.count(), kMaxPollMs)) + 1);
    if (r < 0 && errno != EINTR) return false;
    if (r > 0 && p[0].revents == 0) continue;  // the wake descriptor: stopping (looked at above)
    if (r > 0 && p[0].revents != 0)
      return (p[0].revents & (POLLERR | POLLNVAL)) == 0 || (p[0].revents & events) != 0;
  }
}

int UnixHttpServer::ReadRequest(int fd, std::string& pending, Request& request, bool& keep_alive) {
  // The head: waited for as long as the connection stays (until a stop) while nothing of it
  // came, then within kRequestTimeout.
  bool begun = !pending.empty();
  Clock::time_point deadline = begun ? Clock::now() + kRequestTimeout : Clock::time_point::max();
  char buf[16 * 1024];
  std::size_t head_end = pending.find("\r\n\r\n");
  while (head_end == std::string::npos) {
    if (pending.size() > kMaxHeadBytes) return 400;
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n > 0) {
      if (!begun) deadline = Clock::now() + kRequestTimeout;
      begun = true;
      // Only the new bytes (and the three before them) can complete the blank line.
      const std::size_t from = pending.size() < 3 ? 0 : pending.size() - 3;
      pending.append(buf, static_cast<std::size_t>(n));
      head_end = pending.find("\r\n\r\n", from);
      continue;
    }
    if (n == 0) return -1;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
    // Stopping ends a connection waiting for its next request, not one inside a request.
    if (!WaitFor(fd, POLLIN, deadline, !begun)) return begun ? 400 : -1;
  }
  if (head_end > kMaxHeadBytes) return 400;

  const std::string_view head(pending.data(), head_end);
  const std::size_t line_end = head.find("\r\n");
  const std::string_view line = head.substr(0, line_end);
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return 400;
  request.method = std::string(line.substr(0, sp1));
  request.path = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
  const std::string_view version = line.substr(sp2 + 1);
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return 400;
  keep_alive = version == "HTTP/1.1";

  std::size_t content_length = 0;
  bool has_length = false;
  std::string_view rest = line_end == std::string_view::npos ? "" : head.substr(line_end + 2);
  while (!rest.empty()) {
    const std::size_t end = rest.find("\r\n");
    const std::string_view field = rest.substr(0, end);
    rest = end == std::string_view::npos ? "" : rest.substr(end + 2);
    const std::size_t colon = field.find(':');
    if (colon == std::string_view::npos || colon == 0) return 400;
    const std::string_view name = field.substr(0, colon);
    const std::string_view value = Trim(field.substr(colon + 1));
    if (EqualsIgnoringCase(name, "Content-Length")) {
      std::size_t parsed = 0;
      const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
      if (ec != std::errc() || ptr != value.data() + value.size() || value.empty() ||
          (has_length && parsed != content_length)) {
        return 400;
      }
      content_length = parsed;
      has_length = true;
    } else if (EqualsIgnoringCase(name, "Transfer-Encoding")) {
      return 501;  // dockerd always sends a Content-Length
    } else if (EqualsIgnoringCase(name, "Connection")) {
      if (EqualsIgnoringCase(value, "close")) keep_alive = false;
      if (EqualsIgnoringCase(value, "keep-alive")) keep_alive = true;
    }
  }
  if (content_length > kMaxBodyBytes) return 413;
  pending.erase(0, head_end + 4);
  while (pending.size() < content_length) {
    const std::size_t want = std::min(sizeof(buf), content_length - pending.size());
    const ssize_t n = ::recv(fd, buf, want, 0);
    if (n > 0) {
      pending.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) return -1;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
    if (!WaitFor(fd, POLLIN, deadline, false)) return 400;
  }
  if (pending.size() == content_length) {
    request.body = std::move(pending);
    pending.clear();
  } else {
    request.body = pending.substr(0, content_length);
    pending.erase(0, content_length);
  }
  return 0;
}

bool UnixHttpServer::Serve(int fd, ConnectionCount& count) {
  SetThreadName("skald-api-conn");
  struct Closer {
    int fd;
    ~Closer() {
      if (fd >= 0) ::close(fd);
    }
  } closer{fd};
  std::string pending;
  for (;;) {
    if (pending.empty()) {
      // Between requests: the next one of a burst comes soon; a connection idle for longer
      // waits in the acceptor's poll, not on a thread.
      pollfd p[2] = {{fd, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
      int r = 0;
      do {
        r = ::poll(p, 2, static_cast<int>(kIdleLinger.count()));
      } while (r < 0 && errno == EINTR);
      if (r > 0 && p[0].revents == 0) break;  // only the wake descriptor: stopping
      if (r == 0) {
        if (!Park(count, fd)) break;
        closer.fd = -1;
        return true;
      }
    }
    Request request;
    bool keep_alive = false;
    const int refused = ReadRequest(fd, pending, request, keep_alive);
    Response response(*this, fd, keep_alive && refused == 0 && !stopping_);
    if (refused > 0) {
      // Answered, then closed: the response was made without keep-alive.
      response.Send(refused, "application/json",
                    std::string("{\"Err\":\"skald: ") + HttpReasonPhrase(refused) + "\"}\n");
      break;
    }
    if (refused < 0) break;
    const auto handler = handlers_.find(request.path);
    if (stopping_) {
      // Read before the stop: the driver behind the handlers is going away.
      response.Send(503, "application/json", "{\"Err\":\"skald: the plugin is stopping\"}\n");
    } else if (handler == handlers_.end()) {
      response.Send(404, "text/plain", "404 page not found\n");
    } else if (request.method != "POST") {
      response.Send(405, "text/plain", "405 method not allowed\n");
    } else {
      try {
        handler->second(request, response);
      } catch (const std::exception& e) {
        spdlog::warn("{}: {}", request.path, e.what());
        response.Send(500, "application/json",
                      nlohmann::json{{"Err", std::string("skald: ") + e.what()}}.dump() + "\n");
      } catch (...) {
        response.Send(500, "application/json", "{\"Err\":\"skald: internal error\"}\n");
      }
      if (!response.attempted_) {
        response.Send(500, "application/json", "{\"Err\":\"skald: no answer\"}\n");
      }
    }
    if (!response.whole_ || !keep_alive || stopping_) break;
  }
  return false;
}

void UnixHttpServer::BeginStop() {
  if (stopping_.load()) return;
  stopped_at_ = Clock::now().time_since_epoch().count();
  if (stopping_.exchange(true)) return;
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof(one));
  }
  if (!socket_path_.empty()) ::unlink(socket_path_.c_str());
}

void UnixHttpServer::Stop() {
  BeginStop();
  if (acceptor_.joinable()) {
    acceptor_.join();  // it closes the listening socket
  } else if (listen_fd_ >= 0) {
    ::close(listen_fd_);  // bound, never started
    listen_fd_ = -1;
    listening_ = false;
  }
  ConnectionCount& count = *connections_;
  absl::MutexLock lock(&count.mu);
  while (count.open > 0) count.ended.Wait(&count.mu);
}

bool UnixHttpServer::Serving() const {
  std::error_code ec;
  return listening_ && !stopping_ && std::filesystem::is_socket(socket_path_, ec);
}

}  // namespace skald
