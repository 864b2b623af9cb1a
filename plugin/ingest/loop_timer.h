// LoopTimer: when a task that runs on an event loop's thread is due next, for the loop to
// sleep until then and to run it then. The FIFO reader's loop runs the driver's maintenance
// this way (cursors, the journal budget and age limit, idle clients): the budget evicts journal
// segments, and a segment's eviction runs the hook of the stream that decodes it, whose state
// belongs to that thread. Any thread asks for a run (Within, WhenJournaled); only the loop's
// runs it (RunIfDue) and asks how long it may sleep (MsUntilDue). Lock-free.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>

namespace skald {

class LoopTimer {
 public:
  // A task's answer: no run until one is asked for.
  static constexpr std::chrono::milliseconds kNever = std::chrono::milliseconds::max();
  // When the task throws, it runs again after this.
  static constexpr std::chrono::milliseconds kAfterError{1000};

  // Asks for a run within `delay` (a run due sooner stays due; kNever asks for none). True
  // when this made the run due sooner: a loop asleep until the earlier time must be woken.
  bool Within(std::chrono::milliseconds delay);
  // Asks for a run within `delay` once Journaled() is next called (once).
  void WhenJournaled(std::chrono::milliseconds delay);
  // Bytes were moved into a journal: what WhenJournaled asked for becomes a Within. Returns
  // what that Within returned (false when nothing was asked).
  bool Journaled();

  // Milliseconds until the run is due: 0 when due, rounded up otherwise; -1 when no run is
  // asked for.
  int MsUntilDue() const;
  // Loop thread: runs `task` when it is due, then asks for the run it says (kAfterError when
  // it throws; `on_error` is told). True when it ran.
  bool RunIfDue(const std::function<std::chrono::milliseconds()>& task,
                const std::function<void(const std::exception&)>& on_error);

 private:
  std::atomic<int64_t> due_ns_{INT64_MAX};      // steady clock; INT64_MAX: none asked
  std::atomic<int64_t> when_journaled_ms_{-1};  // -1: not asked
};

}  // namespace skald
