// MetricsHttpServer: GET /metrics (Prometheus text) on a TCP address such as 127.0.0.1:9555.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace skald {

class MetricsRegistry;

class MetricsHttpServer {
 public:
  // `before_scrape` refreshes gauges computed on demand.
  MetricsHttpServer(MetricsRegistry& registry, std::function<void()> before_scrape);
  ~MetricsHttpServer();

  // `address` is HOST:PORT. Returns false (and logs why) when it cannot bind.
  bool Start(const std::string& address);
  void Stop();

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

}  // namespace skald
