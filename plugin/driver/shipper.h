// Shipper: the shipping thread and the queue that feeds it.
//
// The FIFO reader queues batches of decoded lines (Queue, any thread); the shipping thread
// takes them in the ShippingQueue's turn and hands each to the ShipperWork (the Driver: it runs
// the stream's stages and gives the entries to its Loki client). Besides batches, the thread
// decides two moments:
//   - the input went quiet (the queue stayed empty for QuietGap's gap): the clients given
//     entries since the last quiet moment are asked to send them now, not at loki-batch-wait;
//   - stages hold entries (a multiline block, lines a limit delays): ShipperWork::FlushHeld
//     runs at least every kFlushInterval, so that what they release past their wait leaves.
// Stop() ships every batch queued before it, lets the stages release all they hold, and joins.
//
// Thread safety: Queue, Stop and the readers (Idle, PendingLines, MemoryBytes) take the
// Shipper's own lock, which is never held while ShipperWork runs; a caller may hold its own
// lock around them (the Driver's registry lock is taken before this one, never after).
// NoteUnsent belongs to the shipping thread (ShipperWork calls it while shipping).
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "plugin/driver/quiet_gap.h"
#include "plugin/driver/shipping_client.h"
#include "plugin/driver/shipping_queue.h"
#include "plugin/metrics/metrics.h"

namespace skald {

// What the shipping thread does with what it takes (shipping thread only).
class ShipperWork {
 public:
  virtual ~ShipperWork() = default;
  // One batch of a stream's lines, or its end marker. Returns whether some stage holds entries
  // afterwards (FlushHeld then runs on a timer).
  virtual bool ShipBatch(ShippingBatch& batch) = 0;
  // Releases what stages hold past their wait; `final`: everything (the Shipper stops).
  // Returns whether some stage still holds entries.
  virtual bool FlushHeld(bool final) = 0;
  // The batch ShipBatch was given is no longer in flight (Idle() may have become true).
  virtual void BatchDone() = 0;
};

class Shipper {
 public:
  // How often held entries are looked at while no batch comes.
  static constexpr std::chrono::milliseconds kFlushInterval{200};

  // `max_queued_bytes`: the bound of memory-only batches (ShippingQueue); `quiet_sends`
  // counts the times the input went quiet and the clients were asked to send.
  Shipper(std::size_t max_queued_bytes, Counter& quiet_sends);
  ~Shipper();  // Stop()
  Shipper(const Shipper&) = delete;
  Shipper& operator=(const Shipper&) = delete;

  // Starts the shipping thread; `work` must outlive Stop().
  void Start(ShipperWork& work) ABSL_LOCKS_EXCLUDED(mu_);
  // Ships what is queued, flushes the stages for good and joins the thread. True for the call
  // that stopped it; false when it was stopped already (or never started).
  bool Stop() ABSL_LOCKS_EXCLUDED(mu_, stop_mu_);

  // Queues `batch`; over the bound, memory-only lines of the stream that holds the most are
  // dropped: returns how many.
  uint64_t Queue(ShippingBatch batch) ABSL_LOCKS_EXCLUDED(mu_);

  // Nothing is queued and no batch is being shipped.
  bool Idle() const ABSL_LOCKS_EXCLUDED(mu_);
  // Lines queued or being shipped.
  uint64_t PendingLines() const ABSL_LOCKS_EXCLUDED(mu_);
  // Memory-only bytes `stream_id` has queued.
  std::size_t MemoryBytes(uint64_t stream_id) const ABSL_LOCKS_EXCLUDED(mu_);

  // (Shipping thread) `client` was given entries: it is asked to send them once the input
  // goes quiet.
  void NoteUnsent(const std::shared_ptr<ShippingClient>& client);

 private:
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until `until` for a batch or for stopping_; false: neither came.
  bool WaitForBatchLocked(std::chrono::steady_clock::time_point until)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The queue is empty and clients hold entries given since the input last went quiet: waits
  // for a batch until QuietGap says the input is quiet, then returns those clients (and
  // forgets them). Empty: nothing to send, a batch came, or stopping.
  std::vector<std::shared_ptr<ShippingClient>> TakeUnsentWhenQuietLocked()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Asks `clients` to send what they buffer (no lock).
  void SendQuiet(const std::vector<std::shared_ptr<ShippingClient>>& clients);

  Counter& quiet_sends_;
  ShipperWork* work_ = nullptr;  // set by Start

  mutable absl::Mutex mu_;
  absl::CondVar queue_cv_;  // a batch was queued, or stopping_ set
  ShippingQueue queue_ ABSL_GUARDED_BY(mu_);
  uint64_t in_flight_lines_ ABSL_GUARDED_BY(mu_) = 0;  // taken from the queue, being shipped
  bool in_flight_ ABSL_GUARDED_BY(mu_) = false;        // a batch or an end marker is being shipped
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;

  // Serialises Stop() (the thread is joined once).
  absl::Mutex stop_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  std::thread thread_;  // (stop_mu_ after Start)

  // (Shipping thread) Stages hold entries: FlushHeld runs on a timer.
  bool stages_hold_ = false;
  // (Shipping thread) The clients given entries since the input last went quiet, and when it
  // is quiet enough for them to send those without waiting for loki-batch-wait.
  std::vector<std::shared_ptr<ShippingClient>> unsent_clients_;
  QuietGap quiet_gap_;
};

}  // namespace skald
