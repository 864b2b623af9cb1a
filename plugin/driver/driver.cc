#include "plugin/driver/driver.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "plugin/common/container_id.h"
#include "plugin/common/fault_injection.h"
#include "plugin/config/container_labels.h"
#include "plugin/config/replay_info.h"
#include "plugin/driver/container_pipeline.h"
#include "plugin/driver/driver_stream.h"
#include "plugin/driver/shipment_ledger.h"

namespace skald {

namespace {

std::size_t LinesBytes(const std::vector<LogLine>& lines) {
  std::size_t bytes = 0;
  for (const LogLine& l : lines) bytes += l.line.size() + sizeof(LogLine);
  return bytes;
}

}  // namespace

Driver::Driver(DriverConfig config, MetricsRegistry& metrics)
    : config_(std::move(config)),
      metrics_(metrics),
      observer_(metrics),
      series_(metrics),
      clients_(
          [this](const LokiClientConfig& client_config) {
            return config_.client_factory ? config_.client_factory(client_config)
                                          : MakeShippingClient(client_config, metrics_);
          },
          config_.client_idle_timeout),
      shipper_(config_.max_queued_bytes, series_.quiet_sends) {
  if (!config_.state_dir.empty()) {
    store_ = std::make_unique<JournalStore>(config_.state_dir);
    retention_ = std::make_unique<JournalRetention>(
        config_.journal_max_total_bytes, config_.journal_max_age,
        [this](const JournalRetention::Entry& e) { return KeepsJournal(e.first, *e.second); });
    secrets_ = std::make_unique<SecretStore>(config_.state_dir / "secrets");
    replay_guard_ = std::make_unique<ReplayGuard>(config_.state_dir);
    series_.journals_quarantined.Set(
        static_cast<int64_t>(ReplayGuard::List(config_.state_dir).size()));
  }
  reader_ = std::make_unique<FifoReader>(*this, metrics);
  reader_->SetTick([this] { return Maintain(); });
  if (replay_guard_) {
    reader_->SetDecodeHook([this](const std::string& container_id) {
      if (container_id.empty()) {
        replay_guard_->Leave(ReplayGuard::kReaderSlot);
      } else {
        replay_guard_->Enter(ReplayGuard::kReaderSlot, container_id);
      }
    });
  }
  shipper_.Start(*this);
}

Driver::~Driver() { Shutdown(std::chrono::milliseconds(0)); }

std::shared_ptr<Driver::Stream> Driver::MakeStream(const std::string& file,
                                                   const ContainerInfo& info, bool journaled) {
  LogOptions options = ParseLogOptions(info.config, config_.env_defaults);
  if (!store_ || !journaled) options.client.durable = false;

  auto stream = std::make_shared<Stream>();
  stream->file = file;
  stream->info = info;
  stream->options = options;
  stream->pipeline =
      std::make_unique<ContainerPipeline>(options, info, config_.hostname, &observer_);
  // A new client is made outside every lock: it may resolve names (a slow resolver must not
  // hold up every other container's lines).
  stream->client = clients_.For(options.client, &stream->client_window);
  return stream;
}

std::shared_ptr<Journal> Driver::OpenJournalLocked(const std::string& container_id,
                                                   const LogOptions& options) {
  JournalLimits limits{options.max_size, options.max_file, options.block_when_full};
  if (auto it = journals_.find(container_id); it != journals_.end()) {
    // A journal removed by hand (the README allows it) is made again for a container with no
    // stream reading it; otherwise every later start would find it unwritable.
    std::error_code ec;
    if (std::filesystem::is_directory(it->second->dir(), ec) ||
        stream_by_container_.count(container_id) || retiring_by_container_.count(container_id)) {
      it->second->SetLimits(limits);
      return it->second;
    }
    journals_.erase(it);
  }
  auto journal = Journal::Open(store_->ContainerDir(container_id), limits);  // may throw
  journals_[container_id] = journal;
  return journal;
}

void Driver::StartInMemory(const std::string& file, std::shared_ptr<Stream> stream) {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) throw StartRefused("skald: the plugin is shutting down");
    if (stream_by_file_.count(file)) throw StartRefused("skald: already logging " + file);
    stream->id = next_id_++;
    streams_[stream->id] = stream;
    stream_by_file_[file] = stream->id;
    series_.live_streams.Set(static_cast<int64_t>(streams_.size()));
  }
  try {
    reader_->Add(stream->id, file, stream->options.max_line_size);
  } catch (...) {
    absl::MutexLock lock(&mu_);
    streams_.erase(stream->id);
    stream_by_file_.erase(file);
    StreamLeftLocked();
    throw;
  }
}

