#include "plugin/driver/driver_metrics.h"

namespace skald {

namespace {

Counter& Dropped(MetricsRegistry& registry, const char* reason) {
  return registry.GetCounter("skald_entries_dropped_total", "Entries not delivered, by reason.",
                             {{"reason", reason}});
}

}  // namespace

DriverMetrics::DriverMetrics(MetricsRegistry& registry)
    : dropped_queue_full(Dropped(registry, "queue_full")),
      dropped_relabel(Dropped(registry, "relabel_drop")),
      dropped_journal_full(Dropped(registry, "journal_full")),
      journals_removed(registry.GetCounter(
          "skald_journals_removed_total",
          "Journals of stopped containers removed (plugin-wide budget or age limit).")),
      journal_bytes(registry.GetGauge("skald_journal_bytes", "Bytes in all container journals.")),
      streams_started(
          registry.GetCounter("skald_streams_started_total", "StartLogging calls accepted.")),
      pending(registry.GetGauge("skald_entries_pending",
                                "Lines read and neither delivered nor dropped yet.")),
      live_streams(registry.GetGauge("skald_streams_live", "Containers being logged.")),
      oldest_undelivered_seconds(registry.GetGauge(
          "skald_oldest_undelivered_seconds",
          "Age of the oldest line read and neither delivered nor dropped yet (0: none).")),
      journal_undelivered_bytes(
          registry.GetGauge("skald_journal_undelivered_bytes",
                            "Bytes of the journals not yet acknowledged by Loki (from the "
                            "cursors on: what a restart would send again).")),
      journals_quarantined(registry.GetGauge(
          "skald_journals_quarantined",
          "Journals set aside because the plugin died twice in a row replaying them (skald "
          "quarantine list).")),
      quiet_sends(registry.GetCounter(
          "skald_quiet_sends_total",
          "Times the input went quiet and the Loki clients were asked to send what they "
          "buffered without waiting for loki-batch-wait.")) {
  // Series that Loki clients fill in: present (at 0) before the first container, so that a
  // scrape always shows read, sent, dropped and pending together.
  registry.GetCounter("skald_entries_sent_total", "Entries delivered to Loki.");
}

}  // namespace skald
