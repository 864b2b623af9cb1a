// MetricsHttpServer: GET /metrics (Prometheus text) and GET /healthz (HealthReport, see
// health_report.h) on a TCP address such as 127.0.0.1:9555.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "plugin/health_report.h"

namespace httplib {
class Server;
}

namespace skald {

class MetricsRegistry;

class MetricsHttpServer {
 public:
  // `before_scrape` refreshes gauges computed on demand. `health` answers /healthz (without
  // it /healthz is not served); it runs on the server's thread at each request.
  MetricsHttpServer(MetricsRegistry& registry, std::function<void()> before_scrape,
                    std::function<HealthReport()> health = {});
  ~MetricsHttpServer();

  // `address` is HOST:PORT. Returns false (and logs why) when it cannot bind.
  bool Start(const std::string& address);
  void Stop();
  // The port it listens on (after Start; useful with port 0).
  int port() const { return port_; }

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  bool has_health_ = false;
};

}  // namespace skald
