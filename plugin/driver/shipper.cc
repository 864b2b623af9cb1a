#include "plugin/driver/shipper.h"

#include <algorithm>
#include <utility>

#include "plugin/common/thread_name.h"

namespace skald {

Shipper::Shipper(std::size_t max_queued_bytes, Counter& quiet_sends)
    : quiet_sends_(quiet_sends), queue_(max_queued_bytes) {}

Shipper::~Shipper() { Stop(); }

void Shipper::Start(ShipperWork& work) {
  absl::MutexLock stop_lock(&stop_mu_);
  work_ = &work;
  thread_ = std::thread([this] {
    SetThreadName("skald-ship");
    Loop();
  });
}

bool Shipper::Stop() {
  absl::MutexLock stop_lock(&stop_mu_);
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  queue_cv_.SignalAll();
  if (!thread_.joinable()) return false;
  thread_.join();  // hands every queued batch to the work
  return true;
}

uint64_t Shipper::Queue(ShippingBatch batch) {
  uint64_t dropped = 0;
  {
    absl::MutexLock lock(&mu_);
    dropped = queue_.Push(std::move(batch));
  }
  queue_cv_.Signal();
  return dropped;
}

bool Shipper::Idle() const {
  absl::MutexLock lock(&mu_);
  return queue_.empty() && !in_flight_;
}

uint64_t Shipper::PendingLines() const {
  absl::MutexLock lock(&mu_);
  return queue_.lines() + in_flight_lines_;
}

std::size_t Shipper::MemoryBytes(uint64_t stream_id) const {
  absl::MutexLock lock(&mu_);
  return queue_.MemoryBytes(stream_id);
}

void Shipper::NoteUnsent(const std::shared_ptr<ShippingClient>& client) {
  // A handful of clients at most between two quiet moments, mostly the same one again.
  if (std::find(unsent_clients_.begin(), unsent_clients_.end(), client) == unsent_clients_.end())
    unsent_clients_.push_back(client);
}

void Shipper::Loop() {
  auto last_flush = std::chrono::steady_clock::now();
  for (;;) {
    ShippingBatch batch;
    {
      absl::ReleasableMutexLock lock(&mu_);
      if (auto quiet = TakeUnsentWhenQuietLocked(); !quiet.empty()) {
        lock.Release();
        SendQuiet(quiet);
        continue;
      }
      // Only stages that hold entries need a timer.
      bool ready = true;
      if (stages_hold_) {
        ready = WaitForBatchLocked(std::chrono::steady_clock::now() + kFlushInterval);
      } else {
        while (queue_.empty() && !stopping_) queue_cv_.Wait(&mu_);
      }
      if (stages_hold_ &&
          (!ready || std::chrono::steady_clock::now() - last_flush >= kFlushInterval)) {
        lock.Release();
        stages_hold_ = work_->FlushHeld(false);
        last_flush = std::chrono::steady_clock::now();
        continue;
      }
      if (queue_.empty()) {  // stopping and drained
        lock.Release();
        stages_hold_ = work_->FlushHeld(true);
        return;
      }
      queue_.Pop(&batch);
      quiet_gap_.Arrived(std::chrono::steady_clock::now());
      in_flight_lines_ = batch.lines.size();
      in_flight_ = true;
    }
    if (work_->ShipBatch(batch)) stages_hold_ = true;
    {
      absl::MutexLock lock(&mu_);
      in_flight_lines_ = 0;
      in_flight_ = false;
    }
    work_->BatchDone();
  }
}

std::vector<std::shared_ptr<ShippingClient>> Shipper::TakeUnsentWhenQuietLocked() {
  std::vector<std::shared_ptr<ShippingClient>> clients;
  if (unsent_clients_.empty() || !queue_.empty() || stopping_) return clients;
  if (!WaitForBatchLocked(quiet_gap_.SendAt(std::chrono::steady_clock::now()))) {
    clients.swap(unsent_clients_);
  }
  return clients;
}

void Shipper::SendQuiet(const std::vector<std::shared_ptr<ShippingClient>>& clients) {
  // Counted before the push: whoever sees the lines arrive sees the send counted.
  quiet_sends_.Add(1);
  for (const auto& client : clients) client->SendBuffered();
  quiet_gap_.Sent(std::chrono::steady_clock::now());
}

bool Shipper::WaitForBatchLocked(std::chrono::steady_clock::time_point until) {
  while (queue_.empty() && !stopping_) {
    const auto left = until - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return false;
    queue_cv_.WaitWithTimeout(&mu_, absl::FromChrono(left));
  }
  return true;
}

}  // namespace skald
