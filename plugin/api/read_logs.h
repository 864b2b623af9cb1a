// ReadLogs: `docker logs` answered from a container's Journal.
//
// The daemon asks with {"Info":{...},"Config":{"Since","Until","Tail","Follow"}} and expects a
// body of frames `[uint32 big-endian length][LogEntry]`; it writes each frame's `line` to the
// user verbatim (../shared/docs/DOCKER_PROTOCOL.md). ServeReadLogs reads the journal's frames,
// joins dockerd's 16 KiB partial chunks back into whole lines and sends one frame per line with
// its "\n" appended, as json-file gives them back: blank lines included, `source` exactly
// "stdout" or "stderr", `time_nano` the line's first chunk's. A line longer than
// `ReadLogsOptions::max_frame_line_bytes` goes out as several frames (only the last ends in
// "\n"), so the bytes the user sees are the same and memory stays bounded.
//
// Without Follow the answer is a snapshot: the lines whose first frame starts before the
// journal's end as it was when the request came. With Follow the reader then waits for more
// until the container's session is sealed (it stopped), a line newer than Until arrives, the
// client goes away or the server stops. The daemon notices that its `docker logs -f` client
// left only when a frame arrives, and closes the stream then: while nothing new comes, a
// follower sends a heartbeat every `heartbeat` — an empty frame (no source, no line, time 0),
// which the daemon writes nowhere — so that a follower whose client left ends within about two
// heartbeats instead of holding its thread and socket until the container logs again.
//
// Tail N does not read the journal into memory: it counts the lines starting in each segment,
// newest segment first, until N are found, and streams from that segment on, skipping the
// surplus. Memory is one reusable frame buffer plus at most one unfinished line per source.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace skald {

class Journal;
struct ContainerInfo;

// Finds the journal that holds a container's logs. When there is none (e.g. the container was
// started with no-file=true) it throws NoJournal (plugin/driver/driver.h) with a message for
// the user; any other exception is reported as a journal that cannot be opened.
using JournalResolver = std::function<std::shared_ptr<Journal>(const ContainerInfo& info)>;

// The `Config` of a ReadLogs request (moby logger.ReadConfig).
struct ReadLogsConfig {
  std::optional<int64_t> since_nano;  // lines with time_nano >= since; nullopt: no lower bound
  std::optional<int64_t> until_nano;  // lines with time_nano <= until; nullopt: no upper bound
  int64_t tail = -1;                  // < 0: every line; N >= 0: the last N (after Since/Until)
  bool follow = false;
};

// Parses the `Config` object. Go's zero time ("0001-01-01T00:00:00Z"), null, "" and a missing
// field mean unset. Throws std::invalid_argument naming the field and the bad value.
ReadLogsConfig ParseReadLogsConfig(const nlohmann::json& config);

// Parses an RFC 3339 time ("2026-11-30T09:48:27.511720058Z", "2026-11-30T10:48:27+01:00";
// fractional seconds optional, at most 9 digits used) into nanoseconds since the Unix epoch,
// saturated to the int64 range. nullopt when `text` is not such a time. *is_zero_time is set
// when it is Go's zero time.
std::optional<int64_t> ParseRfc3339Nano(std::string_view text, bool* is_zero_time = nullptr);

// Where the answer goes.
struct ReadLogsSink {
  // Takes whole frames (never an empty view). Returns false when the client is gone.
  std::function<bool(std::string_view bytes)> write;
  // Optional. Returns false when the client is known to be gone; asked while following.
  std::function<bool()> alive;
};

struct ReadLogsOptions {
  // How long a follower waits for the journal to change before it checks the client and the
  // server again (Journal::Interrupt() wakes it sooner).
  std::chrono::milliseconds poll{5000};
  // A following answer with nothing new sends an empty frame this often (see above).
  std::chrono::milliseconds heartbeat{5000};
  // Optional. Returns true when the server shuts down: the answer ends.
  std::function<bool()> stopping;
  // Longer lines are sent as several frames (the daemon does not need a line in one frame).
  std::size_t max_frame_line_bytes = 4 * 1024 * 1024;
  // Frames are handed to the sink in batches of about this many bytes (and before waiting).
  std::size_t batch_bytes = 32 * 1024;
};

struct ReadLogsResult {
  enum class End {
    kDone,        // everything asked for was sent (or the followed session ended)
    kClientGone,  // the sink refused a write or reported the client gone
    kStopped,     // the server is shutting down
  };
  End end = End::kDone;
  uint64_t lines = 0;          // complete lines sent
  uint64_t heartbeats = 0;     // empty frames sent while following
  uint64_t frames = 0;         // frames sent
  uint64_t bytes = 0;          // bytes handed to the sink
  uint64_t bad_frames = 0;     // frames that were not a LogEntry, or oversized, skipped
  uint64_t skipped_bytes = 0;  // torn or evicted journal bytes the reader jumped over
};

// Streams the answer to `config` from `journal` into `sink`. Blocks until the answer is
// complete (with Follow: until it ends as described above). Throws what the journal throws.
ReadLogsResult ServeReadLogs(const std::shared_ptr<Journal>& journal, const ReadLogsConfig& config,
                             const ReadLogsSink& sink, const ReadLogsOptions& options = {});

}  // namespace skald
