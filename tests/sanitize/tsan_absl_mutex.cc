// ThreadSanitizer builds (`make tsan`) only. The distribution's Abseil is not built with TSan:
// its Mutex and CondVar synchronize in code TSan does not see, so every member an absl::Mutex
// guards would be reported as a race. These definitions take the place of Abseil's (the
// program's own symbols come first), tell TSan what each call does to the mutex, the
// annotations Abseil makes itself when it is built with TSan, and call Abseil's.
#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/synchronization/mutex.h"

namespace {

#define SKALD_STR2(x) #x
#define SKALD_STR(x) SKALD_STR2(x)

// Abseil's own definition of `member` (its mangled name after "_ZN4absl<ns>").
template <typename Fn>
Fn Real(const char* member) {
  const std::string ns = SKALD_STR(ABSL_OPTION_INLINE_NAMESPACE_NAME);
  const std::string name = "_ZN4absl" + std::to_string(ns.size()) + ns + member;
  void* fn = dlsym(RTLD_NEXT, name.c_str());
  if (fn == nullptr) {
    std::fprintf(stderr, "tsan_absl_mutex: no %s in Abseil\n", name.c_str());
    std::abort();
  }
  return reinterpret_cast<Fn>(fn);
}

// Waits nested in a wait (Abseil's WaitWithTimeout calls WaitWithDeadline, through these).
thread_local int wait_depth = 0;

// The mutex is released for the call (a wait) and held again after it: said once, by the
// outermost of nested waits.
void PreWait(void* mu) {
  if (wait_depth++ > 0) return;
  __tsan_mutex_pre_unlock(mu, 0);
  __tsan_mutex_post_unlock(mu, 0);
}
void PostWait(void* mu) {
  if (--wait_depth > 0) return;
  __tsan_mutex_pre_lock(mu, 0);
  __tsan_mutex_post_lock(mu, 0, 0);
}

}  // namespace

namespace absl {

Mutex::~Mutex() {
  static auto real = Real<void (*)(Mutex*)>("5MutexD2Ev");
  __tsan_mutex_destroy(this, 0);
  real(this);
}

void Mutex::Lock() {
  static auto real = Real<void (*)(Mutex*)>("5Mutex4LockEv");
  __tsan_mutex_pre_lock(this, 0);
  real(this);
  __tsan_mutex_post_lock(this, 0, 0);
}

bool Mutex::TryLock() {
  static auto real = Real<bool (*)(Mutex*)>("5Mutex7TryLockEv");
  __tsan_mutex_pre_lock(this, __tsan_mutex_try_lock);
  const bool locked = real(this);
  __tsan_mutex_post_lock(this, __tsan_mutex_try_lock | (locked ? 0 : __tsan_mutex_try_lock_failed),
                         0);
  return locked;
}

void Mutex::Unlock() {
  static auto real = Real<void (*)(Mutex*)>("5Mutex6UnlockEv");
  __tsan_mutex_pre_unlock(this, 0);
  real(this);
  __tsan_mutex_post_unlock(this, 0);
}

void Mutex::ReaderLock() {
  static auto real = Real<void (*)(Mutex*)>("5Mutex10ReaderLockEv");
  __tsan_mutex_pre_lock(this, __tsan_mutex_read_lock);
  real(this);
  __tsan_mutex_post_lock(this, __tsan_mutex_read_lock, 0);
}

void Mutex::ReaderUnlock() {
  static auto real = Real<void (*)(Mutex*)>("5Mutex12ReaderUnlockEv");
  __tsan_mutex_pre_unlock(this, __tsan_mutex_read_lock);
  real(this);
  __tsan_mutex_post_unlock(this, __tsan_mutex_read_lock);
}

void Mutex::Await(const Condition& cond) {
  static auto real = Real<void (*)(Mutex*, const Condition&)>("5Mutex5AwaitERKNS0_9ConditionE");
  PreWait(this);
  real(this, cond);
  PostWait(this);
}

bool Mutex::AwaitWithTimeout(const Condition& cond, Duration timeout) {
  static auto real = Real<bool (*)(Mutex*, const Condition&, Duration)>(
      "5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  PreWait(this);
  const bool met = real(this, cond, timeout);
  PostWait(this);
  return met;
}

bool Mutex::AwaitWithDeadline(const Condition& cond, Time deadline) {
  static auto real = Real<bool (*)(Mutex*, const Condition&, Time)>(
      "5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  PreWait(this);
  const bool met = real(this, cond, deadline);
  PostWait(this);
  return met;
}

void CondVar::Wait(Mutex* mu) {
  static auto real = Real<void (*)(CondVar*, Mutex*)>("7CondVar4WaitEPNS0_5MutexE");
  PreWait(mu);
  real(this, mu);
  PostWait(mu);
}

bool CondVar::WaitWithTimeout(Mutex* mu, Duration timeout) {
  static auto real = Real<bool (*)(CondVar*, Mutex*, Duration)>(
      "7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE");
  PreWait(mu);
  const bool timed_out = real(this, mu, timeout);
  PostWait(mu);
  return timed_out;
}

bool CondVar::WaitWithDeadline(Mutex* mu, Time deadline) {
  static auto real =
      Real<bool (*)(CondVar*, Mutex*, Time)>("7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE");
  PreWait(mu);
  const bool timed_out = real(this, mu, deadline);
  PostWait(mu);
  return timed_out;
}

}  // namespace absl
