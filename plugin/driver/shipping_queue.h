// ShippingQueue: the batches of decoded lines between the FIFO reader and the Driver's
// shipping thread, where pipelines run.
//
// Each stream has its own queue and the streams are served in turn, a batch at a time: a
// stream's batch waits behind at most one batch of each other stream, however many a flooding
// container queued before it, so one container's slow pipeline cannot hold up another's
// lines. Within a stream batches keep their order, the end marker last.
//
// Memory-only batches (no-file streams, which have no journal to wait in) are bounded: past
// `max_bytes` queued in all, the oldest memory-only batch of the stream holding the most
// memory-only bytes is dropped (never an end marker, never a journaled batch, never the batch
// being pushed), so a container that floods the queue loses its own lines, not a neighbour's.
// Journaled batches are bounded by their stream's window and are never dropped here.
//
// Not thread-safe: the Driver guards it with its mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "plugin/ingest/line_assembler.h"
#include "plugin/journal/journal_position.h"

namespace skald {

struct ShippingBatch {
  uint64_t stream_id = 0;
  std::vector<LogLine> lines;  // empty with `end` set: the stream's FIFOs reached their end
  std::size_t bytes = 0;       // of the lines
  bool end = false;
  bool journaled = false;  // never dropped here: the journal bounds it
  JournalPosition resume;
};

class ShippingQueue {
 public:
  explicit ShippingQueue(std::size_t max_bytes) : max_bytes_(max_bytes) {}

  // Appends `batch` to its stream's queue, then drops memory-only batches while the queue is
  // over its bound. Returns the number of lines dropped.
  uint64_t Push(ShippingBatch batch);
  // Takes the next batch: the oldest of the stream whose turn it is. False when empty.
  bool Pop(ShippingBatch* out);

  bool empty() const { return turns_.empty(); }
  // Memory-only bytes `stream_id` has queued.
  std::size_t MemoryBytes(uint64_t stream_id) const {
    auto it = memory_bytes_.find(stream_id);
    return it == memory_bytes_.end() ? 0 : it->second;
  }
  std::size_t bytes() const { return bytes_; }
  uint64_t lines() const { return lines_; }

 private:
  // Drops the oldest memory-only batch of the stream holding the most memory-only bytes,
  // unless that batch is `pushed`. Returns the lines dropped; 0: none could be.
  uint64_t DropOne(const ShippingBatch* pushed);
  // A batch left the queue: the totals no longer count it.
  void Unaccount(const ShippingBatch& batch);

  const std::size_t max_bytes_;
  std::unordered_map<uint64_t, std::deque<ShippingBatch>> queues_;  // by stream; none empty
  std::deque<uint64_t> turns_;  // the streams with batches, the next to be served first
  // Memory-only bytes queued, by stream (a stream with none is absent).
  std::unordered_map<uint64_t, std::size_t> memory_bytes_;
  std::size_t bytes_ = 0;
  uint64_t lines_ = 0;
};

}  // namespace skald
