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
// into it and the stream is decoded from it. Each batch of decoded lines is a "chunk"; its
// entries carry a DeliveryTicket, and when every entry of a chunk (and of those before it) is
// delivered or dropped for good, the journal's cursor moves past it (persisted about once a
// second, and at the end). Decoding pauses while a stream holds more than its in-memory window
// of unacknowledged lines (Loki slow or away): the journal holds the rest, bounded by max-size
// x max-file per container and a plugin-wide budget; what a budget evicts unread is counted as
// dropped (`journal_full`). At start, Recover() re-opens the FIFOs of streams that were live
// when the plugin died and replays every journal from its cursor.
// Without a journal (no-file=true) a bounded in-memory queue sits between the reader and the
// shipping thread; when it is full the oldest lines are dropped and counted (`queue_full`).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "pipeline_stages/entry.h"
#include "plugin/container_info.h"
#include "plugin/fifo_reader.h"
#include "plugin/health_report.h"
#include "plugin/journal.h"
#include "plugin/journal_store.h"
#include "plugin/journal_writer.h"
#include "plugin/log_options.h"
#include "plugin/loki_client.h"
#include "plugin/metrics.h"
#include "plugin/pipeline_metrics_observer.h"
#include "plugin/secret_store.h"
#include "plugin/stream_labels.h"
#include "plugin/stream_selector.h"

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
  // be sent again after a kill -9); while streams are live the budget is checked once a second,
  // and the age limit when the next stopped container's journal reaches it. Nothing runs on a
  // timer while nothing changes.
  std::chrono::milliseconds maintenance_interval{100};
  // A Loki client no stream has used for this long, with nothing pending, is stopped and
  // freed (its lanes are threads); a later stream with the same options makes a new one.
  std::chrono::milliseconds client_idle_timeout{60'000};
  // Not empty: every StartLogging is refused with this message (the state directory is held
  // by another copy of the plugin).
  std::string refuse_reason;
};

class Driver : public LineSink, public DeliveryListener {
 public:
  Driver(DriverConfig config, MetricsRegistry& metrics);
  ~Driver() override;  // Shutdown(0)
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  // Re-opens the FIFOs of sessions left live by a previous run that still exist, seals the
  // others, and replays every journal from its cursor. Call once, before StartLogging.
  void Recover();

  // Throws OptionError (a message for the user) or std::system_error (FIFO) on failure.
  void StartLogging(const std::string& file, const ContainerInfo& info);
  // Marks the stream; returns at once. Unknown files are ignored.
  void StopLogging(const std::string& file);

  // Stops reading, hands what was read to the clients and flushes them for at most `deadline`.
  void Shutdown(std::chrono::milliseconds deadline);

  // Blocks until no stream is live and the queue is empty, or `deadline` passes.
  bool WaitIdle(std::chrono::milliseconds deadline);

  std::size_t LiveStreams() const;
  // Loki clients alive (each holds its lanes' threads).
  std::size_t LiveClients() const;
  // Lines read and neither delivered nor dropped yet (queue + clients).
  uint64_t PendingEntries() const;
  // Refreshes the gauges computed on demand (before a metrics scrape): entries pending, the
  // oldest undelivered line's age, journal bytes not yet acknowledged.
  void UpdateGauges();
  // The Loki clients in use and how they fare (GET /healthz). A client's oldest undelivered
  // line is the older of what the client holds (since it was handed over) and, for streams
  // with a journal, the first line of their oldest unacknowledged chunk (since the daemon read
  // it: a replay after a restart counts from then). Lines a stream holds for unusable options
  // count in neither.
  std::vector<LokiClientHealth> ClientsHealth() const;

  // The journal of the container `docker logs` asks about (ReadLogs), or null with a message
  // for the user in *error (no-file=true, or nothing was ever logged).
  std::shared_ptr<Journal> JournalFor(const ContainerInfo& info, std::string* error);

