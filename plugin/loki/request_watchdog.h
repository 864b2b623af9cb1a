// RequestWatchdog: cuts push requests that outlive loki-timeout, for every sender of a client.
//
// A socket's own timeouts bound each read and write, not a whole request: a peer that trickles
// its answer could hold a sender for ever. Senders arm their request's deadline and Poke() the
// watchdog, whose thread calls `sweep` with the time: the sweep cuts what is overdue and returns
// the earliest deadline still running, which the watchdog sleeps until (or until the next Poke).
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <chrono>
#include <cstdint>
#include <functional>

namespace skald {

class RequestWatchdog {
 public:
  using Clock = std::chrono::steady_clock;
  // Returns the next deadline to wake for; Clock::time_point::max() when nothing is armed.
  using Sweep = std::function<Clock::time_point(Clock::time_point now)>;

  explicit RequestWatchdog(Sweep sweep) : sweep_(std::move(sweep)) {}

  // The watchdog thread's body: sweeps until Quit().
  void Run() ABSL_LOCKS_EXCLUDED(mu_);
  // A request was armed: sweep again (its deadline may be the earliest).
  void Poke() ABSL_LOCKS_EXCLUDED(mu_);
  // Run() returns.
  void Quit() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const Sweep sweep_;
  absl::Mutex mu_;
  absl::CondVar cv_;
  uint64_t pokes_ ABSL_GUARDED_BY(mu_) = 0;
  bool quit_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace skald
