#include "plugin/metrics_http_server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include "plugin/growing_thread_pool.h"
#include "plugin/metrics.h"
#include "plugin/thread_name.h"

namespace skald {

MetricsHttpServer::MetricsHttpServer(MetricsRegistry& registry, std::function<void()> before_scrape,
                                     std::function<HealthReport()> health)
    : server_(std::make_unique<httplib::Server>()) {
  // Two workers, kept (they wait without a timer).
  server_->new_task_queue = [] {
    return new GrowingThreadPool(2, 2, std::chrono::seconds(30), std::chrono::seconds(2),
                                 "skald-metr-work");
  };
  // One request per connection: cpp-httplib polls an idle keep-alive connection every 10 ms
  // (see plugin_api_server.cc), and a scraper keeps its connection between scrapes.
  server_->set_keep_alive_max_count(1);
  server_->set_keep_alive_timeout(1);
  server_->Get("/metrics",
               [&registry, before_scrape](const httplib::Request&, httplib::Response& res) {
                 if (before_scrape) before_scrape();
                 res.set_content(registry.RenderPrometheus(), "text/plain; version=0.0.4");
               });
  has_health_ = static_cast<bool>(health);
  if (health) {
    server_->Get("/healthz", [health](const httplib::Request&, httplib::Response& res) {
      const HealthReport report = health();
      res.status = report.HttpStatus();
      res.set_content(report.Json(), "application/json");
    });
  }
}

MetricsHttpServer::~MetricsHttpServer() { Stop(); }

bool MetricsHttpServer::Start(const std::string& address) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    spdlog::error("METRICS_ADDR '{}' is not HOST:PORT; metrics are off", address);
    return false;
  }
  std::string host = address.substr(0, colon);
  int port = 0;
  try {
    port = std::stoi(address.substr(colon + 1));
  } catch (const std::exception&) {
    spdlog::error("METRICS_ADDR '{}' has no valid port; metrics are off", address);
    return false;
  }
  port_ =
      port == 0 ? server_->bind_to_any_port(host) : (server_->bind_to_port(host, port) ? port : -1);
  if (port_ < 0) {
    spdlog::error(
        "cannot listen for metrics on {} (METRICS_ADDR): the port is taken, perhaps by another "
        "copy of the plugin (give each copy its own METRICS_ADDR); metrics are off",
        address);
    return false;
  }
  thread_ = std::thread([this] {
    SetThreadName("skald-metrics");
    server_->listen_after_bind();
  });
  spdlog::info("metrics on http://{}:{}/metrics{}", host, port_,
               has_health_ ? ", health on /healthz" : "");
  return true;
}

void MetricsHttpServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace skald
