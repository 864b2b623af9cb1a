#include "plugin/loki/name_resolver.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "tests/tools/test_slowdown.h"

namespace skald {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST(NameResolverTest, AddressesAreTakenAsTheyAre) {
  for (const char* host : {"127.0.0.1", "::1"}) {
    const Resolved r = ResolveWithin(host, 3100, Clock::now() + 1s, nullptr);
    ASSERT_EQ(r.failure, Resolved::Failure::kNone) << host << ": " << r.error;
    ASSERT_NE(r.addresses, nullptr);
    EXPECT_EQ(r.addresses->ai_socktype, SOCK_STREAM);
  }
}

TEST(NameResolverTest, ANameFromTheHostsFileResolves) {
  const Resolved r = ResolveWithin("localhost", 3100, Clock::now() + 10s, nullptr);
  ASSERT_EQ(r.failure, Resolved::Failure::kNone) << r.error;
  const auto* in = reinterpret_cast<const sockaddr_in*>(r.addresses->ai_addr);
  EXPECT_EQ(in->sin_port, htons(3100));
}

// What the child below found; 0 is success.
enum ChildExit {
  kOk = 0,
  kNoPrivilege = 10,       // unshare or mount refused: not root
  kNoBlackHole = 13,       // 127.0.0.1:53 taken
  kResolverAnswered = 20,  // the set-up did not make the name server hang
  kDeadlineMissed = 21,    // ResolveWithin outlived its deadline
  kWrongFailure = 22,      // ... or did not say it timed out
  kCutMissed = 23,         // a cut did not end the lookup
};

// The child's side: a name server (127.0.0.1:53, a UDP socket nobody reads) that never
// answers, in a mount namespace of its own whose /etc/resolv.conf names it.
int HangingNameServerChild(const std::string& dir) {
  if (::unshare(CLONE_NEWNS) != 0) return kNoPrivilege;
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return kNoPrivilege;
  const std::string conf = dir + "/resolv.conf";
  FILE* f = std::fopen(conf.c_str(), "w");
  if (f == nullptr) return kNoPrivilege;
  std::fputs("nameserver 127.0.0.1\noptions timeout:1 attempts:2\n", f);
  std::fclose(f);
  if (::mount(conf.c_str(), "/etc/resolv.conf", nullptr, MS_BIND, nullptr) != 0) {
    return kNoPrivilege;
  }
  const int udp = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(53);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(udp, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return kNoBlackHole;

  // The set-up works: a plain getaddrinfo waits for the name server (2 tries of 1 s).
  auto t0 = Clock::now();
  addrinfo* found = nullptr;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  if (::getaddrinfo("skald-plain.invalid", "80", &hints, &found) == 0) ::freeaddrinfo(found);
  if (Clock::now() - t0 < 1500ms) return kResolverAnswered;

  t0 = Clock::now();
  const Resolved r = ResolveWithin("skald-deadline.invalid", 80, t0 + 300ms, nullptr);
  if (Clock::now() - t0 > testkit::Slowed(1s)) return kDeadlineMissed;
  if (r.failure != Resolved::Failure::kTimeout) return kWrongFailure;

  std::atomic<bool> cut{false};
  std::thread cutter([&] {
    std::this_thread::sleep_for(200ms);
    cut.store(true);
  });
  t0 = Clock::now();
  const Resolved c = ResolveWithin("skald-cut.invalid", 80, t0 + 30s, &cut);
  const auto took = Clock::now() - t0;
  cutter.join();
  if (c.failure != Resolved::Failure::kCut || took > testkit::Slowed(1s)) return kCutMissed;
  return kOk;
}

// A name server that never answers holds a lookup only until the deadline or a cut (plain
// getaddrinfo waits for the resolver's every timeout and try: 2 s here, 10 s by default, per
// server). In a child process: it changes its mount namespace.
TEST(NameResolverTest, ANameServerThatNeverAnswersHoldsALookupOnlyUntilTheDeadlineOrACut) {
  char tmpl[] = "/tmp/skald-resolver-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(HangingNameServerChild(dir));
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  std::remove((dir + "/resolv.conf").c_str());
  rmdir(dir.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << status;
  const int code = WEXITSTATUS(status);
  if (code == kNoPrivilege) GTEST_SKIP() << "needs root: a mount namespace of its own";
  if (code == kNoBlackHole) GTEST_SKIP() << "127.0.0.1:53 is taken on this machine";
  EXPECT_EQ(code, kOk) << "see ChildExit: 20 the name server answered, 21 the deadline missed, "
                          "22 not a timeout, 23 the cut missed";
}

}  // namespace
}  // namespace skald
