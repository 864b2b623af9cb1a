// ClientPool: the Loki clients the driver's streams share, one per endpoint and option set
// (LokiClientConfig::Key()), and the window of decoded, unacknowledged bytes each client's
// journaled streams share. A client no stream has used for `idle_timeout`, with nothing
// pending, is stopped and freed (its lanes are threads); a later stream with the same options
// gets a new one.
//
// Thread-safe. A client is made and stopped outside its lock (making one may resolve a name;
// stopping one joins its lanes).
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "plugin/driver/shipping_client.h"
#include "plugin/loki/loki_client_config.h"

namespace skald {

class ClientPool {
 public:
  // Makes the client for a configuration (may throw: the error goes to the StartLogging).
  using Factory = std::function<std::shared_ptr<ShippingClient>(const LokiClientConfig& config)>;
  // Decoded, not acknowledged: what the journaled streams of one client hold.
  using Window = std::shared_ptr<std::atomic<int64_t>>;

  ClientPool(Factory factory, std::chrono::milliseconds idle_timeout);
  ClientPool(const ClientPool&) = delete;
  ClientPool& operator=(const ClientPool&) = delete;

  // The shared client for `config` and its window; the first stream of a configuration makes
  // it (outside the lock: two makers race, one client stays). Throws what the factory throws.
  std::shared_ptr<ShippingClient> For(const LokiClientConfig& config, Window* window)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Frees the clients that are not in `used`, held by nobody else, with nothing pending, and
  // unused for idle_timeout. Returns when it wants to look again: when the next of those left
  // reaches the timeout, within a second while one is still held or has entries on their way,
  // or `never` when none is waiting.
  std::chrono::milliseconds RetireIdle(const std::unordered_set<const ShippingClient*>& used,
                                       std::chrono::milliseconds never) ABSL_LOCKS_EXCLUDED(mu_);

  // Every client, for a look outside the lock (health, pending counts).
  std::vector<std::shared_ptr<ShippingClient>> All() const ABSL_LOCKS_EXCLUDED(mu_);
  std::size_t size() const ABSL_LOCKS_EXCLUDED(mu_);
  // Entries the clients hold, neither delivered nor dropped yet.
  uint64_t Pending() const ABSL_LOCKS_EXCLUDED(mu_);
  // Empties the pool and hands its clients over (shutdown stops them).
  std::vector<std::shared_ptr<ShippingClient>> TakeAll() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  Window WindowLocked(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Factory factory_;
  const std::chrono::milliseconds idle_timeout_;
  mutable absl::Mutex mu_;
  // By LokiClientConfig::Key().
  std::map<std::string, std::shared_ptr<ShippingClient>> clients_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Window> windows_ ABSL_GUARDED_BY(mu_);
  // Clients no stream uses, and since when.
  std::map<std::string, std::chrono::steady_clock::time_point> unused_since_ ABSL_GUARDED_BY(mu_);
};

}  // namespace skald