void Driver::Unregister(const std::string& file, const Stream* fresh, bool with_reader) {
  absl::MutexLock lock(&mu_);
  stream_by_file_.erase(file);
  // A new stream the reader has: with no session it reads what the journal holds and ends.
  // One it never got would stay registered for ever, and every later start of the container
  // would join it.
  if (fresh == nullptr || with_reader) return;
  streams_.erase(fresh->id);
  if (auto it = stream_by_container_.find(fresh->info.container_id);
      it != stream_by_container_.end() && it->second == fresh->id) {
    stream_by_container_.erase(it);
  }
  StreamLeftLocked();
}

void Driver::StartLogging(const std::string& file, const ContainerInfo& info) {
  if (!config_.refuse_reason.empty()) throw StartRefused(config_.refuse_reason);
  AwaitRecovery();
  std::shared_ptr<Stream> stream = MakeStream(file, info);
  bool journaled = store_ && !stream->options.no_file;
  if (journaled && !ValidContainerId(info.container_id)) {
    throw StartRefused("skald: invalid container id '" + info.container_id + "'");
  }
  if (!journaled) {
    StartInMemory(file, stream);
  } else if (const std::string journal_error = StartJournaled(file, info, stream);
             !journal_error.empty()) {
    // The journal cannot be written (disk full, I/O error): the container must not be
    // refused for it, unless the user chose to lose nothing.
    if (stream->options.block_when_full) {
      throw OptionError("skald: cannot write the container's journal (" + journal_error +
                        ") and loki-on-full=block forbids going on without it");
    }
    spdlog::error(
        "container {} ({}): cannot write its journal ({}); its lines go on in memory only "
        "(no docker logs, lost if the plugin restarts; the container waits for Loki while "
        "Loki takes lines)",
        info.ID(), info.Name(), journal_error);
    std::shared_ptr<Stream> in_memory = MakeStream(file, info, /*journaled=*/false);
    in_memory->paced = true;
    StartInMemory(file, in_memory);
    journaled = false;
  }
  series_.streams_started.Add();
  spdlog::info("logging container {} ({}) to {}{}", info.ID(), info.Name(),
               RedactUrl(stream->options.client.url), journaled ? "" : " (no-file: memory only)");
}

std::string Driver::StartJournaled(const std::string& file, const ContainerInfo& info,
                                   const std::shared_ptr<Stream>& stream) {
  std::unique_ptr<Journal::Writer> writer;
  // The container's stream this start found ended by the reader, its end still waiting for
  // the shipping thread (a `docker restart` right after the stop): not joined again.
  std::shared_ptr<Stream> ended;
  for (int attempt = 0;; ++attempt) {
    std::shared_ptr<Stream> joined;
    std::shared_ptr<Journal> journal;
    if (std::string error = RegisterJournaled(file, info, stream, ended, &joined, &journal);
        !error.empty()) {
      return error;
    }
    std::string journal_error;
    bool with_reader = false;
    try {
      try {
        journal->WriteInfo(ReplayInfoJson(info, stream->options, *secrets_, config_.hostname));
        if (!writer) writer = journal->StartWriter(file);
      } catch (const std::system_error& e) {
        journal_error = e.what();
      }
      if (journal_error.empty()) {
        if (!joined) {
          const JournalPosition cursor = stream->ledger.Acked();
          journal->SetAcknowledged(cursor);
          reader_->AddJournalStream(stream->id, journal, cursor, stream->options.max_line_size);
          with_reader = true;
        }
        if (reader_->AddSession(joined ? joined->id : stream->id, file, writer)) return "";
      }
    } catch (...) {
      if (writer) writer->Seal();
      Unregister(file, joined ? nullptr : stream.get(), with_reader);
      throw;
    }
    if (!journal_error.empty()) {
      if (writer) writer->Seal();
      Unregister(file, joined ? nullptr : stream.get(), with_reader);
      return journal_error;
    }
    // The joined stream ended just now: start a new one for this session.
    ended = joined;
    absl::MutexLock lock(&mu_);
    stream_by_file_.erase(file);
    if (attempt > 3) {
      if (writer) writer->Seal();
      throw StartRefused("skald: could not attach " + file + " to its journal");
    }
  }
}

