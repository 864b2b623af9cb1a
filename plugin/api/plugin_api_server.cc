#include "plugin/api/plugin_api_server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "plugin/api/growing_thread_pool.h"
#include "plugin/api/plugin_api_requests.h"
#include "plugin/common/thread_name.h"
#include "plugin/driver/driver.h"
#include "plugin/journal/journal.h"

namespace skald {

namespace {

constexpr const char* kJsonType = "application/vnd.docker.plugins.v1.1+json";
// A write waits this long for room in the socket before it looks at the server again.
constexpr std::chrono::seconds kWriteTimeout{2};

void Reply(httplib::Response& res, const nlohmann::json& body) {
  res.status = 200;
  res.set_content(body.dump() + "\n", kJsonType);
}

void ReplyErr(httplib::Response& res, const std::string& err) {
  Reply(res, nlohmann::json{{"Err", err}});
}

void ReplyStatusErr(httplib::Response& res, int status, const std::string& err) {
  res.status = status;
  res.set_content(nlohmann::json{{"Err", err}}.dump() + "\n", kJsonType);
}

// Hands `bytes` to a chunked response. A slow reader (`docker logs | less`) is waited for as
// long as it takes, one write timeout at a time, so that httplib's timeout does not cut it off;
// a gone one fails the write (MSG_NOSIGNAL: EPIPE, not SIGPIPE) or is reported not writable at
// once. Slices stay well below the socket buffer, so a write that starts does not time out.
bool WriteToClient(httplib::DataSink& sink, std::string_view bytes,
                   const std::atomic<bool>& stopping) {
  constexpr std::size_t kSlice = 32 * 1024;
  while (!bytes.empty()) {
    for (;;) {
      auto asked = std::chrono::steady_clock::now();
      if (sink.is_writable()) break;
      if (stopping) return false;
      if (std::chrono::steady_clock::now() - asked < kWriteTimeout / 2) return false;
    }
    std::size_t n = std::min(kSlice, bytes.size());
    if (!sink.write(bytes.data(), n)) return false;
    bytes.remove_prefix(n);
  }
  return true;
}

}  // namespace

PluginApiServer::PluginApiServer(Driver& driver)
    : driver_(driver), server_(std::make_unique<httplib::Server>()) {
  server_->new_task_queue = [] {
    return new GrowingThreadPool(4, 1024, std::chrono::seconds(30), std::chrono::seconds(2),
                                 "skald-api-work");
  };
  // One request per connection ("Connection: close"): cpp-httplib waits for a connection's next
  // request by polling its socket every 10 ms with a 1 ms sleep in between, which cost more
  // plugin CPU than the requests themselves (dockerd keeps its idle connections open, so each
  // one was polled until the keep-alive timeout). A new connection on the unix socket is cheap,
  // and dockerd opens one when it needs one.
  server_->set_keep_alive_max_count(1);
  server_->set_keep_alive_timeout(1);
  server_->set_write_timeout(kWriteTimeout);

  server_->Post("/Plugin.Activate", [](const httplib::Request&, httplib::Response& res) {
    Reply(res, nlohmann::json{{"Implements", {"LogDriver"}}});
  });

  server_->Post("/LogDriver.Capabilities", [this](const httplib::Request&, httplib::Response& res) {
    // Without a resolver there is no journal to read: the daemon's own cache serves docker logs.
    bool read_logs;
    {
      absl::MutexLock lock(&resolver_mu_);
      read_logs = static_cast<bool>(resolver_);
    }
    Reply(res, nlohmann::json{{"Cap", {{"ReadLogs", read_logs}}}});
  });

  server_->Post("/LogDriver.StartLogging",
                [this](const httplib::Request& req, httplib::Response& res) {
                  try {
                    StartLoggingRequest request = ParseStartLoggingRequest(req.body);
                    driver_.StartLogging(request.file, request.info);
                    ReplyErr(res, "");
                  } catch (const BadRequest& e) {
                    ReplyStatusErr(res, 400, e.what());
                  } catch (const std::exception& e) {
                    spdlog::warn("StartLogging refused: {}", e.what());
                    ReplyErr(res, e.what());
                  }
                });

  server_->Post("/LogDriver.StopLogging",
                [this](const httplib::Request& req, httplib::Response& res) {
                  StopLoggingRequest request;
                  try {
                    request = ParseStopLoggingRequest(req.body);
                  } catch (const std::invalid_argument& e) {
                    spdlog::warn("StopLogging refused: {}", e.what());
                    return ReplyStatusErr(res, 400, e.what());
                  }
                  driver_.StopLogging(request.file);  // answers at once; the stream ends at EOF
                  ReplyErr(res, "");
                });

  server_->Post("/LogDriver.ReadLogs", [this](const httplib::Request& req, httplib::Response& res) {
    ReadLogs(req.body, res);
  });
}

void PluginApiServer::SetJournalResolver(JournalResolver resolver) {
  absl::MutexLock lock(&resolver_mu_);
  resolver_ = std::move(resolver);
}

PluginApiServer::FoundJournal PluginApiServer::FindJournal(const ContainerInfo& info) {
  JournalResolver resolver;
  {
    absl::MutexLock lock(&resolver_mu_);
    resolver = resolver_;
  }
  if (!resolver) {
    return {nullptr, 501, "skald: docker logs is not served by the plugin (it keeps no journal)"};
  }
  FoundJournal found{nullptr, 404, ""};
  try {
    found.journal = resolver(info);
  } catch (const NoJournal& e) {
    found.why = e.what();
  } catch (const std::exception& e) {
    found.why = std::string("skald: cannot open the logs of this container: ") + e.what();
  }
  if (!found.journal && found.why.empty()) {
    found.why = "skald: no logs are kept for container " + info.ID();
  }
  return found;
}

void PluginApiServer::ReadLogs(const std::string& body, httplib::Response& res) {
  ContainerInfo info;
  ReadLogsConfig config;
  try {
    ReadLogsRequest request = ParseReadLogsRequest(body);
    info = std::move(request.info);
    config = request.config;
  } catch (const std::exception& e) {
    spdlog::warn("ReadLogs refused: {}", e.what());
    return ReplyStatusErr(res, 400, e.what());
  }
  const FoundJournal found = FindJournal(info);
  if (!found.journal) {
    spdlog::info("ReadLogs {}: {}", info.Name(), found.why);
    return ReplyStatusErr(res, found.status, found.why);
  }
  const std::shared_ptr<Journal>& journal = found.journal;
  spdlog::debug("ReadLogs {}: tail {} follow {}", info.Name(), config.tail, config.follow);

  res.status = 200;
  res.set_chunked_content_provider(
      "application/octet-stream",
      [this, journal, config, name = info.Name()](std::size_t, httplib::DataSink& sink) {
        FollowerRegistration registration(config.follow ? this : nullptr, journal);
        ReadLogsSink out;
        out.write = [this, &sink](std::string_view bytes) {
          return WriteToClient(sink, bytes, stopping_);
        };
        ReadLogsOptions options;
        options.stopping = [this] { return stopping_.load(); };
        try {
          ReadLogsResult result = ServeReadLogs(journal, config, out, options);
          spdlog::debug("ReadLogs {}: {} lines, {} bytes, {} bad frames, {} bytes skipped{}", name,
                        result.lines, result.bytes, result.bad_frames, result.skipped_bytes,
                        result.end == ReadLogsResult::End::kClientGone ? ", client gone" : "");
          if (result.end == ReadLogsResult::End::kClientGone) return false;
        } catch (const std::exception& e) {
          spdlog::warn("ReadLogs {}: {}", name, e.what());
          return false;  // the connection closes: the daemon reports a cut stream
        }
        sink.done();
        return true;
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
  thread_ = std::thread([this] {
    SetThreadName("skald-api");
    server_->listen_after_bind();
  });
}

void PluginApiServer::BeginStop() {
  if (stopping_.exchange(true)) return;
  {
    absl::MutexLock lock(&followers_mu_);
    for (const auto& journal : followers_) journal->Interrupt();
  }
  if (server_) server_->stop();
  if (!socket_path_.empty()) unlink(socket_path_.c_str());
}

bool PluginApiServer::Serving() const {
  std::error_code ec;
  return !stopping_ && server_ && server_->is_running() &&
         std::filesystem::is_socket(socket_path_, ec);
}

void PluginApiServer::Stop() {
  BeginStop();
  if (thread_.joinable()) thread_.join();
}

PluginApiServer::FollowerRegistration::FollowerRegistration(PluginApiServer* server,
                                                            std::shared_ptr<Journal> journal)
    : server_(server), journal_(std::move(journal)) {
  if (server_ == nullptr) return;
  absl::MutexLock lock(&server_->followers_mu_);
  server_->followers_.insert(journal_);
  if (server_->stopping_) journal_->Interrupt();
}

PluginApiServer::FollowerRegistration::~FollowerRegistration() {
  if (server_ == nullptr) return;
  absl::MutexLock lock(&server_->followers_mu_);
  server_->followers_.erase(server_->followers_.find(journal_));
}

}  // namespace skald
