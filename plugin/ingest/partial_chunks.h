// dockerd's partial chunks: how a container's frames make lines, the one reading of the rules
// for the shipper (LineAssembler) and `docker logs` (ReadLogs).
//
// dockerd cuts a line longer than 16 KiB into chunks that share a partial id, numbered from 1
// (the ordinal), the last marked `last`; every chunk has `partial` set and the first chunk's
// timestamp. Daemons before 19.03 sent chunks without that metadata: such a group is ended by
// the next ordinary (non-partial) frame, which belongs to it. The daemon's copier sends one
// source's chunks in order, so each source has at most one open line: a frame of that source
// that does not continue it (another partial id, a whole line, a chunk of the other kind)
// means its rest never came, and the open line ends as it is before that frame is read.
// A chunk that begins a line with an ordinal past 1 is the rest of a line whose start was not
// read (a reader that began inside it, or lost frames): the line is "resumed".
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "plugin/ingest/frame_codec.h"

namespace skald {

enum class LogSource : uint8_t { kStdout, kStderr };

// A frame's source: "stderr", else stdout.
LogSource LogSourceOf(std::string_view source);
// The source label value ("stdout" / "stderr").
std::string_view LogSourceName(LogSource source);

// What one frame does to the line of its source.
struct ChunkStep {
  enum class Kind {
    kWhole,     // a line by itself
    kBegin,     // the first bytes of a line (more may follow)
    kContinue,  // more bytes of the open line
  };
  LogSource source = LogSource::kStdout;
  Kind kind = Kind::kWhole;
  bool end_open = false;  // before this frame, the open line ends as it is (its rest never came)
  bool resumed = false;   // kBegin: the line began before this chunk (its ordinal is past 1)
  bool ends = false;      // kBegin, kContinue: the frame's bytes end the line
};

// Follows which line is open on each source of one stream of frames.
class PartialChunkTracker {
 public:
  // Reads `frame` under the rules above. Afterwards the source has an open line when the step
  // is kBegin or kContinue without `ends`.
  ChunkStep Next(const LogEntryView& frame);

  bool IsOpen(LogSource source) const { return lines_[Index(source)].open; }
  // The stream ended: forgets the source's open line (the caller ends it as it is).
  void EndOpen(LogSource source) { lines_[Index(source)].Reset(); }

 private:
  struct OpenLine {
    bool open = false;
    bool legacy = false;  // chunks without partial metadata
    std::string id;
    void Reset() {
      open = false;
      legacy = false;
      id.clear();  // keeps its buffer: the next line's id is as long
    }
  };
  static std::size_t Index(LogSource source) { return static_cast<std::size_t>(source); }

  std::array<OpenLine, 2> lines_;  // stdout, stderr
};

}  // namespace skald
