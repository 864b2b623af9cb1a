#include "plugin/driver/driver.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "pipeline_stages/config_error.h"
#include "pipeline_stages/pipeline.h"
#include "pipeline_stages/relabel.h"
#include "plugin/common/container_id.h"
#include "plugin/common/fault_injection.h"
#include "plugin/common/thread_name.h"
#include "plugin/config/container_labels.h"
#include "plugin/config/replay_info.h"
#include "plugin/driver/container_pipeline.h"
#include "plugin/driver/driver_stream.h"
#include "plugin/driver/shipment_ledger.h"

namespace skald {

namespace {

constexpr std::chrono::milliseconds kPipelineFlushInterval{200};

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
      dropped_queue_full_(metrics.GetCounter("skald_entries_dropped_total",
                                             "Entries not delivered, by reason.",
                                             {{"reason", "queue_full"}})),
      dropped_relabel_(metrics.GetCounter("skald_entries_dropped_total",
                                          "Entries not delivered, by reason.",
                                          {{"reason", "relabel_drop"}})),
      dropped_journal_full_(metrics.GetCounter("skald_entries_dropped_total",
                                               "Entries not delivered, by reason.",
                                               {{"reason", "journal_full"}})),
      journals_removed_(metrics.GetCounter(
          "skald_journals_removed_total",
          "Journals of stopped containers removed (plugin-wide budget or age limit).")),
      journal_bytes_gauge_(
          metrics.GetGauge("skald_journal_bytes", "Bytes in all container journals.")),
      streams_started_(
          metrics.GetCounter("skald_streams_started_total", "StartLogging calls accepted.")),
      pending_gauge_(metrics.GetGauge("skald_entries_pending",
                                      "Lines read and neither delivered nor dropped yet.")),
      live_streams_gauge_(metrics.GetGauge("skald_streams_live", "Containers being logged.")),
      oldest_undelivered_gauge_(metrics.GetGauge(
          "skald_oldest_undelivered_seconds",
          "Age of the oldest line read and neither delivered nor dropped yet (0: none).")),
      journal_undelivered_gauge_(
          metrics.GetGauge("skald_journal_undelivered_bytes",
                           "Bytes of the journals not yet acknowledged by Loki (from the "
                           "cursors on: what a restart would send again).")),
      journals_quarantined_gauge_(metrics.GetGauge(
          "skald_journals_quarantined",
          "Journals set aside because the plugin died twice in a row replaying them (skald "
          "quarantine list).")),
      clients_(
          [this](const LokiClientConfig& client_config) {
            return config_.client_factory ? config_.client_factory(client_config)
                                          : MakeShippingClient(client_config, metrics_);
          },
          config_.client_idle_timeout),
      queue_(config_.max_queued_bytes) {
  // Series that Loki clients fill in: present (at 0) before the first container, so that a
  // scrape always shows read, sent, dropped and pending together.
  metrics.GetCounter("skald_entries_sent_total", "Entries delivered to Loki.");
  if (!config_.state_dir.empty()) {
    store_ = std::make_unique<JournalStore>(config_.state_dir);
    retention_ = std::make_unique<JournalRetention>(
        config_.journal_max_total_bytes, config_.journal_max_age,
        [this](const JournalRetention::Entry& e) { return KeepsJournal(e.first, *e.second); });
    secrets_ = std::make_unique<SecretStore>(config_.state_dir / "secrets");
    replay_guard_ = std::make_unique<ReplayGuard>(config_.state_dir);
    journals_quarantined_gauge_.Set(
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
  shipper_ = std::thread([this] {
    SetThreadName("skald-ship");
    ShipLoop();
  });
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
    live_streams_gauge_.Set(static_cast<int64_t>(streams_.size()));
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
  streams_started_.Add();
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
        journal->WriteInfo(ReplayInfoJson(info, stream->options, *secrets_));
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
    live_streams_gauge_.Set(static_cast<int64_t>(streams_.size()));
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

std::shared_ptr<Journal> Driver::JournalFor(const ContainerInfo& info, std::string* error) {
  AwaitRecovery();
  try {
    if (ParseLogOptions(info.config, config_.env_defaults).no_file) {
      *error =
          "skald: docker logs is not available for this container: it was started with "
          "--log-opt no-file=true (no journal is kept)";
      return nullptr;
    }
  } catch (const OptionError&) {
    // Options that no longer parse still name a journal that can be read.
  }
  if (!store_) {
    *error = "skald: docker logs is not available: the plugin keeps no journals";
    return nullptr;
  }
  if (!ValidContainerId(info.container_id)) {
    *error = "skald: invalid container id '" + info.container_id + "'";
    return nullptr;
  }
  absl::MutexLock lock(&mu_);
  if (auto it = journals_.find(info.container_id); it != journals_.end()) return it->second;
  std::error_code ec;
  if (!std::filesystem::is_directory(store_->ContainerDir(info.container_id), ec)) {
    *error = "skald: no logs are kept for container " + info.ID();
    return nullptr;
  }
  try {
    return OpenJournalLocked(info.container_id, LogOptions{});
  } catch (const std::exception& e) {
    *error = std::string("skald: cannot open the container's journal: ") + e.what();
    return nullptr;
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
    // Over its bound the queue drops memory-only lines of the stream that holds the most.
    if (const uint64_t dropped = queue_.Push(std::move(batch)); dropped > 0) {
      dropped_queue_full_.Add(dropped);
    }
  }
  queue_cv_.Signal();
}

void Driver::OnEnd(uint64_t stream_id, bool /*corrupt*/) {
  {
    absl::MutexLock lock(&mu_);
    queue_.Push(ShippingBatch{stream_id, {}, 0, true, false, {}});
  }
  queue_cv_.Signal();
}

bool Driver::WindowFull(const Stream& stream) const {
  return stream.window_bytes.load() >= static_cast<int64_t>(config_.stream_window_bytes) &&
         stream.client_window->load() >= static_cast<int64_t>(config_.client_window_bytes);
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
    queued = queue_.MemoryBytes(stream_id);
  }
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
  dropped_journal_full_.Add(lines);
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

void Driver::PushShipment(Stream& stream, std::vector<LokiEntry>& entries,
                          const JournalPosition& resume, std::size_t bytes,
                          const JournalPosition& cursor, int64_t first_line_ns) {
  if (!stream.journal) {
    stream.client->PushAll(entries);
    return;
  }
  const uint64_t shipment = stream.ledger.Open(entries.size(), cursor, bytes, first_line_ns);
  stream.last_resume = resume;
  for (LokiEntry& e : entries) e.ticket = DeliveryTicket{this, stream.id, shipment};
  stream.client->PushAll(entries);
  const std::size_t freed = stream.ledger.Close(shipment);
  // The acknowledged position may have moved: the reader's tick persists it (asking is a no-op
  // while a tick is due already).
  reader_->TickWithin(config_.maintenance_interval);
  FreeWindow(stream, freed);
  if (freed > 0) reader_->Wake();
  if (WindowFull(stream)) stream.client->SendBuffered();  // see WantsLines
}

void Driver::FreeWindow(Stream& stream, std::size_t bytes) {
  if (bytes == 0) return;
  stream.window_bytes -= static_cast<int64_t>(bytes);
  *stream.client_window -= static_cast<int64_t>(bytes);
}

void Driver::OnSettled(const std::vector<DeliveryTicket>& tickets, bool final) {
  if (!final) return;  // unsent at shutdown: the cursor stays, they are replayed
  std::size_t freed = 0;
  std::shared_ptr<Stream> stream;
  std::vector<std::shared_ptr<Stream>> retire;
  for (std::size_t i = 0; i < tickets.size();) {
    // Tickets come in runs of one shipment (a batch holds whole shipments, mostly): settle a
    // run at once.
    const DeliveryTicket& t = tickets[i];
    std::size_t run = 1;
    while (i + run < tickets.size() && tickets[i + run].stream == t.stream &&
           tickets[i + run].shipment == t.shipment) {
      ++run;
    }
    i += run;
    if (!stream || stream->id != t.stream) {
      absl::MutexLock lock(&mu_);
      auto it = streams_.find(t.stream);
      if (it == streams_.end()) {
        stream.reset();
        continue;
      }
      stream = it->second;
    }
    const ShipmentLedger::Settlement settled = stream->ledger.Settle(t.shipment, run);
    if (!settled.known) continue;
    FreeWindow(*stream, settled.freed);
    freed += settled.freed;
    if (settled.empty && (retire.empty() || retire.back() != stream)) retire.push_back(stream);
  }
  for (const auto& s : retire) MaybeRetire(s);
  if (stream) reader_->TickWithin(config_.maintenance_interval);  // see PushShipment
  if (freed > 0) reader_->Wake();
}

void Driver::MaybeRetire(const std::shared_ptr<Stream>& stream) {
  {
    absl::MutexLock lock(&mu_);
    if (!stream->finished) return;
    if (!stream->ledger.Empty()) return;
    if (streams_.erase(stream->id) == 0) return;
    StreamLeftLocked();
    if (auto it = retiring_by_container_.find(stream->info.container_id);
        it != retiring_by_container_.end() && it->second == stream) {
      retiring_by_container_.erase(it);
    }
  }
  if (stream->journal) {
    PersistCursor(*stream, stream->ledger.Acked());
    // A stopped container's journal from now on: the age limit looks at it when it is due.
    ScheduleAgeCheck(stream->journal->LastWrite());
  }
  stream->retired = true;
  idle_cv_.SignalAll();
}

void Driver::Ship(Stream& stream, ShippingBatch& batch) {
  std::vector<LogLine>& lines = batch.lines;
  std::vector<LokiEntry>& entries = converted_;
  entries.clear();
  if (!stream.held_reason.empty()) {
    // Kept in the journal, not sent: the cursor stays, the window is free again.
    metrics_
        .GetCounter("skald_entries_held_total",
                    "Lines read and not sent by this run: kept in the journal (docker logs) "
                    "and sent by a later start, by reason.",
                    {{"reason", stream.held_reason}})
        .Add(lines.size());
    if (batch.journaled) {
      stream.window_bytes -= static_cast<int64_t>(batch.bytes);
      *stream.client_window -= static_cast<int64_t>(batch.bytes);
      reader_->Wake();
    }
    return;
  }
  ContainerPipeline& pipeline = *stream.pipeline;
  if (pipeline.dropped_by_relabel()) dropped_relabel_.Add(lines.size());
  // The lines of this batch go in the shipment PushShipment opens next; it begins where the
  // previous one ended.
  const uint64_t origin = stream.ledger.NextShipment();
  if (stream.journal && pipeline.has_stages()) stream.ledger.NoteStart(origin, stream.last_resume);
  const int64_t first_line_ns = lines.empty() ? 0 : lines.front().time_nano;
  pipeline.Process(lines, origin, entries);
  if (pipeline.has_stages() && pipeline.OldestHeldOrigin()) pipelines_hold_ = true;
  PushShipment(stream, entries, batch.resume, batch.journaled ? batch.bytes : 0,
               CursorLimit(stream, batch.resume), first_line_ns);
  AccountHeld(stream);
}

JournalPosition Driver::CursorLimit(Stream& stream, const JournalPosition& resume) {
  // Entries a stage still holds (a multiline block, lines a limit delays) were read from the
  // oldest shipment they came from on: the cursor may not pass its start, or a restart would
  // lose them.
  return stream.ledger.CursorLimit(
      stream.pipeline ? stream.pipeline->OldestHeldOrigin() : std::nullopt, resume);
}

void Driver::AccountHeld(Stream& stream) {
  if (!stream.journal || !stream.pipeline || !stream.pipeline->has_stages()) return;
  // What the stages hold (a limit stage delaying lines, a multiline block) counts in the
  // window like lines waiting for Loki: past it the reader stops decoding this stream's
  // journal, so a stage cannot take a whole journal into memory.
  const auto held = static_cast<int64_t>(stream.pipeline->HeldBytes());
  const int64_t delta = held - stream.held_accounted;
  if (delta == 0) return;
  stream.held_accounted = held;
  stream.window_bytes += delta;
  *stream.client_window += delta;
  if (delta < 0) reader_->Wake();
}

void Driver::FlushPipelines(bool final_for_all) {
  std::vector<std::shared_ptr<Stream>> with_pipeline;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, s] : streams_) {
      if (s->pipeline && s->pipeline->has_stages() && !s->finished) with_pipeline.push_back(s);
    }
  }
  int64_t now = stages::Clock::System().NowNs();
  pipelines_hold_ = false;
  for (const auto& s : with_pipeline) {
    converted_.clear();
    s->pipeline->Flush(now, final_for_all, converted_);
    if (!converted_.empty()) {
      PushShipment(*s, converted_, s->last_resume, 0, CursorLimit(*s, s->last_resume));
      AccountHeld(*s);
    }
    if (s->pipeline->OldestHeldOrigin()) pipelines_hold_ = true;
  }
}

void Driver::FinishStream(uint64_t stream_id) {
  std::shared_ptr<Stream> stream;
  {
    absl::MutexLock lock(&mu_);
    auto it = streams_.find(stream_id);
    if (it == streams_.end()) return;
    stream = it->second;
  }
  if (stream->pipeline &&
      stream->pipeline->has_stages()) {  // the end of the stream releases what stages hold
    converted_.clear();
    stream->pipeline->Flush(stages::Clock::System().NowNs(), true, converted_);
    // Nothing is held any more: this last shipment carries the cursor to the end.
    PushShipment(*stream, converted_, stream->last_resume, 0, stream->last_resume);
    AccountHeld(*stream);
  }
  // The container's last lines go now, not after loki-batch-wait.
  if (stream->client) stream->client->SendBuffered();
  {
    absl::MutexLock lock(&mu_);
    stream->finished = true;
    for (auto it = stream_by_file_.begin(); it != stream_by_file_.end();) {
      it = it->second == stream_id ? stream_by_file_.erase(it) : std::next(it);
    }
    if (stream->journal) {
      auto it = stream_by_container_.find(stream->info.container_id);
      if (it != stream_by_container_.end() && it->second == stream_id) {
        stream_by_container_.erase(it);
      }
      stream->end = stream->last_resume;
      retiring_by_container_[stream->info.container_id] = stream;
    }
    if (!stream->journal) {
      streams_.erase(stream_id);
      StreamLeftLocked();
    }
  }
  spdlog::info("container {} ({}): log stream ended{}", stream->info.ID(), stream->info.Name(),
               stream->stop_requested ? "" : " before StopLogging");
  if (stream->journal) MaybeRetire(stream);
  idle_cv_.SignalAll();
}

void Driver::ShipLoop() {
  auto last_flush = std::chrono::steady_clock::now();
  for (;;) {
    ShippingBatch batch;
    std::shared_ptr<Stream> stream;
    {
      absl::ReleasableMutexLock lock(&mu_);
      // Only stages that hold entries (a multiline block, lines a limit delays) need a timer.
      bool ready = true;
      if (pipelines_hold_) {
        ready = WaitForBatchLocked(kPipelineFlushInterval);
      } else {
        while (queue_.empty() && !stopping_) queue_cv_.Wait(&mu_);
      }
      if (pipelines_hold_ &&
          (!ready || std::chrono::steady_clock::now() - last_flush >= kPipelineFlushInterval)) {
        // Release what stages hold past their wait (multiline max_wait_time, limit).
        lock.Release();
        FlushPipelines(false);
        last_flush = std::chrono::steady_clock::now();
        continue;
      }
      if (queue_.empty()) {  // stopping and drained
        lock.Release();
        FlushPipelines(true);
        return;
      }
      queue_.Pop(&batch);
      in_flight_lines_ += batch.lines.size();
      auto it = streams_.find(batch.stream_id);
      if (it != streams_.end()) stream = it->second;
    }
    const std::size_t count = batch.lines.size();
    try {
      if (batch.end) {
        FinishStream(batch.stream_id);
      } else if (stream) {
        // Which container's lines this thread works on, should the process die now.
        if (replay_guard_)
          replay_guard_->Enter(ReplayGuard::kShipperSlot, stream->info.container_id);
        Ship(*stream, batch);
        if (replay_guard_) replay_guard_->Leave(ReplayGuard::kShipperSlot);
      }
    } catch (const std::exception& e) {
      // A bug, not an input: the thread that ships every container's lines must go on.
      metrics_
          .GetCounter("skald_entries_dropped_total", "Entries not delivered, by reason.",
                      {{"reason", "internal_error"}})
          .Add(count);
      spdlog::critical("stream {}: {}; {} lines dropped (internal_error)", batch.stream_id,
                       e.what(), count);
    }
    {
      absl::MutexLock lock(&mu_);
      in_flight_lines_ -= count;
    }
    idle_cv_.SignalAll();
  }
}

bool Driver::WaitForBatchLocked(std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (queue_.empty() && !stopping_) {
    const auto left = until - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return false;
    queue_cv_.WaitWithTimeout(&mu_, absl::FromChrono(left));
  }
  return true;
}

bool Driver::IdleLocked() const {
  return streams_.empty() && queue_.empty() && in_flight_lines_ == 0;
}

bool Driver::WaitIdle(std::chrono::milliseconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  absl::MutexLock lock(&mu_);
  while (!IdleLocked()) {
    const auto left = until - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return false;
    idle_cv_.WaitWithTimeout(&mu_, absl::FromChrono(left));
  }
  return true;
}

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
  return clients_.RetireIdle(used, FifoReader::kNoTick);
}

void Driver::StreamLeftLocked() {
  live_streams_gauge_.Set(static_cast<int64_t>(streams_.size()));
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
  ContainerInfo info;
  try {
    info = ContainerInfo::FromJson(nlohmann::json::parse(*text));
  } catch (const std::exception& e) {
    spdlog::warn(
        "journal of stopped container {}: its info.json does not parse ({}); the age "
        "limit applies",
        container_id.substr(0, 12), e.what());
    return false;
  }
  try {
    return ParseLogOptions(info.config, config_.env_defaults).keep_file;
  } catch (const OptionError& e) {
    // Options this version no longer accepts: the journal may hold what the user asked to
    // keep, so it stays (the plugin-wide budget still bounds it).
    spdlog::warn(
        "journal of stopped container {}: kept past the age limit, its options no "
        "longer parse: {}",
        container_id.substr(0, 12), e.what());
    return true;
  }
}

std::size_t Driver::LiveClients() const { return clients_.size(); }

std::chrono::milliseconds Driver::Maintain() {
  using namespace std::chrono;
  // Nothing here runs on a timer of its own: the tick comes when a cursor is to be persisted
  // (TickWithin from PushShipment and OnSettled), a client may have become unused or a stream
  // left (StreamLeftLocked), a FIFO's bytes went into a journal (the budget, at most once a
  // second), and when the next journal reaches the age limit. A quiet plugin (containers that
  // log nothing, journals replayed to a Loki that is away, journals kept) runs nothing.
  milliseconds next = RetireIdleClients();
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
  for (const std::string& id : outcome.remove) {
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
      journals_removed_.Add();
    } catch (const std::exception& e) {
      spdlog::error("journal {}: cannot remove it: {}", j->dir().string(), e.what());
    }
  }
  journal_bytes_gauge_.Set(static_cast<int64_t>(outcome.total_bytes));
  return next;
}

