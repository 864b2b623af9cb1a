#include "plugin/driver/shipping_queue.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace skald {
namespace {

// A batch of `lines` lines of `line_bytes` bytes each; its first line names it.
ShippingBatch Batch(uint64_t stream, const std::string& name, std::size_t lines = 1,
                    std::size_t line_bytes = 100, bool journaled = false) {
  ShippingBatch b;
  b.stream_id = stream;
  b.journaled = journaled;
  for (std::size_t i = 0; i < lines; ++i) {
    LogLine l;
    l.line = i == 0 ? name : "";
    l.line.resize(line_bytes, '.');
    b.bytes += l.line.size();
    b.lines.push_back(std::move(l));
  }
  return b;
}

ShippingBatch End(uint64_t stream) {
  ShippingBatch b;
  b.stream_id = stream;
  b.end = true;
  return b;
}

// The batches as they leave the queue, named "<stream>:<first line's name>" or "<stream>:end".
std::vector<std::string> Drain(ShippingQueue& q) {
  std::vector<std::string> out;
  ShippingBatch b;
  while (q.Pop(&b)) {
    std::string name =
        b.end ? "end" : b.lines.front().line.substr(0, b.lines.front().line.find('.'));
    out.push_back(std::to_string(b.stream_id) + ":" + name);
  }
  return out;
}

// The shipping thread runs every container's pipeline: a neighbour's line queued after a
// flooding container's backlog waited for the whole backlog to be shipped (a FIFO queue), and
// a flood with a costly pipeline held it for minutes.
TEST(ShippingQueue, AStreamsBatchWaitsBehindAtMostOneBatchOfAFloodingStream) {
  ShippingQueue q(1 << 30);
  for (int i = 0; i < 50; ++i) q.Push(Batch(1, "f" + std::to_string(i)));
  q.Push(Batch(2, "quiet"));
  ShippingBatch b;
  ASSERT_TRUE(q.Pop(&b));
  EXPECT_EQ(b.stream_id, 1u);
  ASSERT_TRUE(q.Pop(&b));
  EXPECT_EQ(b.stream_id, 2u) << "the quiet stream's batch waits behind the flood";
}

TEST(ShippingQueue, StreamsAreServedInTurnEachInItsOwnOrderWithItsEndLast) {
  ShippingQueue q(1 << 30);
  q.Push(Batch(1, "a1"));
  q.Push(Batch(1, "a2"));
  q.Push(Batch(1, "a3"));
  q.Push(End(1));
  q.Push(Batch(2, "b1"));
  q.Push(End(2));
  q.Push(Batch(3, "c1"));
  EXPECT_EQ(Drain(q),
            (std::vector<std::string>{"1:a1", "2:b1", "3:c1", "1:a2", "2:end", "1:a3", "1:end"}));
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.bytes(), 0u);
  EXPECT_EQ(q.lines(), 0u);
}

TEST(ShippingQueue, CountsTheBytesAndLinesItHolds) {
  ShippingQueue q(1 << 30);
  q.Push(Batch(1, "a", 3, 100));
  q.Push(Batch(2, "b", 2, 50, /*journaled=*/true));
  EXPECT_EQ(q.bytes(), 400u);
  EXPECT_EQ(q.lines(), 5u);
  ShippingBatch b;
  ASSERT_TRUE(q.Pop(&b));
  EXPECT_EQ(q.bytes(), 100u);
  EXPECT_EQ(q.lines(), 2u);
}

TEST(ShippingQueue, OverItsBoundItDropsTheOldestMemoryBatchesOfTheStreamHoldingTheMost) {
  ShippingQueue q(1000);
  q.Push(Batch(2, "quiet", 1, 100));
  for (int i = 0; i < 8; ++i) EXPECT_EQ(q.Push(Batch(1, "f" + std::to_string(i), 1, 100)), 0u);
  EXPECT_EQ(q.Push(Batch(1, "f8", 2, 100)), 1u);  // 1100 bytes: f0 goes
  EXPECT_EQ(q.Push(Batch(1, "f9", 3, 100)), 3u);  // f1, f2, f3 go
  EXPECT_LE(q.bytes(), 1000u);
  const std::vector<std::string> order = Drain(q);
  EXPECT_EQ(order,
            (std::vector<std::string>{"2:quiet", "1:f4", "1:f5", "1:f6", "1:f7", "1:f8", "1:f9"}));
}

TEST(ShippingQueue, NeverDropsJournaledBatchesEndMarkersOrTheBatchBeingPushed) {
  ShippingQueue q(1000);
  q.Push(Batch(1, "j1", 6, 100, /*journaled=*/true));
  q.Push(End(1));
  // A memory batch larger than the bound on its own goes through.
  EXPECT_EQ(q.Push(Batch(2, "big", 20, 100)), 0u);
  EXPECT_EQ(q.bytes(), 2600u);
  // The next one of the same stream takes the older one's place.
  EXPECT_EQ(q.Push(Batch(2, "next", 1, 100)), 20u);
  EXPECT_EQ(Drain(q), (std::vector<std::string>{"1:j1", "2:next", "1:end"}));
}

TEST(ShippingQueue, AStreamWhoseBatchesWereAllDroppedLosesItsTurn) {
  ShippingQueue q(400);
  q.Push(Batch(1, "a", 3, 100));
  q.Push(Batch(2, "b", 1, 100));
  EXPECT_EQ(q.Push(Batch(2, "c", 1, 100)), 3u);  // stream 1 holds the most: its batch goes
  EXPECT_EQ(Drain(q), (std::vector<std::string>{"2:b", "2:c"}));
}

}  // namespace
}  // namespace skald
