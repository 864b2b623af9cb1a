// Frame codec: dockerd's log stream as it arrives on a logging plugin's FIFO.
//
// The stream is a sequence of frames `[uint32 big-endian length][protobuf LogEntry]`
// (plugin/journal/frame_format.h; moby daemon/logger/internal/logdriver/entry.proto).
// DecodeLogEntry parses one body without copying: the views point into the caller's buffer and live
// as long as it does. Unknown fields are skipped. EncodeFrame produces the same framing (used by
// ReadLogs, tests, loadgen).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "plugin/journal/frame_format.h"

namespace skald {

struct LogEntryView {
  std::string_view source;  // "stdout" or "stderr"
  int64_t time_nano = 0;
  std::string_view line;  // without the trailing newline the daemon stripped
  bool partial = false;
  bool has_partial_metadata = false;
  bool partial_last = false;
  std::string_view partial_id;
  int32_t partial_ordinal = 0;
};

// Parses one protobuf LogEntry body. Returns nullopt when the bytes are not a valid encoding.
std::optional<LogEntryView> DecodeLogEntry(std::string_view body);

enum class FrameStatus {
  kOk,        // *body holds one frame body; *consumed bytes were used
  kNeedMore,  // the buffer ends inside a frame
  kTooLarge,  // the length prefix exceeds kMaxFrameBytes
};

// Looks at the start of `buffer` for one complete frame.
FrameStatus NextFrame(std::string_view buffer, std::string_view* body, std::size_t* consumed);

// Appends one frame (length prefix + LogEntry) to `out`.
void EncodeFrame(const LogEntryView& entry, std::string& out);

}  // namespace skald
