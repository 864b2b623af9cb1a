#include "plugin/api/read_logs.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "plugin/ingest/frame_codec.h"
#include "plugin/ingest/partial_chunks.h"
#include "plugin/journal/journal.h"
#include "plugin/journal/journal_frame_reader.h"

namespace skald {
namespace {

constexpr int64_t kNanosPerSecond = 1'000'000'000;
// Go's zero time, 0001-01-01T00:00:00Z, in seconds since the Unix epoch.
constexpr int64_t kZeroTimeUnixSeconds = -62'135'596'800;
// How far past Until a line may be before reading stops: the two streams' lines are nearly,
// not strictly, in time order in the journal, but never this far apart.
constexpr int64_t kUntilSlackNano = 10 * kNanosPerSecond;

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int64_t DaysInMonth(int64_t y, int64_t m) {
  static constexpr std::array<int64_t, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[static_cast<std::size_t>(m - 1)];
}

// Reads exactly `n` decimal digits at `pos`.
bool ReadDigits(std::string_view s, std::size_t& pos, int n, int64_t* value) {
  if (s.size() - pos < static_cast<std::size_t>(n)) return false;
  int64_t v = 0;
  for (int i = 0; i < n; ++i) {
    char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  pos += n;
  *value = v;
  return true;
}

bool ReadChar(std::string_view s, std::size_t& pos, std::string_view allowed) {
  if (pos >= s.size() || allowed.find(s[pos]) == std::string_view::npos) return false;
  ++pos;
  return true;
}

std::string Quoted(const nlohmann::json& value) { return value.dump(); }

std::optional<int64_t> TimeField(const nlohmann::json& config, const char* name) {
  auto it = config.find(name);
  if (it == config.end() || it->is_null()) return std::nullopt;
  const std::string what = std::string("skald: ReadLogs Config.") + name + " ";
  if (!it->is_string()) {
    throw std::invalid_argument(what + Quoted(*it) +
                                " is not a time; want an RFC 3339 string such as "
                                "\"2026-11-30T09:48:27.511720058Z\"");
  }
  const auto& text = it->get_ref<const std::string&>();
  if (text.empty()) return std::nullopt;
  bool zero = false;
  auto nanos = ParseRfc3339Nano(text, &zero);
  if (!nanos) {
    throw std::invalid_argument(what + Quoted(*it) +
                                " is not an RFC 3339 time; want e.g. "
                                "\"2026-11-30T09:48:27.511720058Z\" or "
                                "\"2026-11-30T10:48:27+01:00\"");
  }
  if (zero) return std::nullopt;
  return nanos;
}

int64_t TailField(const nlohmann::json& config) {
  auto it = config.find("Tail");
  if (it == config.end() || it->is_null()) return -1;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_number_float()) {
    double d = it->get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e18) {
      return static_cast<int64_t>(d);
    }
  }
  if (it->is_string()) {
    const auto& s = it->get_ref<const std::string&>();
    if (s == "all") return -1;
    std::size_t pos = s.size() > 1 && s[0] == '-' ? 1 : 0;
    if (s.size() > pos && s.size() - pos <= 18 &&
        s.find_first_not_of("0123456789", pos) == std::string::npos) {
      return std::stoll(s);
    }
  }
  throw std::invalid_argument("skald: ReadLogs Config.Tail " + Quoted(*it) +
                              " is not a line count; want an integer (-1 for every line)");
}

bool FollowField(const nlohmann::json& config) {
  auto it = config.find("Follow");
  if (it == config.end() || it->is_null()) return false;
  if (!it->is_boolean()) {
    throw std::invalid_argument("skald: ReadLogs Config.Follow " + Quoted(*it) +
                                " is not a boolean; want true or false");
  }
  return it->get<bool>();
}

int64_t WallClockNano() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The frames of the answer, handed to the sink in batches.
class FrameOut {
 public:
  FrameOut(const ReadLogsSink& sink, std::size_t batch_bytes, ReadLogsResult& result)
      : sink_(sink), batch_bytes_(batch_bytes), result_(result) {}