void Driver::Shutdown(std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  AwaitRecovery();
  if (recovery_.joinable()) recovery_.join();
  if (reader_) reader_->Stop();
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ && !shipper_.joinable()) return;
    stopping_ = true;
  }
  queue_cv_.SignalAll();
  if (shipper_.joinable()) shipper_.join();  // hands every queued line to its client
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

std::size_t Driver::LiveStreams() const {
  absl::MutexLock lock(&mu_);
  std::size_t n = 0;
  for (const auto& [id, s] : streams_) n += s->finished ? 0 : 1;
  return n;
}

uint64_t Driver::PendingEntries() const {
  uint64_t pending = clients_.Pending();
  absl::MutexLock lock(&mu_);
  return pending + queue_.lines() + in_flight_lines_;
}

void Driver::UpdateGauges() {
  pending_gauge_.Set(static_cast<double>(PendingEntries()));
  double oldest = 0;
  for (const LokiClientHealth& c : ClientsHealth()) {
    oldest = std::max(oldest, c.oldest_undelivered_seconds);
  }
  oldest_undelivered_gauge_.Set(oldest);
  // From the oldest cursor of each journal (a container's next stream starts after the one
  // still retiring) to its end.
  std::map<Journal*, std::pair<std::shared_ptr<Journal>, JournalPosition>> from;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, s] : streams_) {
      if (!s->journal) continue;
      const JournalPosition acked = s->ledger.Acked();
      auto [it, created] = from.try_emplace(s->journal.get(), s->journal, acked);
      if (!created) it->second.second = std::min(it->second.second, acked);
    }
  }
  uint64_t undelivered = 0;
  for (const auto& [ptr, journal_and_cursor] : from) {
    const auto& [journal, cursor] = journal_and_cursor;
    for (uint64_t segment : journal->Segments()) {
      if (segment < cursor.segment) continue;
      const uint64_t bytes = journal->ReadableBytes(segment);
      undelivered += segment == cursor.segment ? bytes - std::min(bytes, cursor.offset) : bytes;
    }
  }
  journal_undelivered_gauge_.Set(static_cast<double>(undelivered));
}

