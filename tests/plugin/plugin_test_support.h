// What the plugin's unit tests share: a frame as dockerd writes it to a FIFO, and waiting for
// a condition another thread brings about.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

#include "plugin/ingest/frame_codec.h"

namespace skald::testkit {

// One stdout LogEntry frame (length prefix + protobuf) holding `line`.
inline std::string StdoutFrame(std::string_view line, int64_t time_nano, bool partial = false) {
  LogEntryView e;
  e.source = "stdout";
  e.time_nano = time_nano;
  e.line = line;
  e.partial = partial;
  std::string out;
  EncodeFrame(e, out);
  return out;
}

// Polls `pred` until it holds or `timeout` passes; returns its last answer. (A liveness bound:
// callers pass a timeout far beyond what the condition needs.)
inline bool WaitFor(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

}  // namespace skald::testkit