std::string Driver::RegisterJournaled(const std::string& file, const ContainerInfo& info,
                                      const std::shared_ptr<Stream>& stream,
                                      const std::shared_ptr<Stream>& ended,
                                      std::shared_ptr<Stream>* joined,
                                      std::shared_ptr<Journal>* journal) {
  absl::MutexLock lock(&mu_);
  if (stopping_) throw StartRefused("skald: the plugin is shutting down");
  if (stream_by_file_.count(file)) throw StartRefused("skald: already logging " + file);
  try {
    *journal = OpenJournalLocked(info.container_id, stream->options);
  } catch (const std::system_error& e) {
    return e.what();
  }
  if (auto it = stream_by_container_.find(info.container_id);
      it != stream_by_container_.end() && !(ended && it->second == ended->id)) {
    *joined = streams_.at(it->second);  // the container's stream is still draining
  } else {
    stream->journal = *journal;
    JournalPosition cursor = (*journal)->ReadCursor().value_or((*journal)->Begin());
    if (ended) {
      // It read every segment before the one this start's writer reserved: go on there.
      stream->predecessor = ended;
      cursor = std::max(cursor, (*journal)->End());
    } else if (auto prev = retiring_by_container_.find(info.container_id);
               prev != retiring_by_container_.end()) {
      // Its lines up to `end` are delivered or on their way: go on after them.
      stream->predecessor = prev->second;
      cursor = std::max(cursor, prev->second->end);
    }
    stream->ledger.StartAt(cursor);
    stream->last_resume = cursor;
    stream->id = next_id_++;
    streams_[stream->id] = stream;
    stream_by_container_[info.container_id] = stream->id;
    series_.live_streams.Set(static_cast<int64_t>(streams_.size()));
  }
  stream_by_file_[file] = *joined ? (*joined)->id : stream->id;
  return "";
}

void Driver::StopLogging(const std::string& file) {
  AwaitRecovery();
  absl::MutexLock lock(&mu_);
  auto it = stream_by_file_.find(file);
  if (it == stream_by_file_.end()) return;
  if (auto s = streams_.find(it->second); s != streams_.end()) s->second->stop_requested = true;
  stream_by_file_.erase(it);
}

std::shared_ptr<Journal> Driver::JournalFor(const ContainerInfo& info) {
  AwaitRecovery();
  try {
    if (ParseLogOptions(info.config, config_.env_defaults).no_file) {
      throw NoJournal(
          "skald: docker logs is not available for this container: it was started with "
          "--log-opt no-file=true (no journal is kept)");
    }
  } catch (const OptionError&) {
    // Options that no longer parse still name a journal that can be read.
  }
  if (!store_) throw NoJournal("skald: docker logs is not available: the plugin keeps no journals");
  if (!ValidContainerId(info.container_id)) {
    throw NoJournal("skald: invalid container id '" + info.container_id + "'");
  }
  absl::MutexLock lock(&mu_);
  if (auto it = journals_.find(info.container_id); it != journals_.end()) return it->second;
  std::error_code ec;
  if (!std::filesystem::is_directory(store_->ContainerDir(info.container_id), ec)) {
    throw NoJournal("skald: no logs are kept for container " + info.ID());
  }
  try {
    return OpenJournalLocked(info.container_id, LogOptions{});
  } catch (const std::exception& e) {
    throw NoJournal(std::string("skald: cannot open the container's journal: ") + e.what());
  }
}

