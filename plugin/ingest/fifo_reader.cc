#include "plugin/ingest/fifo_reader.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "plugin/common/thread_name.h"
#include "plugin/ingest/frame_codec.h"
#include "plugin/ingest/hand_over_bounds.h"
#include "plugin/ingest/memory_fallback.h"
#include "plugin/journal/journal_frame_reader.h"

namespace skald {

namespace {
constexpr std::size_t kReadBufferBytes = 256 * 1024;  // one read(2) from a FIFO at most
constexpr int kPipeBytes = 1024 * 1024;               // fewer wake-ups per MB; best effort
constexpr std::size_t kCoalesceBytes = 32 * 1024;
constexpr std::chrono::milliseconds kCoalesceDelay{1};
// A stream whose journal could not be read for a moment (kRetry, an unexpected error) is looked
// at again this often; one paused for the sink's window waits for Wake().
constexpr std::chrono::milliseconds kPausedRetry{250};
constexpr std::chrono::seconds kJournalRetry{1};  // a journal that refused bytes is tried again
// A held session (memory mode, queue full, Loki taking lines) is looked at this often besides
// the wake-ups acknowledgements bring, to see whether Loki went away meanwhile.
constexpr std::chrono::milliseconds kHeldRecheck{100};
// Opens a FIFO for reading without blocking, with a large pipe buffer (best effort).
UniqueFd OpenFifo(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fd) throw std::system_error(errno, std::generic_category(), "open FIFO " + path);
  fcntl(fd.get(), F_SETPIPE_SZ, kPipeBytes);
  return fd;
}

constexpr uint32_t kFifoEvents = EPOLLIN | EPOLLRDHUP;

}  // namespace

struct FifoReader::Stream {
  uint64_t id;
  UniqueFd fd;
  std::string path;
  std::string buffer;  // bytes read, not yet decoded (an incomplete frame at most)
  LineAssembler assembler;
  std::vector<LogLine> lines;
  AssemblerCounts reported;
  // Not polled while the sink holds it (LineSink::HoldsMemoryStream): looked at every
  // kHeldRecheck and at Wake().
  bool held = false;
};

struct FifoReader::Journaled {
  Journaled(uint64_t id, std::shared_ptr<Journal> journal, JournalPosition from,
            std::size_t max_line_bytes, LineSink& sink, DecodeCounters& counters)
      : decoder(id, std::move(journal), from, max_line_bytes, sink, counters) {}
  JournalStreamDecoder decoder;
  int sessions = 0;    // live sessions (mu_)
  bool ended = false;  // (mu_)
};

struct FifoReader::Session {
  UniqueFd fd;
  std::string path;
  uint64_t stream_id = 0;
  std::unique_ptr<Journal::Writer> writer;  // null in memory mode (the journal refused bytes)
  // Not polled: loki-on-full=block and the journal is full, or cannot be written (then it is
  // tried again at `retry_at`).
  bool blocked = false;
  // Memory mode: its queue is full while Loki takes lines. Not polled (the container waits at
  // Loki's pace) until the sink takes some of the queue, Loki stops taking lines, or the
  // journal is due to be tried again.
  bool held = false;
  std::chrono::steady_clock::time_point retry_at{};
  // Since the journal first refused bytes (memory mode, and the lines it queued after).
  std::unique_ptr<MemoryFallback> memory;
};

FifoReader::FifoReader(LineSink& sink, MetricsRegistry& metrics)
    : sink_(sink),
      read_buffer_(std::make_unique<char[]>(kReadBufferBytes)),
      decode_counters_(metrics),
      bytes_read_(
          metrics.GetCounter("skald_fifo_bytes_read_total", "Bytes read from container FIFOs.")),
      write_errors_(metrics.GetCounter(
          "skald_journal_write_errors_total",
          "Writes the journal refused (disk full, I/O error): the stream went on in memory or, "
          "with loki-on-full=block, waited.")),
      disk_full_lines_(metrics.GetCounter("skald_entries_dropped_total",
                                          "Entries not delivered, by reason.",
                                          {{"reason", "disk_full"}})),
      loop_errors_(metrics.GetCounter(
          "skald_reader_errors_total",
          "Unexpected errors on the FIFO reader's thread (logged; the stream is retried).")) {
  epoll_fd_.reset(epoll_create1(EPOLL_CLOEXEC));
  wake_fd_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!epoll_fd_ || !wake_fd_) throw std::system_error(errno, std::generic_category(), "epoll");
  Watch(wake_fd_.get(), EPOLLIN, EPOLL_CTL_ADD);
  thread_ = std::thread([this] {
    SetThreadName("skald-reader");
    Loop();
  });
}

