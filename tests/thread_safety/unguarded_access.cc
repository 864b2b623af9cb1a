// Must not compile with clang's -Wthread-safety -Werror: it reads a journal's segment list
// without holding the journal's mutex. tests/thread_safety/must-not-compile.sh compiles it
// twice: with SKALD_HOLD_THE_LOCK defined (the lock taken) it must compile, without it it must
// fail with the analysis' diagnostic. That proves the annotations in the product's headers are
// seen by the analysis (not defined away, nor on a mutex type it does not understand).
#include <absl/synchronization/mutex.h>

#include <cstddef>

#include "plugin/journal/journal_segments.h"

namespace skald {

std::size_t SegmentCount(JournalSegments& segs) {
#ifdef SKALD_HOLD_THE_LOCK
  absl::MutexLock lock(&segs.mu);
#endif
  return segs.segments.size();
}

}  // namespace skald