void Driver::OnLines(uint64_t stream_id, std::vector<LogLine>& lines,
                     const JournalPosition& resume) {
#ifdef SKALD_FAULT_INJECTION
  for (const LogLine& l : lines) AbortIfFaultLine(l.line);  // test builds only: off the hot path
#endif
  ShippingBatch batch{stream_id, std::move(lines), 0, false, false, resume};
  batch.bytes = LinesBytes(batch.lines);
  lines = {};
  {
    absl::MutexLock lock(&mu_);
    auto it = streams_.find(stream_id);
    if (it != streams_.end() && it->second->journal) {
      batch.journaled = true;
      it->second->window_bytes += static_cast<int64_t>(batch.bytes);
      *it->second->client_window += static_cast<int64_t>(batch.bytes);
    }
  }
  // Over its bound the queue drops memory-only lines of the stream that holds the most.
  if (const uint64_t dropped = shipper_.Queue(std::move(batch)); dropped > 0) {
    series_.dropped_queue_full.Add(dropped);
  }
}

void Driver::OnEnd(uint64_t stream_id, bool /*corrupt*/) {
  shipper_.Queue(ShippingBatch{stream_id, {}, 0, true, false, {}});
}

bool Driver::WantsLines(uint64_t stream_id) {
  std::shared_ptr<ShippingClient> client;
  {
    absl::MutexLock lock(&mu_);
    auto it = streams_.find(stream_id);
    if (it == streams_.end() || !WindowFull(*it->second)) return true;
    client = it->second->client;
  }
  // The window frees only as entries are acknowledged: the client must not sit on them until
  // loki-batch-wait (a stream's stderr lines, say, filling a batch slowly would hold back
  // every shipment they belong to). SendBuffered returns at once when nothing came since.
  if (client) client->SendBuffered();
  return false;
}

bool Driver::LokiTakesLines(uint64_t stream_id) {
  std::shared_ptr<ShippingClient> client;
  {
    absl::MutexLock lock(&mu_);
    auto it = streams_.find(stream_id);
    if (it == streams_.end()) return false;
    client = it->second->client;
  }
  return client && client->Taking();
}

bool Driver::HoldsMemoryStream(uint64_t stream_id) {
  std::shared_ptr<ShippingClient> client;
  std::size_t queued = 0;
  {
    absl::MutexLock lock(&mu_);
    auto it = streams_.find(stream_id);
    if (it == streams_.end() || !it->second->paced) return false;
    client = it->second->client;
  }
  queued = shipper_.MemoryBytes(stream_id);
  // Loki away: read on, the bounds drop and count (as no-file does). Loki taking lines: wait
  // while what waits on its way to Loki (in the shipping queue and in the client's buffer,
  // which the shipping thread fills from the queue at its own pace) reaches a quarter of the
  // smaller bound, well before either would drop lines.
  if (!client || !client->Taking()) return false;
  const std::size_t bound =
      std::min(config_.max_queued_bytes, client->config().max_buffered_bytes) / 4;
  if (queued + client->BufferedBytes() < bound) return false;
  client->SendBuffered();
  return true;
}

void Driver::OnEvicted(uint64_t stream_id, uint64_t lines) {
  series_.dropped_journal_full.Add(lines);
  std::string name;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = streams_.find(stream_id); it != streams_.end()) name = it->second->info.Name();
  }
  spdlog::warn(
      "container {}: journal budget full (max-size x max-file); {} undelivered lines dropped "
      "(journal_full). Is Loki reachable? loki-on-full=block keeps them at the price of "
      "blocking the container",
      name, lines);
}

void Driver::Shutdown(std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  {
    absl::MutexLock lock(&recovery_mu_);
    recovery_stop_ = true;  // a recovery still running ends between two journals
    recovery_cv_.SignalAll();
  }
  AwaitRecovery();
  if (recovery_.joinable()) recovery_.join();
  if (reader_) reader_->Stop();
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (!shipper_.Stop()) return;  // stopped already; Stop hands every queued line to its client
  // What is acknowledged so far is persisted before the clients stop: a client stuck in a
  // connection (a TLS handshake nobody answers) must not cost the cursors when the process
  // exits at its deadline.
  PersistCursors();
  for (const std::shared_ptr<ShippingClient>& client : clients_.TakeAll()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    client->Stop(std::max(left, std::chrono::milliseconds(0)));
  }
  // Whatever was acknowledged is not sent again at the next start.
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, s] : streams_) {
      if (s->journal) s->ledger.RecheckPersisted();
    }
  }
  PersistCursors();
  // A clean stop: no replay that was running counts as a death.
  if (replay_guard_) replay_guard_->ClearAll();
}

}  // namespace skald
