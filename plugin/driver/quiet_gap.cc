#include "plugin/driver/quiet_gap.h"

#include <algorithm>

namespace skald {

QuietGap::Clock::time_point QuietGap::SendAt(Clock::time_point empty_since) const {
  const Clock::time_point at = empty_since + gap_;
  return last_send_ ? std::max(at, *last_send_ + kSpacing) : at;
}

void QuietGap::Sent(Clock::time_point now) {
  last_send_ = now;
  judged_ = false;
}

void QuietGap::Arrived(Clock::time_point now) {
  if (judged_ || !last_send_) return;
  judged_ = true;
  const auto silence = now - *last_send_;
  if (silence < kPremature * gap_) {
    gap_ = std::min(gap_ * 2, kMaxGap);
  } else if (silence >= kCalm * gap_) {
    gap_ = std::max(gap_ / 2, kMinGap);
  }
}

}  // namespace skald
