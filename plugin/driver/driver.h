// Driver: the registry of live log streams, from StartLogging to the end of their FIFO.
//
// StartLogging validates the container's options, builds its labels, opens its FIFO and hands
// it to the FifoReader; StopLogging only marks the stream (it answers at once, the FIFO is
// still open then), and the stream ends when its FIFO reaches end of file and every line has
// been handed to the Loki client. Loki clients are shared by streams whose client options are
// equal. Pipelines (loki-pipeline-stages) and relabel rules run on the shipping thread, never
// on the reader's.
//
// With a state directory (the default), every container has a Journal: the FIFO is drained
// into it and the stream is decoded from it. Each batch of decoded lines goes to the Loki
// client as a "shipment"; its entries carry a DeliveryTicket, and when every entry of a
// shipment (and of those before it) is delivered or dropped for good, the journal's cursor
// moves past it (plugin/driver/shipment_ledger.h; persisted about once a second, and at the end).
// Decoding pauses while a stream holds more than its in-memory window of unacknowledged lines
// (Loki slow or away): the journal holds the rest, bounded by max-size x max-file per
// container and a plugin-wide budget; what a budget evicts unread is counted as dropped
// (`journal_full`). At start, Recover() re-opens the FIFOs of streams that were live when the
// plugin died and replays every journal from its cursor.
// Decoded lines wait for the shipping thread (Shipper) in a ShippingQueue, which serves the
// streams in turn (a flooding container does not hold up its neighbours' lines). Without a journal
// (no-file=true) lines are bounded there; when it is full the oldest lines of the stream that
// holds the most are dropped and counted (`queue_full`).
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "pipeline_stages/entry.h"
#include "plugin/config/container_info.h"
#include "plugin/config/log_options.h"
#include "plugin/config/secret_store.h"
#include "plugin/config/stream_labels.h"
#include "plugin/driver/client_pool.h"
#include "plugin/driver/driver_metrics.h"
#include "plugin/driver/shipper.h"
#include "plugin/driver/shipping_client.h"
#include "plugin/ingest/fifo_reader.h"
#include "plugin/journal/journal.h"
#include "plugin/journal/journal_retention.h"
#include "plugin/journal/journal_store.h"
#include "plugin/journal/journal_writer.h"
#include "plugin/journal/replay_guard.h"
#include "plugin/journal/retention_schedule.h"
#include "plugin/loki/loki_client.h"
#include "plugin/loki/stream_selector.h"
#include "plugin/metrics/health_report.h"
#include "plugin/metrics/metrics.h"
#include "plugin/metrics/pipeline_metrics_observer.h"

