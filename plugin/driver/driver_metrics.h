// DriverMetrics: the series the Driver keeps itself (streams, drops it decides, journals,
// what is pending), declared in one place with their help texts. The Loki clients' series
// (sent, retried, pushes) are their own; these are the registry's for the Driver's life.
#pragma once

#include "plugin/metrics/metrics.h"

namespace skald {

struct DriverMetrics {
  explicit DriverMetrics(MetricsRegistry& registry);

  // skald_entries_dropped_total by the reasons the Driver decides.
  Counter& dropped_queue_full;    // no-file lines over the shipping queue's bound
  Counter& dropped_relabel;       // a relabel rule dropped the container's label set
  Counter& dropped_journal_full;  // the journal budget evicted lines unread
  Counter& journals_removed;
  Gauge& journal_bytes;
  Counter& streams_started;
  Gauge& pending;
  Gauge& live_streams;
  Gauge& oldest_undelivered_seconds;
  Gauge& journal_undelivered_bytes;
  Gauge& journals_quarantined;
  Counter& quiet_sends;
};

}  // namespace skald