std::vector<LokiClientHealth> Driver::ClientsHealth() const {
  const std::vector<std::shared_ptr<ShippingClient>> clients = clients_.All();
  std::vector<std::shared_ptr<Stream>> journaled;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, s] : streams_) {
      if (s->journal && s->client) journaled.push_back(s);
    }
  }
  const auto steady_now = std::chrono::steady_clock::now();
  const int64_t now_ns = stages::Clock::System().NowNs();
  std::vector<LokiClientHealth> out;
  std::unordered_map<const ShippingClient*, std::size_t> index;
  for (const auto& c : clients) {
    LokiClientHealth h;
    h.url = RedactUrl(c->config().url);
    h.tenant_id = c->config().tenant_id;
    const ShippingClient::PushResult last = c->LastPush();
    h.last_push_status = last.status;
    h.last_push_at = last.at;
    h.pending_entries = c->Pending();
    if (auto since = c->OldestPendingSince()) {
      h.oldest_undelivered_seconds =
          std::max(0.0, std::chrono::duration<double>(steady_now - *since).count());
    }
    index[c.get()] = out.size();
    out.push_back(std::move(h));
  }
  for (const auto& s : journaled) {
    auto it = index.find(s->client.get());
    if (it == index.end()) continue;
    double& oldest = out[it->second].oldest_undelivered_seconds;
    if (auto first_line_ns = s->ledger.OldestFirstLineNs()) {
      oldest = std::max(oldest, static_cast<double>(now_ns - *first_line_ns) / 1e9);
    }
  }
  return out;
}

}  // namespace skald
