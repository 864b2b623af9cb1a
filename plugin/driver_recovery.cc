// Driver::Recover: at start, the journals a previous run left are replayed from their cursors,
// and the FIFOs of sessions that were live when it stopped are read again (plugin/driver.h).
#include <spdlog/spdlog.h>

#include "plugin/driver.h"
#include "plugin/driver_stream.h"
#include "plugin/replay_info.h"

namespace skald {

namespace {

bool IsFifo(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_fifo(path, ec);
}

}  // namespace

void Driver::Recover() {
  if (!store_) return;
  for (const std::string& id : store_->ContainerIds()) {
    if (!ValidContainerId(id)) continue;
    try {
      RecoverContainer(id);
    } catch (const std::exception& e) {
      spdlog::error("journal of container {}: cannot recover it: {}", id.substr(0, 12), e.what());
    }
  }
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

void Driver::RecoverContainer(const std::string& id) {
  std::shared_ptr<Journal> journal;
  {
    absl::MutexLock lock(&mu_);
    journal = OpenJournalLocked(id, LogOptions{});
  }
  ReplayInfo replay = ReadReplayInfo(id, journal->ReadInfo(), *secrets_);
  retained_secrets_.insert(replay.secret_references.begin(), replay.secret_references.end());
  ContainerInfo& info = replay.info;
  std::string& unusable = replay.unusable;  // empty when the container's options can be used
  std::vector<std::unique_ptr<Journal::Writer>> writers;
  std::vector<std::string> fifos;
  for (const Journal::LiveSession& session : journal->LiveSessions()) {
    try {
      if (IsFifo(session.fifo_path)) {
        writers.push_back(journal->ResumeWriter(session));
        fifos.push_back(session.fifo_path);
      } else {
        journal->SealSession(session);
      }
    } catch (const std::exception& e) {
      spdlog::error("journal of container {}: the session of segment {}: {}", id.substr(0, 12),
                    session.segment, e.what());
    }
  }
  const JournalPosition cursor = journal->ReadCursor().value_or(journal->Begin());
  if (writers.empty() && !(cursor < journal->End())) return;  // nothing to do
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
      return;
    }
    // A FIFO that is not read blocks its container: it is always drained. Its lines stay in
    // the journal (docker logs) and are counted as held; a start with usable options replays
    // them from the cursor.
    spdlog::error(
        "container {} ({}): its options cannot be used ({}); its FIFO is drained into the "
        "journal and its lines are held there (not sent) until the plugin starts with usable "
        "options",
        info.ID(), info.Name(), unusable);
    stream = std::make_shared<Stream>();
    stream->file = fifos.front();
    stream->info = info;
    stream->held_reason = "unusable_options";
    stream->client_window = std::make_shared<std::atomic<int64_t>>(0);
  }
  {
    absl::MutexLock lock(&mu_);
    journal->SetLimits(
        {stream->options.max_size, stream->options.max_file, stream->options.block_when_full});
    stream->journal = journal;
    stream->ledger.StartAt(cursor);
    stream->last_resume = cursor;
    stream->id = next_id_++;
    streams_[stream->id] = stream;
    stream_by_container_[id] = stream->id;
    for (const std::string& f : fifos) stream_by_file_[f] = stream->id;
    live_streams_gauge_.Set(static_cast<int64_t>(streams_.size()));
  }
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
}

}  // namespace skald