  // One frame with `text`, plus "\n" when `newline`. False: the client is gone.
  bool Put(LogSource source, int64_t time_nano, std::string_view text, bool newline) {
    if (!ok_) return false;
    LogEntryView entry;
    entry.source = LogSourceName(source);
    entry.time_nano = time_nano;
    if (newline) {
      line_.assign(text);
      line_.push_back('\n');
      entry.line = line_;
    } else {
      entry.line = text;
    }
    EncodeFrame(entry, batch_);
    ++result_.frames;
    if (newline) ++result_.lines;
    return batch_.size() < batch_bytes_ || Flush();
  }

  // An empty frame: the daemon decodes it and writes it nowhere (no source).
  bool Heartbeat() {
    if (!Flush()) return false;
    static constexpr char kEmptyFrame[4] = {0, 0, 0, 0};
    ok_ = sink_.write(std::string_view(kEmptyFrame, sizeof kEmptyFrame));
    if (ok_) {
      result_.bytes += sizeof kEmptyFrame;
      ++result_.heartbeats;
    }
    return ok_;
  }

  bool Flush() {
    if (!ok_) return false;
    if (batch_.empty()) return true;
    ok_ = sink_.write(batch_);
    if (ok_) result_.bytes += batch_.size();
    batch_.clear();
    return ok_;
  }

 private:
  const ReadLogsSink& sink_;
  const std::size_t batch_bytes_;
  ReadLogsResult& result_;
  std::string batch_;
  std::string line_;  // reused: a line and its "\n"
  bool ok_ = true;
};

// Joins dockerd's partial chunks into lines (plugin/ingest/partial_chunks.h), filters them by time,
// skips the first `skip` of those that pass and sends the rest to `out`; with no `out` it only
// counts the lines that start (passing the filter). Where a line starts is decided by its first
// frame alone, and a resumed line (one that began before the reader's first frame, or whose
// first chunks are lost) is skipped, so counting from a segment's start sees exactly the lines
// that streaming from there sends.
class LineJoiner {
 public:
  LineJoiner(const ReadLogsConfig& config, uint64_t skip, FrameOut* out, std::size_t max_piece)
      : config_(config), skip_(skip), out_(out), max_piece_(max_piece) {}

  // False when the client is gone.
  bool Feed(const LogEntryView& frame) {
    const ChunkStep step = chunks_.Next(frame);
    const LogSource src = step.source;
    // The rest of the open line never came: it is sent as it is.
    if (step.end_open && !Close(src, true)) return false;
    switch (step.kind) {
      case ChunkStep::Kind::kWhole:
        if (!Starts(frame.time_nano)) return true;
        return out_->Put(src, frame.time_nano, frame.line, true);
      case ChunkStep::Kind::kBegin:
        Open(src, frame.time_nano, !step.resumed);
        break;
      case ChunkStep::Kind::kContinue:
        break;
    }
    if (!Append(src, frame.line)) return false;
    return !step.ends || Close(src, true);
  }

  // The data ends. `complete`: no more chunks can come (the session is sealed), the open lines
  // are sent as whole lines; otherwise as they are so far, without a "\n".
  bool FinishOpen(bool complete) {
    for (const LogSource src : {LogSource::kStdout, LogSource::kStderr}) {
      if (!chunks_.IsOpen(src)) continue;
      chunks_.EndOpen(src);
      if (!Close(src, complete)) return false;
    }
    return true;
  }

  uint64_t counted() const { return counted_; }
  // The time of the newest line seen that is later than Until.
  std::optional<int64_t> past_until() const { return past_until_; }

 private:
  // The open line of a source (chunks_ says whether there is one).
  struct Group {
    bool send = false;  // passes the filters and the skip
    int64_t time_nano = 0;
    std::string text;  // unsent part (only when `send`)
  };

  Group& GroupOf(LogSource src) { return groups_[static_cast<std::size_t>(src)]; }

