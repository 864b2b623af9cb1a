// FifoReader: one epoll loop that drains every container's FIFO.
//
// Each registered FIFO is read in large chunks as soon as it is readable, decoded into frames
// and assembled into whole lines (LineAssembler), which go to the LineSink together with the
// stream's id. At end of file the unfinished partial lines are flushed and the sink hears
// OnEnd(). A frame over 1 MiB or one that does not decode ends the stream with a counted,
// logged error (OnEnd with `corrupt` set); it never crashes the plugin. The loop never waits
// for anything but the FIFOs, so a slow Loki can never stop it from draining them.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "plugin/line_assembler.h"
#include "plugin/metrics.h"

namespace skald {

class LineSink {
 public:
  virtual ~LineSink() = default;
  // Called on the reader thread; `lines` may be moved from.
  virtual void OnLines(uint64_t stream_id, std::vector<LogLine>& lines) = 0;
  virtual void OnEnd(uint64_t stream_id, bool corrupt) = 0;
};

class FifoReader {
 public:
  FifoReader(LineSink& sink, MetricsRegistry& metrics);
  ~FifoReader();  // Stop()
  FifoReader(const FifoReader&) = delete;
  FifoReader& operator=(const FifoReader&) = delete;

  // Opens `path` (O_RDONLY | O_NONBLOCK) and starts draining it. Throws std::system_error
  // naming the path when it cannot be opened.
  void Add(uint64_t stream_id, const std::string& path, std::size_t max_line_bytes);

  // Stops the loop; streams still open get no OnEnd.
  void Stop();

 private:
  struct Stream;
  void Loop();
  // Returns false when the stream has ended (EOF or corrupt).
  bool Drain(Stream& s);
  void Close(int fd);

  LineSink& sink_;
  std::unique_ptr<char[]> chunk_;  // read buffer, used by the loop thread only
  Counter& lines_read_;
  Counter& bytes_read_;
  Counter& blank_lines_;
  Counter& split_lines_;
  Counter& corrupt_streams_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::unordered_map<int, std::unique_ptr<Stream>> streams_;  // by fd
  std::thread thread_;
};

}  // namespace skald