FifoReader::~FifoReader() {
  Stop();
  // The members close the FIFOs, the eventfd and the epoll instance; the journal streams'
  // decoders remove their evict hooks.
}

void FifoReader::Stop() {
  if (stopping_.exchange(true)) return;
  uint64_t one = 1;
  [[maybe_unused]] auto n = write(wake_fd_.get(), &one, sizeof one);
  if (thread_.joinable()) thread_.join();
}

int FifoReader::Watch(int fd, uint32_t events, int op) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  return epoll_ctl(epoll_fd_.get(), op, fd, &ev) == 0 ? 0 : errno;
}

void FifoReader::Add(uint64_t stream_id, const std::string& path, std::size_t max_line_bytes) {
  UniqueFd fifo = OpenFifo(path);
  const int fd = fifo.get();
  auto s = std::unique_ptr<Stream>(
      new Stream{stream_id, std::move(fifo), path, {}, LineAssembler(max_line_bytes), {}, {}});
  {
    absl::MutexLock lock(&mu_);
    streams_[fd] = std::move(s);
  }
  if (const int err = Watch(fd, kFifoEvents, EPOLL_CTL_ADD); err != 0) {
    absl::MutexLock lock(&mu_);
    streams_.erase(fd);  // closes it
    throw std::system_error(err, std::generic_category(), "epoll_ctl " + path);
  }
}

void FifoReader::AddJournalStream(uint64_t stream_id, std::shared_ptr<Journal> journal,
                                  JournalPosition from, std::size_t max_line_bytes) {
  auto j = std::make_unique<Journaled>(stream_id, std::move(journal), from, max_line_bytes, sink_,
                                       decode_counters_);
  {
    absl::MutexLock lock(&mu_);
    journaled_[stream_id] = std::move(j);
  }
  Wake();  // `more` is set: the loop reads what the journal already holds
}

bool FifoReader::AddSession(uint64_t stream_id, const std::string& fifo_path,
                            std::unique_ptr<Journal::Writer>& writer) {
  UniqueFd fifo = OpenFifo(fifo_path);
  const int fd = fifo.get();
  {
    absl::MutexLock lock(&mu_);
    auto it = journaled_.find(stream_id);
    if (it == journaled_.end() || it->second->ended) return false;
    ++it->second->sessions;
    auto session = std::make_unique<Session>();
    session->fd = std::move(fifo);
    session->path = fifo_path;
    session->stream_id = stream_id;
    session->writer = std::move(writer);
    sessions_[fd] = std::move(session);
  }
  if (const int err = Watch(fd, kFifoEvents, EPOLL_CTL_ADD); err != 0) {
    absl::MutexLock lock(&mu_);
    writer = std::move(sessions_[fd]->writer);
    sessions_.erase(fd);  // closes it
    --journaled_[stream_id]->sessions;
    throw std::system_error(err, std::generic_category(), "epoll_ctl " + fifo_path);
  }
  return true;
}

void FifoReader::SetTick(std::function<std::chrono::milliseconds()> tick) {
  {
    absl::MutexLock lock(&mu_);
    tick_ = std::move(tick);
  }
  TickWithin(std::chrono::milliseconds(0));
}

void FifoReader::SetDecodeHook(std::function<void(const std::string&)> hook) {
  absl::MutexLock lock(&mu_);
  decode_hook_ = std::move(hook);
}

void FifoReader::TickWhenJournaled(std::chrono::milliseconds delay) { timer_.WhenJournaled(delay); }

void FifoReader::TickWithin(std::chrono::milliseconds delay) {
  // The loop may be asleep until the tick due before: wake it to look at the new one.
  if (timer_.Within(delay)) Wake();
}

void FifoReader::Wake() {
  uint64_t one = 1;
  [[maybe_unused]] auto n = write(wake_fd_.get(), &one, sizeof one);
}

// The fd leaves the maps as it is closed (its entry owns it), under mu_: once closed, its
// number may be given to a FIFO that StartLogging opens on another thread, whose entry must
// not be erased here.
void FifoReader::Close(int fd) {
  absl::MutexLock lock(&mu_);
  epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, fd, nullptr);
  streams_.erase(fd);
}

