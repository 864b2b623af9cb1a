// Driver::Stream: one container's log stream as the driver keeps it, from StartLogging (or a
// recovered journal) until it retires. Shared by the driver's source files only.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "plugin/config/container_info.h"
#include "plugin/config/log_options.h"
#include "plugin/driver/container_pipeline.h"
#include "plugin/driver/driver.h"
#include "plugin/driver/shipment_ledger.h"
#include "plugin/driver/shipping_client.h"
#include "plugin/journal/journal.h"

namespace skald {

struct Driver::Stream {
  uint64_t id;
  std::string file;  // the first session's FIFO
  ContainerInfo info;
  LogOptions options;
  std::shared_ptr<ShippingClient> client;
  std::atomic<bool> stop_requested{false};
  // Memory-only because its journal could not be made (a full disk): its FIFO is held while
  // Loki takes lines and the lines it handed over pile up (Driver::HoldsMemoryStream). Set
  // before the reader has it.
  bool paced = false;
  // Not empty: the stream's options cannot be used (recovered without usable info.json or
  // options); its lines are drained into the journal and held there, never sent.
  std::string held_reason;
  int64_t held_accounted = 0;  // (shipping thread) pipeline-held bytes counted in the windows
  // Labels and stages (shipping thread only); null for a held stream.
  std::unique_ptr<ContainerPipeline> pipeline;
  // With a journal:
  std::shared_ptr<Journal> journal;
  JournalPosition last_resume;  // of the newest shipment (shipping thread)
  std::atomic<int64_t> window_bytes{0};
  // What all streams of this stream's Loki client hold (ClientPool::Window).
  std::shared_ptr<std::atomic<int64_t>> client_window;
  bool finished = false;  // (Driver::mu_) the FIFOs ended and the last lines were shipped
  JournalPosition end;    // (Driver::mu_) once finished: where its decoding stopped
  // The container's previous stream, still waiting for acknowledgements when this one began
  // after it (at its end): this stream's cursor is persisted only once that one retired.
  std::shared_ptr<Stream> predecessor;
  std::atomic<bool> retired{false};
  // The shipments handed to the client and not settled yet, the acknowledged cursor.
  ShipmentLedger ledger;
  // Recovered with a replay marker (plugin/journal/replay_guard.h) that goes once the cursor passes
  // `replay_from`.
  std::atomic<bool> replay_marked{false};
  JournalPosition replay_from;
};

}  // namespace skald
