#include "plugin/ingest/line_assembler.h"

#include <algorithm>
#include <limits>

namespace skald {
namespace {

// dockerd's copier cuts a line into chunks of at most this many bytes.
constexpr std::size_t kDockerChunkBytes = 16 * 1024;

// Largest cut <= want that does not split a UTF-8 sequence (falls back to `want` when the
// text is not UTF-8 there).
std::size_t Utf8SafeCut(std::string_view text, std::size_t want) {
  if (want >= text.size()) return text.size();
  std::size_t cut = want;
  for (int back = 0; back < 4 && cut > 0; ++back, --cut) {
    auto c = static_cast<unsigned char>(text[cut]);
    if ((c & 0xC0) != 0x80) return cut;  // text[cut] starts a character
  }
  return want;
}

// The time of a line's piece `offset` ns after the line's: never past the largest time (a
// frame's time is whatever the daemon, or a damaged journal, says).
int64_t PieceTime(int64_t time_nano, int64_t offset) {
  return time_nano > std::numeric_limits<int64_t>::max() - offset
             ? std::numeric_limits<int64_t>::max()
             : time_nano + offset;
}

// A piece of at most `max` bytes from the front of `text`, never empty.
std::size_t PieceBytes(std::string_view text, std::size_t max) {
  std::size_t cut = Utf8SafeCut(text, max);
  return cut == 0 ? std::min(max, text.size()) : cut;
}

}  // namespace

bool IsBlankLine(std::string_view line) {
  // Go's unicode.IsSpace (the Go driver drops a line when bytes.Fields finds no field): ASCII
  // \t \n \v \f \r and space, and these code points, matched as their UTF-8 bytes.
  static constexpr std::string_view kSpaces[] = {
      "\xc2\x85",     "\xc2\xa0",     "\xe1\x9a\x80",  // U+0085 U+00A0 U+1680
      "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xaf",  // U+2028 U+2029 U+202F
      "\xe2\x81\x9f", "\xe3\x80\x80"};                 // U+205F U+3000
  for (std::size_t i = 0; i < line.size();) {
    const char c = line[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
      ++i;
      continue;
    }
    const std::string_view rest = line.substr(i);
    // U+2000 .. U+200A: E2 80 80 .. E2 80 8A.
    if (rest.size() >= 3 && rest[0] == '\xe2' && rest[1] == '\x80' &&
        static_cast<unsigned char>(rest[2]) >= 0x80 &&
        static_cast<unsigned char>(rest[2]) <= 0x8a) {
      i += 3;
      continue;
    }
    bool space = false;
    for (std::string_view s : kSpaces) {
      if (rest.starts_with(s)) {
        i += s.size();
        space = true;
        break;
      }
    }
    if (!space) return false;
  }
  return true;
}

void LineAssembler::Emit(LogSource source, int64_t time_nano, std::string_view text,
                         std::vector<LogLine>& out) {
  if (IsBlankLine(text)) {
    ++counts_.blank_lines;
    return;
  }
  if (text.size() <= max_line_bytes_) {
    out.push_back(LogLine{source, time_nano, std::string(text)});
    return;
  }
  ++counts_.split_lines;
  // Each piece is 1 ns later than the one before: Loki drops an entry whose timestamp and line
  // equal another's of the same stream, and the pieces of a repetitive line can be equal.
  int64_t piece = 0;
  while (!text.empty()) {
    const std::size_t cut = PieceBytes(text, max_line_bytes_);
    if (piece > 0) ++counts_.extra_pieces;
    out.push_back(LogLine{source, PieceTime(time_nano, piece++), std::string(text.substr(0, cut))});
    text.remove_prefix(cut);
  }
}

void LineAssembler::EmitPiece(Group& g, LogSource source, std::size_t bytes,
                              std::vector<LogLine>& out) {
  if (g.pieces == 0 && g.first_piece == 0) {
    ++counts_.split_lines;
  } else {
    ++counts_.extra_pieces;
  }
  out.push_back(
      LogLine{source, PieceTime(g.time_nano, g.first_piece + g.pieces++), g.text.substr(0, bytes)});
  g.text.erase(0, bytes);
}

void LineAssembler::Open(Group& g, const LogEntryView& frame, bool resumed) {
  g.time_nano = frame.time_nano;
  g.pieces = 0;
  g.first_piece = 0;
  if (resumed) {
    // The line began before this chunk (a restart resumed inside it): the chunks before it
    // held at most kDockerChunkBytes each, and made at most this many pieces.
    const auto per_chunk =
        static_cast<int64_t>((kDockerChunkBytes + max_line_bytes_ - 1) / max_line_bytes_);
    g.first_piece = int64_t{frame.partial_ordinal - 1} * per_chunk + 1;
  }
  g.text.clear();
  g.since = {};
}

void LineAssembler::Append(Group& g, LogSource source, std::string_view text, const FrameSpan& span,
                           std::vector<LogLine>& out) {
  if (g.text.empty()) g.since = text.empty() ? span.end : span.start;
  if (text.empty()) return;
  g.text.append(text);
  if (g.text.size() <= max_line_bytes_) return;
  // Full pieces go out now: an unfinished line holds at most max_line_bytes_ plus a frame.
  while (g.text.size() > max_line_bytes_) {
    EmitPiece(g, source, PieceBytes(g.text, max_line_bytes_), out);
  }
  if (g.text.empty()) {
    g.since = span.end;
  } else if (g.text.size() <= text.size()) {
    g.since = span.start;  // what is left came with this frame
  }
  // Otherwise what is left began in an earlier frame: `since` stays at or before it.
}

void LineAssembler::Close(Group& g, LogSource source, std::vector<LogLine>& out) {
  if (g.pieces == 0 && g.first_piece == 0) {
    Emit(source, g.time_nano, g.text, out);
  } else if (!g.text.empty()) {
    EmitPiece(g, source, g.text.size(), out);
  }
  g.text = std::string();  // a long line's buffer is not kept for the stream's life
}

void LineAssembler::Add(const LogEntryView& frame, std::vector<LogLine>& out,
                        const FrameSpan& span) {
  const ChunkStep step = chunks_.Next(frame);
  Group& g = groups_[static_cast<std::size_t>(step.source)];
  if (step.end_open) Close(g, step.source, out);  // the rest of the open line never came
  switch (step.kind) {
    case ChunkStep::Kind::kWhole:
      Emit(step.source, frame.time_nano, frame.line, out);
      return;
    case ChunkStep::Kind::kBegin:
      Open(g, frame, step.resumed);
      break;
    case ChunkStep::Kind::kContinue:
      break;
  }
  Append(g, step.source, frame.line, span, out);
  if (step.ends) Close(g, step.source, out);
}

void LineAssembler::Finish(std::vector<LogLine>& out) {
  for (std::size_t i = 0; i < groups_.size(); ++i) {
    const auto source = static_cast<LogSource>(i);
    if (!chunks_.IsOpen(source)) continue;
    chunks_.EndOpen(source);
    Close(groups_[i], source, out);
  }
}

JournalPosition LineAssembler::PendingSince() const {
  JournalPosition since;
  bool any = false;
  for (std::size_t i = 0; i < groups_.size(); ++i) {
    if (!chunks_.IsOpen(static_cast<LogSource>(i))) continue;
    const Group& g = groups_[i];
    if (!any || g.since < since) since = g.since;
    any = true;
  }
  return since;
}

}  // namespace skald
