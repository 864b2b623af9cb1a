#include "plugin/loki/name_resolver.h"

#include <arpa/inet.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <list>
#include <mutex>

namespace skald {
namespace {

constexpr std::chrono::milliseconds kCutCheck{50};
constexpr std::size_t kMaxAbandoned = 16;

// One getaddrinfo_a request: glibc's resolver thread writes into it until it ends, so it must
// outlive the wait when given up on.
struct Lookup {
  std::string host;
  std::string service;
  addrinfo hints{};
  gaicb cb{};
};

std::mutex abandoned_mu;
std::list<std::unique_ptr<Lookup>> abandoned;  // guarded by abandoned_mu

// Frees the abandoned lookups that ended; returns how many still run.
std::size_t ReapAbandoned() {
  std::lock_guard lock(abandoned_mu);
  for (auto it = abandoned.begin(); it != abandoned.end();) {
    if (::gai_error(&(*it)->cb) == EAI_INPROGRESS) {
      ++it;
      continue;
    }
    if ((*it)->cb.ar_result != nullptr) ::freeaddrinfo((*it)->cb.ar_result);
    it = abandoned.erase(it);
  }
  return abandoned.size();
}

bool IsAddress(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return ::inet_pton(AF_INET, host.c_str(), buf) == 1 ||
         ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

Resolved Failed(Resolved::Failure failure, std::string error) {
  Resolved r;
  r.failure = failure;
  r.error = std::move(error);
  return r;
}

// A numeric address needs no name server: getaddrinfo answers at once.
Resolved ResolveNumeric(Lookup& lookup) {
  lookup.hints.ai_flags |= AI_NUMERICHOST;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(lookup.host.c_str(), lookup.service.c_str(), &lookup.hints, &found);
  if (rc != 0 || found == nullptr) {
    return Failed(Resolved::Failure::kNotFound,
                  "cannot use the address " + lookup.host + ": " + ::gai_strerror(rc));
  }
  Resolved r;
  r.addresses.reset(found);
  return r;
}

// Waits for a started lookup until it ends, `deadline` passes or `cut` is set. A lookup glibc
// cannot cancel is handed to `abandoned`, which frees it once glibc is done with it.
Resolved AwaitLookup(std::unique_ptr<Lookup> lookup, std::chrono::steady_clock::time_point deadline,
                     const std::atomic<bool>* cut) {
  const std::string& host = lookup->host;
  for (;;) {
    const int state = ::gai_error(&lookup->cb);
    if (state != EAI_INPROGRESS) {
      if (state != 0 || lookup->cb.ar_result == nullptr) {
        if (lookup->cb.ar_result != nullptr) ::freeaddrinfo(lookup->cb.ar_result);
        return Failed(Resolved::Failure::kNotFound,
                      "cannot resolve " + host + ": " + ::gai_strerror(state));
      }
      Resolved r;
      r.addresses.reset(lookup->cb.ar_result);
      return r;
    }
    const bool was_cut = cut != nullptr && cut->load();
    const auto now = std::chrono::steady_clock::now();
    if (was_cut || now >= deadline) {
      Resolved r = Failed(was_cut ? Resolved::Failure::kCut : Resolved::Failure::kTimeout,
                          "cannot resolve " + host + ": " +
                              (was_cut ? std::string("cut")
                                       : "no answer from the name server before the deadline"));
      const int cancel = ::gai_cancel(&lookup->cb);
      if (cancel == EAI_CANCELED) return r;
      if (cancel == EAI_ALLDONE) continue;  // it ended just now: its answer is taken above
      std::lock_guard lock(abandoned_mu);
      abandoned.push_back(std::move(lookup));  // freed once glibc is done with it
      return r;
    }
    const auto wait = std::min<std::chrono::steady_clock::duration>(deadline - now, kCutCheck);
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
    timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    const gaicb* wait_list[] = {&lookup->cb};
    ::gai_suspend(wait_list, 1, &ts);  // returns when it ended, at the timeout or a signal
  }
}

}  // namespace

std::size_t AbandonedLookups() { return ReapAbandoned(); }

Resolved ResolveWithin(const std::string& host, int port,
                       std::chrono::steady_clock::time_point deadline,
                       const std::atomic<bool>* cut) {
  auto lookup = std::make_unique<Lookup>();
  lookup->host = host;
  lookup->service = std::to_string(port);
  lookup->hints.ai_family = AF_UNSPEC;
  lookup->hints.ai_socktype = SOCK_STREAM;
  lookup->hints.ai_flags = AI_NUMERICSERV;
  if (IsAddress(host)) return ResolveNumeric(*lookup);
  if (const std::size_t pending = ReapAbandoned(); pending >= kMaxAbandoned) {
    return Failed(Resolved::Failure::kTimeout,
                  "cannot resolve " + host + ": " + std::to_string(pending) +
                      " earlier lookups are still waiting for the name server");
  }
  lookup->cb.ar_name = lookup->host.c_str();
  lookup->cb.ar_service = lookup->service.c_str();
  lookup->cb.ar_request = &lookup->hints;
  gaicb* list[] = {&lookup->cb};
  sigevent none{};
  none.sigev_notify = SIGEV_NONE;
  if (const int rc = ::getaddrinfo_a(GAI_NOWAIT, list, 1, &none); rc != 0) {
    return Failed(Resolved::Failure::kNotFound,
                  "cannot resolve " + host + ": " + ::gai_strerror(rc));
  }
  return AwaitLookup(std::move(lookup), deadline, cut);
}

}  // namespace skald