FifoReader::Journaled& FifoReader::JournaledOf(const Session& session) {
  absl::MutexLock lock(&mu_);
  return *journaled_.at(session.stream_id);
}

void FifoReader::DrainAndMaybeClose(Stream& s) {
  bool alive = true;
  try {
    alive = Drain(s);
  } catch (const std::exception& e) {
    loop_errors_.Add();
    spdlog::error("{}: {}", s.path, e.what());
  }
  if (!alive) Close(s.fd.get());  // `s` is gone from here on
}

void FifoReader::Unpoll(int fd) {
  // Removed, not given an interest of 0: epoll reports a hang-up whatever the interest, and a
  // blocked session whose container is gone would wake the loop on every round.
  epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, fd, nullptr);
}

void FifoReader::Repoll(int fd) {
  if (const int err = Watch(fd, kFifoEvents, EPOLL_CTL_ADD); err == EEXIST) {
    Watch(fd, kFifoEvents, EPOLL_CTL_MOD);
  }
}

bool FifoReader::Feed(Session& session, Journaled& j) {
  // Splicing into the journal decodes nothing: a longer round, then other FIFOs have a turn.
  // A round ends sooner when a splice empties the FIFO (below): it reaches this only while
  // every splice comes back full, the writer faster than the reader.
  constexpr std::size_t kRoundBytes = 16 * 1024 * 1024;
  if (!session.writer) return FeedMemory(session, j);
  if (session.blocked && std::chrono::steady_clock::now() < session.retry_at) return true;
  std::size_t moved = 0;
  while (moved < kRoundBytes) {
    Journal::Writer::Result r;
    try {
      r = session.writer->SpliceFrom(session.fd.get(), kReadBufferBytes * 4);
    } catch (const std::system_error& e) {
      return OnWriteError(session, j, e);
    }
    switch (r.status) {
      case Journal::Writer::Status::kMoved:
        moved += r.bytes;
        round_bytes_ += r.bytes;
        bytes_read_.Add(r.bytes);
        journaled_bytes_.fetch_add(r.bytes);
        timer_.Journaled();  // on the loop's thread: the next wait sees it
        if (session.blocked) {
          session.blocked = false;
          Repoll(session.fd.get());
        }
        // The FIFO is empty for now: what dockerd writes next comes a frame per write(2), so
        // this round ends and the loop lets it gather (kCoalesceDelay) rather than taking
        // it a frame per splice.
        if (r.drained) return true;
        continue;
      case Journal::Writer::Status::kWouldBlock:
        return true;
      case Journal::Writer::Status::kEof:
        session.writer->Seal();  // never throws
        return false;
      case Journal::Writer::Status::kFull:
        if (!session.blocked) {
          session.blocked = true;
          Unpoll(session.fd.get());  // not polled until there is room
        }
        return true;
    }
  }
  return true;
}

bool FifoReader::OnWriteError(Session& session, Journaled& j, const std::system_error& error) {
  write_errors_.Add();
  const auto now = std::chrono::steady_clock::now();
  session.retry_at = now + kJournalRetry;
  uint64_t suppressed = 0;
  const bool block = j.decoder.journal().limits().block_when_full;
  if (block) {
    // The user chose to lose nothing: the bytes stay in the FIFO until the journal takes them.
    if (log_limiter_.Allow("write:" + j.decoder.journal().dir().string(), suppressed)) {
      spdlog::error(
          "{}: the journal refuses bytes: {}; loki-on-full=block: the container waits until "
          "it takes them again{}",
          session.path, error.what(), Suppressed(suppressed));
    }
    if (!session.blocked) {
      session.blocked = true;
      Unpoll(session.fd.get());
    }
    return true;
  }
  if (log_limiter_.Allow("write:" + j.decoder.journal().dir().string(), suppressed)) {
    spdlog::error(
        "{}: the journal refuses bytes: {}; the container's lines go on in memory (no docker "
        "logs for them; the container waits for Loki when it is behind, and lines are dropped "
        "as disk_full while Loki is away) until the journal takes bytes again{}",
        session.path, error.what(), Suppressed(suppressed));
  }
  // The segment may end inside a frame whose rest is still in the FIFO: that frame's start
  // goes on in memory with it.
  std::string pending;
  try {
    pending = session.writer->CutAtFrameBoundary();
  } catch (const std::system_error& e) {
    spdlog::error("{}: {}; the frame it was writing is skipped", session.path, e.what());
  }
  session.writer->Seal();
  session.writer.reset();
  if (!session.memory) session.memory = std::make_unique<MemoryFallback>();
  session.memory->Start(std::move(pending), j.decoder.max_line_bytes());
  if (session.blocked) {
    session.blocked = false;
    Repoll(session.fd.get());
  }
  return FeedMemory(session, j);
}

