#include "plugin/driver/shipping_queue.h"

#include <algorithm>

namespace skald {

namespace {
bool MemoryOnly(const ShippingBatch& batch) {
  return !batch.journaled && !batch.end && batch.bytes > 0;
}
}  // namespace

uint64_t ShippingQueue::Push(ShippingBatch batch) {
  const uint64_t id = batch.stream_id;
  bytes_ += batch.bytes;
  lines_ += batch.lines.size();
  if (MemoryOnly(batch)) memory_bytes_[id] += batch.bytes;
  auto [it, fresh] = queues_.try_emplace(id);
  if (fresh) turns_.push_back(id);
  it->second.push_back(std::move(batch));
  const ShippingBatch* pushed = &it->second.back();
  uint64_t dropped = 0;
  while (bytes_ > max_bytes_ && !memory_bytes_.empty()) {
    const uint64_t n = DropOne(pushed);
    if (n == 0) break;
    dropped += n;
  }
  return dropped;
}

uint64_t ShippingQueue::DropOne(const ShippingBatch* pushed) {
  const uint64_t heaviest =
      std::max_element(memory_bytes_.begin(), memory_bytes_.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; })
          ->first;
  auto q = queues_.find(heaviest);
  if (q == queues_.end()) return 0;
  std::deque<ShippingBatch>& batches = q->second;
  auto victim = std::find_if(batches.begin(), batches.end(), MemoryOnly);
  if (victim == batches.end() || &*victim == pushed) return 0;
  const uint64_t lines = victim->lines.size();
  Unaccount(*victim);
  batches.erase(victim);
  if (batches.empty()) {
    queues_.erase(q);
    turns_.erase(std::find(turns_.begin(), turns_.end(), heaviest));
  }
  return lines;
}

bool ShippingQueue::Pop(ShippingBatch* out) {
  if (turns_.empty()) return false;
  const uint64_t id = turns_.front();
  turns_.pop_front();
  auto q = queues_.find(id);
  *out = std::move(q->second.front());
  q->second.pop_front();
  if (q->second.empty()) {
    queues_.erase(q);
  } else {
    turns_.push_back(id);  // its next batch after one of each other stream
  }
  Unaccount(*out);
  return true;
}

void ShippingQueue::Unaccount(const ShippingBatch& batch) {
  bytes_ -= batch.bytes;
  lines_ -= batch.lines.size();
  if (!MemoryOnly(batch)) return;
  auto it = memory_bytes_.find(batch.stream_id);
  if (it == memory_bytes_.end()) return;
  it->second -= std::min(it->second, batch.bytes);
  if (it->second == 0) memory_bytes_.erase(it);
}

}  // namespace skald
