#include "plugin/api/growing_thread_pool.h"

#include <spdlog/spdlog.h>

#include <system_error>
#include <thread>

#include "plugin/common/thread_name.h"

namespace skald {

GrowingThreadPool::GrowingThreadPool(std::size_t min_idle, std::size_t max_threads,
                                     std::chrono::seconds idle_timeout,
                                     std::chrono::milliseconds shutdown_wait,
                                     const char* thread_name)
    : state_(std::make_shared<State>()), shutdown_wait_(shutdown_wait) {
  state_->min_idle = min_idle;
  state_->max_threads = max_threads;
  state_->idle_timeout = idle_timeout;
  state_->thread_name = thread_name;
  absl::MutexLock lock(&state_->mu);
  for (std::size_t i = 0; i < min_idle; ++i) StartWorker(state_);
}

GrowingThreadPool::~GrowingThreadPool() { shutdown(); }

void GrowingThreadPool::StartWorker(const std::shared_ptr<State>& state) {
  try {
    std::thread([state] {
      SetThreadName(state->thread_name);
      Work(state);
    }).detach();
  } catch (const std::system_error& e) {
    // Out of threads: the task waits for a worker that is running already.
    spdlog::error("API server: cannot start a worker thread: {}", e.what());
    return;
  }
  ++state->threads;
  ++state->idle;
}

void GrowingThreadPool::enqueue(std::function<void()> fn) {
  absl::MutexLock lock(&state_->mu);
  if (state_->shutdown) return;
  state_->tasks.push_back(std::move(fn));
  if (state_->idle < state_->tasks.size() && state_->threads < state_->max_threads) {
    StartWorker(state_);
  }
  state_->cv.Signal();
}

void GrowingThreadPool::Work(std::shared_ptr<State> state) {
  state->mu.Lock();
  for (;;) {
    bool woke = true;
    if (state->idle > state->min_idle) {
      // A spare worker: waits at most idle_timeout.
      const absl::Time deadline = absl::Now() + absl::FromChrono(state->idle_timeout);
      while (!state->shutdown && state->tasks.empty()) {
        if (state->cv.WaitWithDeadline(&state->mu, deadline)) {
          woke = state->shutdown || !state->tasks.empty();
          break;
        }
      }
    } else {
      // One of the `min_idle` kept: no timer.
      while (!state->shutdown && state->tasks.empty()) state->cv.Wait(&state->mu);
    }
    if (!woke && state->idle > state->min_idle) break;  // idle too long and not needed
    if (state->tasks.empty()) {
      if (state->shutdown) break;
      continue;
    }
    auto task = std::move(state->tasks.front());
    state->tasks.pop_front();
    --state->idle;
    state->mu.Unlock();
    try {
      task();
    } catch (const std::exception& e) {
      spdlog::error("API server: a request failed: {}", e.what());
    }
    task = nullptr;  // what the task holds goes before the worker counts as idle
    state->mu.Lock();
    ++state->idle;
  }
  --state->idle;
  --state->threads;
  state->done_cv.SignalAll();
  state->mu.Unlock();
}

void GrowingThreadPool::shutdown() {
  absl::MutexLock lock(&state_->mu);
  state_->shutdown = true;
  state_->cv.SignalAll();
  // Tasks already running (open connections) end when the server closes their sockets.
  const absl::Time deadline = absl::Now() + absl::FromChrono(shutdown_wait_);
  while (state_->threads != 0) {
    if (state_->done_cv.WaitWithDeadline(&state_->mu, deadline)) break;
  }
}

std::size_t GrowingThreadPool::threads() const {
  absl::MutexLock lock(&state_->mu);
  return state_->threads;
}

}  // namespace skald
