// QuietGap: when the input has gone quiet enough for the Loki clients to send what they buffer
// without waiting for loki-batch-wait.
//
// A batch leaves a Loki client when it is full or at loki-batch-wait, which on a quiet stream
// means a lone line waits the whole timer (a second by default) although it was read within a
// millisecond. The shipping thread asks the clients to send early once its queue has been
// empty for Gap(): the reader has drained every FIFO and nothing came since. loki-batch-wait
// stays the upper bound.
//
// Under load the queue does not stay empty that long, so batches stay as large as before. The
// gap adapts to a load that pauses briefly (a reader's round, a writer that flushes in bursts):
// a send followed by new input within kPremature x the gap was premature, and the gap doubles
// (up to kMaxGap); a send followed by a long silence (kCalm x the gap) halves it again (down
// to kMinGap). Early sends are at least kSpacing apart, so a rhythm that defeats the gap costs
// at most 1 s / kSpacing pushes a second more than batching would.
//
// Not thread-safe: the shipping thread owns it.
#pragma once

#include <chrono>
#include <optional>

namespace skald {

class QuietGap {
 public:
  using Clock = std::chrono::steady_clock;

  static constexpr std::chrono::milliseconds kMinGap{4};
  static constexpr std::chrono::milliseconds kMaxGap{128};
  static constexpr std::chrono::milliseconds kSpacing{50};
  static constexpr int kPremature = 4;
  static constexpr int kCalm = 16;

  // How long the queue must stay empty before buffered entries are sent.
  std::chrono::milliseconds Gap() const { return gap_; }
  // When the queue ran empty at `empty_since`: the moment to send if nothing comes until then.
  Clock::time_point SendAt(Clock::time_point empty_since) const;

  // The buffered entries were sent early at `now`.
  void Sent(Clock::time_point now);
  // Input came at `now` (a batch reached the shipping thread).
  void Arrived(Clock::time_point now);

 private:
  std::chrono::milliseconds gap_ = kMinGap;
  std::optional<Clock::time_point> last_send_;
  bool judged_ = true;  // the last send's first following input was looked at
};

}  // namespace skald
