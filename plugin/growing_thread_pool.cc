#include "plugin/growing_thread_pool.h"

#include <thread>

namespace skald {

GrowingThreadPool::GrowingThreadPool(std::size_t min_idle, std::size_t max_threads,
                                     std::chrono::seconds idle_timeout)
    : min_idle_(min_idle), max_threads_(max_threads), idle_timeout_(idle_timeout) {
  std::lock_guard lock(mu_);
  for (std::size_t i = 0; i < min_idle_; ++i) StartWorker();
}

GrowingThreadPool::~GrowingThreadPool() { shutdown(); }

void GrowingThreadPool::StartWorker() {
  ++threads_;
  ++idle_;
  std::thread([this] { Work(); }).detach();
}

void GrowingThreadPool::enqueue(std::function<void()> fn) {
  std::lock_guard lock(mu_);
  if (shutdown_) return;
  tasks_.push_back(std::move(fn));
  if (idle_ < tasks_.size() && threads_ < max_threads_) StartWorker();
  cv_.notify_one();
}

void GrowingThreadPool::Work() {
  std::unique_lock lock(mu_);
  for (;;) {
    bool woke = cv_.wait_for(lock, idle_timeout_, [&] { return shutdown_ || !tasks_.empty(); });
    if (!woke && idle_ > min_idle_) break;  // idle too long and not needed
    if (tasks_.empty()) {
      if (shutdown_) break;
      continue;
    }
    auto task = std::move(tasks_.front());
    tasks_.pop_front();
    --idle_;
    lock.unlock();
    task();
    lock.lock();
    ++idle_;
  }
  --idle_;
  --threads_;
  done_cv_.notify_all();
}

void GrowingThreadPool::shutdown() {
  std::unique_lock lock(mu_);
  shutdown_ = true;
  cv_.notify_all();
  // Tasks already running (open connections) end when the server closes their sockets.
  done_cv_.wait_for(lock, std::chrono::seconds(5), [&] { return threads_ == 0; });
}

std::size_t GrowingThreadPool::threads() const {
  std::lock_guard lock(mu_);
  return threads_;
}

}  // namespace skald
