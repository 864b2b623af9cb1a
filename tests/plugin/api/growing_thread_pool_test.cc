#include "plugin/api/growing_thread_pool.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "tests/plugin/plugin_test_support.h"

namespace skald {
namespace {

using testkit::WaitFor;

using namespace std::chrono_literals;

// Workers beyond min_idle go after idle_timeout; min_idle stay (waiting without a timer), and
// every worker carries the pool's thread name.
TEST(GrowingThreadPoolTest, SpareWorkersGoAndTheKeptOnesStayNamed) {
  GrowingThreadPool pool(2, 16, std::chrono::seconds(1), std::chrono::seconds(2), "test-pool");
  EXPECT_EQ(pool.threads(), 2u);
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::atomic<int> running{0};
  std::atomic<int> named{0};
  for (int i = 0; i < 6; ++i) {
    pool.enqueue([&] {
      char name[16] = {};
      pthread_getname_np(pthread_self(), name, sizeof name);
      if (std::string(name) == "test-pool") ++named;
      ++running;
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return release; });
    });
  }
  ASSERT_TRUE(WaitFor([&] { return running.load() == 6; }, 10s)) << running.load();
  EXPECT_GE(pool.threads(), 6u);
  EXPECT_EQ(named.load(), 6);
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();
  EXPECT_TRUE(WaitFor([&] { return pool.threads() == 2; }, 20s)) << pool.threads();
  std::this_thread::sleep_for(1500ms);  // past another idle timeout: the two kept stay
  EXPECT_EQ(pool.threads(), 2u);
  std::atomic<bool> ran{false};
  pool.enqueue([&] { ran = true; });
  EXPECT_TRUE(WaitFor([&] { return ran.load(); }, 10s));
}

}  // namespace
}  // namespace skald