bool FifoReader::TryResumeJournal(Session& session, Journaled& j) {
  std::unique_ptr<Journal::Writer> writer;
  try {
    writer = j.decoder.journal().StartWriter(session.path);
    // The start of a frame whose rest is in the FIFO: the new segment begins with it.
    if (!session.memory->pending().empty()) writer->Append(session.memory->pending());
  } catch (const std::system_error& e) {
    if (writer) writer->Seal();
    session.retry_at = std::chrono::steady_clock::now() + kJournalRetry;
    write_errors_.Add();
    uint64_t suppressed = 0;
    if (log_limiter_.Allow("write:" + j.decoder.journal().dir().string(), suppressed)) {
      spdlog::error("{}: the journal still refuses bytes: {}; going on in memory{}", session.path,
                    e.what(), Suppressed(suppressed));
    }
    return false;
  }
  spdlog::info("{}: the journal takes bytes again; journaling resumed", session.path);
  session.memory->Finish();  // a line open in memory ends here; the journal goes on
  decode_counters_.ReportAssembler(session.memory->assembler(), session.memory->reported());
  HandOverMemory(session, j);
  session.writer = std::move(writer);
  return true;
}

bool FifoReader::FeedMemory(Session& session, Journaled& j) {
  if (std::chrono::steady_clock::now() >= session.retry_at && TryResumeJournal(session, j)) {
    return Feed(session, j);
  }
  MemoryFallback& memory = *session.memory;
  // Loki takes lines: a full queue holds the FIFO rather than dropping lines Loki could take.
  const bool hold = sink_.LokiTakesLines(j.decoder.id());
  std::size_t moved = 0;
  bool eof = false;
  while (moved < hand_over::kRoundBytes) {
    if (hold && memory.queued_bytes() >= MemoryFallback::kMaxQueuedBytes) break;
    const ssize_t n = read(session.fd.get(), read_buffer_.get(), kReadBufferBytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) {
        spdlog::error("reading {} failed: {}", session.path, std::strerror(errno));
        eof = true;
      }
      break;
    }
    if (n == 0) {
      eof = true;
      break;
    }
    moved += static_cast<std::size_t>(n);
    round_bytes_ += static_cast<std::size_t>(n);
    bytes_read_.Add(static_cast<uint64_t>(n));
    if (const uint64_t skipped =
            memory.Decode(std::string_view(read_buffer_.get(), static_cast<std::size_t>(n)));
        skipped > 0) {
      decode_counters_.torn_bytes.Add(skipped);
    }
    if (static_cast<std::size_t>(n) < kReadBufferBytes) break;
  }
  if (eof) memory.Finish();
  decode_counters_.ReportAssembler(memory.assembler(), memory.reported());
  HandOverMemory(session, j, /*all=*/eof);
  if (!eof && hold && memory.queued_bytes() >= MemoryFallback::kMaxQueuedBytes && !session.held) {
    session.held = true;
    Unpoll(session.fd.get());
  }
  return !eof;
}

bool FifoReader::MayRelease(Session& session, Journaled& j) {
  HandOverMemory(session, j);
  return session.memory->queued_bytes() < MemoryFallback::kMaxQueuedBytes ||
         !sink_.LokiTakesLines(j.decoder.id()) ||
         std::chrono::steady_clock::now() >= session.retry_at;
}

void FifoReader::HandOverMemory(Session& session, Journaled& j, bool all) {
  if (!session.memory) return;
  MemoryFallback& memory = *session.memory;
  // While Loki takes lines, a full queue holds the FIFO instead (FeedMemory); at the end of the
  // session every line goes.
  const uint64_t dropped = all || sink_.LokiTakesLines(j.decoder.id()) ? 0 : memory.DropOverflow();
  if (dropped > 0) {
    decode_counters_.lines_read.Add(dropped);
    disk_full_lines_.Add(dropped);
    uint64_t suppressed = 0;
    if (log_limiter_.Allow("disk_full:" + j.decoder.journal().dir().string(), suppressed)) {
      spdlog::warn(
          "{}: the journal cannot be written and Loki is away; {} lines dropped (disk_full){}",
          session.path, dropped, Suppressed(suppressed));
    }
  }
  std::vector<LogLine> handover;
  // At the end of the session the rest goes whatever the window (it is at most
  // MemoryFallback::kMaxQueuedBytes): the session and its queue are about to go.
  while (!memory.empty() && (all || sink_.WantsLines(j.decoder.id()))) {
    memory.TakeHandOver(handover);
    decode_counters_.lines_read.Add(handover.size());
    sink_.OnLines(j.decoder.id(), handover, j.decoder.Resume());
  }
}

