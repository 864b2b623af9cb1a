// Fuzz target: dockerd's frame stream as a FIFO or a journal segment delivers it, through the
// frame codec and the line assembler.
//
// Input: one byte choosing the assembler's line bound, then the stream
// `[uint32 big-endian length][LogEntry]...`. Checks: every decoded entry encodes back to a
// frame that decodes to the same fields; emitted lines are within the bound and not blank;
// the assembler emits no more line bytes than the frames carried; its pending position lies
// within the stream read so far.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "plugin/ingest/frame_codec.h"
#include "plugin/ingest/line_assembler.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using skald::fuzz::AsView;

bool SameEntry(const skald::LogEntryView& a, const skald::LogEntryView& b) {
  return a.source == b.source && a.time_nano == b.time_nano && a.line == b.line &&
         a.partial == b.partial && a.has_partial_metadata == b.has_partial_metadata &&
         a.partial_last == b.partial_last && a.partial_id == b.partial_id &&
         a.partial_ordinal == b.partial_ordinal;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  // Small bounds make the assembler cut lines into pieces; the largest is the plugin's default.
  static constexpr size_t kBounds[] = {1, 2, 3, 7, 16, 100, 16 * 1024, 256000};
  const size_t max_line_bytes = kBounds[data[0] % std::size(kBounds)];
  std::string_view stream = AsView(data + 1, size - 1);

  skald::LineAssembler assembler(max_line_bytes);
  std::vector<skald::LogLine> lines;
  uint64_t offset = 0;
  uint64_t frame_line_bytes = 0;
  std::string reencoded;
  while (!stream.empty()) {
    std::string_view body;
    size_t used = 0;
    const skald::FrameStatus status = skald::NextFrame(stream, &body, &used);
    if (status != skald::FrameStatus::kOk) break;  // a torn tail or a corrupt length
    FUZZ_CHECK(used >= 4 && used <= stream.size() && body.size() == used - 4);
    const skald::FrameSpan span{{1, offset}, {1, offset + used}};
    offset += used;
    stream.remove_prefix(used);
    const std::optional<skald::LogEntryView> entry = skald::DecodeLogEntry(body);
    if (!entry) continue;

    reencoded.clear();
    skald::EncodeFrame(*entry, reencoded);
    std::string_view again_body;
    size_t again_used = 0;
    FUZZ_CHECK(skald::NextFrame(reencoded, &again_body, &again_used) == skald::FrameStatus::kOk);
    FUZZ_CHECK(again_used == reencoded.size());
    const std::optional<skald::LogEntryView> again = skald::DecodeLogEntry(again_body);
    FUZZ_CHECK(again && SameEntry(*entry, *again));

    frame_line_bytes += entry->line.size();
    assembler.Add(*entry, lines, span);
    if (assembler.HasPending()) {
      const skald::JournalPosition since = assembler.PendingSince();
      FUZZ_CHECK(since.segment == 1 && since.offset <= offset);
    }
    FUZZ_CHECK(assembler.BufferedBytes() <= 2 * (max_line_bytes + skald::kMaxFrameBytes));
  }
  assembler.Finish(lines);
  FUZZ_CHECK(!assembler.HasPending());

  uint64_t line_bytes = 0;
  for (const skald::LogLine& line : lines) {
    FUZZ_CHECK(!line.line.empty() && line.line.size() <= max_line_bytes);
    line_bytes += line.line.size();
  }
  FUZZ_CHECK(line_bytes <= frame_line_bytes);
  return 0;
}
