// GrowingThreadPool: a cpp-httplib task queue that never runs out of workers.
//
// Debian's cpp-httplib is compiled with a fixed pool of 8 workers, and each keep-alive
// connection or `docker logs -f` stream holds a worker for as long as it lives: eight of them
// would stall every StartLogging. This queue keeps `min_idle` workers warm and starts another
// whenever a task arrives and none is idle, up to `max_threads`; workers idle for longer than
// `idle_timeout` exit (down to `min_idle`). Workers at or below `min_idle` wait for a task
// without a timeout: an idle pool never wakes up. Workers are named `thread_name`
// (plugin/common/thread_name.h).
//
// shutdown() waits at most `shutdown_wait` for running tasks to end (a stopped server ends
// its connections within its keep-alive timeout). Workers share their state with the pool
// through a reference count, so one that is still running a task after the pool is gone
// touches nothing freed; the task itself must not outlive what it uses (the plugin exits
// after its shutdown without destroying the server).
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>
#include <httplib.h>

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>

namespace skald {

class GrowingThreadPool : public httplib::TaskQueue {
 public:
  GrowingThreadPool(std::size_t min_idle, std::size_t max_threads,
                    std::chrono::seconds idle_timeout,
                    std::chrono::milliseconds shutdown_wait = std::chrono::seconds(2),
                    const char* thread_name = "skald-pool");
  ~GrowingThreadPool() override;

  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

  std::size_t threads() const;

 private:
  struct State {
    // Set before the first worker starts, then only read.
    std::size_t min_idle;
    std::size_t max_threads;
    std::chrono::seconds idle_timeout;
    const char* thread_name;
    absl::Mutex mu;
    absl::CondVar cv;       // a task came, or shutdown
    absl::CondVar done_cv;  // a worker exited
    std::deque<std::function<void()>> tasks ABSL_GUARDED_BY(mu);
    std::size_t threads ABSL_GUARDED_BY(mu) = 0;
    std::size_t idle ABSL_GUARDED_BY(mu) = 0;
    bool shutdown ABSL_GUARDED_BY(mu) = false;
  };
  static void StartWorker(const std::shared_ptr<State>& state)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state->mu);
  static void Work(std::shared_ptr<State> state);

  const std::shared_ptr<State> state_;
  const std::chrono::milliseconds shutdown_wait_;
};

}  // namespace skald