void FifoReader::FeedAndMaybeEnd(Session& session, Journaled& j) {
  bool alive;
  try {
    alive = Feed(session, j);
  } catch (const std::exception& e) {
    // Not an expected I/O error (those are handled in Feed): hold this session back a moment.
    loop_errors_.Add();
    uint64_t suppressed = 0;
    if (log_limiter_.Allow("feed:" + session.path, suppressed)) {
      spdlog::error("{}: {}; retrying in a second{}", session.path, e.what(),
                    Suppressed(suppressed));
    }
    session.retry_at = std::chrono::steady_clock::now() + kJournalRetry;
    if (!session.blocked) {
      session.blocked = true;
      Unpoll(session.fd.get());
    }
    alive = true;
  }
  if (!alive) {
    spdlog::debug("{}: end of file", session.path);
    HandOverMemory(session, j, /*all=*/true);  // lines queued while the journal refused bytes
    const int fd = session.fd.get();
    absl::MutexLock lock(&mu_);
    --j.sessions;
    epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, fd, nullptr);
    sessions_.erase(fd);  // closes it; `session` is gone from here on; see Close()
  }
  j.decoder.more = true;  // decoded once per loop round
}

void FifoReader::HandOver(Stream& s) {
  if (s.lines.empty()) return;
  decode_counters_.lines_read.Add(s.lines.size());
  sink_.OnLines(s.id, s.lines, JournalPosition{});
  s.lines.clear();
}

bool FifoReader::Decode(Journaled& j) {
  return j.decoder.Decode([this, &j] {
    absl::MutexLock lock(&mu_);
    if (j.sessions > 0) return false;  // a FIFO still feeds the journal
    j.ended = true;
    return true;
  });
}

bool FifoReader::DecodeRead(Stream& s, std::size_t n, std::size_t& handover_bytes) {
  // Decode straight from the read buffer; only a frame cut by the read waits in s.buffer.
  const bool buffered = !s.buffer.empty();
  if (buffered) s.buffer.append(read_buffer_.get(), n);
  std::string_view rest =
      buffered ? std::string_view(s.buffer) : std::string_view(read_buffer_.get(), n);
  std::string_view body;
  std::size_t used;
  for (;;) {
    FrameStatus st = NextFrame(rest, &body, &used);
    if (st == FrameStatus::kNeedMore) break;
    auto entry = st == FrameStatus::kOk ? DecodeLogEntry(body) : std::nullopt;
    if (!entry) {
      spdlog::error("{}: {} frame; closing this stream", s.path,
                    st == FrameStatus::kTooLarge ? "oversized (over 1 MiB)" : "undecodable");
      return false;
    }
    const std::size_t before = s.lines.size();
    s.assembler.Add(*entry, s.lines);
    rest.remove_prefix(used);
    handover_bytes += hand_over::LineBytesFrom(s.lines, before);
    if (hand_over::Full(s.lines.size(), handover_bytes)) {
      HandOver(s);
      handover_bytes = 0;
    }
  }
  if (buffered) {
    s.buffer.erase(0, s.buffer.size() - rest.size());
  } else {
    s.buffer.assign(rest.data(), rest.size());
  }
  return true;
}

