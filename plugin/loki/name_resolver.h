// ResolveWithin: a host name to addresses (getaddrinfo) within a deadline, for the Loki client's
// connections: a name server that never answers holds a push no longer than loki-timeout.
//
// The lookup runs on glibc's resolver thread (getaddrinfo_a); the caller waits for it until the
// deadline or until `cut` is set, looked at every 50 ms. A lookup given up on that glibc cannot
// cancel is kept until it ends and is then freed (at a later call); while 16 such lookups are
// still pending, further names fail at once instead of piling up. An address (IPv4, IPv6) is
// not looked up. Thread-safe.
#pragma once

#include <netdb.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

namespace skald {

struct AddrinfoFree {
  void operator()(addrinfo* a) const { ::freeaddrinfo(a); }
};
using AddrinfoList = std::unique_ptr<addrinfo, AddrinfoFree>;

struct Resolved {
  enum class Failure { kNone, kNotFound, kTimeout, kCut };
  Failure failure = Failure::kNone;
  AddrinfoList addresses;  // when failure == kNone: at least one
  std::string error;       // otherwise: why, for the log (names the host)
};

// TCP addresses of `host`:`port`; `cut` may be null.
Resolved ResolveWithin(const std::string& host, int port,
                       std::chrono::steady_clock::time_point deadline,
                       const std::atomic<bool>* cut);

// Lookups given up on and still running (for tests).
std::size_t AbandonedLookups();

}  // namespace skald
