// drain_plugin: a Docker logging plugin that does nothing but read its FIFOs to the end and
// throw the bytes away. No journal, no decoding, no Loki. docker_bench runs it beside skald
// (as the managed plugin `skald-bench-drain`, tests/bench/drain-plugin/config.json) to measure
// in the same run the floor any logging plugin has: how long a container that logs through a
// plugin's FIFO takes when the plugin costs nothing, against which skald's figure is printed.
//
//   drain-plugin SOCKET_PATH [PIPE_BYTES COALESCE_BYTES COALESCE_MS]
//
// It reads the way skald's reader does, so that the distance is what skald does beyond
// reading: the FIFO enlarged to PIPE_BYTES (F_SETPIPE_SZ, best effort), and after a read that
// moved less than COALESCE_BYTES a pause of COALESCE_MS, so that one wake-up moves many of
// dockerd's one-frame writes (0 0 0: the pipe as dockerd made it, a read per wake-up).
//
// Answers Plugin.Activate, LogDriver.Capabilities (no ReadLogs), StartLogging (a thread opens
// the FIFO and reads it until dockerd closes its end) and StopLogging (the reader ends at the
// FIFO's end; one still waiting to open it is released). Linked statically: its rootfs holds only
// itself.
#include <fcntl.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t kMaxRequestBytes = 1 << 20;

struct Pacing {
  int pipe_bytes = 0;
  std::size_t coalesce_bytes = 0;
  int coalesce_ms = 0;
};
Pacing pacing;  // set once in main, before the first connection

// Reads `fifo` to its end. The open blocks until dockerd has its write end open.
void Drain(const std::string& fifo) {
  const int fd = ::open(fifo.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::fprintf(stderr, "drain-plugin: cannot open %s: %s\n", fifo.c_str(), std::strerror(errno));
    return;
  }
  if (pacing.pipe_bytes > 0) ::fcntl(fd, F_SETPIPE_SZ, pacing.pipe_bytes);
  std::vector<char> buffer(std::max<std::size_t>(64 * 1024, pacing.pipe_bytes));
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (static_cast<std::size_t>(n) < pacing.coalesce_bytes) {
      std::this_thread::sleep_for(std::chrono::milliseconds(pacing.coalesce_ms));
    }
  }
  ::close(fd);
}

// The answer to a POST of `body` to `path`.
std::string Answer(const std::string& path, const std::string& body) {
  if (path == "/Plugin.Activate") return R"({"Implements":["LogDriver"]})";
  if (path == "/LogDriver.Capabilities") return R"({"Cap":{"ReadLogs":false}})";
  if (path == "/LogDriver.StartLogging") {
    const nlohmann::json request = nlohmann::json::parse(body, nullptr, false);
    if (!request.is_object() || !request.contains("File") || !request["File"].is_string()) {
      return R"({"Err":"drain-plugin: StartLogging without a File"})";
    }
    std::thread(Drain, request["File"].get<std::string>()).detach();
    return R"({"Err":""})";
  }
  if (path == "/LogDriver.StopLogging") {
    // A reader still blocked opening the FIFO (dockerd gave up on the container before it
    // opened its end) opens now and reads the end of the FIFO at once.
    const nlohmann::json request = nlohmann::json::parse(body, nullptr, false);
    if (request.is_object() && request.contains("File") && request["File"].is_string()) {
      const int fd =
          ::open(request["File"].get<std::string>().c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd >= 0) ::close(fd);
    }
    return R"({"Err":""})";
  }
  return R"({"Err":"drain-plugin: not implemented"})";
}

bool WriteAll(int fd, const std::string& data) {
  for (std::size_t done = 0; done < data.size();) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// HTTP/1.1 requests with a Content-Length body (dockerd's plugin client sends no other kind),
// one after another on the connection, until the peer closes it.
void Serve(int conn) {
  std::string in;
  char chunk[4096];
  auto read_more = [&] {
    const ssize_t n = ::read(conn, chunk, sizeof chunk);
    if (n <= 0 || in.size() + static_cast<std::size_t>(n) > kMaxRequestBytes) return false;
    in.append(chunk, static_cast<std::size_t>(n));
    return true;
  };
  for (;;) {
    std::size_t head_end;
    while ((head_end = in.find("\r\n\r\n")) == std::string::npos) {
      if (!read_more()) return (void)::close(conn);
    }
    const std::string head = in.substr(0, head_end);
    std::size_t length = 0;
    for (std::size_t at = head.find("\r\n"); at != std::string::npos;
         at = head.find("\r\n", at + 2)) {
      constexpr char kLength[] = "content-length:";
      if (strncasecmp(head.c_str() + at + 2, kLength, sizeof kLength - 1) == 0) {
        length = std::strtoul(head.c_str() + at + 2 + sizeof kLength - 1, nullptr, 10);
      }
    }
    while (in.size() < head_end + 4 + length) {
      if (!read_more()) return (void)::close(conn);
    }
    const std::size_t path_at = head.find(' ') + 1;
    const std::string path = head.substr(path_at, head.find(' ', path_at) - path_at);
    const std::string answer = Answer(path, in.substr(head_end + 4, length));
    in.erase(0, head_end + 4 + length);
    const std::string response =
        "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.plugins.v1+json\r\n"
        "Content-Length: " +
        std::to_string(answer.size()) + "\r\n\r\n" + answer;
    if (!WriteAll(conn, response)) return (void)::close(conn);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // a connection dockerd closed must not end the plugin
  if (argc != 2 && argc != 5) {
    std::fprintf(stderr,
                 "usage: drain-plugin SOCKET_PATH [PIPE_BYTES COALESCE_BYTES COALESCE_MS]\n");
    return 2;
  }
  const std::string socket_path = argv[1];
  if (argc == 5) {
    pacing.pipe_bytes = std::atoi(argv[2]);
    pacing.coalesce_bytes = std::strtoul(argv[3], nullptr, 10);
    pacing.coalesce_ms = std::atoi(argv[4]);
  }
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(socket_path).parent_path(), ec);
  std::filesystem::remove(socket_path, ec);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) {
    std::fprintf(stderr, "drain-plugin: socket path too long: %s\n", socket_path.c_str());
    return 2;
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener, 64) != 0) {
    std::fprintf(stderr, "drain-plugin: cannot listen on %s: %s\n", socket_path.c_str(),
                 std::strerror(errno));
    return 1;
  }
  for (;;) {
    const int conn = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn >= 0) {
      std::thread(Serve, conn).detach();
    } else if (errno != EINTR && errno != ECONNABORTED) {
      std::fprintf(stderr, "drain-plugin: accept: %s\n", std::strerror(errno));
      return 1;
    }
  }
}
