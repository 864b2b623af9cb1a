#include "plugin/ingest/partial_chunks.h"

namespace skald {

LogSource LogSourceOf(std::string_view source) {
  return source == "stderr" ? LogSource::kStderr : LogSource::kStdout;
}

std::string_view LogSourceName(LogSource source) {
  return source == LogSource::kStderr ? "stderr" : "stdout";
}

ChunkStep PartialChunkTracker::Next(const LogEntryView& frame) {
  ChunkStep step;
  step.source = LogSourceOf(frame.source);
  OpenLine& line = lines_[Index(step.source)];
  if (!frame.partial) {
    if (line.open && line.legacy) {
      // An old daemon's group ends with an ordinary frame, which belongs to it.
      step.kind = ChunkStep::Kind::kContinue;
      step.ends = true;
    } else {
      step.end_open = line.open;
      step.kind = ChunkStep::Kind::kWhole;
    }
    line.Reset();
    return step;
  }
  const bool legacy = !frame.has_partial_metadata;
  if (line.open && line.legacy == legacy && (legacy || line.id == frame.partial_id)) {
    step.kind = ChunkStep::Kind::kContinue;
  } else {
    step.end_open = line.open;
    step.kind = ChunkStep::Kind::kBegin;
    step.resumed = !legacy && frame.partial_ordinal > 1;
    line.open = true;
    line.legacy = legacy;
    line.id.assign(legacy ? std::string_view() : frame.partial_id);
  }
  step.ends = !legacy && frame.partial_last;
  if (step.ends) line.Reset();
  return step;
}

}  // namespace skald
