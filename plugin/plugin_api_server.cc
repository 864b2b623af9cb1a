#include "plugin/plugin_api_server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "plugin/driver.h"
#include "plugin/growing_thread_pool.h"

namespace skald {

namespace {

constexpr const char* kJsonType = "application/vnd.docker.plugins.v1.1+json";

void Reply(httplib::Response& res, const nlohmann::json& body) {
  res.status = 200;
  res.set_content(body.dump() + "\n", kJsonType);
}

void ReplyErr(httplib::Response& res, const std::string& err) {
  Reply(res, nlohmann::json{{"Err", err}});
}

// Parses a request body; on failure answers with an error and returns nullopt.
std::optional<nlohmann::json> ParseBody(const httplib::Request& req, httplib::Response& res) {
  auto body = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) {
    res.status = 400;
    res.set_content(nlohmann::json{{"Err", "skald: request body is not a JSON object"}}.dump(),
                    kJsonType);
    return std::nullopt;
  }
  return body;
}

}  // namespace

PluginApiServer::PluginApiServer(Driver& driver)
    : driver_(driver), server_(std::make_unique<httplib::Server>()) {
  server_->new_task_queue = [] { return new GrowingThreadPool(4, 1024, std::chrono::seconds(30)); };
  server_->set_keep_alive_max_count(1000);
  server_->set_keep_alive_timeout(60);

  server_->Post("/Plugin.Activate", [](const httplib::Request&, httplib::Response& res) {
    Reply(res, nlohmann::json{{"Implements", {"LogDriver"}}});
  });

  server_->Post("/LogDriver.Capabilities", [](const httplib::Request&, httplib::Response& res) {
    // ReadLogs stays false until the journal exists: the daemon's own cache serves docker logs.
    Reply(res, nlohmann::json{{"Cap", {{"ReadLogs", false}}}});
  });

  server_->Post(
      "/LogDriver.StartLogging", [this](const httplib::Request& req, httplib::Response& res) {
        auto body = ParseBody(req, res);
        if (!body) return;
        try {
          std::string file = body->value("File", "");
          if (file.empty()) return ReplyErr(res, "skald: StartLogging without a File");
          auto info = ContainerInfo::FromJson(body->value("Info", nlohmann::json::object()));
          driver_.StartLogging(file, info);
          ReplyErr(res, "");
        } catch (const std::exception& e) {
          spdlog::warn("StartLogging refused: {}", e.what());
          ReplyErr(res, e.what());
        }
      });

  server_->Post("/LogDriver.StopLogging",
                [this](const httplib::Request& req, httplib::Response& res) {
                  auto body = ParseBody(req, res);
                  if (!body) return;
                  std::string file = body->value("File", "");
                  driver_.StopLogging(file);  // answers at once; the stream ends at FIFO EOF
                  ReplyErr(res, "");
                });

  server_->Post("/LogDriver.ReadLogs", [](const httplib::Request&, httplib::Response& res) {
    res.status = 500;
    res.set_content(
        nlohmann::json{{"Err",
                        "skald: reading logs is served by the daemon's local cache in this "
                        "version (ReadLogs capability is off)"}}
            .dump(),
        kJsonType);
  });
}

PluginApiServer::~PluginApiServer() { Stop(); }

bool PluginApiServer::Bind(const std::string& socket_path) {
  socket_path_ = socket_path;
  unlink(socket_path.c_str());
  server_->set_address_family(AF_UNIX);
  if (!server_->bind_to_port(socket_path, 80)) {
    spdlog::critical("cannot listen on {}", socket_path);
    return false;
  }
  chmod(socket_path.c_str(), 0660);
  return true;
}

void PluginApiServer::Start() {
  thread_ = std::thread([this] { server_->listen_after_bind(); });
}

void PluginApiServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
  if (!socket_path_.empty()) unlink(socket_path_.c_str());
}

}  // namespace skald
