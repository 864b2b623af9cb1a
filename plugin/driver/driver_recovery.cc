// Driver::Recover: at start, the journals a previous run left are replayed from their cursors,
// and the FIFOs of sessions that were live when it stopped are read again (plugin/driver/driver.h).
#include <absl/time/time.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <thread>

#include "plugin/common/container_id.h"
#include "plugin/common/thread_name.h"
#include "plugin/config/replay_info.h"
#include "plugin/driver/driver.h"
#include "plugin/driver/driver_stream.h"

namespace skald {

namespace {

bool IsFifo(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_fifo(path, ec);
}

// The sessions a container's journal has left live on disk: resumed where their FIFO still
// exists (writers and FIFO paths in the same order), sealed where it does not.
struct ResumedSessions {
  std::vector<std::unique_ptr<Journal::Writer>> writers;
  std::vector<std::string> fifos;
};
ResumedSessions ResumeLiveSessions(Journal& journal, const std::string& id) {
  ResumedSessions out;
  for (const Journal::LiveSession& session : journal.LiveSessions()) {
    try {
      if (IsFifo(session.fifo_path)) {
        out.writers.push_back(journal.ResumeWriter(session));
        out.fifos.push_back(session.fifo_path);
      } else {
        journal.SealSession(session);
      }
    } catch (const std::exception& e) {
      spdlog::error("journal of container {}: the session of segment {}: {}", id.substr(0, 12),
                    session.segment, e.what());
    }
  }
  return out;
}

}  // namespace

void Driver::RecoverInBackground() {
  {
    absl::MutexLock lock(&recovery_mu_);
    recovering_ = true;
  }
  recovery_ = std::thread([this] {
    SetThreadName("skald-recover");
    Recover();
  });
}

void Driver::AwaitRecovery() {
  absl::MutexLock lock(&recovery_mu_);
  // A CondVar, not Mutex::Await: ThreadSanitizer does not see Debian's absl evaluate an Await
  // condition under the lock, and reports the flag's write as a race.
  while (recovering_) recovery_cv_.Wait(&recovery_mu_);
}

std::vector<std::string> Driver::QuarantinedJournals() const {
  std::vector<std::string> names;
  if (!store_) return names;
  for (const ReplayGuard::Quarantined& q : ReplayGuard::List(config_.state_dir)) {
    names.push_back(q.name);
  }
  return names;
}

void Driver::Recover() {
  struct Done {
    Driver* driver;
    ~Done() {
      absl::MutexLock lock(&driver->recovery_mu_);
      driver->recovering_ = false;
      driver->recovery_cv_.SignalAll();
    }
  } done{this};
  if (!store_) return;
  const std::vector<std::string> ids = store_->ContainerIds();
  // The last run died: the daemon dials a restarted plugin's socket about half a second after
  // it starts and disables one it cannot reach, so the plugin shows itself alive before a
  // replay that might end it again.
  if (replay_guard_->LastRunDied()) {
    spdlog::warn(
        "the last run of the plugin did not stop cleanly: replaying in {} ms (a journal whose "
        "replay was running at {} deaths in a row is set aside)",
        kCrashedReplayDelay.count(), ReplayGuard::kDeathsToQuarantine);
    absl::MutexLock lock(&recovery_mu_);
    const absl::Time until = absl::Now() + absl::FromChrono(kCrashedReplayDelay);
    while (!recovery_stop_ && !recovery_cv_.WaitWithDeadline(&recovery_mu_, until)) {
    }
  }
  auto stop_asked = [this] {
    absl::MutexLock lock(&recovery_mu_);
    return recovery_stop_;
  };
  const auto started = std::chrono::steady_clock::now();
  int looked_at = 0, replayed = 0, set_aside = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::string& id = ids[i];
    if (!ValidContainerId(id)) continue;
    if (stop_asked()) {
      // The plugin is stopping (a `docker plugin disable`, a host shutdown): a stop is not a
      // death, and the rest of the pass (secrets no journal refers to go) needs every journal.
      // The journals not reached keep their counts as Begin would have left them: the last
      // run's death stays on the journal that was to blame, not on them.
      for (std::size_t j = i; j < ids.size(); ++j) {
        if (ValidContainerId(ids[j])) replay_guard_->Settle(ids[j], store_->ContainerDir(ids[j]));
      }
      spdlog::info("recovery: stopped after {} of {} journal(s): the plugin is stopping", looked_at,
                   ids.size());
      return;
    }
    ++looked_at;
    const std::filesystem::path dir = store_->ContainerDir(id);
    if (std::string why = replay_guard_->Begin(id, dir); !why.empty()) {
      spdlog::error("journal of container {}: not replayed: {}", id.substr(0, 12), why);
      ++set_aside;
      continue;
    }
    bool replaying = false;
    try {
      replaying = RecoverContainer(id);
    } catch (const std::exception& e) {
      spdlog::error("journal of container {}: cannot recover it: {}", id.substr(0, 12), e.what());
    }
    if (replaying) ++replayed;
    if (!replaying) replay_guard_->Clear(dir);
  }
  if (looked_at > 0) {
    spdlog::info(
        "recovery: {} journal(s) in {} ms: {} with lines to replay, {} set aside after "
        "deaths in a row",
        looked_at,
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                              started)
            .count(),
        replayed, set_aside);
  }
  series_.journals_quarantined.Set(static_cast<int64_t>(QuarantinedJournals().size()));
  // Secrets no journal refers to any more (their containers' journals are gone) go.
  secrets_->Retain(retained_secrets_);
  retained_secrets_.clear();
  {
    // The journals found: the budget and the age limit look at them now.
    absl::MutexLock lock(&mu_);
    retention_schedule_.BudgetDue();
    retention_schedule_.AgeCheckBy(std::chrono::steady_clock::time_point::min());
  }
  reader_->TickWithin(std::chrono::milliseconds(0));
}

