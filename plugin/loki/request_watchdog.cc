#include "plugin/loki/request_watchdog.h"

#include <absl/time/time.h>

namespace skald {

void RequestWatchdog::Run() {
  mu_.Lock();
  while (!quit_) {
    const uint64_t seen = pokes_;
    mu_.Unlock();
    const Clock::time_point next = sweep_(Clock::now());
    mu_.Lock();
    while (!quit_ && pokes_ == seen) {
      if (next == Clock::time_point::max()) {
        cv_.Wait(&mu_);
      } else if (cv_.WaitWithTimeout(&mu_, absl::FromChrono(next - Clock::now()))) {
        break;  // the deadline came: sweep
      }
    }
  }
  mu_.Unlock();
}

void RequestWatchdog::Poke() {
  absl::MutexLock lock(&mu_);
  ++pokes_;
  cv_.Signal();
}

void RequestWatchdog::Quit() {
  absl::MutexLock lock(&mu_);
  quit_ = true;
  cv_.SignalAll();
}

}  // namespace skald
