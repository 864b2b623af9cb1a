// MetricsHttpServer: GET /metrics (Prometheus text) and GET /healthz (HealthReport, see
// health_report.h) on a TCP address such as 127.0.0.1:9555.
//
// Any local user can reach the port, so it takes only small GETs and HEADs, on one thread of
// its own with no library parsing the bytes: a request head holds at most kMaxRequestBytes and
// must arrive within kRequestTimeout; a request with a body (Content-Length above 0, any
// Transfer-Encoding, any Content-Encoding) is refused with 413 unread; an answer must be taken
// within kRequestTimeout. Each connection carries one request. At most kMaxConnections are
// open: one more closes the oldest that has not sent a whole request (else the oldest), so that
// idle or slow connections cannot starve /healthz.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <list>
#include <string>
#include <thread>

#include "plugin/metrics/health_report.h"

namespace skald {

class MetricsRegistry;

class MetricsHttpServer {
 public:
  static constexpr std::size_t kMaxRequestBytes = 8 * 1024;
  static constexpr std::chrono::milliseconds kRequestTimeout{5'000};
  static constexpr std::size_t kMaxConnections = 32;

  // `before_scrape` refreshes gauges computed on demand. `health` answers /healthz (without
  // it /healthz is not served); it runs on the server's thread at each request.
  MetricsHttpServer(MetricsRegistry& registry, std::function<void()> before_scrape,
                    std::function<HealthReport()> health = {});
  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  // `address` is HOST:PORT ([IPv6]:PORT). Returns false (and logs why) when it cannot bind.
  bool Start(const std::string& address);
  void Stop();
  // The port it listens on (after Start; useful with port 0).
  int port() const { return port_; }

 private:
  struct Connection;
  void Serve();
  // One poll event of connection `c`: reads its request (or what it sends after the answer),
  // answers it as far as the socket takes, and sets its deadline to now when it is done for.
  void Step(Connection& c);
  // Accepts the connections waiting; past kMaxConnections the oldest still sending its request
  // (else the oldest of all) is closed to make room.
  void AcceptWaiting(std::list<Connection>& connections);
  // The whole answer (head and body) to a complete request head.
  std::string Answer(const std::string& head);

  MetricsRegistry& registry_;
  const std::function<void()> before_scrape_;
  const std::function<HealthReport()> health_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // an eventfd: Stop() ends the loop
  int port_ = 0;
  std::thread thread_;
};

}  // namespace skald
