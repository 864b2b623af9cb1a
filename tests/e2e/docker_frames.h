// What dockerd writes into a logging plugin's FIFO for a line: the bytes of its frame, for tests
// that account for every byte the plugin read.
#pragma once

#include <cstdint>
#include <string_view>

#include "entry.pb.h"
#include "plugin/journal/frame_format.h"

namespace skald::e2e {

// The length prefix and Docker's LogEntry message (plugin/proto/entry.proto) of a stdout line
// of `time_ns`.
inline uint64_t StdoutFrameBytes(int64_t time_ns, std::string_view line) {
  LogEntry entry;
  entry.set_source("stdout");
  entry.set_time_nano(time_ns);
  entry.set_line(std::string(line));
  return kFrameLengthBytes + entry.ByteSizeLong();
}

}  // namespace skald::e2e
