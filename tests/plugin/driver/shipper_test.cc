#include "plugin/driver/shipper.h"

#include <absl/synchronization/mutex.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "plugin/metrics/metrics.h"
#include "tests/plugin/driver/quiet_shipping_client.h"

namespace skald {
namespace {

using namespace std::chrono_literals;

ShippingBatch Batch(uint64_t stream_id, std::size_t lines) {
  ShippingBatch batch;
  batch.stream_id = stream_id;
  batch.lines.resize(lines);
  batch.bytes = lines * 10;
  batch.journaled = true;
  return batch;
}

// Records what the shipping thread does; a batch can be held in ShipBatch until released.
class RecordingWork : public ShipperWork {
 public:
  bool ShipBatch(ShippingBatch& batch) override {
    absl::MutexLock lock(&mu_);
    shipped_.push_back(batch.end ? -static_cast<int64_t>(batch.stream_id)
                                 : static_cast<int64_t>(batch.stream_id));
    entered_ = true;
    mu_.Await(absl::Condition(
        +[](bool* hold) { return !*hold; }, &hold_));
    return stages_hold_after_ship_;
  }
  bool FlushHeld(bool final) override {
    absl::MutexLock lock(&mu_);
    (final ? final_flushes_ : flushes_)++;
    if (final) stages_hold_after_ship_ = false;
    return stages_hold_after_ship_;
  }
  void BatchDone() override { batches_done_++; }

  void Hold() {
    absl::MutexLock lock(&mu_);
    hold_ = true;
    entered_ = false;
  }
  void AwaitEntered() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&entered_));
  }
  void Release() {
    absl::MutexLock lock(&mu_);
    hold_ = false;
  }
  void SetStagesHold(bool hold) {
    absl::MutexLock lock(&mu_);
    stages_hold_after_ship_ = hold;
  }
  std::vector<int64_t> shipped() {
    absl::MutexLock lock(&mu_);
    return shipped_;
  }
  int flushes() {
    absl::MutexLock lock(&mu_);
    return flushes_;
  }
  int final_flushes() {
    absl::MutexLock lock(&mu_);
    return final_flushes_;
  }
  std::atomic<int> batches_done_{0};

 private:
  absl::Mutex mu_;
  std::vector<int64_t> shipped_;  // stream ids; an end marker as -id
  bool hold_ = false;
  bool entered_ = false;
  bool stages_hold_after_ship_ = false;
  int flushes_ = 0;
  int final_flushes_ = 0;
};

class CountingClient : public testkit::QuietShippingClient {
 public:
  CountingClient() : QuietShippingClient(LokiClientConfig{}) {}
  void SendBuffered() override { sends++; }
  std::atomic<int> sends{0};
};

// Polls `done` every millisecond for at most `limit` (a liveness bound, not a timing).
template <typename F>
bool Eventually(F done, std::chrono::milliseconds limit = 3s) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

class ShipperTest : public ::testing::Test {
 protected:
  MetricsRegistry metrics_;
  Counter& quiet_sends_ = metrics_.GetCounter("quiet_sends_total", "test");
};

TEST_F(ShipperTest, StopShipsEveryQueuedBatchInTheStreamsTurnsThenFlushesTheStagesForGood) {
  RecordingWork work;
  Shipper shipper(1 << 20, quiet_sends_);
  work.Hold();  // the first batch is held in ShipBatch while the rest is queued
  shipper.Start(work);
  shipper.Queue(Batch(1, 5));
  work.AwaitEntered();
  shipper.Queue(Batch(1, 5));
  shipper.Queue(Batch(1, 5));
  ShippingBatch end = Batch(1, 0);
  end.end = true;
  shipper.Queue(std::move(end));
  shipper.Queue(Batch(2, 5));
  EXPECT_EQ(shipper.PendingLines(), 20u);  // 15 queued, 5 in flight
  std::thread stopper([&] { EXPECT_TRUE(shipper.Stop()); });
  work.Release();
  stopper.join();
  // Stream 2's batch waits behind one batch of stream 1, not behind all of them; stream 1's
  // end marker comes after its lines.
  EXPECT_EQ(work.shipped(), (std::vector<int64_t>{1, 1, 2, 1, -1}));
  EXPECT_EQ(work.final_flushes(), 1);
  EXPECT_EQ(work.batches_done_.load(), 5);
  EXPECT_TRUE(shipper.Idle());
  EXPECT_EQ(shipper.PendingLines(), 0u);
  EXPECT_FALSE(shipper.Stop()) << "a second Stop has nothing to stop";
}

