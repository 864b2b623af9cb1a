#include "plugin/driver/client_pool.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "tests/plugin/driver/quiet_shipping_client.h"

namespace skald {
namespace {

using namespace std::chrono_literals;

// A client that only counts: what it holds is set by the test; its end is counted.
class CountingClient : public testkit::QuietShippingClient {
 public:
  CountingClient(LokiClientConfig config, int* freed)
      : QuietShippingClient(std::move(config)), freed_(freed) {}
  ~CountingClient() override { ++*freed_; }
  uint64_t Pending() const override { return pending; }

  uint64_t pending = 0;

 private:
  int* freed_;
};

LokiClientConfig Config(const std::string& url) {
  LokiClientConfig c;
  c.url = url;
  return c;
}

class ClientPoolTest : public ::testing::Test {
 protected:
  ClientPool::Factory Factory() {
    return [this](const LokiClientConfig& c) -> std::shared_ptr<ShippingClient> {
      ++made_;
      if (c.url == "http://refused/") throw std::runtime_error("cannot make it");
      return std::make_shared<CountingClient>(c, &freed_);
    };
  }
  int made_ = 0;
  int freed_ = 0;
};

TEST_F(ClientPoolTest, OneClientAndOneWindowPerConfiguration) {
  ClientPool pool(Factory(), 60s);
  ClientPool::Window w1, w2, w3;
  auto a = pool.For(Config("http://a/"), &w1);
  auto a_again = pool.For(Config("http://a/"), &w2);
  auto b = pool.For(Config("http://b/"), &w3);
  EXPECT_EQ(a, a_again);
  EXPECT_EQ(w1, w2);
  EXPECT_NE(a, b);
  EXPECT_NE(w1, w3);
  EXPECT_EQ(made_, 2);
  EXPECT_EQ(pool.size(), 2u);
  EXPECT_EQ(pool.All().size(), 2u);
}

TEST_F(ClientPoolTest, AFactoryThatThrowsLeavesNothingInThePool) {
  ClientPool pool(Factory(), 60s);
  ClientPool::Window w;
  EXPECT_THROW(pool.For(Config("http://refused/"), &w), std::runtime_error);
  EXPECT_EQ(pool.size(), 0u);
  EXPECT_EQ(w, nullptr);
}

// A client in use, or still held by someone (a stream going, a start that just got it), or
// with entries on their way, stays; one idle for the timeout goes and a later stream gets a
// new one.
TEST_F(ClientPoolTest, OnlyAClientNobodyHoldsWithNothingPendingIsRetiredAfterTheTimeout) {
  ClientPool pool(Factory(), 0ms);
  ClientPool::Window w;
  auto used = pool.For(Config("http://used/"), &w);
  auto held = pool.For(Config("http://held/"), &w);
  auto pending = pool.For(Config("http://pending/"), &w);
  static_cast<CountingClient&>(*pending).pending = 3;
  const ShippingClient* pending_raw = pending.get();
  pending.reset();
  pool.For(Config("http://idle/"), &w);  // held by the pool alone
  ASSERT_EQ(pool.size(), 4u);

  const auto next = pool.RetireIdle({used.get()}, 1h);
  EXPECT_EQ(pool.size(), 3u) << "only the idle one goes";
  EXPECT_EQ(freed_, 1);
  EXPECT_LE(next, 1s) << "the held and the pending ones are looked at again soon";

  held.reset();
  for (const auto& c : pool.All()) {
    if (c.get() == pending_raw) static_cast<CountingClient&>(*c).pending = 0;
  }
  EXPECT_EQ(pool.RetireIdle({used.get()}, 1h), 1h) << "nothing waits any more";
  EXPECT_EQ(pool.size(), 1u);
  EXPECT_EQ(freed_, 3);

  pool.For(Config("http://idle/"), &w);
  EXPECT_EQ(made_, 5) << "a later stream with the same options gets a new client";
}

TEST_F(ClientPoolTest, AnUnusedClientWaitsOutTheTimeout) {
  ClientPool pool(Factory(), 1h);
  ClientPool::Window w;
  pool.For(Config("http://idle/"), &w);
  const auto next = pool.RetireIdle({}, std::chrono::milliseconds::max());
  EXPECT_EQ(pool.size(), 1u);
  EXPECT_GT(next, 59min);
  EXPECT_LE(next, 1h);
}

TEST_F(ClientPoolTest, PendingSumsTheClientsAndTakeAllEmptiesThePool) {
  ClientPool pool(Factory(), 60s);
  ClientPool::Window w;
  static_cast<CountingClient&>(*pool.For(Config("http://a/"), &w)).pending = 2;
  static_cast<CountingClient&>(*pool.For(Config("http://b/"), &w)).pending = 5;
  EXPECT_EQ(pool.Pending(), 7u);
  auto all = pool.TakeAll();
  EXPECT_EQ(all.size(), 2u);
  EXPECT_EQ(pool.size(), 0u);
  EXPECT_EQ(pool.Pending(), 0u);
}

}  // namespace
}  // namespace skald
