// How the Driver fares: live streams and clients, entries pending, the gauges computed before
// a scrape, and the Loki clients' health for /healthz (plugin/driver/driver.h).

#include <algorithm>
#include <unordered_map>

#include "plugin/driver/driver.h"
#include "plugin/driver/driver_stream.h"

namespace skald {

std::size_t Driver::LiveStreams() const {
  absl::MutexLock lock(&mu_);
  std::size_t n = 0;
  for (const auto& [id, s] : streams_) n += s->finished ? 0 : 1;
  return n;
}

std::size_t Driver::LiveClients() const { return clients_.size(); }

uint64_t Driver::PendingEntries() const { return clients_.Pending() + shipper_.PendingLines(); }

void Driver::UpdateGauges() {
  series_.pending.Set(static_cast<double>(PendingEntries()));
  double oldest = 0;
  for (const LokiClientHealth& c : ClientsHealth()) {
    oldest = std::max(oldest, c.oldest_undelivered_seconds);
  }
  series_.oldest_undelivered_seconds.Set(oldest);
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
  series_.journal_undelivered_bytes.Set(static_cast<double>(undelivered));
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
