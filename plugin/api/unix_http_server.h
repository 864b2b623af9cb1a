// UnixHttpServer: the HTTP/1.1 server under the plugin API, on a unix socket, written for what
// dockerd sends (Go's net/http client): POST requests with a Content-Length body over kept
// connections. A thread per busy connection, so a slow StartLogging or a `docker logs -f`
// stream holding its connection never delays the others. An idle connection is kept, as Go's
// own server keeps it: closing it could cross a request dockerd is sending on it, which Go's
// client does not send again (a POST); dockerd keeps at most two idle. Its thread waits
// kIdleLinger for the next request (a container's start brings several), then parks the
// connection with the accepting thread, whose poll watches it, and ends: an idle plugin holds
// no thread per connection, and a parked connection costs no wake-up until it speaks again.
//
// Bounded before anything parses it: a request head of at most kMaxHeadBytes, a body of at most
// kMaxBodyBytes (413), both within kRequestTimeout once the request began; at most
// kMaxConnections at once (more wait in the listen backlog until one ends). Only dockerd (root)
// can reach the socket (mode 0660 in the plugin's rootfs). A request the server cannot read is
// answered 400 (or 413, 501) and its connection closed; a handler's exception is answered 500
// with {"Err": what}. No library parses the bytes, and none is linked for it: the plugin's
// process loads no HTTP library (cpp-httplib's initialisation alone was 2.4 MB of its idle RSS).
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace skald {

class UnixHttpServer {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::size_t kMaxHeadBytes = 16 * 1024;
  // StartLogging carries the container's environment and labels: generous, but bounded.
  static constexpr std::size_t kMaxBodyBytes = 8 * 1024 * 1024;
  static constexpr std::chrono::seconds kRequestTimeout{30};
  // After BeginStop(), how long a request being read or a plain answer being written may still
  // take (a streaming answer ends at once).
  static constexpr std::chrono::seconds kStopGrace{2};
  static constexpr std::size_t kMaxConnections = 256;  // busy and parked
  static constexpr std::chrono::milliseconds kIdleLinger{1000};

  struct Request {
    std::string method;
    std::string path;
    std::string body;
  };

  // One request's answer. Either Send() once, or BeginChunked(), WriteChunk()s and
  // EndChunked(); a chunked answer not ended closes the connection (the client sees it cut).
  class Response {
   public:
    void Send(int status, std::string_view content_type, std::string_view body);
    bool BeginChunked(int status, std::string_view content_type);
    // Waits for room as long as the reader needs, unless the server stops; false when the
    // client is gone or the server stops.
    bool WriteChunk(std::string_view bytes);
    bool EndChunked();

   private:
    friend class UnixHttpServer;
    Response(UnixHttpServer& server, int fd, bool keep_alive)
        : server_(server), fd_(fd), keep_alive_(keep_alive) {}
    // Writes all of `bytes`; `until_stop`: give up when the server stops.
    bool Write(std::string_view bytes, bool until_stop);

    UnixHttpServer& server_;
    int fd_;
    const bool keep_alive_;   // the client keeps the connection (else the answer says close)
    bool attempted_ = false;  // an answer was begun (written or not)
    bool whole_ = false;      // the answer ended as HTTP frames it (the connection may be kept)
  };

  using Handler = std::function<void(const Request&, Response&)>;

  UnixHttpServer() = default;
  ~UnixHttpServer();
  UnixHttpServer(const UnixHttpServer&) = delete;
  UnixHttpServer& operator=(const UnixHttpServer&) = delete;

  // Answers POST `path` (before Start()).
  void Handle(const std::string& path, Handler handler);
  // Removes a stale socket file, binds and listens (mode 0660). Returns why not, or "".
  std::string Bind(const std::string& socket_path);
  // Accepts on a thread of its own (named `thread_name`).
  void Start(const char* thread_name);
  // Stops accepting, removes the socket file, closes idle connections, makes chunked writes
  // fail, and returns at once; answers being written end, then their connections close.
  void BeginStop();
  // BeginStop(), then waits until every connection is closed (a thread that served one may
  // still be returning; it touches nothing of the server).
  void Stop();
  // Listening and not stopping, and the socket file is still there. Thread-safe.
  bool Serving() const;
  bool stopping() const { return stopping_.load(); }

 private:
  void AcceptLoop();
  struct ConnectionCount;
  // Serves `fd` on a thread of its own; it is counted in connections_ already. False when no
  // thread could be had (`fd` is left as it is).
  bool Spawn(int fd);
  // Serves `fd` until it closes (closing it; false) or stays idle for kIdleLinger (parked with
  // the acceptor; true).
  bool Serve(int fd, ConnectionCount& count);
  // Hands an idle connection to the acceptor's poll; false when the acceptor has ended (the
  // caller closes it). Touches only `count`, which the calling thread co-owns: the server may
  // be gone as soon as the acceptor has the connection.
  static bool Park(ConnectionCount& count, int fd);
  // Waits up to 100 ms, less when the server stops: a pause before trying again what failed.
  void Pause() const;
  // Reads one request into `request` (bytes beyond it stay in `pending`). Returns 0 with a
  // request, -1 when the connection is to be closed quietly (closed, idle, stopping), or the
  // status to answer before closing (400, 413, 501).
  int ReadRequest(int fd, std::string& pending, Request& request, bool& keep_alive);
  // Waits until `fd` is ready for `events`; false at `deadline` (kStopGrace after a stop at the
  // latest), on an error, or at once when stopping and `until_stop`.
  bool WaitFor(int fd, short events, Clock::time_point deadline, bool until_stop) const;

  std::map<std::string, Handler> handlers_;
  std::string socket_path_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // an eventfd, readable once BeginStop() ran
  std::atomic<bool> listening_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<Clock::rep> stopped_at_{0};  // when BeginStop() ran (steady clock)
  std::thread acceptor_;
  // The connections, busy (a detached thread each) or parked: counted in a state each thread
  // co-owns, so its mutex outlives the last of them, whatever happens to the server meanwhile.
  struct ConnectionCount {
    absl::Mutex mu;
    absl::CondVar ended;                          // signalled when a connection closes
    std::size_t open ABSL_GUARDED_BY(mu) = 0;     // busy and parked
    std::vector<int> parked ABSL_GUARDED_BY(mu);  // handed to the acceptor, not yet polled
    bool acceptor_done ABSL_GUARDED_BY(mu) = false;
    int park_fd = -1;  // an eventfd, readable while `parked` holds connections
    ~ConnectionCount();
    // `n` connections closed.
    void Closed(std::size_t n = 1) ABSL_LOCKS_EXCLUDED(mu);
  };
  std::shared_ptr<ConnectionCount> connections_ = std::make_shared<ConnectionCount>();
};

}  // namespace skald
