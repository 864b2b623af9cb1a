// LokiEntry: one finished entry as it goes to Loki, and how its producer hears that it left
// the client (delivered, dropped, or handed back at a stop).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "plugin/loki/stream_selector.h"

namespace skald {

class DeliveryListener;

// Identifies an entry to its producer when the client settles it (delivered or dropped).
struct DeliveryTicket {
  DeliveryListener* listener = nullptr;  // null: nobody is told
  uint64_t stream = 0;
  uint64_t shipment = 0;  // the producer's group of entries (plugin/driver/shipment_ledger.h)
};

class DeliveryListener {
 public:
  virtual ~DeliveryListener() = default;
  // Called on a client thread, without client locks held, for entries that left the client:
  // `final` is true when they were delivered or dropped for good, false when the client stopped
  // with them unsent (durable mode: they are to be replayed). All tickets name this listener.
  virtual void OnSettled(const std::vector<DeliveryTicket>& tickets, bool final) = 0;
};

// One finished entry, as it goes to Loki.
struct LokiEntry {
  StreamSelector labels;  // rendered stream selector, stable: {a="x", b="y"} (names sorted)
  int64_t timestamp_ns = 0;
  std::string line;
  std::vector<std::pair<std::string, std::string>> structured_metadata;
  std::string tenant;  // per-entry tenant override (tenant stage); empty = config tenant
  DeliveryTicket ticket;
};

// Line and structured-metadata bytes: what loki-batch-size and the sent/dropped byte counters
// count.
inline std::size_t EntryBytes(const LokiEntry& e) {
  std::size_t n = e.line.size();
  for (const auto& [name, value] : e.structured_metadata) n += name.size() + value.size();
  return n;
}

}  // namespace skald
