// LineAssembler: turns decoded LogEntry frames of one container into whole log lines.
//
// dockerd cuts lines longer than 16 KiB into partial chunks (plugin/ingest/partial_chunks.h, whose
// rules the assembler follows); it joins them and emits the line when the chunk marked `last`
// arrives, when a frame of that source does not continue it (the line is emitted as it is), or
// at Finish() (end of the stream).
//
// Lines longer than `max_line_bytes` are emitted as consecutive pieces of at most that many
// bytes, cut on UTF-8 character boundaries and 1 ns apart, so that Loki accepts (and keeps)
// every piece and nothing is silently truncated. The pieces of a line still arriving go out as
// they fill, so a line that never ends (a writer with no newline) holds at most
// `max_line_bytes` plus one frame per source in memory.
//
// Positions: a journal stream passes where each frame starts and ends in its journal;
// PendingSince() then says where a restart must read again to produce every byte not yet
// emitted (the start of the frame that holds the oldest such byte). A restart that begins
// inside a line (a chunk whose ordinal is past the first, with nothing open) starts a new
// piece there; the bytes of that frame emitted before the restart are emitted again. Its
// pieces are numbered (timestamped) after every piece the chunks before it can have made
// (dockerd's chunks hold at most 16 KiB), so that none equals one sent before the restart:
// Loki drops an entry whose timestamp and line equal another's.
// Whitespace-only lines are skipped, as the Go driver does; the caller counts them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/ingest/frame_codec.h"
#include "plugin/ingest/partial_chunks.h"
#include "plugin/journal/journal_position.h"

namespace skald {

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

// Where a frame lies in its journal: `start` is its length prefix, `end` the byte after it.
struct FrameSpan {
  JournalPosition start;
  JournalPosition end;
};

class LineAssembler {
 public:
  explicit LineAssembler(std::size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

  // Feeds one frame; complete lines and full pieces of unfinished ones are appended to `out`.
  void Add(const LogEntryView& frame, std::vector<LogLine>& out, const FrameSpan& span = {});

  // Emits every unfinished line (the stream has ended).
  void Finish(std::vector<LogLine>& out);

  const AssemblerCounts& counts() const { return counts_; }

  // True when a line is waiting for its remaining chunks.
  bool HasPending() const {
    return chunks_.IsOpen(LogSource::kStdout) || chunks_.IsOpen(LogSource::kStderr);
  }
  // With HasPending(): the start of the frame holding the oldest byte not emitted yet, or the
  // end of the last frame fed when every byte of the open lines was emitted.
  JournalPosition PendingSince() const;
  // Bytes of unfinished lines held (not yet emitted).
  std::size_t BufferedBytes() const { return groups_[0].text.size() + groups_[1].text.size(); }

 private:
  // The open line of a source (chunks_ says whether there is one).
  struct Group {
    int64_t time_nano = 0;
    int64_t first_piece = 0;  // the first piece's offset from time_nano (> 0: resumed line)
    int64_t pieces = 0;       // pieces emitted so far
    std::string text;         // bytes not emitted yet
    JournalPosition since;
  };

  void Open(Group& g, const LogEntryView& frame, bool resumed);
  // Appends a chunk and emits the pieces that are full.
  void Append(Group& g, LogSource source, std::string_view text, const FrameSpan& span,
              std::vector<LogLine>& out);
  // The line is complete: emits what is left of it.
  void Close(Group& g, LogSource source, std::vector<LogLine>& out);
  void Emit(LogSource source, int64_t time_nano, std::string_view text, std::vector<LogLine>& out);
  void EmitPiece(Group& g, LogSource source, std::size_t bytes, std::vector<LogLine>& out);

  std::size_t max_line_bytes_;
  PartialChunkTracker chunks_;
  std::array<Group, 2> groups_;  // stdout, stderr
  AssemblerCounts counts_;
};

// True when the line is only white space as Go's unicode.IsSpace has it (ASCII white space,
// U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000): the Go driver
// drops such lines.
bool IsBlankLine(std::string_view line);

}  // namespace skald