void Driver::RegisterRecovered(const std::string& id, const std::shared_ptr<Stream>& stream,
                               const std::shared_ptr<Journal>& journal,
                               const JournalPosition& cursor, bool replaying,
                               const std::vector<std::string>& fifos) {
  absl::MutexLock lock(&mu_);
  journal->SetLimits(
      {stream->options.max_size, stream->options.max_file, stream->options.block_when_full});
  stream->journal = journal;
  stream->ledger.StartAt(cursor);
  stream->last_resume = cursor;
  stream->replay_from = cursor;
  stream->replay_marked = replaying && stream->held_reason.empty();
  stream->id = next_id_++;
  streams_[stream->id] = stream;
  stream_by_container_[id] = stream->id;
  for (const std::string& f : fifos) stream_by_file_[f] = stream->id;
  series_.live_streams.Set(static_cast<int64_t>(streams_.size()));
}

std::shared_ptr<Driver::Stream> Driver::MakeHeldStream(const ContainerInfo& info,
                                                       const std::string& fifo,
                                                       const std::string& why) {
  // A FIFO that is not read blocks its container: it is always drained. Its lines stay in
  // the journal (docker logs) and are counted as held; a start with usable options replays
  // them from the cursor.
  spdlog::error(
      "container {} ({}): its options cannot be used ({}); its FIFO is drained into the "
      "journal and its lines are held there (not sent) until the plugin starts with usable "
      "options",
      info.ID(), info.Name(), why);
  auto stream = std::make_shared<Stream>();
  stream->file = fifo;
  stream->info = info;
  stream->held_reason = "unusable_options";
  stream->client_window = std::make_shared<std::atomic<int64_t>>(0);
  return stream;
}

bool Driver::RecoverContainer(const std::string& id) {
  std::shared_ptr<Journal> journal;
  {
    absl::MutexLock lock(&mu_);
    journal = OpenJournalLocked(id, LogOptions{});
  }
  ReplayInfo replay = ReadReplayInfo(id, journal->ReadInfo(), *secrets_);
  retained_secrets_.insert(replay.secret_references.begin(), replay.secret_references.end());
  ContainerInfo& info = replay.info;
  std::string& unusable = replay.unusable;  // empty when the container's options can be used
  ResumedSessions resumed = ResumeLiveSessions(*journal, id);
  std::vector<std::unique_ptr<Journal::Writer>>& writers = resumed.writers;
  const std::vector<std::string>& fifos = resumed.fifos;
  const JournalPosition cursor = journal->ReadCursor().value_or(journal->Begin());
  const bool replaying = cursor < journal->End();
  if (writers.empty() && !replaying) return false;  // nothing to do
  std::shared_ptr<Stream> stream;
  if (unusable.empty()) {
    try {
      stream = MakeStream(fifos.empty() ? std::string() : fifos.front(), info);
    } catch (const std::exception& e) {
      unusable = e.what();
    }
  }
  if (!unusable.empty()) {
    if (writers.empty()) {
      spdlog::error(
          "journal of container {} ({}): cannot replay it ({}); its undelivered lines stay on "
          "disk",
          info.ID(), info.Name(), unusable);
      return false;
    }
    stream = MakeHeldStream(info, fifos.front(), unusable);
  }
  if (replaying && stream->held_reason.empty()) ReplayGuard::MakeDurable(journal->dir());
  RegisterRecovered(id, stream, journal, cursor, replaying, fifos);
  journal->SetAcknowledged(cursor);
  reader_->AddJournalStream(stream->id, journal, cursor, stream->options.max_line_size);
  for (std::size_t i = 0; i < writers.size(); ++i) {
    try {
      reader_->AddSession(stream->id, fifos[i], writers[i]);
    } catch (const std::exception& e) {
      spdlog::error("container {}: cannot re-open {}: {}", info.ID(), fifos[i], e.what());
      if (writers[i]) writers[i]->Seal();
    }
  }
  spdlog::info(
      "container {} ({}): resumed {} FIFO(s), replaying its journal from segment {} "
      "offset {}",
      info.ID(), info.Name(), fifos.size(), cursor.segment, cursor.offset);
  return replaying && stream->held_reason.empty();
}

}  // namespace skald