  // LineSink (reader thread).
  void OnLines(uint64_t stream_id, std::vector<LogLine>& lines,
               const JournalPosition& resume) override;
  void OnEnd(uint64_t stream_id, bool corrupt) override;
  bool WantsLines(uint64_t stream_id) override;
  void OnEvicted(uint64_t stream_id, uint64_t lines) override;

  // DeliveryListener (client threads).
  void OnSettled(const std::vector<DeliveryTicket>& tickets, bool final) override;

 private:
  struct Stream;
  struct Batch {
    uint64_t stream_id;
    std::vector<LogLine> lines;  // empty with `end` set: the stream's FIFO reached its end
    std::size_t bytes = 0;
    bool end = false;
    bool journaled = false;  // never dropped from the queue: the journal bounds it
    JournalPosition resume;
  };

  // The shared client for `config`, and the window its streams share.
  std::shared_ptr<LokiClient> ClientFor(const LokiClientConfig& config,
                                        std::shared_ptr<std::atomic<int64_t>>* window);
  // Parses options and builds labels, relabel result and pipeline (throws OptionError).
  // `journaled` false: the stream will have no journal (its client bounds memory itself).
  std::shared_ptr<Stream> MakeStream(const std::string& file, const ContainerInfo& info,
                                     bool journaled = true);
  // Registers `stream` as a memory stream (no-file, or no journal can be written) of `file`.
  void StartInMemory(const std::string& file, std::shared_ptr<Stream> stream);
  // Undoes the registration of `file` by a StartLogging that failed; `fresh` is the new
  // stream it registered (null when it joined one), `with_reader` whether the reader has it.
  void Unregister(const std::string& file, const Stream* fresh, bool with_reader);
  // The container's journal (opened on first use; throws std::system_error when it cannot).
  std::shared_ptr<Journal> OpenJournalLocked(const std::string& container_id,
                                             const LogOptions& options);
  // Recover() of one container's journal; throws what opening it throws.
  void RecoverContainer(const std::string& id);
  // What info.json keeps for a replay: `info` without the environment variables and container
  // labels no option selects, credentials replaced by references into secrets_ (throws
  // std::system_error when the secrets file cannot be written).
  std::string ReplayInfoJson(const ContainerInfo& info, const LogOptions& options);
  // Puts the secrets back into an info.json's options; returns why it cannot, or "".
  std::string ResolveSecrets(ContainerInfo& info);
  void ShipLoop();
  void Ship(Stream& stream, Batch& batch);
  // Counts what the stream's pipeline holds in its window (shipping thread).
  void AccountHeld(Stream& stream);
  // Hands `entries` to the stream's client as one chunk of the journal (resume: where a
  // restart would read again to produce what comes after them; cursor: how far the cursor may
  // go once they are settled, see CursorLimit).
  // first_line_ns: the daemon's time of the first line the chunk was decoded from (0: none,
  // entries a stage held).
  void PushChunk(Stream& stream, std::vector<LokiEntry>& entries, const JournalPosition& resume,
                 std::size_t bytes, const JournalPosition& cursor, int64_t first_line_ns = 0);
  // How far the cursor may go after a chunk ending at `resume` (shipping thread).
  JournalPosition CursorLimit(Stream& stream, const JournalPosition& resume);
  // A batch leaves queue_: its stream holds that much less there (caller holds mu_).
  void UnqueueMemoryLocked(const Batch& batch);
  // Releases entries held by pipelines (multiline, limit) whose time has come.
  void FlushPipelines(bool final_for_all);
  void FinishStream(uint64_t stream_id);
  // Pops acknowledged chunks; caller holds stream.ack_mu. Returns bytes freed.
  std::size_t AdvanceLocked(Stream& stream);
  // Forgets a finished stream once nothing of it is unacknowledged (persists its cursor).
  void MaybeRetire(const std::shared_ptr<Stream>& stream);
  // Reader thread, when a tick is due: cursors, journal budget, age limit, idle clients.
  // Returns when it wants to run again (FifoReader::kNoTick: not until asked).
  std::chrono::milliseconds Maintain();
  // Frees the clients no stream has used for client_idle_timeout; returns when one of those
  // left will have been unused that long (kNoTick: none).
  std::chrono::milliseconds RetireIdleClients();
  // A stream left streams_ (caller holds mu_): the gauge, and a tick for the clients and the
  // budget.
  void StreamLeftLocked();
  // A journal became a stopped container's, last written at `last_write`: the age limit looks
  // at it when it is due.
  void ScheduleAgeCheck(std::filesystem::file_time_type last_write);
  // The stream holds its own window and its client's streams together hold the client's:
  // decoding pauses.
  bool WindowFull(const Stream& stream) const;
  // Returns true when a dirty cursor waits for its predecessor's (tick again soon).
  bool PersistCursors();
  // Writes `acked` as the stream's cursor unless a newer one was written.
  void PersistCursor(Stream& stream, JournalPosition acked);

