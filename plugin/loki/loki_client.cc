#include "plugin/loki/loki_client.h"

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>
#include <absl/time/time.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "pipeline_stages/tenant_id.h"
#include "plugin/common/log_limiter.h"
#include "plugin/common/thread_name.h"
#include "plugin/loki/lane_sender.h"
#include "plugin/loki/loki_credentials.h"
#include "plugin/loki/loki_endpoint.h"
#include "plugin/loki/push_encoder.h"
#include "plugin/loki/request_watchdog.h"

namespace skald {
namespace {

using Clock = std::chrono::steady_clock;

// Threads that may still start, for tests (LokiClient::SetThreadLimitForTesting); -1: no limit.
std::atomic<int> thread_limit_for_testing{-1};

std::thread StartThread(const char* name, std::function<void()> body) {
  int left = thread_limit_for_testing.load();
  while (left >= 0) {
    if (left == 0) throw std::system_error(EAGAIN, std::generic_category(), "thread limit (test)");
    if (thread_limit_for_testing.compare_exchange_weak(left, left - 1)) break;
  }
  return std::thread([name, body = std::move(body)] {
    SetThreadName(name);
    body();
  });
}

constexpr std::size_t kEntryOverheadBytes = 64;  // bookkeeping per buffered entry, roughly

// The selector is shared by the entries of a stream: not counted per entry.
std::size_t EntryMemory(const LokiEntry& e) {
  std::size_t n = kEntryOverheadBytes + e.tenant.size() + e.line.size();
  for (const auto& [name, value] : e.structured_metadata) n += 32 + name.size() + value.size();
  return n;
}

}  // namespace

struct LokiClient::Impl {
  struct Queued {
    LokiEntry entry;  // entry.tenant holds the effective tenant
    uint64_t seq;
    Clock::time_point enqueued;
    std::size_t bytes;   // line + structured metadata
    std::size_t memory;  // counted against max_buffered_bytes
  };
  // Waiting entries, oldest first: a vector read from `head_` on. A deque allocated a node for
  // every three entries on the shipping thread and the lane freed it, both under mu_ (glibc's
  // cross-thread free: a tenth of the lane's time); this allocates nothing per entry, and a
  // lane takes a whole queue by trading its storage for the last batch's (SwapAll).
  class EntryQueue {
   public:
    bool empty() const { return head_ == v_.size(); }
    std::size_t size() const { return v_.size() - head_; }
    Queued& front() { return v_[head_]; }
    const Queued& front() const { return v_[head_]; }
    Queued& back() { return v_.back(); }
    void push_back(Queued&& q) { v_.push_back(std::move(q)); }
    // Removes the oldest entry (what it holds is freed now); references to the others stay
    // valid but after a compaction (more dropped than left, past kCompactAfter).
    void pop_front() {
      v_[head_] = Queued{};
      if (++head_ == v_.size()) {
        v_.clear();
        head_ = 0;
      } else if (head_ >= kCompactAfter && head_ * 2 >= v_.size()) {
        DropHead();
      }
    }
    std::vector<Queued>::iterator begin() {
      return v_.begin() + static_cast<std::ptrdiff_t>(head_);
    }
    std::vector<Queued>::iterator end() { return v_.end(); }
    // Moves every entry, in order, to `out` (empty), whose storage this queue keeps.
    void SwapAll(std::vector<Queued>& out) {
      DropHead();
      v_.swap(out);
      v_.clear();
    }

