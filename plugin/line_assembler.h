// LineAssembler: turns decoded LogEntry frames of one container into whole log lines.
//
// dockerd cuts lines longer than 16 KiB into partial chunks that share a partial id and carry
// the first chunk's timestamp; the assembler joins them per (source, id) and emits the line
// when the chunk marked `last` arrives, or at Finish() (end of the stream). Lines longer than
// `max_line_bytes` are emitted as consecutive pieces of at most that many bytes, cut on UTF-8
// character boundaries and 1 ns apart, so that Loki accepts (and keeps) every piece and nothing
// is silently truncated.
// Whitespace-only lines are skipped, as the Go driver does; the caller counts them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/frame_codec.h"

namespace skald {

enum class LogSource : uint8_t { kStdout, kStderr };

struct LogLine {
  LogSource source = LogSource::kStdout;
  int64_t time_nano = 0;
  std::string line;
};

struct AssemblerCounts {
  uint64_t blank_lines = 0;   // whitespace-only lines skipped
  uint64_t split_lines = 0;   // lines longer than max_line_bytes that were cut into pieces
  uint64_t extra_pieces = 0;  // pieces beyond the first produced by those cuts
};

class LineAssembler {
 public:
  explicit LineAssembler(std::size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

  // Feeds one frame; complete lines are appended to `out`.
  void Add(const LogEntryView& frame, std::vector<LogLine>& out);

  // Emits every unfinished partial group (the stream has ended).
  void Finish(std::vector<LogLine>& out);

  const AssemblerCounts& counts() const { return counts_; }

  // True when a partial group is waiting for its remaining chunks.
  bool HasPending() const { return !groups_.empty(); }

 private:
  struct Group {
    LogSource source;
    std::string id;
    int64_t time_nano;
    std::string text;
  };

  void Emit(LogSource source, int64_t time_nano, std::string_view text, std::vector<LogLine>& out);

  std::size_t max_line_bytes_;
  std::vector<Group> groups_;  // at most one or two in practice
  AssemblerCounts counts_;
};

// The source label value ("stdout" / "stderr").
std::string_view LogSourceName(LogSource source);

// True when every byte is ASCII white space (the Go driver drops such lines).
bool IsBlankLine(std::string_view line);

}  // namespace skald
