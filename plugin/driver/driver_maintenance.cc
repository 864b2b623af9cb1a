// The Driver's maintenance, run on the reader's tick when something is due: cursors
// persisted, idle Loki clients retired, free memory given back once the plugin is idle, the
// journal budget and the age limit applied (plugin/driver/driver.h).
#include <malloc.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <unordered_set>

#include "plugin/config/replay_info.h"
#include "plugin/driver/driver.h"
#include "plugin/driver/driver_stream.h"

namespace skald {

void Driver::PersistCursors() {
  std::vector<std::shared_ptr<Stream>> streams;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, s] : streams_) {
      if (s->journal) streams.push_back(s);
    }
  }
  for (const auto& s : streams) {
    if (s->predecessor) {
      // Its cursor still rules the journal; the tick its retirement asks for comes back here.
      if (!s->predecessor->retired) continue;
      s->predecessor.reset();
    }
    if (auto acked = s->ledger.TakeUnpersisted()) PersistCursor(*s, *acked);
  }
}

void Driver::PersistCursor(Stream& stream, JournalPosition acked) {
  try {
    stream.ledger.Persist(acked, [&](JournalPosition cursor) {
      stream.journal->WriteCursor(cursor);
      stream.journal->SetAcknowledged(cursor);
      // The replay moved on: a crash from now on is not this journal's replay's doing.
      if (stream.replay_marked && stream.replay_from < cursor && replay_guard_) {
        replay_guard_->Clear(stream.journal->dir());
        stream.replay_marked = false;
      }
    });
  } catch (const std::exception& e) {
    spdlog::error("journal {}: cannot write its cursor: {}", stream.journal->dir().string(),
                  e.what());
  }
}

std::chrono::milliseconds Driver::RetireIdleClients() {
  std::unordered_set<const ShippingClient*> used;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, s] : streams_) used.insert(s->client.get());
  }
  const std::size_t before = clients_.size();
  const std::chrono::milliseconds next = clients_.RetireIdle(used, FifoReader::kNoTick);
  if (clients_.size() < before) {
    absl::MutexLock lock(&mu_);
    trim_due_ = true;
  }
  return next;
}

void Driver::GiveMemoryBackIfIdle() {
  {
    absl::MutexLock lock(&mu_);
    if (!trim_due_ || !IdleLocked()) return;
    trim_due_ = false;
  }
  // The threads that read, shipped and pushed the burst each left free memory in their own
  // malloc arena, which glibc keeps; an idle plugin hands it back to the system.
  malloc_trim(0);
}

void Driver::StreamLeftLocked() {
  if (streams_.empty()) trim_due_ = true;
  series_.live_streams.Set(static_cast<int64_t>(streams_.size()));
  // Its client may be unused now, and the journals' total is looked at once more.
  retention_schedule_.BudgetDue();
  reader_->TickWithin(
      std::min<std::chrono::milliseconds>(config_.client_idle_timeout, std::chrono::seconds(1)));
}

void Driver::ScheduleAgeCheck(std::filesystem::file_time_type last_write) {
  using namespace std::chrono;
  const auto in =
      retention_->UntilExpiry(last_write, std::filesystem::file_time_type::clock::now());
  {
    absl::MutexLock lock(&mu_);
    retention_schedule_.AgeCheckBy(steady_clock::now() + in);
  }
  reader_->TickWithin(ceil<milliseconds>(in));
}

bool Driver::KeepsJournal(const std::string& container_id, const Journal& journal) const {
  const std::optional<std::string> text = journal.ReadInfo();
  if (!text) return false;  // a journal whose container never said: the age limit applies
  // As a replay reads them: credentials in the options are references to the secret store.
  const ReplayInfo replay = ReadReplayInfo(container_id, text, *secrets_);
  if (!replay.parsed) {
    spdlog::warn("journal of stopped container {}: {}; the age limit applies",
                 container_id.substr(0, 12), replay.unusable);
    return false;
  }
  std::string unusable = replay.unusable;
  if (unusable.empty()) {
    try {
      return ParseLogOptions(replay.info.config, config_.env_defaults).keep_file;
    } catch (const OptionError& e) {
      unusable = e.what();
    }
  }
  // Options that cannot be used any more (a secret gone, an option this version refuses): the
  // journal may hold what the user asked to keep, so it stays (the plugin-wide budget still
  // bounds it).
  spdlog::warn(
      "journal of stopped container {}: kept past the age limit, its options cannot be "
      "read: {}",
      container_id.substr(0, 12), unusable);
  return true;
}

