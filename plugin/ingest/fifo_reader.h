// FifoReader: one epoll loop that drains every container's FIFO.
//
// Two kinds of streams:
// - Journal streams (the default): each FIFO session moves its bytes into the container's
//   Journal with splice(2) as soon as the FIFO is readable — bytes leave the FIFO only into the
//   journal — and the stream decodes the journal from its position on (page cache when caught
//   up, the disk when behind) into whole lines (LineAssembler). Decoding pauses while the sink
//   does not want more lines (its in-memory window is full: Loki is slow or away); the FIFOs
//   are still drained into the journal. Several sessions may feed one stream (a container
//   restarted while its old FIFO drains, daemon live-restore); the stream ends when every
//   session reached end of file and the journal is read to its end.
// - Memory streams (no-file=true, or a journal that could not be made): the FIFO is read into
//   memory and decoded at once; the sink may hold one unread (LineSink::HoldsMemoryStream).
// A frame over 1 MiB or one that does not decode never crashes the plugin: a memory stream
// ends (OnEnd with `corrupt`), a journal stream skips to the next segment; both are counted.
// The loop never waits for anything but the FIFOs and its own tick, so a slow Loki can never
// stop it from draining them. It has no timer of its own: idle (every FIFO quiet, no stream
// paused on an I/O error, no tick asked for) it sleeps until a FIFO or Wake() wakes it; a
// stream paused for the sink's window waits for Wake().
//
// When the journal cannot be written (disk full, an I/O error, its directory removed), a
// session goes on in memory: with loki-on-full=drop (the default) its FIFO is read and its
// lines handed to the sink at once, at most 1 MiB of them waiting for the sink's window
// (plugin/ingest/memory_fallback.h). When that is full, the FIFO is held while the sink says Loki
// takes lines (LineSink::LokiTakesLines: the container waits at Loki's pace), and the oldest
// lines are dropped, counted as `disk_full`, while Loki is away. The journal is tried again
// every second; with loki-on-full=block the bytes stay in the FIFO (the
// container blocks, as the user chose) until the journal takes them. Errors are logged
// rate-limited. No I/O error or exception leaves the loop's thread: it is logged and that stream
// alone is held back.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>
#include <sys/epoll.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "plugin/common/log_limiter.h"
#include "plugin/common/posix_file.h"
#include "plugin/ingest/decode_counters.h"
#include "plugin/ingest/journal_stream_decoder.h"
#include "plugin/ingest/line_assembler.h"
#include "plugin/ingest/line_sink.h"
#include "plugin/ingest/loop_timer.h"
#include "plugin/journal/journal.h"
#include "plugin/journal/journal_writer.h"
#include "plugin/metrics/metrics.h"

namespace skald {

class FifoReader {
 public:
  FifoReader(LineSink& sink, MetricsRegistry& metrics);
  ~FifoReader();  // Stop()
  FifoReader(const FifoReader&) = delete;
  FifoReader& operator=(const FifoReader&) = delete;

  // Memory stream: opens `path` (O_RDONLY | O_NONBLOCK) and starts draining it. Throws
  // std::system_error naming the path when it cannot be opened.
  void Add(uint64_t stream_id, const std::string& path, std::size_t max_line_bytes)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Journal stream: decodes `journal` from `from` on. It ends once it has no session left and
  // the journal is read to its end (so a stream with no session replays and ends).
  void AddJournalStream(uint64_t stream_id, std::shared_ptr<Journal> journal, JournalPosition from,
                        std::size_t max_line_bytes) ABSL_LOCKS_EXCLUDED(mu_);
  // Attaches a FIFO session to a journal stream. Returns false (and takes nothing) when the
  // stream has already ended. Throws std::system_error naming the path when it cannot open it.
  // `writer` is moved from only on success.
  bool AddSession(uint64_t stream_id, const std::string& fifo_path,
                  std::unique_ptr<Journal::Writer>& writer) ABSL_LOCKS_EXCLUDED(mu_);

  // Runs `tick` on the loop thread, once at once and then when it is due: `tick` returns how
  // long until it wants to run again (kNoTick: not until TickWithin() asks).
  static constexpr std::chrono::milliseconds kNoTick = LoopTimer::kNever;
  void SetTick(std::function<std::chrono::milliseconds()> tick) ABSL_LOCKS_EXCLUDED(mu_);
  // Called on the loop thread with the container id (the journal directory's name) before a
  // journal is decoded, and with "" after (the crash-loop guard's attribution).
  void SetDecodeHook(std::function<void(const std::string&)> hook) ABSL_LOCKS_EXCLUDED(mu_);
  // Asks for a tick within `delay` (one due sooner stays due). Thread-safe, takes no lock.
  void TickWithin(std::chrono::milliseconds delay);
  // Asks for a tick within `delay` once bytes are next moved from a FIFO into a journal
  // (once). Thread-safe, takes no lock.
  void TickWhenJournaled(std::chrono::milliseconds delay);
  // Bytes moved from FIFOs into journals so far.
  uint64_t JournaledBytes() const { return journaled_bytes_.load(); }

  // The sink wants lines again: resume paused journal streams.
  void Wake();

  // Stops the loop; streams still open get no OnEnd. Writers are left unsealed (resumed at
  // the next start).
  void Stop();