bool FifoReader::Drain(Stream& s) {
  bool eof = false, corrupt = false;
  std::size_t handover_bytes = 0;  // of s.lines
  // After hand_over::kRoundBytes the other FIFOs have their turn (epoll reports this one again).
  bool hold = false;
  for (std::size_t round = 0; round < hand_over::kRoundBytes;) {
    if (sink_.HoldsMemoryStream(s.id)) {
      hold = true;
      break;
    }
    ssize_t n = read(s.fd.get(), read_buffer_.get(), kReadBufferBytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) break;
      spdlog::error("reading {} failed: {}", s.path, std::strerror(errno));
      eof = true;
      break;
    }
    if (n == 0) {
      eof = true;
      break;
    }
    bytes_read_.Add(static_cast<uint64_t>(n));
    round_bytes_ += static_cast<std::size_t>(n);
    round += static_cast<std::size_t>(n);
    if (!DecodeRead(s, static_cast<std::size_t>(n), handover_bytes)) {
      corrupt = true;
      break;
    }
    if (static_cast<std::size_t>(n) < kReadBufferBytes) break;  // drained for now
  }
  if (eof || corrupt) s.assembler.Finish(s.lines);
  decode_counters_.ReportAssembler(s.assembler, s.reported);
  HandOver(s);
  if (corrupt) decode_counters_.corrupt_streams.Add();
  if (eof || corrupt) {
    if (eof && !s.buffer.empty()) {
      spdlog::warn("{}: the stream ended inside a frame; {} bytes of it dropped", s.path,
                   s.buffer.size());
    }
    sink_.OnEnd(s.id, corrupt);
    return false;
  }
  if (hold && !s.held) {
    s.held = true;
    Unpoll(s.fd.get());  // looked at again in the loop
  }
  return true;
}

// The loop, round by round: wait (as long as nothing is due), drain the FIFOs that woke it,
// look again at what waits on the sink or the journal, decode the journals with lines to give,
// run the driver's maintenance when it is due, and let a FIFO that brought little fill up.
void FifoReader::Loop() {
  epoll_event events[64];
  Revisits revisits;
  auto last_paused_retry = std::chrono::steady_clock::now();
  while (!stopping_.load()) {
    LoopHooks hooks;
    const int timeout_ms = NextWaitMs(&hooks);
    const int n = epoll_wait(epoll_fd_.get(), events, 64, timeout_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      spdlog::critical("epoll_wait: {}", std::strerror(errno));
      return;
    }
    round_bytes_ = 0;
    const RoundEvents round = HandleEvents(events, n);
    // Paused streams are looked at again when the sink says it has room (Wake); those that
    // met a read error after kPausedRetry: not on every round, which a busy FIFO makes
    // frequent.
    const auto now = std::chrono::steady_clock::now();
    const bool retry_due = now - last_paused_retry >= kPausedRetry;
    if (retry_due) last_paused_retry = now;
    Revisit(revisits, round.woken, retry_due);
    DecodeJournals(revisits.to_decode, hooks.decode_hook);
    RunTickIfDue(hooks.tick);
    // dockerd writes one frame per write(2): a FIFO that woke the loop for a few frames is
    // given a moment to fill (its pipe holds far more than this many bytes), so that one
    // wake-up moves many frames. Lines wait at most kCoalesceDelay longer; at a rate where
    // every round moves kCoalesceBytes or more, nothing waits.
    if (round.fifo_events > 0 && round_bytes_ < kCoalesceBytes && !stopping_.load()) {
      std::this_thread::sleep_for(kCoalesceDelay);
    }
  }
}

int FifoReader::NextWaitMs(LoopHooks* hooks) {
  // Streams with more to read go on at once; blocked ones and those the journal could not
  // hand bytes to are retried soon. Streams paused for the sink's window wait for Wake()
  // (acknowledgements free it), so a Loki outage costs no wake-up here.
  int timeout_ms = -1;
  {
    absl::MutexLock lock(&mu_);
    hooks->tick = tick_;
    hooks->decode_hook = decode_hook_;
    bool any_more = false, any_retry = false, any_blocked = false, any_held = false;
    for (auto& [id, j] : journaled_) {
      any_more |= j->decoder.more;
      any_retry |= j->decoder.retry;
    }
    for (auto& [fd, s] : sessions_) {
      any_blocked |= s->blocked;
      any_held |= s->held;
    }
    for (auto& [fd, s] : streams_) any_held |= s->held;
    if (any_more) {
      timeout_ms = 0;
    } else if (any_blocked) {
      timeout_ms = 20;
    } else if (any_held) {
      // Acknowledgements wake the loop (Wake); this notices Loki going away meanwhile.
      timeout_ms = static_cast<int>(kHeldRecheck.count());
    } else if (any_retry) {
      timeout_ms = static_cast<int>(kPausedRetry.count());
    }
  }
  if (hooks->tick) {
    if (const int t = timer_.MsUntilDue(); t >= 0) {
      timeout_ms = timeout_ms < 0 ? t : std::min(timeout_ms, t);
    }
  }
  return timeout_ms;
}