   private:
    static constexpr std::size_t kCompactAfter = 1024;
    // Removes the popped slots before head_.
    void DropHead() {
      v_.erase(v_.begin(), v_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    std::vector<Queued> v_;
    std::size_t head_ = 0;
  };
  // Entries of one tenant waiting in one lane, oldest first.
  struct TenantQueue {
    EntryQueue entries;
    std::size_t bytes = 0;
  };
  // Tenant queues a lane keeps when they are empty (their storage reused by the next batches);
  // past this many tenants an empty queue is removed.
  static constexpr std::size_t kKeptEmptyQueues = 4;
  // What a lane sends from (guarded by mu_, as part of queues_).
  struct LaneQueues {
    std::map<std::string, TenantQueue> tenants;
    uint64_t inflight_min_seq = UINT64_MAX;  // oldest entry of the batch being sent
    Clock::time_point inflight_since;        // when that entry was pushed
  };
  // A lane's thread and what only it touches (but `cv`, `sender`'s cross-thread calls and
  // `finished`).
  struct Lane {
    std::size_t index = 0;  // into queues_
    absl::CondVar cv;       // waited on with mu_: its queues changed, or the client stops
    std::thread thread;
    std::unique_ptr<LaneSender> sender;
    std::atomic<bool> finished{false};
    PushEncoder encoder;
    // Scratch for grouping a batch by stream.
    std::unordered_map<std::string_view, std::size_t> stream_index;
    std::vector<std::string_view> stream_labels;
    std::vector<std::vector<const LokiEntry*>> stream_entries;
    std::vector<PushStream> streams;
  };
  struct DropCounters {
    Counter* entries;
    Counter* bytes;
  };

  Impl(LokiClientConfig c, MetricsRegistry& m);
  ~Impl();

  void PushAll(std::vector<LokiEntry>& entries) ABSL_LOCKS_EXCLUDED(mu_);
  // What PushAll did not queue: entries that could never fit, entries whose tenant Loki would
  // refuse (settled once the lock is released), and how many queued entries made room.
  struct Refused {
    std::vector<LokiEntry> too_big;
    std::vector<LokiEntry> invalid_tenant;
    std::string invalid_tenant_why;  // of one of them
    uint64_t dropped_for_room = 0;
  };
  // PushAll after Stop: a durable client's entries stay unacknowledged (replayed), the others
  // are dropped (`shutdown`).
  void SettleAfterStop(std::vector<LokiEntry>& entries);
  // Queues each entry on its stream's lane and tenant, making room by dropping the oldest
  // (non-durable); what cannot be queued goes to `refused`.
  void QueueLocked(std::vector<LokiEntry>& entries, Refused& refused)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts, settles and logs (rate-limited) what QueueLocked refused.
  void SettleRefused(Refused& refused);
  bool Flush(std::chrono::milliseconds deadline) ABSL_LOCKS_EXCLUDED(mu_);
  void SendBuffered() ABSL_LOCKS_EXCLUDED(mu_);
  void Stop(std::chrono::milliseconds deadline) ABSL_LOCKS_EXCLUDED(mu_);
  std::optional<Clock::time_point> OldestPendingSince() const ABSL_LOCKS_EXCLUDED(mu_);

  void LaneLoop(Lane& lane) ABSL_LOCKS_EXCLUDED(mu_);
  // Delivers `batch` (one tenant), splitting on 413; accounts for every entry.
  void Deliver(Lane& lane, std::span<Queued> batch) ABSL_LOCKS_EXCLUDED(mu_);
  // The push body of `batch`: its entries grouped by stream, each stream's in order, encoded
  // by the lane's encoder (the view lives until the lane's next Encode).
  std::string_view EncodeByStream(Lane& lane, std::span<const Queued> batch);
  // Deliver's end of a batch Loki refused for good: counts the refused entries as dropped with
  // Loki's reason; of a 400, the entries Loki kept count as delivered.
  void SettleRefusedBatch(const LaneSender::Result& result, std::span<Queued> batch);
  // Logs (rate-limited) why `batch` is dropped.
  void LogDrop(const std::string& reason, const LaneSender::Result& result,
               std::span<const Queued> batch);
  // Ends the lanes (a request in flight is cut) and the watchdog, and joins those started.
  void StopThreads() ABSL_LOCKS_EXCLUDED(mu_);
  // The watchdog's sweep over every lane's request.
  Clock::time_point CutOverdueRequests(Clock::time_point now);

  // Account entries that leave the client. Lock-free.
  void CountDropped(const std::string& reason, uint64_t entries, uint64_t bytes);
  void CountDropped(const std::string& reason, std::span<const Queued> batch);
  void Settle(uint64_t entries);
  // Tells the producers of `batch` (their tickets' listeners) that the entries left.
  static void Notify(std::span<const Queued> batch, bool final);
  static void Notify(const LokiEntry& entry, bool final);
  // Removes the oldest entry of the fullest queue. False when none is.
  bool DropOldestLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool FlushedLocked(uint64_t target) const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  LokiClientConfig config;
  LogLimiter log_limiter;
  LokiEndpoint target;  // after config and log_limiter, which it refers to
  std::string redacted_url;
  LokiCredentials credentials_;  // as read when the client started (senders keep their own)

  Counter& entries_sent;
  Counter& sent_bytes;
  Counter& encoded_bytes;
  Gauge& pending_gauge;
  std::map<std::string, DropCounters> drops;  // fixed after construction

  RequestWatchdog watchdog_;
  std::thread watchdog_thread_;
  std::vector<std::unique_ptr<Lane>> lanes_;  // fixed after construction

  mutable absl::Mutex mu_;
  absl::CondVar done_cv_;  // waited on with mu_: entries left the client
  std::vector<LaneQueues> queues_ ABSL_GUARDED_BY(mu_);  // one per lane
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;
  // Entries with seq below this are sent without waiting.
  uint64_t flush_target_ ABSL_GUARDED_BY(mu_) = 0;
  std::size_t queued_memory_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;   // Push() refused
  bool aborted_ ABSL_GUARDED_BY(mu_) = false;  // lanes stop sending
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> pending_{0};
};

LokiClient::Impl::Impl(LokiClientConfig c, MetricsRegistry& m)
    : config([&] {
        if (std::string err = ValidateLokiClientConfig(c); !err.empty()) {
          throw std::invalid_argument(err);
        }
        if (c.lanes < 1) c.lanes = 1;
        return std::move(c);
      }()),
      target(config, m, log_limiter),
      redacted_url(target.redacted_url),
      entries_sent(m.GetCounter("skald_entries_sent_total", "Entries delivered to Loki.")),
      sent_bytes(m.GetCounter("skald_sent_bytes_total",
                              "Line and structured-metadata bytes delivered to Loki.")),
      encoded_bytes(m.GetCounter("skald_encoded_bytes_total",
                                 "Bytes of push request bodies built (protobuf + snappy).")),
      pending_gauge(m.GetGauge("skald_client_pending_entries",
                               "Entries accepted and not yet delivered or dropped.")),
      watchdog_([this](Clock::time_point now) { return CutOverdueRequests(now); }) {
  if (std::string err = LoadLokiCredentials(config, target.url, credentials_); !err.empty()) {
    throw std::invalid_argument(err);
  }
  if (std::string err = CheckLokiTlsFiles(config); !err.empty()) {
    throw std::invalid_argument(err);
  }
  for (std::string_view reason : AllDropReasons()) {
    const MetricLabels labels = {{"reason", std::string(reason)}};
    drops[std::string(reason)] = {
        &m.GetCounter("skald_entries_dropped_total", "Entries dropped, by reason.", labels),
        &m.GetCounter("skald_dropped_bytes_total",
                      "Line and structured-metadata bytes of dropped entries, by reason.", labels)};
  }
  {
    absl::MutexLock lock(&mu_);
    queues_.resize(static_cast<std::size_t>(config.lanes));
  }
  for (int i = 0; i < config.lanes; ++i) {
    auto lane = std::make_unique<Lane>();
    lane->index = static_cast<std::size_t>(i);
    lane->sender = std::make_unique<LaneSender>(target, credentials_, watchdog_);
    lanes_.push_back(std::move(lane));
  }
  // A thread that cannot start must not leave the others running (a joinable std::thread
  // destroyed by the unwinding would end the process): stop those started, then report.
  try {
    for (auto& lane : lanes_) {
      Lane* l = lane.get();
      l->thread = StartThread("skald-lane", [this, l] { LaneLoop(*l); });
    }
    watchdog_thread_ = StartThread("skald-watchdog", [this] { watchdog_.Run(); });
  } catch (const std::exception& e) {
    StopThreads();
    throw std::runtime_error("skald: cannot start the Loki client for " + redacted_url +
                             ": cannot create a thread (" + e.what() + ")");
  }
}

LokiClient::Impl::~Impl() { Stop(std::chrono::milliseconds(0)); }

Clock::time_point LokiClient::Impl::CutOverdueRequests(Clock::time_point now) {
  auto next = Clock::time_point::max();
  for (auto& lane : lanes_) next = std::min(next, lane->sender->CutIfOverdue(now));
  return next;
}

std::optional<Clock::time_point> LokiClient::Impl::OldestPendingSince() const {
  absl::MutexLock lock(&mu_);
  std::optional<Clock::time_point> oldest;
  auto consider = [&oldest](Clock::time_point t) {
    if (!oldest || t < *oldest) oldest = t;
  };
  for (const LaneQueues& q : queues_) {
    if (q.inflight_min_seq != UINT64_MAX) consider(q.inflight_since);
    // Each queue is oldest first.
    for (const auto& [tenant, tq] : q.tenants) {
      if (!tq.entries.empty()) consider(tq.entries.front().enqueued);
    }
  }
  return oldest;
}

void LokiClient::Impl::Settle(uint64_t entries) {
  pending_.fetch_sub(entries, std::memory_order_relaxed);
  pending_gauge.Add(-static_cast<int64_t>(entries));
}

void LokiClient::Impl::Notify(std::span<const Queued> batch, bool final) {
  std::vector<DeliveryTicket> tickets;
  for (const Queued& q : batch) {
    const DeliveryTicket& t = q.entry.ticket;
    if (t.listener == nullptr) continue;
    if (!tickets.empty() && tickets.front().listener != t.listener) {
      tickets.front().listener->OnSettled(tickets, final);
      tickets.clear();
    }
    tickets.push_back(t);
  }
  if (!tickets.empty()) tickets.front().listener->OnSettled(tickets, final);
}

void LokiClient::Impl::Notify(const LokiEntry& entry, bool final) {
  if (entry.ticket.listener != nullptr) entry.ticket.listener->OnSettled({entry.ticket}, final);
}

void LokiClient::Impl::CountDropped(const std::string& reason, uint64_t entries, uint64_t bytes) {
  auto it = drops.find(reason);
  if (it == drops.end()) it = drops.find("bad_request");
  it->second.entries->Add(entries);
  it->second.bytes->Add(bytes);
  Settle(entries);
}

void LokiClient::Impl::CountDropped(const std::string& reason, std::span<const Queued> batch) {
  uint64_t bytes = 0;
  for (const Queued& q : batch) bytes += q.bytes;
  CountDropped(reason, batch.size(), bytes);
}

void LokiClient::Impl::PushAll(std::vector<LokiEntry>& entries) {
  if (entries.empty()) return;
  pending_.fetch_add(entries.size(), std::memory_order_relaxed);
  pending_gauge.Add(static_cast<int64_t>(entries.size()));

  Refused refused;
  mu_.Lock();
  if (closed_) {
    mu_.Unlock();
    SettleAfterStop(entries);
    return;
  }
  QueueLocked(entries, refused);
  mu_.Unlock();
  entries.clear();
  SettleRefused(refused);
}

void LokiClient::Impl::SettleAfterStop(std::vector<LokiEntry>& entries) {
  for (LokiEntry& entry : entries) {
    if (config.durable) {
      Settle(1);
      Notify(entry, false);
    } else {
      CountDropped("shutdown", 1, EntryBytes(entry));
      Notify(entry, true);
    }
  }
  entries.clear();
}

void LokiClient::Impl::QueueLocked(std::vector<LokiEntry>& entries, Refused& refused) {
  const auto now = Clock::now();
  // Consecutive entries mostly share their stream and tenant: the lane and queue are looked
  // up again only when they change.
  const StreamSelector* last_labels = nullptr;
  Lane* lane = nullptr;
  TenantQueue* tq = nullptr;
  const std::string* tq_tenant = nullptr;
  for (LokiEntry& entry : entries) {
    if (entry.tenant.empty()) {
      entry.tenant = config.tenant_id;  // checked when the client was made
    } else if (entry.tenant != config.tenant_id) {
      // The tenant goes into a header unchanged: one Loki would refuse, or one holding a line
      // break that would add a header of its own, drops this entry alone.
      if (std::string why = stages::TenantIdError(entry.tenant); !why.empty()) {
        refused.invalid_tenant_why = std::move(why);
        refused.invalid_tenant.push_back(std::move(entry));
        continue;
      }
    }
    const std::size_t bytes = EntryBytes(entry);
    const std::size_t memory = EntryMemory(entry);
    if (!config.durable && memory > config.max_buffered_bytes) {
      refused.too_big.push_back(std::move(entry));
      continue;
    }
    while (!config.durable && queued_memory_ + memory > config.max_buffered_bytes &&
           DropOldestLocked()) {
      ++refused.dropped_for_room;
      tq = nullptr;  // DropOldestLocked may have erased it, or popped the entry last points to
      last_labels = nullptr;
    }
    if (last_labels == nullptr || !last_labels->SameText(entry.labels)) {
      Lane* l = lanes_[entry.labels.hash() % lanes_.size()].get();
      if (l != lane) tq = nullptr;
      lane = l;
    }
    if (tq == nullptr || *tq_tenant != entry.tenant) {
      auto it = queues_[lane->index].tenants.try_emplace(entry.tenant).first;
      tq = &it->second;
      tq_tenant = &it->first;
    }
    const bool was_empty = tq->entries.empty();
    tq->bytes += bytes;
    queued_memory_ += memory;
    tq->entries.push_back(Queued{std::move(entry), next_seq_++, now, bytes, memory});
    last_labels = &tq->entries.back().entry.labels;
    if (was_empty || tq->bytes >= config.batch_size_bytes) lane->cv.Signal();
  }
}

void LokiClient::Impl::SettleRefused(Refused& refused) {
  uint64_t dropped = refused.dropped_for_room;
  for (LokiEntry& entry : refused.too_big) {
    CountDropped("buffer_full", 1, EntryBytes(entry));
    Notify(entry, true);
    ++dropped;
  }
  for (LokiEntry& entry : refused.invalid_tenant) {
    CountDropped("invalid_tenant", 1, EntryBytes(entry));
    Notify(entry, true);
  }
  if (!refused.invalid_tenant.empty()) {
    done_cv_.SignalAll();
    uint64_t suppressed = 0;
    if (log_limiter.Allow("invalid_tenant", suppressed)) {
      spdlog::error(
          "loki client {}: dropped {} entries whose tenant (tenant stage) is not a valid Loki "
          "tenant ID, e.g. {}{}",
          redacted_url, refused.invalid_tenant.size(), refused.invalid_tenant_why,
          Suppressed(suppressed));
    }
  }
  if (dropped > 0) {
    done_cv_.SignalAll();
    uint64_t suppressed = 0;
    if (log_limiter.Allow("buffer_full", suppressed)) {
      spdlog::warn(
          "loki client {}: buffer full ({} bytes buffered at most), dropping the oldest unsent "
          "entries; is Loki reachable?{}",
          redacted_url, config.max_buffered_bytes, Suppressed(suppressed));
    }
  }
}

bool LokiClient::Impl::DropOldestLocked() {
  TenantQueue* oldest = nullptr;
  LaneQueues* oldest_lane = nullptr;
  std::string oldest_tenant;
  // The oldest entry of the fullest queue: a stream flooding the buffer (its lane) loses its
  // own lines first, not a quiet neighbour's that happen to be older.
  for (LaneQueues& q : queues_) {
    for (auto& [tenant, tq] : q.tenants) {
      if (tq.entries.empty()) continue;
      if (oldest == nullptr || tq.bytes > oldest->bytes) {
        oldest = &tq;
        oldest_lane = &q;
        oldest_tenant = tenant;
      }
    }
  }
  if (oldest == nullptr) return false;
  const Queued& q = oldest->entries.front();
  queued_memory_ -= q.memory;
  oldest->bytes -= q.bytes;
  CountDropped("buffer_full", 1, q.bytes);
  Notify(q.entry, true);  // mu_ held: listeners never call back into the client
  oldest->entries.pop_front();
  if (oldest->entries.empty() && oldest_lane->tenants.size() > kKeptEmptyQueues) {
    oldest_lane->tenants.erase(oldest_tenant);
  }
  return true;
}

bool LokiClient::Impl::FlushedLocked(uint64_t target_seq) const {
  for (const LaneQueues& q : queues_) {
    if (q.inflight_min_seq < target_seq) return false;
    for (const auto& [tenant, tq] : q.tenants) {
      if (!tq.entries.empty() && tq.entries.front().seq < target_seq) return false;
    }
  }
  return true;
}

bool LokiClient::Impl::Flush(std::chrono::milliseconds deadline) {
  const absl::Time until = absl::Now() + absl::FromChrono(deadline);
  absl::MutexLock lock(&mu_);
  const uint64_t target_seq = next_seq_;
  flush_target_ = std::max(flush_target_, target_seq);
  for (auto& lane : lanes_) lane->cv.Signal();
  while (!FlushedLocked(target_seq)) {
    if (done_cv_.WaitWithDeadline(&mu_, until)) return FlushedLocked(target_seq);
  }
  return true;
}

void LokiClient::Impl::SendBuffered() {
  absl::MutexLock lock(&mu_);
  if (flush_target_ >= next_seq_) return;
  flush_target_ = next_seq_;
  for (auto& lane : lanes_) lane->cv.Signal();
}

void LokiClient::Impl::Stop(std::chrono::milliseconds deadline) {
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    closed_ = true;
  }
  Flush(deadline);
  StopThreads();

