// Journal format: what a journal directory `<state>/containers/<container id>/` holds.
//
// - `<seq>.seg`: a segment (seq: 10 decimal digits from 1, ascending; a segment is named once
//   and never renamed). It holds raw frames (plugin/journal/frame_format.h) from one FIFO and
//   starts at a frame boundary. A sealed segment that ends inside a frame is read only up to its
//   last complete frame; the torn bytes are skipped and counted.
// - `<seq>.live`: the marker of a segment a writer may still append to; it holds the FIFO's
//   path and survives a crash, so that the session can be resumed.
// - `info.json`: the StartLogging Info of the latest session (the labels and options a
//   restarted plugin needs to replay the journal), replaced atomically.
// - `cursor`: the oldest position not yet acknowledged by Loki (plugin/journal/journal.cc says how
//   it is rewritten).
// - `replaying`: the crash-loop guard's marker (plugin/journal/replay_guard.h), while it is
// replayed.
// - `*.tmp`: an atomic replace that did not finish; removed when the journal is opened.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "plugin/common/posix_file.h"

namespace skald {

inline constexpr std::string_view kJournalSegmentExt = ".seg";
inline constexpr std::string_view kJournalMarkerExt = ".live";
inline constexpr std::string_view kJournalTempExt = kAtomicWriteTempSuffix;
inline constexpr std::string_view kJournalInfoFile = "info.json";
inline constexpr std::string_view kJournalCursorFile = "cursor";
inline constexpr std::string_view kJournalReplayMarkerFile = "replaying";
// The largest metadata files a journal reads back; a larger one is damaged and ignored. info.json
// holds a container's StartLogging request (the API takes at most 8 MiB) as JSON again; a
// marker holds a FIFO's path; the cursor two numbers.
inline constexpr std::size_t kJournalInfoMaxBytes = std::size_t{32} << 20;
inline constexpr std::size_t kJournalMarkerMaxBytes = 4096;
inline constexpr std::size_t kJournalCursorMaxBytes = 64;
// Segment numbers stay below this (a name or a cursor with a larger one is damaged): the next
// number never wraps, and every segment written is found again by its name.
inline constexpr uint64_t kJournalSegmentLimit = uint64_t{1} << 62;

// (3, ".seg") -> "0000000003.seg".
std::string JournalFileName(uint64_t seq, std::string_view ext);
// "0000000003.seg" -> 3; nullopt for any other name (and for seq 0).
std::optional<uint64_t> ParseJournalFileName(std::string_view name, std::string_view ext);

// Where the complete frames of a segment end, walking the length prefixes from a known
// boundary `from` up to `size`.
struct FrameScan {
  uint64_t boundary;  // the last complete-frame boundary (or the start of a corrupt prefix)
  uint64_t next_end;  // the size at which the next frame would be complete
  bool corrupt;       // a length prefix over kMaxFrameBytes at `boundary`
};
// `fd` is the segment file open for reading, `path` names it in errors. Throws
// std::system_error on a read error.
FrameScan ScanFrames(int fd, uint64_t from, uint64_t size, const std::filesystem::path& path);

}  // namespace skald
