#include "plugin/fifo_reader.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "plugin/frame_codec.h"

namespace skald {

namespace {
constexpr std::size_t kReadChunk = 256 * 1024;
constexpr int kPipeBytes = 1024 * 1024;  // fewer wake-ups per MB; best effort
}  // namespace

struct FifoReader::Stream {
  uint64_t id;
  int fd;
  std::string path;
  std::string buffer;  // bytes read, not yet decoded (an incomplete frame at most)
  LineAssembler assembler;
  std::vector<LogLine> lines;
  AssemblerCounts reported;
};

FifoReader::FifoReader(LineSink& sink, MetricsRegistry& metrics)
    : sink_(sink),
      chunk_(std::make_unique<char[]>(kReadChunk)),
      lines_read_(metrics.GetCounter("skald_lines_read_total",
                                     "Log lines read from containers (after partial-line "
                                     "assembly; a line cut at loki-max-line-size counts once "
                                     "per piece).")),
      bytes_read_(
          metrics.GetCounter("skald_fifo_bytes_read_total", "Bytes read from container FIFOs.")),
      blank_lines_(metrics.GetCounter("skald_entries_dropped_total",
                                      "Entries not delivered, by reason.",
                                      {{"reason", "blank_line"}})),
      split_lines_(metrics.GetCounter("skald_lines_split_total",
                                      "Lines longer than loki-max-line-size sent as pieces.")),
      corrupt_streams_(metrics.GetCounter("skald_streams_corrupt_total",
                                          "FIFO streams closed because a frame did not decode.")) {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || wake_fd_ < 0)
    throw std::system_error(errno, std::generic_category(), "epoll");
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_fd_;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  thread_ = std::thread([this] { Loop(); });
}

FifoReader::~FifoReader() {
  Stop();
  for (auto& [fd, s] : streams_) close(fd);
  close(wake_fd_);
  close(epoll_fd_);
}

void FifoReader::Stop() {
  if (stopping_.exchange(true)) return;
  uint64_t one = 1;
  [[maybe_unused]] auto n = write(wake_fd_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
}

void FifoReader::Add(uint64_t stream_id, const std::string& path, std::size_t max_line_bytes) {
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "open FIFO " + path);
  fcntl(fd, F_SETPIPE_SZ, kPipeBytes);
  auto s = std::unique_ptr<Stream>(
      new Stream{stream_id, fd, path, {}, LineAssembler(max_line_bytes), {}, {}});
  {
    std::lock_guard lock(mu_);
    streams_[fd] = std::move(s);
  }
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.fd = fd;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    int err = errno;
    std::lock_guard lock(mu_);
    streams_.erase(fd);
    close(fd);
    throw std::system_error(err, std::generic_category(), "epoll_ctl " + path);
  }
}

void FifoReader::Close(int fd) {
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  close(fd);
  std::lock_guard lock(mu_);
  streams_.erase(fd);
}

bool FifoReader::Drain(Stream& s) {
  bool eof = false, corrupt = false;
  for (;;) {
    ssize_t n = read(s.fd, chunk_.get(), kReadChunk);
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
    // Decode straight from the chunk; only a frame cut by the read waits in s.buffer.
    const bool buffered = !s.buffer.empty();
    if (buffered) s.buffer.append(chunk_.get(), static_cast<std::size_t>(n));
    std::string_view rest = buffered ? std::string_view(s.buffer)
                                     : std::string_view(chunk_.get(), static_cast<std::size_t>(n));
    std::string_view body;
    std::size_t used;
    for (;;) {
      FrameStatus st = NextFrame(rest, &body, &used);
      if (st == FrameStatus::kNeedMore) break;
      auto entry = st == FrameStatus::kOk ? DecodeLogEntry(body) : std::nullopt;
      if (!entry) {
        spdlog::error("{}: {} frame; closing this stream", s.path,
                      st == FrameStatus::kTooLarge ? "oversized (over 1 MiB)" : "undecodable");
        corrupt = true;
        break;
      }
      s.assembler.Add(*entry, s.lines);
      rest.remove_prefix(used);
    }
    if (corrupt) break;
    if (buffered) {
      s.buffer.erase(0, s.buffer.size() - rest.size());
    } else {
      s.buffer.assign(rest.data(), rest.size());
    }
    if (static_cast<std::size_t>(n) < kReadChunk) break;  // drained for now
  }
  if (eof || corrupt) s.assembler.Finish(s.lines);
  const AssemblerCounts& c = s.assembler.counts();
  blank_lines_.Add(c.blank_lines - s.reported.blank_lines);
  split_lines_.Add(c.split_lines - s.reported.split_lines);
  lines_read_.Add(c.blank_lines - s.reported.blank_lines);
  s.reported = c;
  if (!s.lines.empty()) {
    lines_read_.Add(s.lines.size());
    sink_.OnLines(s.id, s.lines);
    s.lines.clear();
  }
  if (corrupt) corrupt_streams_.Add();
  if (eof || corrupt) {
    if (eof && !s.buffer.empty()) {
      spdlog::warn("{}: the stream ended inside a frame; {} bytes of it dropped", s.path,
                   s.buffer.size());
    }
    sink_.OnEnd(s.id, corrupt);
    return false;
  }
  return true;
}

void FifoReader::Loop() {
  epoll_event events[64];
  while (!stopping_.load()) {
    int n = epoll_wait(epoll_fd_, events, 64, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      spdlog::critical("epoll_wait: {}", std::strerror(errno));
      return;
    }
    for (int i = 0; i < n; ++i) {
      int fd = events[i].data.fd;
      if (fd == wake_fd_) continue;
      Stream* s;
      {
        std::lock_guard lock(mu_);
        auto it = streams_.find(fd);
        if (it == streams_.end()) continue;
        s = it->second.get();
      }
      if (!Drain(*s)) Close(fd);
    }
  }
}

}  // namespace skald