  // A line starts at `time_nano`: does it go out?
  bool Starts(int64_t time_nano) {
    if (config_.since_nano && time_nano < *config_.since_nano) return false;
    if (config_.until_nano && time_nano > *config_.until_nano) {
      if (!past_until_ || time_nano > *past_until_) past_until_ = time_nano;
      return false;
    }
    return counted_++ >= skip_ && out_ != nullptr;
  }

  // `starts`: the line starts here (it is counted and may be sent); else it is skipped.
  void Open(LogSource src, int64_t time_nano, bool starts) {
    Group& g = GroupOf(src);
    g.time_nano = time_nano;
    g.text.clear();
    g.send = starts && Starts(time_nano);
  }

  bool Append(LogSource src, std::string_view text) {
    Group& g = GroupOf(src);
    if (!g.send) return true;
    g.text.append(text);
    if (g.text.size() < max_piece_) return true;
    bool ok = out_->Put(src, g.time_nano, g.text, false);
    g.text.clear();
    return ok;
  }

  bool Close(LogSource src, bool complete) {
    Group& g = GroupOf(src);
    if (!g.send) return true;
    g.send = false;
    if (!complete && g.text.empty()) return true;
    bool ok = out_->Put(src, g.time_nano, g.text, complete);
    g.text.clear();
    return ok;
  }

  const ReadLogsConfig& config_;
  const uint64_t skip_;
  FrameOut* out_;
  const std::size_t max_piece_;
  PartialChunkTracker chunks_;
  std::array<Group, 2> groups_;  // stdout, stderr
  uint64_t counted_ = 0;
  std::optional<int64_t> past_until_;
};

// Lines (passing Since/Until) that start in `segment` before `limit`.
uint64_t CountLineStarts(const std::shared_ptr<Journal>& journal, uint64_t segment,
                         const ReadLogsConfig& config, std::optional<JournalPosition> limit) {
  JournalFrameReader reader(journal, JournalPosition{segment, 0});
  LineJoiner joiner(config, 0, nullptr, 0);
  std::string_view body;
  JournalPosition start;
  while (reader.Next(&body, &start) == JournalFrameReader::Status::kFrame) {
    if (start.segment != segment || (limit && start >= *limit)) break;
    if (auto entry = DecodeLogEntry(body)) joiner.Feed(*entry);
  }
  return joiner.counted();
}

struct TailStart {
  JournalPosition from;
  uint64_t skip = 0;
};

// Where to read from for the last `tail` lines: the newest segment from whose start at least
// `tail` lines start, and how many of them to skip.
TailStart FindTailStart(const std::shared_ptr<Journal>& journal, const ReadLogsConfig& config,
                        uint64_t tail, std::optional<JournalPosition> limit) {
  const std::vector<uint64_t> segments = journal->Segments();
  uint64_t total = 0;
  for (auto it = segments.rbegin(); it != segments.rend(); ++it) {
    if (limit && JournalPosition{*it, 0} >= *limit) continue;  // newer than the snapshot
    total += CountLineStarts(journal, *it, config, limit);
    if (total >= tail) return TailStart{JournalPosition{*it, 0}, total - tail};
  }
  if (segments.empty()) return TailStart{journal->Begin(), 0};
  return TailStart{JournalPosition{segments.front(), 0}, 0};
}

}  // namespace

