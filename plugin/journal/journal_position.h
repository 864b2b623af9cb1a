// JournalPosition: a byte in a container's journal, as the reader, the cursor and the delivery
// ledger name it. Segments are numbered from 1 in the order they were written; {0, 0} names
// no byte (an empty journal, or a stream with no journal).
#pragma once

#include <compare>
#include <cstdint>

namespace skald {

struct JournalPosition {
  uint64_t segment = 0;
  uint64_t offset = 0;
  friend auto operator<=>(const JournalPosition&, const JournalPosition&) = default;
};

}  // namespace skald
