// ShipmentLedger: one journaled stream's acknowledgements, from the entries handed to its Loki
// client to the cursor written in its journal.
//
// The shipping thread hands a stream's entries to the client in shipments: one per batch of
// decoded lines, one per pipeline flush. Each shipment records how far the journal's cursor
// may go once it and every shipment before it are settled (delivered, or dropped for good),
// the window bytes it holds, and the daemon's time of its first line. Entries carry their
// shipment's number (DeliveryTicket::shipment); client threads settle them by that number.
// Settled shipments leave the ledger from the front, in order: that moves the acknowledged
// position (never backwards) and frees their bytes, which the caller gives back to the
// windows. The acknowledged position is written to the journal through Persist(), which never
// writes an older position over a newer one.
//
// Apart from shipments, the ledger remembers where the lines of each shipment began in the
// journal while pipeline stages may still hold entries made from them (CursorLimit): the
// cursor must not pass the start of the oldest such shipment, or a restart would lose them.
//
// Thread-safe. Open, Close, NoteStart and CursorLimit are meant for the shipping thread,
// Settle for client threads, the rest for any thread.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>

#include "plugin/journal/journal_position.h"

namespace skald {

class ShipmentLedger {
 public:
  ShipmentLedger() = default;
  ShipmentLedger(const ShipmentLedger&) = delete;
  ShipmentLedger& operator=(const ShipmentLedger&) = delete;

  // The journal's cursor when the stream begins: acknowledged and persisted up to there.
  // Before the first Open.
  void StartAt(JournalPosition cursor) ABSL_LOCKS_EXCLUDED(mu_);

  // The number the next Open returns.
  uint64_t NextShipment() const ABSL_LOCKS_EXCLUDED(mu_);

  // A shipment of `entries` entries, held open until Close(): it does not leave the ledger
  // before then even when every entry is settled (a client may settle them while they are
  // still being handed over). `cursor`: where the cursor may go once it and those before it
  // are settled. `bytes`: window bytes it frees when it leaves. `first_line_ns`: the daemon's
  // time of its first line (0: none, entries a stage held). Returns its number.
  uint64_t Open(std::size_t entries, JournalPosition cursor, std::size_t bytes,
                int64_t first_line_ns) ABSL_LOCKS_EXCLUDED(mu_);
  // The shipment is handed over. Returns the bytes of the shipments that left the ledger.
  std::size_t Close(uint64_t shipment) ABSL_LOCKS_EXCLUDED(mu_);

  struct Settlement {
    bool known = false;     // false: not in the ledger (settled already, or never opened)
    std::size_t freed = 0;  // bytes of the shipments that left the ledger
    bool empty = false;     // nothing is left unsettled
  };
  // `entries` entries of `shipment` are settled.
  Settlement Settle(uint64_t shipment, std::size_t entries) ABSL_LOCKS_EXCLUDED(mu_);

  // No shipment is waiting for settlements.
  bool Empty() const ABSL_LOCKS_EXCLUDED(mu_);
  // Everything before it is delivered or dropped for good.
  JournalPosition Acked() const ABSL_LOCKS_EXCLUDED(mu_);
  // The daemon's time of the first line of the oldest shipment not settled that has one.
  std::optional<int64_t> OldestFirstLineNs() const ABSL_LOCKS_EXCLUDED(mu_);

  // The acknowledged position when it moved since the last call, else nullopt: what the
  // maintenance tick persists.
  std::optional<JournalPosition> TakeUnpersisted() ABSL_LOCKS_EXCLUDED(mu_);
  // TakeUnpersisted returns the acknowledged position again unless Persist wrote it (a write
  // that failed is tried again at shutdown).
  void RecheckPersisted() ABSL_LOCKS_EXCLUDED(mu_);
  // Calls `write(acked)` unless a position after `acked` was written already; one write at a
  // time. Returns whether it wrote. What `write` throws goes to the caller, and the position
  // counts as not persisted.
  bool Persist(JournalPosition acked, const std::function<void(JournalPosition)>& write)
      ABSL_LOCKS_EXCLUDED(write_mu_, mu_);

  // The lines of `shipment` (NextShipment() before it is opened) begin at `start`; kept while
  // pipeline stages may hold entries made from them.
  void NoteStart(uint64_t shipment, JournalPosition start) ABSL_LOCKS_EXCLUDED(mu_);
  // How far the cursor may go after a shipment ending at `resume`: `resume` when no stage holds
  // entries (`oldest_held`: nullopt); else not past the start of `oldest_held`, and {0, 0} (do
  // not move) when that start is unknown. Forgets the starts before `oldest_held`.
  JournalPosition CursorLimit(std::optional<uint64_t> oldest_held, JournalPosition resume)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Shipment {
    uint64_t number;
    JournalPosition cursor;
    int64_t outstanding;  // entries not settled yet (+1 until Close)
    std::size_t bytes;
    int64_t first_line_ns;
  };
  // The shipment numbered `number`, or null when it is not in the ledger.
  Shipment* FindLocked(uint64_t number) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Pops the settled shipments at the front; returns their bytes.
  std::size_t AdvanceLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Taken before mu_ when both are held.
  absl::Mutex write_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  JournalPosition written_ ABSL_GUARDED_BY(write_mu_);  // the newest position written

  mutable absl::Mutex mu_;
  std::deque<Shipment> shipments_ ABSL_GUARDED_BY(mu_);  // in number order, none settled
  uint64_t next_ ABSL_GUARDED_BY(mu_) = 0;
  JournalPosition acked_ ABSL_GUARDED_BY(mu_);
  bool acked_moved_ ABSL_GUARDED_BY(mu_) = false;  // since the last TakeUnpersisted
  JournalPosition persisted_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, JournalPosition> starts_ ABSL_GUARDED_BY(mu_);  // by shipment number
};

}  // namespace skald
