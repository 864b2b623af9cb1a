// JournalFixture: what the journal's tests (journal_test, journal_frame_reader_test) stand on:
// a temporary state directory with one container's journal directory, a FIFO opened as dockerd
// and the plugin hold it, frames of numbered lines and a reader loop.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "plugin/ingest/frame_codec.h"
#include "plugin/journal/journal.h"
#include "plugin/journal/journal_frame_reader.h"
#include "tests/plugin/plugin_test_support.h"

namespace skald::journal_testkit {

namespace fs = std::filesystem;

inline std::string Frame(std::string_view line) {
  return testkit::StdoutFrame(line, 1700000000000000000);
}

inline std::string LineText(int i) {
  return "line " + std::to_string(i) + std::string(i % 7 * 3, 'x');
}

inline std::string Frames(int from, int to) {
  std::string out;
  for (int i = from; i < to; ++i) out += Frame(LineText(i));
  return out;
}

inline std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline void WriteFile(const fs::path& p, std::string_view data) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << data;
}

inline fs::path SegPath(const fs::path& dir, uint64_t seq) {
  char name[32];
  std::snprintf(name, sizeof name, "%010llu.seg", static_cast<unsigned long long>(seq));
  return dir / name;
}

struct ReadResult {
  std::vector<std::string> lines;
  std::vector<JournalPosition> starts;
  JournalFrameReader::Status last;
};

// Reads frames until the reader stops returning them.
inline ReadResult ReadFrames(JournalFrameReader& reader) {
  ReadResult r;
  for (;;) {
    std::string_view body;
    JournalPosition start;
    r.last = reader.Next(&body, &start);
    if (r.last != JournalFrameReader::Status::kFrame) return r;
    auto entry = DecodeLogEntry(body);
    EXPECT_TRUE(entry) << "frame at " << start.segment << ":" << start.offset;
    r.lines.emplace_back(entry ? entry->line : "<bad>");
    r.starts.push_back(start);
  }
}

inline std::vector<std::string> Lines(int from, int to) {
  std::vector<std::string> out;
  for (int i = from; i < to; ++i) out.push_back(LineText(i));
  return out;
}

inline int FifoBytes(int fd) {
  int n = -1;
  EXPECT_EQ(ioctl(fd, FIONREAD, &n), 0);
  return n;
}

inline void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    ASSERT_GT(n, 0);
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

class JournalFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/journal_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    tmp_ = tmpl;
    dir_ = tmp_ / "containers" / "c1";
  }
  void TearDown() override {
    for (int fd : fds_) close(fd);
    fs::remove_all(tmp_);
  }

  // A FIFO with a non-blocking read end and a write end, as dockerd and the plugin hold them.
  void MakeFifo() {
    fifo_ = (tmp_ / "fifo").string();
    ASSERT_EQ(mkfifo(fifo_.c_str(), 0600), 0);
    rd_ = open(fifo_.c_str(), O_RDONLY | O_NONBLOCK);
    ASSERT_GE(rd_, 0);
    wr_ = open(fifo_.c_str(), O_WRONLY);
    ASSERT_GE(wr_, 0);
    fds_.push_back(rd_);
    fds_.push_back(wr_);
  }
  void CloseFd(int& fd) {
    close(fd);
    std::erase(fds_, fd);
    fd = -1;
  }

  std::vector<std::string> Files(std::string_view ext) {
    std::vector<std::string> out;
    for (auto& e : fs::directory_iterator(dir_))
      if (e.path().filename().string().ends_with(ext)) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path tmp_;
  fs::path dir_;
  std::string fifo_;
  int rd_ = -1;
  int wr_ = -1;
  std::vector<int> fds_;
};

// Sets RLIMIT_NOFILE to 0 while alive: no file can be opened or created (as when a disk has
// no inode left), while files already open can still be written.
class NoNewFiles {
 public:
  NoNewFiles() {
    // UBSan checks an object's dynamic type (-fsanitize=vptr) the first time it meets it with
    // a pipe (to see that the memory can be read): with no fd left it reports a bad vptr. The
    // error categories every system_error below carries are met here first.
    [[maybe_unused]] const std::string generic =
        std::system_error(ENOSPC, std::generic_category()).what();
    [[maybe_unused]] const std::string system =
        std::system_error(ENOSPC, std::system_category()).what();
    getrlimit(RLIMIT_NOFILE, &saved_);
    rlimit none = saved_;
    none.rlim_cur = 0;
    setrlimit(RLIMIT_NOFILE, &none);
  }
  ~NoNewFiles() { setrlimit(RLIMIT_NOFILE, &saved_); }

 private:
  rlimit saved_{};
};

}  // namespace skald::journal_testkit
