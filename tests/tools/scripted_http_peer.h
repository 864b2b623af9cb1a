// ScriptedHttpPeer: a TCP server on 127.0.0.1 that reads each HTTP request and answers it with
// scripted bytes, for the faults an HTTP server library will not produce: garbage in place of
// a status line, a status line and headers dripped byte by byte, a connection closed early.
// Thread-safe; Start() before use, Stop() (or the destructor) closes every connection.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace skald::testkit {

class ScriptedHttpPeer {
 public:
  struct Script {
    std::string answer;                 // bytes sent after each request, as they are
    std::chrono::milliseconds drip{0};  // > 0: one byte per `drip`
    bool close_after = true;            // close the connection after the answer
    bool reset_after = false;           // ... with a reset (RST), not an orderly close
    // Answer as soon as the request head is in, without reading its body (a proxy refusing a
    // body over its limit), then close.
    bool answer_after_head = false;
    // Send `answer` as soon as a connection is accepted, reading nothing (a server that speaks
    // first, or garbage in place of a TLS server's hello); each connection counts as a request.
    bool answer_at_connect = false;
    // > 0: `answer` goes to the first `times` requests, `mended` to every later one (a peer
    // that is fixed; a mended answer keeps the connection open).
    uint64_t times = 0;
    std::string mended = "";
  };

  ScriptedHttpPeer() = default;
  ~ScriptedHttpPeer();
  ScriptedHttpPeer(const ScriptedHttpPeer&) = delete;
  ScriptedHttpPeer& operator=(const ScriptedHttpPeer&) = delete;

  // Listens on an OS-chosen port. False when it cannot.
  bool Start(Script script);
  void Stop();

  int port() const { return port_; }
  std::string PushUrl() const;
  uint64_t Requests() const { return requests_.load(); }  // whole requests read
  // Bytes of answers the peer got into its sockets (a client that stops reading stops this).
  uint64_t BytesWritten() const { return bytes_written_.load(); }

 private:
  void AcceptLoop();
  void Serve(int fd);
  // Waits up to `d`; false when Stop() began.
  bool Wait(std::chrono::milliseconds d);

  Script script_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread acceptor_;
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::vector<std::thread> connections_;
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> bytes_written_{0};
};

}  // namespace skald::testkit