 private:
  struct Stream;     // a memory stream
  struct Journaled;  // a journal stream
  struct Session;    // a FIFO feeding a journal stream
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);
  // The loop's phases (plugin/ingest/fifo_reader.cc, Loop), all on the loop thread.
  // What the round runs with, read under the lock once a round.
  struct LoopHooks {
    std::function<std::chrono::milliseconds()> tick;
    std::function<void(const std::string&)> decode_hook;
  };
  // How long epoll may wait: 0 while a stream has more to decode, a short retry while one is
  // blocked, held or paused after an error, until the next tick; -1: until a FIFO or Wake().
  int NextWaitMs(LoopHooks* hooks) ABSL_LOCKS_EXCLUDED(mu_);
  struct RoundEvents {
    int fifo_events = 0;  // FIFOs drained this round
    bool woken = false;   // Wake() was called
  };
  // Drains the FIFOs epoll reported.
  RoundEvents HandleEvents(const epoll_event* events, int n) ABSL_LOCKS_EXCLUDED(mu_);
  // The lists a round looks at again (kept across rounds for their capacity).
  struct Revisits {
    std::vector<Session*> blocked;      // loki-on-full=block, the journal full
    std::vector<Session*> held;         // memory mode, the queue full
    std::vector<Stream*> held_streams;  // memory streams the sink holds
    std::vector<Session*> waiting;      // memory mode, lines queued for the sink
    std::vector<Journaled*> to_decode;  // journal streams with lines to decode
  };
  // Hands over, feeds and releases what waits on the sink or the journal; fills to_decode.
  void Revisit(Revisits& r, bool woken, bool retry_due) ABSL_LOCKS_EXCLUDED(mu_);
  // Decodes each journal stream in turn (an unexpected error is logged, counted and retried).
  void DecodeJournals(const std::vector<Journaled*>& to_decode,
                      const std::function<void(const std::string&)>& decode_hook)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Runs the driver's maintenance when its time has come, and asks for the next.
  void RunTickIfDue(const std::function<std::chrono::milliseconds()>& tick);
  // Returns false when the memory stream has ended (EOF or corrupt).
  bool Drain(Stream& s);
  // Decodes the `n` bytes Drain read into read_buffer_ (after what s.buffer holds of a cut
  // frame), handing lines over as they fill a hand-over. False: a frame was oversized or did
  // not decode (logged; the stream is corrupt). Keeps the frame the read cut in s.buffer.
  bool DecodeRead(Stream& s, std::size_t n, std::size_t& handover_bytes);
  // The journal stream `session` feeds (it outlives its sessions).
  Journaled& JournaledOf(const Session& session) ABSL_LOCKS_EXCLUDED(mu_);
  // Drain(), and when the stream ended, closes and forgets it (an exception is logged and
  // counted; the stream stays).
  void DrainAndMaybeClose(Stream& s) ABSL_LOCKS_EXCLUDED(mu_);
  // A blocked session's FIFO leaves the epoll set until it can move again (Repoll).
  void Unpoll(int fd);
  void Repoll(int fd);
  // Moves a session's FIFO into its journal. Returns false when the session ended.
  bool Feed(Session& session, Journaled& j);
  // The journal refused bytes: block, or go on in memory (see the header comment).
  bool OnWriteError(Session& session, Journaled& j, const std::system_error& error);
  // Memory mode: reads the FIFO, decodes it and hands its lines over.
  bool FeedMemory(Session& session, Journaled& j);
  // Memory mode: starts journaling again when the journal takes bytes. True on success.
  bool TryResumeJournal(Session& session, Journaled& j);
  // Memory mode: hands queued lines to the sink as far as its window lets (`all`: every one).
  void HandOverMemory(Session& session, Journaled& j, bool all = false);
  // A held session: hands queued lines over; true when it may read its FIFO again (the queue
  // has room, Loki stopped taking lines, or the journal is due to be tried).
  bool MayRelease(Session& session, Journaled& j);
  // Feed(), and when the session ended, closes and forgets it.
  void FeedAndMaybeEnd(Session& session, Journaled& j) ABSL_LOCKS_EXCLUDED(mu_);
  // Decodes what the stream may; returns false when the stream ended (and was reported).
  bool Decode(Journaled& j) ABSL_LOCKS_EXCLUDED(mu_);
  // Gives a memory stream's lines decoded so far to the sink.
  void HandOver(Stream& s);
  void Close(int fd) ABSL_LOCKS_EXCLUDED(mu_);
  // epoll_ctl(op) of `fd` for `events` (0: registered, not polled). Returns 0 or the errno.
  int Watch(int fd, uint32_t events, int op);

  LineSink& sink_;
  std::unique_ptr<char[]> read_buffer_;  // used by the loop thread only
  std::size_t round_bytes_ = 0;          // bytes taken from FIFOs in this loop round (loop thread)
  DecodeCounters decode_counters_;
  Counter& bytes_read_;
  Counter& write_errors_;
  Counter& disk_full_lines_;
  Counter& loop_errors_;
  LogLimiter log_limiter_;
  UniqueFd epoll_fd_;
  UniqueFd wake_fd_;
  std::atomic<bool> stopping_{false};
  // The maps (entries are added by other threads, removed by the loop's), a journal stream's
  // session count and end, the tick. What the entries hold is the loop thread's.
  absl::Mutex mu_;
  std::unordered_map<int, std::unique_ptr<Stream>> streams_ ABSL_GUARDED_BY(mu_);    // by fd
  std::unordered_map<int, std::unique_ptr<Session>> sessions_ ABSL_GUARDED_BY(mu_);  // by fd
  // By stream id.
  std::unordered_map<uint64_t, std::unique_ptr<Journaled>> journaled_ ABSL_GUARDED_BY(mu_);
  std::function<std::chrono::milliseconds()> tick_ ABSL_GUARDED_BY(mu_);
  std::function<void(const std::string&)> decode_hook_ ABSL_GUARDED_BY(mu_);
  LoopTimer timer_;  // when the tick is due
  std::atomic<uint64_t> journaled_bytes_{0};
  std::thread thread_;
};

}  // namespace skald
