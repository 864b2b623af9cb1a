#include "plugin/driver/shipment_ledger.h"

#include <algorithm>
#include <cassert>

namespace skald {

void ShipmentLedger::StartAt(JournalPosition cursor) {
  absl::MutexLock lock(&mu_);
  acked_ = persisted_ = cursor;
}

uint64_t ShipmentLedger::NextShipment() const {
  absl::MutexLock lock(&mu_);
  return next_;
}

uint64_t ShipmentLedger::Open(std::size_t entries, JournalPosition cursor, std::size_t bytes,
                              int64_t first_line_ns) {
  absl::MutexLock lock(&mu_);
  const uint64_t number = next_++;
  shipments_.push_back(
      Shipment{number, cursor, static_cast<int64_t>(entries) + 1, bytes, first_line_ns});
  return number;
}

std::size_t ShipmentLedger::Close(uint64_t shipment) {
  absl::MutexLock lock(&mu_);
  Shipment* s = FindLocked(shipment);
  assert(s != nullptr && s->outstanding > 0);  // open until now: it cannot have left
  if (s == nullptr) return 0;
  --s->outstanding;
  return AdvanceLocked();
}

ShipmentLedger::Settlement ShipmentLedger::Settle(uint64_t shipment, std::size_t entries) {
  absl::MutexLock lock(&mu_);
  Settlement out;
  Shipment* s = FindLocked(shipment);
  if (s == nullptr) return out;
  out.known = true;
  s->outstanding -= static_cast<int64_t>(entries);
  assert(s->outstanding >= 0);  // never more settlements than entries
  out.freed = AdvanceLocked();
  out.empty = shipments_.empty();
  return out;
}

ShipmentLedger::Shipment* ShipmentLedger::FindLocked(uint64_t number) {
  // Numbers are consecutive from the front's: the index is the distance from it.
  if (shipments_.empty() || number < shipments_.front().number) return nullptr;
  const uint64_t index = number - shipments_.front().number;
  if (index >= shipments_.size()) return nullptr;
  Shipment& s = shipments_[index];
  assert(s.number == number);
  return &s;
}

std::size_t ShipmentLedger::AdvanceLocked() {
  std::size_t freed = 0;
  while (!shipments_.empty() && shipments_.front().outstanding == 0) {
    const Shipment& s = shipments_.front();
    freed += s.bytes;
    if (acked_ < s.cursor) {
      acked_ = s.cursor;
      acked_moved_ = true;
    }
    shipments_.pop_front();
  }
  return freed;
}

bool ShipmentLedger::Empty() const {
  absl::MutexLock lock(&mu_);
  return shipments_.empty();
}

JournalPosition ShipmentLedger::Acked() const {
  absl::MutexLock lock(&mu_);
  return acked_;
}

std::optional<int64_t> ShipmentLedger::OldestFirstLineNs() const {
  absl::MutexLock lock(&mu_);
  // In the order their lines were read; the front one is not settled yet.
  for (const Shipment& s : shipments_) {
    if (s.first_line_ns != 0) return s.first_line_ns;
  }
  return std::nullopt;
}

std::optional<JournalPosition> ShipmentLedger::TakeUnpersisted() {
  absl::MutexLock lock(&mu_);
  if (!acked_moved_) return std::nullopt;
  acked_moved_ = false;
  return acked_;
}

void ShipmentLedger::RecheckPersisted() {
  absl::MutexLock lock(&mu_);
  acked_moved_ = !(acked_ == persisted_);
}

bool ShipmentLedger::Persist(JournalPosition acked,
                             const std::function<void(JournalPosition)>& write) {
  // The maintenance tick and the thread that retires a stream both persist: never backwards.
  absl::MutexLock write_lock(&write_mu_);
  if (acked < written_) return false;
  write(acked);
  written_ = acked;
  absl::MutexLock lock(&mu_);
  persisted_ = acked;
  return true;
}

void ShipmentLedger::NoteStart(uint64_t shipment, JournalPosition start) {
  absl::MutexLock lock(&mu_);
  starts_.emplace(shipment, start);
}

JournalPosition ShipmentLedger::CursorLimit(std::optional<uint64_t> oldest_held,
                                            JournalPosition resume) {
  absl::MutexLock lock(&mu_);
  // Lines before the oldest shipment a stage holds entries of are all out of the stages.
  if (!oldest_held) {
    starts_.clear();
    return resume;
  }
  starts_.erase(starts_.begin(), starts_.lower_bound(*oldest_held));
  auto it = starts_.find(*oldest_held);
  if (it == starts_.end()) return JournalPosition{};  // unknown: do not move
  return std::min(resume, it->second);
}

}  // namespace skald
