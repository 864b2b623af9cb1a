// Driver: the registry of live log streams, from StartLogging to the end of their FIFO.
//
// StartLogging validates the container's options, builds its labels, opens its FIFO and hands
// it to the FifoReader; StopLogging only marks the stream (it answers at once, the FIFO is
// still open then), and the stream ends when its FIFO reaches end of file and every line has
// been handed to the Loki client. Between the reader and the shipping thread sits a bounded
// in-memory queue; when it is full the oldest lines are dropped and counted (`queue_full`),
// so the FIFOs are always drained and a container never waits for Loki. Loki clients are
// shared by streams whose client options are equal. Pipelines (loki-pipeline-stages) and relabel
// rules run on the shipping thread, never on the reader's.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "plugin/container_info.h"
#include "plugin/fifo_reader.h"
#include "plugin/log_options.h"
#include "plugin/loki_client.h"
#include "plugin/metrics.h"
#include "plugin/pipeline_metrics_observer.h"
#include "plugin/stream_labels.h"

namespace skald {

struct DriverConfig {
  std::map<std::string, std::string> env_defaults;  // plugin-wide option defaults
  std::string hostname;                             // the `host` label
  std::size_t max_queued_bytes = 64 * 1024 * 1024;  // reader -> shipper queue bound
};

// The labels every line of a container carries (before `source` and the pipeline), in the
// order the Go driver builds them. Throws OptionError for a bad label name or template.
StreamLabelSet BuildContainerLabels(const ContainerInfo& info, const LogOptions& options,
                                    const std::string& hostname);

class Driver : public LineSink {
 public:
  Driver(DriverConfig config, MetricsRegistry& metrics);
  ~Driver() override;  // Shutdown(0)
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  // Throws OptionError (a message for the user) or std::system_error (FIFO) on failure.
  void StartLogging(const std::string& file, const ContainerInfo& info);
  // Marks the stream; returns at once. Unknown files are ignored.
  void StopLogging(const std::string& file);

  // Stops reading, hands what was read to the clients and flushes them for at most `deadline`.
  void Shutdown(std::chrono::milliseconds deadline);

  // Blocks until no stream is live and the queue is empty, or `deadline` passes.
  bool WaitIdle(std::chrono::milliseconds deadline);

  std::size_t LiveStreams() const;
  // Lines read and neither delivered nor dropped yet (queue + clients).
  uint64_t PendingEntries() const;
  // Refreshes the gauges computed on demand (before a metrics scrape).
  void UpdateGauges();

  // LineSink (reader thread).
  void OnLines(uint64_t stream_id, std::vector<LogLine>& lines) override;
  void OnEnd(uint64_t stream_id, bool corrupt) override;

 private:
  struct Stream;
  struct Batch {
    uint64_t stream_id;
    std::vector<LogLine> lines;  // empty with `end` set: the stream's FIFO reached its end
    std::size_t bytes = 0;
    bool end = false;
  };

  std::shared_ptr<LokiClient> ClientFor(const LokiClientConfig& config);
  void ShipLoop();
  void Ship(Stream& stream, std::vector<LogLine>& lines);
  // Pushes what a pipeline let out; labels are rendered once per distinct label set.
  void PushPipelineOutput(Stream& stream, std::vector<stages::Entry>& entries);
  // Releases entries held by pipelines (multiline, limit) whose time has come.
  void FlushPipelines(bool final_for_all);
  void FinishStream(uint64_t stream_id);

  DriverConfig config_;
  MetricsRegistry& metrics_;
  PipelineMetricsObserver observer_;
  Counter& dropped_queue_full_;
  Counter& dropped_relabel_;
  Counter& streams_started_;
  Gauge& pending_gauge_;
  Gauge& live_streams_gauge_;

  mutable std::mutex mu_;
  std::condition_variable queue_cv_;
  std::condition_variable idle_cv_;
  std::map<uint64_t, std::shared_ptr<Stream>> streams_;
  std::map<std::string, uint64_t> stream_by_file_;
  std::map<std::string, std::shared_ptr<LokiClient>> clients_;  // by LokiClientConfig::Key()
  std::deque<Batch> queue_;
  std::size_t queued_bytes_ = 0;
  uint64_t queued_lines_ = 0;
  uint64_t in_flight_lines_ = 0;  // taken from the queue, not yet pushed
  uint64_t next_id_ = 1;
  bool stopping_ = false;

  std::unique_ptr<FifoReader> reader_;
  std::thread shipper_;
};

}  // namespace skald