  DriverConfig config_;
  MetricsRegistry& metrics_;
  PipelineMetricsObserver observer_;
  Counter& dropped_queue_full_;
  Counter& dropped_relabel_;
  Counter& dropped_journal_full_;
  Counter& journals_removed_;
  Gauge& journal_bytes_gauge_;
  Counter& streams_started_;
  Gauge& pending_gauge_;
  Gauge& live_streams_gauge_;
  Gauge& oldest_undelivered_gauge_;
  Gauge& journal_undelivered_gauge_;

  mutable std::mutex mu_;
  std::condition_variable queue_cv_;
  std::condition_variable idle_cv_;
  std::map<uint64_t, std::shared_ptr<Stream>> streams_;
  std::map<std::string, uint64_t> stream_by_file_;
  std::map<std::string, uint64_t> stream_by_container_;  // journaled, not finished
  // Finished journaled streams still waiting for acknowledgements, by container.
  std::map<std::string, std::shared_ptr<Stream>> retiring_by_container_;
  std::map<std::string, std::shared_ptr<Journal>> journals_;  // by container id
  std::unique_ptr<JournalStore> store_;
  std::unique_ptr<SecretStore> secrets_;    // with store_
  std::set<std::string> retained_secrets_;  // (Recover) references the journals make
  std::chrono::steady_clock::time_point last_budget_check_;  // reader thread
  bool budget_due_ = true;  // (mu_) a budget check is due though no stream is live
  // (mu_) When the next stopped container's journal reaches the age limit (max: none).
  std::chrono::steady_clock::time_point next_age_check_ =
      std::chrono::steady_clock::time_point::min();
  // Decoded, not acknowledged: what the journaled streams of each client hold (by Key()).
  std::map<std::string, std::shared_ptr<std::atomic<int64_t>>> client_windows_;
  std::map<std::string, std::shared_ptr<LokiClient>> clients_;  // by LokiClientConfig::Key()
  // Clients no stream uses, and since when (by Key()).
  std::map<std::string, std::chrono::steady_clock::time_point> client_unused_since_;
  std::deque<Batch> queue_;
  std::size_t queued_bytes_ = 0;
  // Bytes of memory-only (no-file) batches in queue_, by stream.
  std::unordered_map<uint64_t, std::size_t> memory_queued_;
  uint64_t queued_lines_ = 0;
  uint64_t in_flight_lines_ = 0;  // taken from the queue, not yet pushed
  uint64_t next_id_ = 1;
  bool stopping_ = false;

  // Shipping thread's scratch, shared by every stream (a vector per stream would keep the
  // capacity of its largest chunk for the stream's life).
  std::vector<LokiEntry> converted_;
  // (Shipping thread) Some stream's stages hold entries: FlushPipelines runs on a timer.
  bool pipelines_hold_ = false;

  std::unique_ptr<FifoReader> reader_;
  std::thread shipper_;
};

}  // namespace skald