std::chrono::milliseconds Driver::Maintain() {
  using namespace std::chrono;
  // Nothing here runs on a timer of its own: the tick comes when a cursor is to be persisted
  // (TickWithin from PushShipment and OnSettled), a client may have become unused or a stream
  // left (StreamLeftLocked), a FIFO's bytes went into a journal (the budget, at most once a
  // second), and when the next journal reaches the age limit. A quiet plugin (containers that
  // log nothing, journals replayed to a Loki that is away, journals kept) runs nothing.
  milliseconds next = RetireIdleClients();
  GiveMemoryBackIfIdle();
  const auto sooner = [&next](steady_clock::duration d) {
    next = std::min(next, std::max(milliseconds(0), ceil<milliseconds>(d)));
  };
  if (!store_) return next;
  PersistCursors();
  // The budget looks at every journal's size (kept in memory); the age limit and the order of
  // removal need each stopped container's newest file time (a stat).
  const auto now_steady = steady_clock::now();
  // Journals grow only as FIFOs are drained into them: the reader asks for a tick when that
  // happens next (asked before the count is read, so that no byte goes unnoticed).
  reader_->TickWhenJournaled(seconds(1));
  const uint64_t journaled = reader_->JournaledBytes();
  // Journals of containers with no stream (stopped, delivered) are candidates for removal.
  std::vector<JournalRetention::Entry> stopped, live;
  bool check_age = false;
  {
    absl::MutexLock lock(&mu_);
    const RetentionSchedule::Checks checks = retention_schedule_.Begin(now_steady, journaled);
    if (!checks.budget && !checks.age) {
      if (checks.wait) sooner(*checks.wait);
      return next;
    }
    check_age = checks.age;
    for (const auto& [id, j] : journals_) {
      (stream_by_container_.count(id) ? live : stopped).emplace_back(id, j);
    }
  }
  const JournalRetention::Outcome outcome =
      retention_->Apply(std::move(stopped), std::move(live), check_age,
                        std::filesystem::file_time_type::clock::now());
  {
    absl::MutexLock lock(&mu_);
    if (outcome.next_expiry_in)
      retention_schedule_.AgeCheckBy(now_steady + *outcome.next_expiry_in);
    // Over the budget (a live segment to be sealed, containers held by loki-on-full=block):
    // again in a second, whether or not bytes come.
    if (outcome.over_budget) {
      retention_schedule_.BudgetDue();
      sooner(seconds(1));
    }
    // Recovery may have asked for an age check at once (time_point::min()) meanwhile.
    if (const auto in = retention_schedule_.AgeCheckIn(now_steady)) sooner(*in);
  }
  RemoveJournals(outcome.remove);
  series_.journal_bytes.Set(static_cast<int64_t>(outcome.total_bytes));
  return next;
}

void Driver::RemoveJournals(const std::vector<std::string>& container_ids) {
  for (const std::string& id : container_ids) {
    // Under the lock: a StartLogging of the container must not open the directory while it is
    // being removed.
    absl::MutexLock lock(&mu_);
    if (stream_by_container_.count(id)) continue;  // a container started meanwhile
    auto it = journals_.find(id);
    if (it == journals_.end()) continue;
    std::shared_ptr<Journal> j = it->second;
    journals_.erase(it);
    try {
      j->Remove();
      series_.journals_removed.Add();
    } catch (const std::exception& e) {
      spdlog::error("journal {}: cannot remove it: {}", j->dir().string(), e.what());
    }
  }
}

}  // namespace skald
