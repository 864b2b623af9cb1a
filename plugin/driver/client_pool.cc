#include "plugin/driver/client_pool.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

namespace skald {

ClientPool::ClientPool(Factory factory, std::chrono::milliseconds idle_timeout)
    : factory_(std::move(factory)), idle_timeout_(idle_timeout) {}

std::shared_ptr<ShippingClient> ClientPool::For(const LokiClientConfig& config, Window* window) {
  const std::string key = config.Key();
  {
    absl::MutexLock lock(&mu_);
    if (auto it = clients_.find(key); it != clients_.end()) {
      *window = WindowLocked(key);
      return it->second;
    }
  }
  std::shared_ptr<ShippingClient> made = factory_(config);  // may throw
  absl::MutexLock lock(&mu_);
  // Another start may have made one meanwhile: the first stays.
  auto it = clients_.try_emplace(key, std::move(made)).first;
  *window = WindowLocked(key);
  return it->second;
}

ClientPool::Window ClientPool::WindowLocked(const std::string& key) {
  Window& w = windows_[key];
  if (!w) w = std::make_shared<std::atomic<int64_t>>(0);
  return w;
}

std::chrono::milliseconds ClientPool::RetireIdle(
    const std::unordered_set<const ShippingClient*>& used, std::chrono::milliseconds never) {
  const auto now = std::chrono::steady_clock::now();
  std::chrono::milliseconds next = never;
  std::vector<std::shared_ptr<ShippingClient>> retired;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = clients_.begin(); it != clients_.end();) {
      if (used.count(it->second.get())) {
        // Looked at again when its streams go.
        unused_since_.erase(it->first);
        ++it;
        continue;
      }
      // Only the pool holds one that none uses; a stream just gone (or one starting) may still
      // hold it for a moment, and entries may still be on their way.
      if (it->second.use_count() > 1 || it->second->Pending() > 0) {
        unused_since_.erase(it->first);
        next = std::min<std::chrono::milliseconds>(next, std::chrono::seconds(1));
        ++it;
        continue;
      }
      auto since = unused_since_.try_emplace(it->first, now).first;
      if (now - since->second < idle_timeout_) {
        next = std::min(next, std::chrono::ceil<std::chrono::milliseconds>(since->second +
                                                                           idle_timeout_ - now));
        ++it;
        continue;
      }
      retired.push_back(std::move(it->second));
      windows_.erase(it->first);
      unused_since_.erase(since);
      it = clients_.erase(it);
    }
  }
  if (!retired.empty()) spdlog::debug("{} idle Loki client(s) stopped", retired.size());
  retired.clear();  // stops their lanes, idle by now, outside the lock
  return next;
}

std::vector<std::shared_ptr<ShippingClient>> ClientPool::All() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::shared_ptr<ShippingClient>> all;
  all.reserve(clients_.size());
  for (const auto& [key, client] : clients_) all.push_back(client);
  return all;
}

std::size_t ClientPool::size() const {
  absl::MutexLock lock(&mu_);
  return clients_.size();
}

uint64_t ClientPool::Pending() const {
  absl::MutexLock lock(&mu_);
  uint64_t pending = 0;
  for (const auto& [key, client] : clients_) pending += client->Pending();
  return pending;
}

std::vector<std::shared_ptr<ShippingClient>> ClientPool::TakeAll() {
  absl::MutexLock lock(&mu_);
  std::vector<std::shared_ptr<ShippingClient>> all;
  for (auto& [key, client] : clients_) all.push_back(std::move(client));
  clients_.clear();
  windows_.clear();
  unused_since_.clear();
  return all;
}

}  // namespace skald