std::optional<int64_t> ParseRfc3339Nano(std::string_view s, bool* is_zero_time) {
  std::size_t pos = 0;
  int64_t year, month, day, hour, minute, second;
  if (!ReadDigits(s, pos, 4, &year) || !ReadChar(s, pos, "-") || !ReadDigits(s, pos, 2, &month) ||
      !ReadChar(s, pos, "-") || !ReadDigits(s, pos, 2, &day) || !ReadChar(s, pos, "Tt ") ||
      !ReadDigits(s, pos, 2, &hour) || !ReadChar(s, pos, ":") || !ReadDigits(s, pos, 2, &minute) ||
      !ReadChar(s, pos, ":") || !ReadDigits(s, pos, 2, &second)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, month) || hour > 23 ||
      minute > 59 || second > 59) {
    return std::nullopt;
  }
  int64_t fraction = 0;
  if (ReadChar(s, pos, ".,")) {
    int digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 9) fraction = fraction * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0) return std::nullopt;
    for (; digits < 9; ++digits) fraction *= 10;
  }
  int64_t offset = 0;  // seconds east of UTC
  if (!ReadChar(s, pos, "Zz")) {
    if (pos >= s.size() || (s[pos] != '+' && s[pos] != '-')) return std::nullopt;
    const int64_t sign = s[pos++] == '-' ? -1 : 1;
    int64_t oh, om;
    if (!ReadDigits(s, pos, 2, &oh)) return std::nullopt;
    ReadChar(s, pos, ":");
    if (!ReadDigits(s, pos, 2, &om) || oh > 23 || om > 59) return std::nullopt;
    offset = sign * (oh * 3600 + om * 60);
  }
  if (pos != s.size()) return std::nullopt;

  const int64_t seconds =
      DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset;
  if (is_zero_time) *is_zero_time = seconds == kZeroTimeUnixSeconds && fraction == 0;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  if (seconds > kMax / kNanosPerSecond - 1) return kMax;
  if (seconds < kMin / kNanosPerSecond + 1) return kMin;
  return seconds * kNanosPerSecond + fraction;
}

ReadLogsConfig ParseReadLogsConfig(const nlohmann::json& config) {
  ReadLogsConfig out;
  if (config.is_null()) return out;
  if (!config.is_object()) {
    throw std::invalid_argument("skald: ReadLogs Config " + Quoted(config) +
                                " is not a JSON object");
  }
  out.since_nano = TimeField(config, "Since");
  out.until_nano = TimeField(config, "Until");
  out.tail = TailField(config);
  out.follow = FollowField(config);
  return out;
}

namespace {

// One ReadLogs answer, from its start position to its end: frames are decoded, joined and
// sent; at the end of what is written, a follower flushes, beats and waits for more.
class ReadLogsRun {
 public:
  using End = ReadLogsResult::End;

  ReadLogsRun(const std::shared_ptr<Journal>& journal, const ReadLogsConfig& config,
              const ReadLogsSink& sink, const ReadLogsOptions& options, JournalPosition from,
              uint64_t skip, std::optional<JournalPosition> limit)
      : journal_(journal),
        config_(config),
        sink_(sink),
        options_(options),
        limit_(limit),
        seen_(journal->Version()),
        out_(sink, options.batch_bytes, result_),
        joiner_(config, skip, &out_, std::max<std::size_t>(options.max_frame_line_bytes, 1)),
        reader_(journal, from) {}

  ReadLogsResult Run() {
    using Status = JournalFrameReader::Status;
    for (;;) {
      std::string_view body;
      JournalPosition start;
      const Status status = reader_.Next(&body, &start);
      if (status == Status::kFrame) {
        if (limit_ && start >= *limit_) return Finish(End::kDone, false);
        if (std::optional<End> end = Take(body)) return Finish(*end, false);
        continue;
      }
      if (status == Status::kCorrupt) {
        ++result_.bad_frames;
        continue;
      }
      if (status == Status::kEnd) return Finish(End::kDone, true);
      // kWait (at the end of the live segment) and kRetry (a segment could not be opened for
      // a moment) alike: without Follow the answer ends here, with it the reader looks again.
      if (!config_.follow) return Finish(End::kDone, false);
      if (std::optional<End> end = AwaitMore()) return Finish(*end, false);
    }
  }

 private:
  bool Stopping() const { return options_.stopping && options_.stopping(); }

