// PluginApiServer: the HTTP/1.1 API dockerd calls on the plugin's unix socket.
//
// Serves /Plugin.Activate, /LogDriver.StartLogging, /LogDriver.StopLogging,
// /LogDriver.Capabilities and /LogDriver.ReadLogs with the quirks of the real daemon: any Host,
// any or no Content-Type, JSON bodies with a trailing newline, errors as {"Err":"..."}. Each
// connection has a thread of its own (UnixHttpServer), so `docker logs -f` streams do not
// starve the other calls. ReadLogs is reported and served only once a JournalResolver is set:
// without one the daemon keeps its own cache for `docker logs`. Bind() comes first in main,
// before any slow start-up work, because the daemon gives up on a plugin whose socket does not
// answer within a few seconds.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <atomic>
#include <memory>
#include <set>
#include <string>

#include "plugin/api/read_logs.h"
#include "plugin/api/unix_http_server.h"

namespace skald {

class Driver;
class Journal;

class PluginApiServer {
 public:
  explicit PluginApiServer(Driver& driver);
  ~PluginApiServer();

  // Where ReadLogs finds a container's journal. Set it before Start(): the daemon asks for the
  // capabilities once, when it loads the plugin.
  void SetJournalResolver(JournalResolver resolver) ABSL_LOCKS_EXCLUDED(resolver_mu_);

  // Removes a stale socket file and binds. Returns false (and logs why) on failure.
  bool Bind(const std::string& socket_path);
  // Serves on a background thread.
  void Start();
  // Stops accepting, ends `docker logs` answers (followers included) and idle connections, and
  // returns at once; requests being answered finish.
  void BeginStop() ABSL_LOCKS_EXCLUDED(followers_mu_);
  // BeginStop(), then waits until every connection has closed.
  void Stop();
  // True while the daemon can reach the API: the server listens, is not stopping, and its
  // socket file is still there. Thread-safe.
  bool Serving() const;

 private:
  // Registers a following answer's journal for BeginStop while it lives (null server: none).
  class FollowerRegistration {
   public:
    FollowerRegistration(PluginApiServer* server, std::shared_ptr<Journal> journal);
    ~FollowerRegistration();
    FollowerRegistration(const FollowerRegistration&) = delete;
    FollowerRegistration& operator=(const FollowerRegistration&) = delete;

   private:
    PluginApiServer* server_;
    std::shared_ptr<Journal> journal_;
  };

  void ReadLogs(const std::string& body, UnixHttpServer::Response& res);
  // The container's journal from the resolver, or the status and message to answer with.
  struct FoundJournal {
    std::shared_ptr<Journal> journal;
    int status;
    std::string why;
  };
  FoundJournal FindJournal(const ContainerInfo& info) ABSL_LOCKS_EXCLUDED(resolver_mu_);

  Driver& driver_;
  mutable absl::Mutex resolver_mu_;
  JournalResolver resolver_ ABSL_GUARDED_BY(resolver_mu_);
  std::atomic<bool> stopping_{false};  // ends follow streams when the server stops
  // Journals being followed (`docker logs -f`), woken by BeginStop (a multiset: several
  // followers of one container).
  absl::Mutex followers_mu_;
  std::multiset<std::shared_ptr<Journal>> followers_ ABSL_GUARDED_BY(followers_mu_);
  UnixHttpServer server_;
};

}  // namespace skald
