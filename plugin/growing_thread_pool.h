// GrowingThreadPool: a cpp-httplib task queue that never runs out of workers.
//
// Debian's cpp-httplib is compiled with a fixed pool of 8 workers, and each keep-alive
// connection or `docker logs -f` stream holds a worker for as long as it lives: eight of them
// would stall every StartLogging. This queue keeps `min_idle` workers warm and starts another
// whenever a task arrives and none is idle, up to `max_threads`; workers idle for longer than
// `idle_timeout` exit (down to `min_idle`).
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>

namespace skald {

class GrowingThreadPool : public httplib::TaskQueue {
 public:
  GrowingThreadPool(std::size_t min_idle, std::size_t max_threads,
                    std::chrono::seconds idle_timeout);
  ~GrowingThreadPool() override;

  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

  std::size_t threads() const;

 private:
  void StartWorker();  // mu_ held
  void Work();

  const std::size_t min_idle_;
  const std::size_t max_threads_;
  const std::chrono::seconds idle_timeout_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable done_cv_;
  std::deque<std::function<void()>> tasks_;
  std::size_t threads_ = 0;
  std::size_t idle_ = 0;
  bool shutdown_ = false;
};

}  // namespace skald