FifoReader::RoundEvents FifoReader::HandleEvents(const epoll_event* events, int n) {
  RoundEvents round;
  for (int i = 0; i < n; ++i) {
    const int fd = events[i].data.fd;
    if (fd == wake_fd_.get()) {
      uint64_t count;
      [[maybe_unused]] auto r = read(wake_fd_.get(), &count, sizeof count);
      round.woken = true;
      continue;
    }
    Stream* s = nullptr;
    Session* session = nullptr;
    Journaled* j = nullptr;
    {
      absl::MutexLock lock(&mu_);
      if (auto it = streams_.find(fd); it != streams_.end()) {
        s = it->second.get();
      } else if (auto it2 = sessions_.find(fd); it2 != sessions_.end()) {
        session = it2->second.get();
        j = journaled_.at(session->stream_id).get();
      }
    }
    if (s != nullptr) {
      ++round.fifo_events;
      DrainAndMaybeClose(*s);
      continue;
    }
    if (session == nullptr) continue;
    ++round.fifo_events;
    FeedAndMaybeEnd(*session, *j);
  }
  return round;
}

void FifoReader::Revisit(Revisits& r, bool woken, bool retry_due) {
  r.blocked.clear();
  r.held.clear();
  r.held_streams.clear();
  r.to_decode.clear();
  r.waiting.clear();
  {
    absl::MutexLock lock(&mu_);
    for (auto& [fd, s] : streams_) {
      if (s->held) r.held_streams.push_back(s.get());
    }
    for (auto& [fd, s] : sessions_) {
      if (s->blocked) r.blocked.push_back(s.get());
      if (s->held) {
        r.held.push_back(s.get());
      } else if (s->memory && !s->memory->empty() && woken) {
        r.waiting.push_back(s.get());
      }
    }
    for (auto& [id, j] : journaled_) {
      if (j->decoder.more || (j->decoder.paused && woken) || (j->decoder.retry && retry_due)) {
        r.to_decode.push_back(j.get());
      }
    }
  }
  // Sessions end only on this thread, in FeedAndMaybeEnd: hand over before feeding.
  for (Session* session : r.waiting) {
    HandOverMemory(*session, JournaledOf(*session));
  }
  // Blocked sessions (loki-on-full=block): try again.
  for (Session* session : r.blocked) {
    FeedAndMaybeEnd(*session, JournaledOf(*session));
  }
  for (Session* session : r.held) {
    Journaled& j = JournaledOf(*session);
    if (!MayRelease(*session, j)) continue;
    session->held = false;
    Repoll(session->fd.get());
    FeedAndMaybeEnd(*session, j);  // holds it again when the queue is still full
  }
  // Memory streams the sink held: read again once it lets them (Drain holds them again).
  for (Stream* s : r.held_streams) {
    if (sink_.HoldsMemoryStream(s->id)) continue;
    s->held = false;
    Repoll(s->fd.get());
    DrainAndMaybeClose(*s);
  }
}

void FifoReader::DecodeJournals(const std::vector<Journaled*>& to_decode,
                                const std::function<void(const std::string&)>& decode_hook) {
  for (Journaled* j : to_decode) {
    bool alive = true;
    if (decode_hook) decode_hook(j->decoder.journal().dir().filename().string());
    try {
      alive = Decode(*j);
    } catch (const std::exception& e) {
      // Not an expected I/O error (the journal reader reports those): look again later.
      loop_errors_.Add();
      uint64_t suppressed = 0;
      if (log_limiter_.Allow("decode:" + j->decoder.journal().dir().string(), suppressed)) {
        spdlog::error("journal {}: {}; retrying{}", j->decoder.journal().dir().string(), e.what(),
                      Suppressed(suppressed));
      }
      j->decoder.more = false;
      j->decoder.retry = true;
    }
    if (decode_hook) decode_hook("");
    if (!alive) {
      absl::MutexLock lock(&mu_);
      journaled_.erase(j->decoder.id());
    }
  }
}

void FifoReader::RunTickIfDue(const std::function<std::chrono::milliseconds()>& tick) {
  timer_.RunIfDue(tick, [this](const std::exception& e) {
    loop_errors_.Add();
    spdlog::error("journal maintenance: {}", e.what());
  });
}

}  // namespace skald