namespace skald {

struct DriverConfig {
  std::map<std::string, std::string> env_defaults;  // plugin-wide option defaults
  std::string hostname;                             // the `host` label
  std::size_t max_queued_bytes = 64 * 1024 * 1024;  // reader -> shipper queue bound (no-file)
  // Journals live under `state_dir`/containers; empty: no journals (every stream no-file).
  std::filesystem::path state_dir;
  uint64_t journal_max_total_bytes = 2ull * 1024 * 1024 * 1024;  // all journals together
  std::chrono::seconds journal_max_age{7 * 24 * 3600};           // stopped containers' journals
  // Decoded lines not yet acknowledged: a stream may always hold `stream_window_bytes`, and
  // more (a busy stream needs several batches in flight) while all streams of its Loki client
  // (one endpoint and option set) hold less than `client_window_bytes`, so that streams whose
  // Loki is away never take the room of streams shipping elsewhere. The rest waits in the
  // journal, so memory stays flat in an outage.
  std::size_t stream_window_bytes = 64 * 1024;
  std::size_t client_window_bytes = 4 * 1024 * 1024;
  // Cursors are persisted within this time of an acknowledgement (lines acknowledged since may
  // be sent again after a kill -9); the budget is checked at most once a second while FIFOs are
  // drained into journals, and the age limit when the next stopped container's journal reaches
  // it. Nothing runs on a timer while nothing changes.
  std::chrono::milliseconds maintenance_interval{100};
  // A Loki client no stream has used for this long, with nothing pending, is stopped and
  // freed (its lanes are threads); a later stream with the same options makes a new one.
  std::chrono::milliseconds client_idle_timeout{60'000};
  // Not empty: every StartLogging is refused with this message (the state directory is held
  // by another copy of the plugin).
  std::string refuse_reason;
  // Makes the client shared by the streams whose client options are `config` (may throw);
  // empty: a LokiClient (MakeShippingClient). Tests pass a fake.
  std::function<std::shared_ptr<ShippingClient>(const LokiClientConfig& config)> client_factory;
};

// StartLogging refused for the plugin's own reasons, not the options': it is shutting down,
// the FIFO is logged already, another copy holds the state directory, or the container id
// cannot name a journal. what() is the message for dockerd.
class StartRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// JournalFor has no journal to give for the container (no-file=true, nothing was ever logged,
// the journal cannot be opened). what() is the message for the user.
class NoJournal : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Driver : public LineSink, public DeliveryListener, private ShipperWork {
 public:
  Driver(DriverConfig config, MetricsRegistry& metrics);
  ~Driver() override;  // Shutdown(0)
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  // Re-opens the FIFOs of sessions left live by a previous run that still exist, seals the
  // others, and replays every journal from its cursor. Call once, before StartLogging. A
  // journal whose replay was running when the process died twice in a row is quarantined
  // instead (plugin/journal/replay_guard.h); when the last run did not stop cleanly, the replay
  // begins kCrashedReplayDelay after the call, so that the daemon finds the plugin up first.
  // A Shutdown meanwhile ends it early (the delay, or between two journals).
  void Recover() ABSL_LOCKS_EXCLUDED(mu_, recovery_mu_);
  // Recover() on a thread of its own, returning at once: the plugin answers the daemon before
  // any journal is replayed. StartLogging, StopLogging, JournalFor and Shutdown wait for it.
  void RecoverInBackground() ABSL_LOCKS_EXCLUDED(recovery_mu_);
  static constexpr std::chrono::milliseconds kCrashedReplayDelay{3'000};
  // Names of the journals in quarantine (<state>/quarantine).
  std::vector<std::string> QuarantinedJournals() const;

  // Throws OptionError (the options cannot be used), StartRefused (see above) or
  // std::system_error (the FIFO); each what() is a message for the user.
  void StartLogging(const std::string& file, const ContainerInfo& info) ABSL_LOCKS_EXCLUDED(mu_);
  // Marks the stream; returns at once. Unknown files are ignored.
  void StopLogging(const std::string& file) ABSL_LOCKS_EXCLUDED(mu_);

  // Stops reading, hands what was read to the clients and flushes them for at most `deadline`.
  void Shutdown(std::chrono::milliseconds deadline) ABSL_LOCKS_EXCLUDED(mu_);

  // Blocks until no stream is live and the queue is empty, or `deadline` passes.
  bool WaitIdle(std::chrono::milliseconds deadline) ABSL_LOCKS_EXCLUDED(mu_);

  std::size_t LiveStreams() const ABSL_LOCKS_EXCLUDED(mu_);
  // Loki clients alive (each holds its lanes' threads).
  std::size_t LiveClients() const ABSL_LOCKS_EXCLUDED(mu_);
  // Lines read and neither delivered nor dropped yet (queue + clients).
  uint64_t PendingEntries() const ABSL_LOCKS_EXCLUDED(mu_);
  // Refreshes the gauges computed on demand (before a metrics scrape): entries pending, the
  // oldest undelivered line's age, journal bytes not yet acknowledged.
  void UpdateGauges() ABSL_LOCKS_EXCLUDED(mu_);
  // The Loki clients in use and how they fare (GET /healthz). A client's oldest undelivered
  // line is the older of what the client holds (since it was handed over) and, for streams
  // with a journal, the first line of their oldest unacknowledged shipment (since the daemon
  // read it: a replay after a restart counts from then). Lines a stream holds for unusable
  // options count in neither.
  std::vector<LokiClientHealth> ClientsHealth() const ABSL_LOCKS_EXCLUDED(mu_);

  // The journal of the container `docker logs` asks about (ReadLogs); never null. Throws
  // NoJournal when there is none.
  std::shared_ptr<Journal> JournalFor(const ContainerInfo& info) ABSL_LOCKS_EXCLUDED(mu_);

  // LineSink (reader thread).
  void OnLines(uint64_t stream_id, std::vector<LogLine>& lines,
               const JournalPosition& resume) override ABSL_LOCKS_EXCLUDED(mu_);
  void OnEnd(uint64_t stream_id, bool corrupt) override ABSL_LOCKS_EXCLUDED(mu_);
  bool WantsLines(uint64_t stream_id) override ABSL_LOCKS_EXCLUDED(mu_);
  bool LokiTakesLines(uint64_t stream_id) override ABSL_LOCKS_EXCLUDED(mu_);
  bool HoldsMemoryStream(uint64_t stream_id) override ABSL_LOCKS_EXCLUDED(mu_);
  void OnEvicted(uint64_t stream_id, uint64_t lines) override ABSL_LOCKS_EXCLUDED(mu_);

  // DeliveryListener (client threads).
  void OnSettled(const std::vector<DeliveryTicket>& tickets, bool final) override
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Stream;  // plugin/driver/driver_stream.h

  // Parses options and builds labels, relabel result and pipeline (throws OptionError).
  // `journaled` false: the stream will have no journal (its client bounds memory itself).
  std::shared_ptr<Stream> MakeStream(const std::string& file, const ContainerInfo& info,
                                     bool journaled = true);
  // StartLogging of a journaled stream: registers it (or joins the container's stream still
  // draining), writes its info.json, starts the writer and hands the FIFO to the reader.
  // Returns why the journal cannot be written ("" once the FIFO is read); throws what
  // StartLogging throws.
  std::string StartJournaled(const std::string& file, const ContainerInfo& info,
                             const std::shared_ptr<Stream>& stream) ABSL_LOCKS_EXCLUDED(mu_);
  // StartJournaled's registration, under the lock: opens the container's journal and either
  // sets *joined (its stream, still draining, other than `ended`) or registers `stream` with
  // its cursor. Returns why the journal cannot be opened ("" when it is).
  std::string RegisterJournaled(const std::string& file, const ContainerInfo& info,
                                const std::shared_ptr<Stream>& stream,
                                const std::shared_ptr<Stream>& ended,
                                std::shared_ptr<Stream>* joined, std::shared_ptr<Journal>* journal)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Registers `stream` as a memory stream (no-file, or no journal can be written) of `file`.
  void StartInMemory(const std::string& file, std::shared_ptr<Stream> stream)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Undoes the registration of `file` by a StartLogging that failed; `fresh` is the new
  // stream it registered (null when it joined one), `with_reader` whether the reader has it.
  void Unregister(const std::string& file, const Stream* fresh, bool with_reader)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The container's journal (opened on first use; throws std::system_error when it cannot).
  std::shared_ptr<Journal> OpenJournalLocked(const std::string& container_id,
                                             const LogOptions& options)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Recover() of one container's journal (plugin/driver/driver_recovery.cc); throws what opening it
  // throws.
  // True when it left the journal replaying from a cursor before its end (the replay marker
  // stays until the cursor moves); false when there was nothing to replay.
  bool RecoverContainer(const std::string& id) ABSL_LOCKS_EXCLUDED(mu_);
  // A recovered stream whose options cannot be used (`why`): its FIFO `fifo` is drained into
  // the journal and its lines are held there, never sent.
  std::shared_ptr<Stream> MakeHeldStream(const ContainerInfo& info, const std::string& fifo,
                                         const std::string& why);
  // RecoverContainer's registration of container `id`'s `stream` on `journal`, replayed from
  // `cursor`, with the FIFOs it resumed.
  void RegisterRecovered(const std::string& id, const std::shared_ptr<Stream>& stream,
                         const std::shared_ptr<Journal>& journal, const JournalPosition& cursor,
                         bool replaying, const std::vector<std::string>& fifos)
      ABSL_LOCKS_EXCLUDED(mu_);
  // ShipperWork (shipping thread): a batch goes to its stream (Ship) or ends it
  // (FinishStream); returns whether some stage holds entries.
  bool ShipBatch(ShippingBatch& batch) override ABSL_LOCKS_EXCLUDED(mu_);
  // Releases entries held by pipelines (multiline, limit) whose time has come (all of them
  // when `final`); returns whether some pipeline still holds entries.
  bool FlushHeld(bool final) override ABSL_LOCKS_EXCLUDED(mu_);
  void BatchDone() override ABSL_LOCKS_EXCLUDED(mu_);
  // No stream is live, nothing is queued or being shipped.
  bool IdleLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs the stream's stages on `batch` and hands the entries to its client; returns whether
  // the stages hold entries.
  bool Ship(Stream& stream, ShippingBatch& batch);
  // Counts what the stream's pipeline holds in its window (shipping thread).
  void AccountHeld(Stream& stream);
  // Hands `entries` to the stream's client as one shipment (resume: where a restart would read
  // again to produce what comes after them; cursor: how far the cursor may go once they are
  // settled, see CursorLimit).
  // first_line_ns: the daemon's time of the first line the shipment was decoded from (0: none,
  // entries a stage held).
  void PushShipment(Stream& stream, std::vector<LokiEntry>& entries, const JournalPosition& resume,
                    std::size_t bytes, const JournalPosition& cursor, int64_t first_line_ns = 0);
  // Gives `bytes` of settled shipments back to the stream's and its client's windows.
  void FreeWindow(Stream& stream, std::size_t bytes);
  // How far the cursor may go after a shipment ending at `resume` (shipping thread).
  JournalPosition CursorLimit(Stream& stream, const JournalPosition& resume);
  void FinishStream(uint64_t stream_id) ABSL_LOCKS_EXCLUDED(mu_);
  // Forgets a finished stream once nothing of it is unacknowledged (persists its cursor).
  void MaybeRetire(const std::shared_ptr<Stream>& stream) ABSL_LOCKS_EXCLUDED(mu_);
  // Reader thread, when a tick is due: cursors, journal budget, age limit, idle clients.
  // Returns when it wants to run again (FifoReader::kNoTick: not until asked).
  std::chrono::milliseconds Maintain() ABSL_LOCKS_EXCLUDED(mu_);
  // Removes the journals retention chose, but not one whose container started meanwhile.
  void RemoveJournals(const std::vector<std::string>& container_ids) ABSL_LOCKS_EXCLUDED(mu_);
  // Frees the clients no stream has used for client_idle_timeout; returns when one of those
  // left will have been unused that long (kNoTick: none).
  std::chrono::milliseconds RetireIdleClients() ABSL_LOCKS_EXCLUDED(mu_);
  // After the last stream left or a client retired, once nothing is live, queued or being
  // shipped: the free memory of the threads' malloc arenas goes back to the system.
  void GiveMemoryBackIfIdle() ABSL_LOCKS_EXCLUDED(mu_);
  // A stream left streams_: the gauge, and a tick for the clients and the budget.
  void StreamLeftLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A journal became a stopped container's, last written at `last_write`: the age limit looks
  // at it when it is due.
  void ScheduleAgeCheck(std::filesystem::file_time_type last_write) ABSL_LOCKS_EXCLUDED(mu_);
  // The age limit's question of a stopped container's journal: its options (its info.json's,
  // over the plugin-wide defaults) say keep-file=true.
  bool KeepsJournal(const std::string& container_id, const Journal& journal) const;
  // The stream holds its own window and its client's streams together hold the client's:
  // decoding pauses.
  bool WindowFull(const Stream& stream) const;
  void PersistCursors() ABSL_LOCKS_EXCLUDED(mu_);
  // Writes `acked` as the stream's cursor unless a newer one was written.
  void PersistCursor(Stream& stream, JournalPosition acked);
  // Waits while RecoverInBackground runs.
  void AwaitRecovery() ABSL_LOCKS_EXCLUDED(recovery_mu_);

  DriverConfig config_;
  MetricsRegistry& metrics_;
  PipelineMetricsObserver observer_;
  DriverMetrics series_;  // the Driver's own metrics

  // Set in the constructor, then only read.
  std::unique_ptr<JournalStore> store_;
  std::unique_ptr<SecretStore> secrets_;         // with store_
  std::unique_ptr<JournalRetention> retention_;  // with store_
  std::unique_ptr<ReplayGuard> replay_guard_;    // with store_
  // The Loki clients and their windows (a lock of its own, never taken while mu_ is held).
  ClientPool clients_;

  // RecoverInBackground's thread, whether it still runs, and whether Shutdown asked it to end
  // (it ends between two journals; the others are recovered at the next start).
  absl::Mutex recovery_mu_;
  bool recovering_ ABSL_GUARDED_BY(recovery_mu_) = false;
  bool recovery_stop_ ABSL_GUARDED_BY(recovery_mu_) = false;
  absl::CondVar recovery_cv_;  // recovering_ or recovery_stop_ changed
  std::thread recovery_;

  // The registry. Streams' own fields say which of them mu_ guards; a stream's
  // acknowledgements have their own lock (ShipmentLedger), taken after mu_ when both are held,
  // as is the Shipper's.
  mutable absl::Mutex mu_;
  absl::CondVar idle_cv_;  // a stream ended or retired, or a batch was shipped
  std::map<uint64_t, std::shared_ptr<Stream>> streams_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, uint64_t> stream_by_file_ ABSL_GUARDED_BY(mu_);
  // Journaled, not finished.
  std::map<std::string, uint64_t> stream_by_container_ ABSL_GUARDED_BY(mu_);
  // Finished journaled streams still waiting for acknowledgements, by container.
  std::map<std::string, std::shared_ptr<Stream>> retiring_by_container_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<Journal>> journals_ ABSL_GUARDED_BY(mu_);  // by id
  // When the journal budget and the age limit are due (Maintain).
  RetentionSchedule retention_schedule_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool trim_due_ ABSL_GUARDED_BY(mu_) = false;  // GiveMemoryBackIfIdle has something to do

  std::set<std::string> retained_secrets_;  // (Recover only) references the journals make

  // Shipping thread's scratch, shared by every stream (a vector per stream would keep the
  // capacity of its largest batch for the stream's life).
  std::vector<LokiEntry> converted_;

  std::unique_ptr<FifoReader> reader_;
  // The reader -> shipping thread queue and the thread (a lock of its own, taken after mu_).
  Shipper shipper_;
};

}  // namespace skald
