// The acknowledgement ledger alone, on one thread: what the driver's shipping thread, client
// threads and maintenance tick each call, in the orders they can happen.
#include "plugin/driver/shipment_ledger.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace skald {
namespace {

constexpr JournalPosition P(uint64_t segment, uint64_t offset) { return {segment, offset}; }

TEST(ShipmentLedger, StartsAcknowledgedAtTheCursorItWasGiven) {
  ShipmentLedger ledger;
  ledger.StartAt(P(3, 40));
  EXPECT_EQ(ledger.Acked(), P(3, 40));
  EXPECT_TRUE(ledger.Empty());
  EXPECT_EQ(ledger.NextShipment(), 0u);
  EXPECT_EQ(ledger.TakeUnpersisted(), std::nullopt);  // nothing moved yet
}

TEST(ShipmentLedger, AShipmentStaysUntilClosedEvenWhenEveryEntryIsSettled) {
  ShipmentLedger ledger;
  const uint64_t n = ledger.Open(2, P(1, 100), 500, 7);
  // A client may settle the entries before the shipping thread is done handing them over.
  const auto s = ledger.Settle(n, 2);
  EXPECT_TRUE(s.known);
  EXPECT_EQ(s.freed, 0u);
  EXPECT_FALSE(s.empty);
  EXPECT_EQ(ledger.Acked(), P(0, 0));
  EXPECT_EQ(ledger.Close(n), 500u);
  EXPECT_EQ(ledger.Acked(), P(1, 100));
  EXPECT_TRUE(ledger.Empty());
}

TEST(ShipmentLedger, AShipmentOfNoEntriesLeavesWhenClosed) {
  ShipmentLedger ledger;
  const uint64_t n = ledger.Open(0, P(2, 0), 64, 0);
  EXPECT_EQ(ledger.Close(n), 64u);
  EXPECT_EQ(ledger.Acked(), P(2, 0));
}

TEST(ShipmentLedger, TheCursorMovesOnlyPastShipmentsSettledInOrder) {
  ShipmentLedger ledger;
  const uint64_t a = ledger.Open(1, P(1, 10), 100, 1);
  const uint64_t b = ledger.Open(1, P(1, 20), 200, 2);
  const uint64_t c = ledger.Open(1, P(1, 30), 400, 3);
  EXPECT_EQ(ledger.Close(a), 0u);
  EXPECT_EQ(ledger.Close(b), 0u);
  EXPECT_EQ(ledger.Close(c), 0u);
  EXPECT_EQ(ledger.NextShipment(), c + 1);

  // The last and the middle one settle first: nothing before them is settled, nothing moves.
  auto s = ledger.Settle(c, 1);
  EXPECT_TRUE(s.known);
  EXPECT_EQ(s.freed, 0u);
  s = ledger.Settle(b, 1);
  EXPECT_EQ(s.freed, 0u);
  EXPECT_EQ(ledger.Acked(), P(0, 0));
  EXPECT_EQ(ledger.OldestFirstLineNs(), 1);

  // The first settles: all three leave at once, the cursor goes to the last one's.
  s = ledger.Settle(a, 1);
  EXPECT_EQ(s.freed, 700u);
  EXPECT_TRUE(s.empty);
  EXPECT_EQ(ledger.Acked(), P(1, 30));
  EXPECT_EQ(ledger.OldestFirstLineNs(), std::nullopt);
}

TEST(ShipmentLedger, ARunOfSettlementsCountsAsThatManyEntries) {
  ShipmentLedger ledger;
  const uint64_t n = ledger.Open(5, P(1, 50), 10, 0);
  ledger.Close(n);
  EXPECT_EQ(ledger.Settle(n, 3).freed, 0u);
  EXPECT_FALSE(ledger.Empty());
  EXPECT_EQ(ledger.Settle(n, 2).freed, 10u);
  EXPECT_TRUE(ledger.Empty());
}

TEST(ShipmentLedger, SettlementsOfShipmentsNotInTheLedgerAreIgnored) {
  ShipmentLedger ledger;
  const uint64_t a = ledger.Open(1, P(1, 10), 100, 0);
  ledger.Close(a);
  ASSERT_EQ(ledger.Settle(a, 1).freed, 100u);
  const uint64_t b = ledger.Open(1, P(1, 20), 100, 0);
  ledger.Close(b);
  // `a` left already; a number never opened is past the back.
  EXPECT_FALSE(ledger.Settle(a, 1).known);
  EXPECT_FALSE(ledger.Settle(b + 5, 1).known);
  EXPECT_FALSE(ledger.Empty());
  EXPECT_EQ(ledger.Acked(), P(1, 10));
}

TEST(ShipmentLedger, TheAcknowledgedPositionNeverGoesBack) {
  ShipmentLedger ledger;
  ledger.StartAt(P(2, 0));
  // A shipment after which a stage still holds entries of an unknown start carries {0, 0}.
  const uint64_t held = ledger.Open(1, P(0, 0), 0, 0);
  ledger.Close(held);
  ledger.Settle(held, 1);
  EXPECT_EQ(ledger.Acked(), P(2, 0));
  EXPECT_EQ(ledger.TakeUnpersisted(), std::nullopt);
  const uint64_t later = ledger.Open(1, P(2, 80), 0, 0);
  ledger.Close(later);
  ledger.Settle(later, 1);
  EXPECT_EQ(ledger.Acked(), P(2, 80));
}

TEST(ShipmentLedger, TheMaintenanceTickPersistsEachNewPositionOnce) {
  ShipmentLedger ledger;
  const uint64_t n = ledger.Open(0, P(1, 10), 0, 0);
  ledger.Close(n);
  EXPECT_EQ(ledger.TakeUnpersisted(), P(1, 10));
  EXPECT_EQ(ledger.TakeUnpersisted(), std::nullopt);
  const uint64_t m = ledger.Open(0, P(1, 20), 0, 0);
  ledger.Close(m);
  EXPECT_EQ(ledger.TakeUnpersisted(), P(1, 20));
}

TEST(ShipmentLedger, PersistNeverWritesAnOlderPositionOverANewerOne) {
  ShipmentLedger ledger;
  std::vector<JournalPosition> written;
  auto write = [&](JournalPosition p) { written.push_back(p); };
  EXPECT_TRUE(ledger.Persist(P(1, 50), write));
  // The other persisting thread took its position earlier and comes second.
  EXPECT_FALSE(ledger.Persist(P(1, 40), write));
  EXPECT_TRUE(ledger.Persist(P(1, 50), write));  // the same again is harmless
  EXPECT_TRUE(ledger.Persist(P(2, 0), write));
  EXPECT_EQ(written, (std::vector<JournalPosition>{P(1, 50), P(1, 50), P(2, 0)}));
}

TEST(ShipmentLedger, AFailedWriteIsTriedAgainAfterRecheck) {
  ShipmentLedger ledger;
  const uint64_t n = ledger.Open(0, P(1, 10), 0, 0);
  ledger.Close(n);
  const auto acked = ledger.TakeUnpersisted();
  ASSERT_EQ(acked, P(1, 10));
  EXPECT_THROW(ledger.Persist(*acked, [](JournalPosition) { throw std::runtime_error("full"); }),
               std::runtime_error);
  EXPECT_EQ(ledger.TakeUnpersisted(), std::nullopt);
  // Shutdown: what was acknowledged and not written is taken again.
  ledger.RecheckPersisted();
  EXPECT_EQ(ledger.TakeUnpersisted(), P(1, 10));
  EXPECT_TRUE(ledger.Persist(P(1, 10), [](JournalPosition) {}));
  ledger.RecheckPersisted();
  EXPECT_EQ(ledger.TakeUnpersisted(), std::nullopt);  // written now
}

TEST(ShipmentLedger, TheOldestFirstLineSkipsShipmentsWithoutLines) {
  ShipmentLedger ledger;
  const uint64_t flush = ledger.Open(1, P(1, 0), 0, 0);  // entries a stage held
  const uint64_t lines = ledger.Open(1, P(1, 10), 0, 1234);
  ledger.Close(flush);
  ledger.Close(lines);
  EXPECT_EQ(ledger.OldestFirstLineNs(), 1234);
}

TEST(ShipmentLedger, WithNothingHeldTheCursorMayGoToTheResumePosition) {
  ShipmentLedger ledger;
  ledger.NoteStart(0, P(1, 0));
  EXPECT_EQ(ledger.CursorLimit(std::nullopt, P(1, 90)), P(1, 90));
  // The starts were forgotten: a stage that holds shipment 0 later finds no start.
  EXPECT_EQ(ledger.CursorLimit(0, P(1, 95)), P(0, 0));
}

TEST(ShipmentLedger, WhileAStageHoldsEntriesTheCursorStopsAtTheirShipmentsStart) {
  ShipmentLedger ledger;
  ledger.NoteStart(0, P(1, 0));
  ledger.NoteStart(1, P(1, 30));
  ledger.NoteStart(2, P(1, 60));
  EXPECT_EQ(ledger.CursorLimit(1, P(1, 90)), P(1, 30));
  // Shipment 0's start is forgotten once a newer shipment is the oldest held.
  EXPECT_EQ(ledger.CursorLimit(0, P(1, 90)), P(0, 0));
  EXPECT_EQ(ledger.CursorLimit(2, P(1, 90)), P(1, 60));
  // A resume position before the start (a line still being assembled) wins.
  EXPECT_EQ(ledger.CursorLimit(2, P(1, 50)), P(1, 50));
}

}  // namespace
}  // namespace skald
