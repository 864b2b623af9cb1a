#include "plugin/line_assembler.h"

#include <algorithm>

namespace skald {
namespace {

LogSource SourceOf(std::string_view s) {
  return s == "stderr" ? LogSource::kStderr : LogSource::kStdout;
}

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

}  // namespace

std::string_view LogSourceName(LogSource source) {
  return source == LogSource::kStderr ? "stderr" : "stdout";
}

bool IsBlankLine(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  });
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
    std::size_t cut = Utf8SafeCut(text, max_line_bytes_);
    if (cut == 0) cut = std::min(max_line_bytes_, text.size());
    if (piece > 0) ++counts_.extra_pieces;
    out.push_back(LogLine{source, time_nano + piece++, std::string(text.substr(0, cut))});
    text.remove_prefix(cut);
  }
}

void LineAssembler::Add(const LogEntryView& frame, std::vector<LogLine>& out) {
  LogSource source = SourceOf(frame.source);
  auto it = std::find_if(groups_.begin(), groups_.end(), [&](const Group& g) {
    return g.source == source && g.id == frame.partial_id;
  });
  if (!frame.partial) {
    // Daemons before 19.x sent partial chunks without metadata (empty id); the chunk that
    // ends such a group is an ordinary, non-partial frame.
    if (it != groups_.end() && it->id.empty()) {
      it->text.append(frame.line);
      Emit(it->source, it->time_nano, it->text, out);
      groups_.erase(it);
    } else {
      Emit(source, frame.time_nano, frame.line, out);
    }
    return;
  }
  if (it == groups_.end()) {
    groups_.push_back(Group{source, std::string(frame.partial_id), frame.time_nano, {}});
    it = groups_.end() - 1;
  }
  it->text.append(frame.line);
  if (frame.partial_last) {
    Emit(it->source, it->time_nano, it->text, out);
    groups_.erase(it);
  }
}

void LineAssembler::Finish(std::vector<LogLine>& out) {
  for (const Group& g : groups_) Emit(g.source, g.time_nano, g.text, out);
  groups_.clear();
}

}  // namespace skald