TEST_F(ShipperTest, ABatchBeingShippedIsNotIdleAndItsEndSaysSo) {
  RecordingWork work;
  Shipper shipper(1 << 20, quiet_sends_);
  shipper.Start(work);
  EXPECT_TRUE(shipper.Idle());
  work.Hold();
  shipper.Queue(Batch(7, 3));
  work.AwaitEntered();
  // Out of the queue, not yet shipped: still pending, not idle.
  EXPECT_FALSE(shipper.Idle());
  EXPECT_EQ(shipper.PendingLines(), 3u);
  EXPECT_EQ(work.batches_done_.load(), 0);
  work.Release();
  ASSERT_TRUE(Eventually([&] { return work.batches_done_.load() == 1; }));
  EXPECT_TRUE(shipper.Idle());
  EXPECT_EQ(shipper.PendingLines(), 0u);
  shipper.Stop();
}

TEST_F(ShipperTest, AnEndMarkerBeingShippedIsNotIdleEither) {
  RecordingWork work;
  Shipper shipper(1 << 20, quiet_sends_);
  shipper.Start(work);
  work.Hold();
  ShippingBatch end = Batch(3, 0);
  end.end = true;
  shipper.Queue(std::move(end));
  work.AwaitEntered();
  EXPECT_FALSE(shipper.Idle()) << "the stream's end is being worked on";
  work.Release();
  ASSERT_TRUE(Eventually([&] { return work.batches_done_.load() == 1; }));
  EXPECT_TRUE(shipper.Idle());
  shipper.Stop();
}

TEST_F(ShipperTest, ClientsGivenEntriesAreAskedToSendOnceTheInputGoesQuiet) {
  auto client = std::make_shared<CountingClient>();
  struct NotingWork : RecordingWork {
    Shipper* shipper = nullptr;
    std::shared_ptr<ShippingClient> client;
    bool ShipBatch(ShippingBatch& batch) override {
      shipper->NoteUnsent(client);  // as the Driver does when it hands entries to a client
      shipper->NoteUnsent(client);  // twice: asked once all the same
      return RecordingWork::ShipBatch(batch);
    }
  } work;
  Shipper shipper(1 << 20, quiet_sends_);
  work.shipper = &shipper;
  work.client = client;
  shipper.Start(work);
  shipper.Queue(Batch(1, 2));
  ASSERT_TRUE(Eventually([&] { return client->sends.load() == 1; }));
  EXPECT_EQ(quiet_sends_.Value(), 1u);
  // Nothing was given since: the next quiet moment asks nobody.
  std::this_thread::sleep_for(QuietGap::kMaxGap * 2);
  EXPECT_EQ(client->sends.load(), 1);
  EXPECT_EQ(quiet_sends_.Value(), 1u);
  shipper.Stop();
}

TEST_F(ShipperTest, StagesThatHoldEntriesAreFlushedOnATimerUntilTheyHoldNone) {
  RecordingWork work;
  Shipper shipper(1 << 20, quiet_sends_);
  shipper.Start(work);
  work.SetStagesHold(true);
  shipper.Queue(Batch(1, 1));
  // No batch comes: the held entries are looked at every kFlushInterval all the same.
  ASSERT_TRUE(Eventually([&] { return work.flushes() >= 2; }));
  work.SetStagesHold(false);
  ASSERT_TRUE(Eventually([&] { return work.flushes() >= 3; }));
  const int after = work.flushes();
  std::this_thread::sleep_for(Shipper::kFlushInterval * 3);
  EXPECT_LE(work.flushes(), after + 1) << "no timer once the stages hold nothing";
  shipper.Stop();
  EXPECT_EQ(work.final_flushes(), 1);
}

TEST_F(ShipperTest, OverItsBoundTheQueueDropsMemoryOnlyLinesAndSaysHowMany) {
  RecordingWork work;
  Shipper shipper(100, quiet_sends_);  // not started: everything stays queued
  ShippingBatch memory = Batch(1, 8);  // 80 bytes
  memory.journaled = false;
  EXPECT_EQ(shipper.Queue(std::move(memory)), 0u);
  EXPECT_EQ(shipper.MemoryBytes(1), 80u);
  ShippingBatch more = Batch(1, 5);  // 50 more: over the bound, the oldest goes
  more.journaled = false;
  EXPECT_EQ(shipper.Queue(std::move(more)), 8u);
  EXPECT_EQ(shipper.MemoryBytes(1), 50u);
  EXPECT_EQ(shipper.PendingLines(), 5u);
  EXPECT_FALSE(shipper.Stop()) << "never started";
}

}  // namespace
}  // namespace skald
