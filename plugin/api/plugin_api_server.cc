#include "plugin/api/plugin_api_server.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "plugin/api/plugin_api_requests.h"
#include "plugin/driver/driver.h"
#include "plugin/journal/journal.h"

namespace skald {

namespace {

constexpr const char* kJsonType = "application/vnd.docker.plugins.v1.1+json";
using Response = UnixHttpServer::Response;
using Request = UnixHttpServer::Request;

void Reply(Response& res, const nlohmann::json& body) {
  res.Send(200, kJsonType, body.dump() + "\n");
}

void ReplyErr(Response& res, const std::string& err) { Reply(res, nlohmann::json{{"Err", err}}); }

void ReplyStatusErr(Response& res, int status, const std::string& err) {
  res.Send(status, kJsonType, nlohmann::json{{"Err", err}}.dump() + "\n");
}

}  // namespace

PluginApiServer::PluginApiServer(Driver& driver) : driver_(driver) {
  server_.Handle("/Plugin.Activate", [](const Request&, Response& res) {
    Reply(res, nlohmann::json{{"Implements", {"LogDriver"}}});
  });

  server_.Handle("/LogDriver.Capabilities", [this](const Request&, Response& res) {
    // Without a resolver there is no journal to read: the daemon's own cache serves docker logs.
    bool read_logs;
    {
      absl::MutexLock lock(&resolver_mu_);
      read_logs = static_cast<bool>(resolver_);
    }
    Reply(res, nlohmann::json{{"Cap", {{"ReadLogs", read_logs}}}});
  });

  server_.Handle("/LogDriver.StartLogging", [this](const Request& req, Response& res) {
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

  server_.Handle("/LogDriver.StopLogging", [this](const Request& req, Response& res) {
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

  server_.Handle("/LogDriver.ReadLogs",
                 [this](const Request& req, Response& res) { ReadLogs(req.body, res); });
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

void PluginApiServer::ReadLogs(const std::string& body, Response& res) {
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

  // Frames as chunks: a stream cut by an error ends without the last chunk, which the daemon
  // reports as a cut stream.
  if (!res.BeginChunked(200, "application/octet-stream")) return;
  FollowerRegistration registration(config.follow ? this : nullptr, journal);
  ReadLogsSink out;
  out.write = [&res](std::string_view bytes) { return res.WriteChunk(bytes); };
  ReadLogsOptions options;
  options.stopping = [this] { return stopping_.load(); };
  const std::string name = info.Name();
  try {
    ReadLogsResult result = ServeReadLogs(journal, config, out, options);
    spdlog::debug("ReadLogs {}: {} lines, {} bytes, {} bad frames, {} bytes skipped{}", name,
                  result.lines, result.bytes, result.bad_frames, result.skipped_bytes,
                  result.end == ReadLogsResult::End::kClientGone ? ", client gone" : "");
    if (result.end == ReadLogsResult::End::kClientGone) return;
  } catch (const std::exception& e) {
    spdlog::warn("ReadLogs {}: {}", name, e.what());
    return;
  }
  res.EndChunked();
}

PluginApiServer::~PluginApiServer() { Stop(); }

bool PluginApiServer::Bind(const std::string& socket_path) {
  if (std::string why = server_.Bind(socket_path); !why.empty()) {
    spdlog::critical("cannot listen on {}: {}", socket_path, why);
    return false;
  }
  return true;
}

void PluginApiServer::Start() { server_.Start("skald-api"); }

void PluginApiServer::BeginStop() {
  if (stopping_.exchange(true)) return;
  {
    absl::MutexLock lock(&followers_mu_);
    for (const auto& journal : followers_) journal->Interrupt();
  }
  server_.BeginStop();
}

bool PluginApiServer::Serving() const { return !stopping_ && server_.Serving(); }

void PluginApiServer::Stop() {
  BeginStop();
  server_.Stop();
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
