// SetThreadName: names the calling thread (at most 15 characters are kept), so that `top -H`,
// /proc/PID/task/*/comm and profilers show which of the plugin's threads runs or wakes up:
//   skald-reader    the FIFO reader's epoll loop (plugin/ingest/fifo_reader.h)
//   skald-ship      the driver's shipping thread: pipelines, labels, hand-over to the clients
//   skald-lane      a Loki client's sender lane; skald-watchdog its request watchdog
//   skald-api       the plugin API's accept loop; skald-api-conn a connection's
//   skald-metrics   the metrics endpoint's accept loop; skald-metr-work its workers
#pragma once

namespace skald {

void SetThreadName(const char* name);

}  // namespace skald