  uint64_t entries = 0, bytes = 0;
  std::vector<Queued> left;
  {
    absl::MutexLock lock(&mu_);
    for (LaneQueues& q : queues_) {
      for (auto& [tenant, tq] : q.tenants) {
        entries += tq.entries.size();
        bytes += tq.bytes;
        for (Queued& e : tq.entries) left.push_back(std::move(e));
      }
      q.tenants.clear();
    }
    queued_memory_ = 0;
  }
  if (config.durable) {
    Settle(entries);
    Notify(left, false);
    if (entries > 0) {
      spdlog::info("loki client {}: stopped with {} entries unsent; they stay in the journal",
                   redacted_url, entries);
    }
  } else if (entries > 0) {
    Notify(left, true);
    CountDropped("shutdown", entries, bytes);
    spdlog::warn("loki client {}: stopped with {} entries unsent; counted as dropped (shutdown)",
                 redacted_url, entries);
  }
  done_cv_.SignalAll();
}

void LokiClient::Impl::StopThreads() {
  {
    absl::MutexLock lock(&mu_);
    aborted_ = true;
    for (auto& lane : lanes_) lane->cv.Signal();
  }
  for (auto& lane : lanes_) lane->sender->Abort();
  // A lane may be inside a request (up to loki-timeout): shut its socket down. Repeat until
  // every lane has left, since a lane may start its request just after a stop().
  for (;;) {
    bool all_finished = true;
    for (auto& lane : lanes_) {
      if (!lane->thread.joinable() || lane->finished.load()) continue;
      all_finished = false;
      if (lane->sender->InRequest()) lane->sender->CutRequest();
    }
    if (all_finished) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (auto& lane : lanes_) {
    if (lane->thread.joinable()) lane->thread.join();
  }
  watchdog_.Quit();
  if (watchdog_thread_.joinable()) watchdog_thread_.join();
}

void LokiClient::Impl::LaneLoop(Lane& lane) {
  std::vector<Queued> batch;
  mu_.Lock();
  while (!aborted_) {
    LaneQueues& queues = queues_[lane.index];
    // Pick the ready tenant queue whose oldest entry is oldest: full, flushed, or waited enough.
    const auto now = Clock::now();
    TenantQueue* ready = nullptr;
    std::string ready_tenant;
    auto wake = Clock::time_point::max();
    for (auto& [tenant, tq] : queues.tenants) {
      if (tq.entries.empty()) continue;
      const Queued& front = tq.entries.front();
      const auto due = front.enqueued + config.batch_wait;
      if (tq.bytes >= config.batch_size_bytes || front.seq < flush_target_ || due <= now) {
        if (ready == nullptr || front.seq < ready->entries.front().seq) {
          ready = &tq;
          ready_tenant = tenant;
        }
      } else {
        wake = std::min(wake, due);
      }
    }
    if (ready == nullptr) {
      if (wake == Clock::time_point::max()) {
        lane.cv.Wait(&mu_);
      } else {
        lane.cv.WaitWithTimeout(&mu_, absl::FromChrono(wake - Clock::now()));
      }
      continue;
    }

    // Take up to batch_size bytes (at least one entry) of that tenant, oldest first: the whole
    // queue when it fits, its storage traded for the last batch's.
    if (ready->bytes <= config.batch_size_bytes || ready->entries.size() == 1) {
      for (const Queued& q : ready->entries) queued_memory_ -= q.memory;
      ready->bytes = 0;
      ready->entries.SwapAll(batch);
    } else {
      std::size_t batch_bytes = 0;
      while (!ready->entries.empty()) {
        Queued& q = ready->entries.front();
        if (!batch.empty() && batch_bytes + q.bytes > config.batch_size_bytes) break;
        batch_bytes += q.bytes;
        ready->bytes -= q.bytes;
        queued_memory_ -= q.memory;
        batch.push_back(std::move(q));
        ready->entries.pop_front();
      }
    }
    // An empty queue is kept (with its storage) while the lane has few tenants.
    if (ready->entries.empty() && queues.tenants.size() > kKeptEmptyQueues) {
      queues.tenants.erase(ready_tenant);
    }
    queues.inflight_min_seq = batch.front().seq;
    queues.inflight_since = batch.front().enqueued;

    mu_.Unlock();
    Deliver(lane, batch);
    // The entries' lines are freed here, not under mu_ at the next batch: producers queue
    // meanwhile.
    batch.clear();
    mu_.Lock();
    queues_[lane.index].inflight_min_seq = UINT64_MAX;
    done_cv_.SignalAll();
  }
  mu_.Unlock();
  lane.finished.store(true);
}

void LokiClient::Impl::Deliver(Lane& lane, std::span<Queued> batch) {
  if (batch.empty()) return;
  const std::string_view body = EncodeByStream(lane, batch);
  encoded_bytes.Add(body.size());
  const LaneSender::Result result =
      lane.sender->Send(body, batch.front().entry.tenant, batch.size());
  switch (FateOf(result.outcome, batch.size(), config.durable)) {
    case BatchFate::kSent: {
      uint64_t bytes = 0;
      for (const Queued& q : batch) bytes += q.bytes;
      entries_sent.Add(batch.size());
      sent_bytes.Add(bytes);
      Settle(batch.size());
      Notify(batch, true);
      return;
    }
    case BatchFate::kSplit: {
      const std::size_t half = batch.size() / 2;
      Deliver(lane, batch.first(half));
      Deliver(lane, batch.subspan(half));
      return;
    }
    case BatchFate::kKept:
      Settle(batch.size());
      Notify(batch, false);
      return;
    case BatchFate::kDropped:
      SettleRefusedBatch(result, batch);
      return;
  }
}

std::string_view LokiClient::Impl::EncodeByStream(Lane& lane, std::span<const Queued> batch) {
  lane.stream_index.clear();
  lane.stream_labels.clear();
  for (auto& v : lane.stream_entries) v.clear();
  const StreamSelector* last = nullptr;
  std::size_t index = 0;
  for (const Queued& q : batch) {
    if (last == nullptr || !last->SameText(q.entry.labels)) {
      auto [it, inserted] =
          lane.stream_index.try_emplace(q.entry.labels.view(), lane.stream_labels.size());
      if (inserted) {
        lane.stream_labels.push_back(q.entry.labels.view());
        if (lane.stream_entries.size() < lane.stream_labels.size())
          lane.stream_entries.emplace_back();
      }
      index = it->second;
      last = &q.entry.labels;
    }
    lane.stream_entries[index].push_back(&q.entry);
  }
  lane.streams.clear();
  for (std::size_t i = 0; i < lane.stream_labels.size(); ++i) {
    lane.streams.push_back(PushStream{lane.stream_labels[i], lane.stream_entries[i]});
  }
  return lane.encoder.Encode(lane.streams);
}

void LokiClient::Impl::SettleRefusedBatch(const LaneSender::Result& result,
                                          std::span<Queued> batch) {
  const std::string reason = DropReason(result.outcome, result.status, result.response);
  LogDrop(reason, result, batch);
  // Loki stores the valid entries of a request it answers 400: only the refused count as
  // dropped (their bytes as the batch's average), the rest as delivered.
  const std::size_t refused = result.outcome == PushOutcome::kRejected && result.status == 400
                                  ? RefusedEntries(result.response, batch.size())
                                  : batch.size();
  if (refused == batch.size()) {
    CountDropped(reason, batch);
  } else {
    uint64_t bytes = 0;
    for (const Queued& q : batch) bytes += q.bytes;
    const uint64_t refused_bytes = bytes * refused / batch.size();
    entries_sent.Add(batch.size() - refused);
    sent_bytes.Add(bytes - refused_bytes);
    Settle(batch.size() - refused);
    CountDropped(reason, refused, refused_bytes);
  }
  Notify(batch, true);
}

void LokiClient::Impl::LogDrop(const std::string& reason, const LaneSender::Result& result,
                               std::span<const Queued> batch) {
  const std::string said = AnswerForLog(result.response);
  uint64_t suppressed = 0;
  switch (result.outcome) {
    case PushOutcome::kTooLarge:
      if (log_limiter.Allow("too_large", suppressed)) {
        spdlog::error(
            "loki client {}: Loki refused a single entry of {} bytes as too large (413: {}); "
            "dropped{}",
            redacted_url, batch.front().bytes, said, Suppressed(suppressed));
      }
      return;
    case PushOutcome::kRejected:
      if (!log_limiter.Allow("rejected:" + reason, suppressed)) return;
      if (reason == "structured_metadata_not_allowed") {
        spdlog::error(
            "loki client {}: Loki refused structured metadata: it needs schema v13+ and "
            "limits_config.allow_structured_metadata; {} entries dropped (Loki said: {}){}",
            redacted_url, batch.size(), said, Suppressed(suppressed));
      } else {
        spdlog::error("loki client {}: Loki answered {} ({}), {} entries dropped: {}{}",
                      redacted_url, result.status, reason, batch.size(), said,
                      Suppressed(suppressed));
      }
      return;
    case PushOutcome::kRetriesExhausted:
      // A configuration error names its cause (the reason); overload and transport errors are
      // just retries.
      if (log_limiter.Allow("retries_exhausted", suppressed)) {
        spdlog::error(
            "loki client {}: giving up on a batch of {} entries after {} retries (last: {}); "
            "dropped{}",
            redacted_url, batch.size(), config.max_retries,
            result.status > 0 ? std::to_string(result.status) + " " + said : result.response,
            Suppressed(suppressed));
      }
      return;
    case PushOutcome::kDelivered:
    case PushOutcome::kShutdown:
      return;
  }
}

// ---- public face ----

LokiClient::LokiClient(LokiClientConfig config, MetricsRegistry& metrics)
    : impl_(std::make_unique<Impl>(std::move(config), metrics)) {}

LokiClient::~LokiClient() = default;

void LokiClient::Push(LokiEntry entry) {
  std::vector<LokiEntry> one;
  one.push_back(std::move(entry));
  impl_->PushAll(one);
}

void LokiClient::PushAll(std::vector<LokiEntry>& entries) { impl_->PushAll(entries); }

bool LokiClient::Flush(std::chrono::milliseconds deadline) { return impl_->Flush(deadline); }

void LokiClient::SendBuffered() { impl_->SendBuffered(); }

void LokiClient::Stop(std::chrono::milliseconds deadline) { impl_->Stop(deadline); }

uint64_t LokiClient::Pending() const { return impl_->pending_.load(std::memory_order_relaxed); }

std::optional<std::chrono::steady_clock::time_point> LokiClient::OldestPendingSince() const {
  return impl_->OldestPendingSince();
}

LokiClient::PushResult LokiClient::LastPush() const { return impl_->target.LastPush(); }

bool LokiClient::Taking() const { return impl_->target.Taking(); }

std::size_t LokiClient::BufferedBytes() const {
  absl::MutexLock lock(&impl_->mu_);
  return impl_->queued_memory_;
}

const LokiClientConfig& LokiClient::config() const { return impl_->config; }

void LokiClient::SetThreadLimitForTesting(int threads) { thread_limit_for_testing.store(threads); }

}  // namespace skald
