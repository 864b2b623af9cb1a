// The Driver's shipping side: for each batch the Shipper's thread takes, the stream's stages
// run and the entries go to its client within the stream's and the client's windows; settled
// shipments free the windows and move the acknowledged cursor; a finished stream retires once
// nothing of it is unacknowledged (plugin/driver/driver.h).
#include <spdlog/spdlog.h>

#include <optional>

#include "plugin/driver/container_pipeline.h"
#include "plugin/driver/driver.h"
#include "plugin/driver/driver_stream.h"
#include "plugin/driver/shipment_ledger.h"

namespace skald {

bool Driver::WindowFull(const Stream& stream) const {
  return stream.window_bytes.load() >= static_cast<int64_t>(config_.stream_window_bytes) &&
         stream.client_window->load() >= static_cast<int64_t>(config_.client_window_bytes);
}

void Driver::PushShipment(Stream& stream, std::vector<LokiEntry>& entries,
                          const JournalPosition& resume, std::size_t bytes,
                          const JournalPosition& cursor, int64_t first_line_ns) {
  if (!entries.empty()) shipper_.NoteUnsent(stream.client);
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

bool Driver::Ship(Stream& stream, ShippingBatch& batch) {
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
    return false;
  }
  ContainerPipeline& pipeline = *stream.pipeline;
  if (pipeline.dropped_by_relabel()) series_.dropped_relabel.Add(lines.size());
  // The lines of this batch go in the shipment PushShipment opens next; it begins where the
  // previous one ended.
  const uint64_t origin = stream.ledger.NextShipment();
  if (stream.journal && pipeline.has_stages()) stream.ledger.NoteStart(origin, stream.last_resume);
  const int64_t first_line_ns = lines.empty() ? 0 : lines.front().time_nano;
  pipeline.Process(lines, origin, entries);
  PushShipment(stream, entries, batch.resume, batch.journaled ? batch.bytes : 0,
               CursorLimit(stream, batch.resume), first_line_ns);
  AccountHeld(stream);
  return pipeline.has_stages() && pipeline.OldestHeldOrigin();
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

bool Driver::FlushHeld(bool final_for_all) {
  std::vector<std::shared_ptr<Stream>> with_pipeline;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, s] : streams_) {
      if (s->pipeline && s->pipeline->has_stages() && !s->finished) with_pipeline.push_back(s);
    }
  }
  int64_t now = stages::Clock::System().NowNs();
  bool hold = false;
  for (const auto& s : with_pipeline) {
    converted_.clear();
    s->pipeline->Flush(now, final_for_all, converted_);
    if (!converted_.empty()) {
      PushShipment(*s, converted_, s->last_resume, 0, CursorLimit(*s, s->last_resume));
      AccountHeld(*s);
    }
    if (s->pipeline->OldestHeldOrigin()) hold = true;
  }
  return hold;
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

bool Driver::ShipBatch(ShippingBatch& batch) {
  bool hold = false;
  try {
    if (batch.end) {
      FinishStream(batch.stream_id);
      return false;
    }
    std::shared_ptr<Stream> stream;
    {
      absl::MutexLock lock(&mu_);
      auto it = streams_.find(batch.stream_id);
      if (it == streams_.end()) return false;
      stream = it->second;
    }
    // Which container's lines this thread works on, should the process die now.
    if (replay_guard_) replay_guard_->Enter(ReplayGuard::kShipperSlot, stream->info.container_id);
    hold = Ship(*stream, batch);
    if (replay_guard_) replay_guard_->Leave(ReplayGuard::kShipperSlot);
  } catch (const std::exception& e) {
    // A bug, not an input: the thread that ships every container's lines must go on.
    const std::size_t count = batch.lines.size();
    metrics_
        .GetCounter("skald_entries_dropped_total", "Entries not delivered, by reason.",
                    {{"reason", "internal_error"}})
        .Add(count);
    spdlog::critical("stream {}: {}; {} lines dropped (internal_error)", batch.stream_id, e.what(),
                     count);
  }
  return hold;
}

void Driver::BatchDone() {
  // Under the lock, so that a WaitIdle between its check and its wait cannot miss the signal.
  { absl::MutexLock lock(&mu_); }
  idle_cv_.SignalAll();
}

bool Driver::IdleLocked() const { return streams_.empty() && shipper_.Idle(); }

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

}  // namespace skald