  // A frame read: decoded and fed to the joiner. An end when the answer is complete.
  std::optional<End> Take(std::string_view body) {
    auto entry = DecodeLogEntry(body);
    if (!entry) {
      ++result_.bad_frames;
      return std::nullopt;
    }
    if (!joiner_.Feed(*entry)) return End::kClientGone;
    if (auto late = joiner_.past_until()) {
      // json-file stops following at the first line after Until.
      if (config_.follow || *late > *config_.until_nano + kUntilSlackNano) return End::kDone;
    }
    if (++frames_since_check_ == 4096) {
      frames_since_check_ = 0;
      if (Stopping()) return End::kStopped;
    }
    return std::nullopt;
  }

  // Following, at the end of what is written: sends what is buffered, a heartbeat when the
  // client heard nothing for options.heartbeat, and waits for the journal to change. An end
  // when the answer is complete.
  std::optional<End> AwaitMore() {
    if (result_.bytes != sent_before_wait_) last_sent_ = std::chrono::steady_clock::now();
    if (!out_.Flush()) return End::kClientGone;
    if (Stopping()) return End::kStopped;
    if (sink_.alive && !sink_.alive()) return End::kClientGone;
    if (config_.until_nano && WallClockNano() > *config_.until_nano + kUntilSlackNano) {
      return End::kDone;  // every line still to come is later than Until
    }
    const uint64_t now = journal_->Version();
    if (now != seen_) {
      seen_ = now;  // something changed since the last look: read again before waiting
      return std::nullopt;
    }
    const auto idle = std::chrono::steady_clock::now() - last_sent_;
    if (idle >= options_.heartbeat) {
      if (!out_.Heartbeat()) return End::kClientGone;
      last_sent_ = std::chrono::steady_clock::now();
    }
    sent_before_wait_ = result_.bytes;
    const auto until_beat = std::chrono::duration_cast<std::chrono::milliseconds>(
        options_.heartbeat - (std::chrono::steady_clock::now() - last_sent_));
    seen_ = journal_->WaitForChange(
        seen_, std::max(std::chrono::milliseconds(1), std::min(options_.poll, until_beat)));
    return std::nullopt;
  }

  // `complete`: the journal was read to its end (a line still open there is whole).
  ReadLogsResult Finish(End end, bool complete) {
    if (end != End::kClientGone && !(joiner_.FinishOpen(complete) && out_.Flush())) {
      end = End::kClientGone;
    }
    result_.end = end;
    result_.skipped_bytes = reader_.skipped_bytes();
    return result_;
  }

  const std::shared_ptr<Journal>& journal_;
  const ReadLogsConfig& config_;
  const ReadLogsSink& sink_;
  const ReadLogsOptions& options_;
  const std::optional<JournalPosition> limit_;  // without Follow: the journal's end at the start
  uint64_t seen_;                               // the journal's version last looked at
  ReadLogsResult result_;
  FrameOut out_;
  LineJoiner joiner_;
  JournalFrameReader reader_;
  uint32_t frames_since_check_ = 0;
  uint64_t sent_before_wait_ = 0;
  std::chrono::steady_clock::time_point last_sent_ = std::chrono::steady_clock::now();
};

}  // namespace

ReadLogsResult ServeReadLogs(const std::shared_ptr<Journal>& journal, const ReadLogsConfig& config,
                             const ReadLogsSink& sink, const ReadLogsOptions& options) {
  if (config.tail == 0 && !config.follow) return ReadLogsResult{};
  // Without Follow the answer is what the journal holds now; a container still writing does
  // not keep it going (and Tail counts the same lines that are sent).
  std::optional<JournalPosition> limit;
  if (!config.follow) limit = journal->End();
  // Tail 0 with Follow skips every line there is; it cannot start at End(), which may be
  // inside a frame that is still arriving.
  TailStart start{journal->Begin(), 0};
  if (config.tail >= 0) {
    start = FindTailStart(journal, config, static_cast<uint64_t>(config.tail), limit);
  }
  return ReadLogsRun(journal, config, sink, options, start.from, start.skip, limit).Run();
}

}  // namespace skald
