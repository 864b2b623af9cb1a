#include "plugin/common/posix_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace skald {
namespace {

namespace fs = std::filesystem;

bool IsOpen(int fd) { return fcntl(fd, F_GETFD) != -1; }

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void WriteFile(const fs::path& p, std::string_view data) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << data;
}

// Bytes that show where a transfer went wrong (not a repeated character).
std::string Pattern(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 251) % 26);
  return s;
}

struct Pipe {
  Pipe() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) std::abort();
    read_end.reset(fds[0]);
    write_end.reset(fds[1]);
  }
  UniqueFd read_end;
  UniqueFd write_end;
};

class PosixFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/skald-posix-file-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST(UniqueFd, ClosesItsDescriptorWhenDestroyed) {
  int raw;
  {
    UniqueFd fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(fd);
    raw = fd.get();
    EXPECT_TRUE(IsOpen(raw));
  }
  EXPECT_FALSE(IsOpen(raw));
}

TEST(UniqueFd, MovesOwnershipAndClosesWhatItReplaces) {
  UniqueFd a(open("/dev/null", O_RDONLY | O_CLOEXEC));
  UniqueFd b(open("/dev/null", O_RDONLY | O_CLOEXEC));
  const int raw_a = a.get(), raw_b = b.get();
  UniqueFd c(std::move(a));
  EXPECT_FALSE(a);
  EXPECT_EQ(a.get(), -1);
  EXPECT_EQ(c.get(), raw_a);
  c = std::move(b);  // closes raw_a
  EXPECT_FALSE(IsOpen(raw_a));
  EXPECT_EQ(c.get(), raw_b);
  EXPECT_TRUE(IsOpen(raw_b));
  c.reset();
  EXPECT_FALSE(IsOpen(raw_b));
  EXPECT_FALSE(c);
}

TEST(UniqueFd, ReleaseGivesTheDescriptorUpWithoutClosingIt) {
  int raw;
  {
    UniqueFd fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
    raw = fd.release();
    EXPECT_FALSE(fd);
  }
  EXPECT_TRUE(IsOpen(raw));
  close(raw);
}

// A non-blocking pipe takes what fits and refuses the rest: a write(2) larger than the pipe
// is cut short, the next one fails with EAGAIN. WriteFull goes on after the short write and
// reports the error with the bytes written before it.
TEST(WriteFull, GoesOnAfterAShortWriteAndReportsTheBytesBeforeAnError) {
  Pipe p;
  ASSERT_EQ(fcntl(p.write_end.get(), F_SETFL, O_NONBLOCK), 0);
  const int capacity = fcntl(p.write_end.get(), F_SETPIPE_SZ, 4096);
  ASSERT_GT(capacity, 0);
  const std::string data = Pattern(static_cast<std::size_t>(capacity) * 3);
  std::error_code ec;
  EXPECT_EQ(WriteFull(p.write_end.get(), data.data(), data.size(), ec),
            static_cast<std::size_t>(capacity));
  EXPECT_EQ(ec, std::errc::resource_unavailable_try_again);
  std::string got(data.size(), '\0');
  ASSERT_EQ(read(p.read_end.get(), got.data(), got.size()), capacity);
  got.resize(static_cast<std::size_t>(capacity));
  EXPECT_TRUE(got == data.substr(0, got.size()));
}

TEST(WriteFull, ReportsAPipeWithoutReader) {
  Pipe p;
  p.read_end.reset();
  auto old = std::signal(SIGPIPE, SIG_IGN);
  std::error_code ec;
  EXPECT_EQ(WriteFull(p.write_end.get(), "x", 1, ec), 0u);
  EXPECT_EQ(ec, std::errc::broken_pipe);
  std::signal(SIGPIPE, old);
}

std::atomic<int> g_signals{0};
void CountSignal(int) { g_signals.fetch_add(1); }

// A blocking write(2) interrupted by a signal handler (installed without SA_RESTART) returns
// what it wrote so far, or fails with EINTR when it wrote nothing. A 4 KiB pipe, a slow
// reader and a signal after each read make the writer meet both many times; every byte must
// arrive once, in order.
TEST(WriteFull, WritesEverythingThroughSignalsAndShortWrites) {
  struct sigaction action {
  }, old{};
  action.sa_handler = CountSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: write(2) returns early
  ASSERT_EQ(sigaction(SIGUSR1, &action, &old), 0);
  g_signals = 0;

  Pipe p;
  ASSERT_GT(fcntl(p.write_end.get(), F_SETPIPE_SZ, 4096), 0);
  const std::string data = Pattern(1024 * 1024);
  std::atomic<bool> done{false};
  std::size_t written = 0;
  std::error_code ec;
  std::thread writer([&] {
    written = WriteFull(p.write_end.get(), data.data(), data.size(), ec);
    done = true;
    p.write_end.reset();  // the reader sees the end
  });
  std::string got;
  char buf[1000];
  for (;;) {
    const ssize_t n = read(p.read_end.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got.append(buf, static_cast<std::size_t>(n));
    if (!done) pthread_kill(writer.native_handle(), SIGUSR1);
  }
  writer.join();
  sigaction(SIGUSR1, &old, nullptr);

  EXPECT_FALSE(ec) << ec.message();
  EXPECT_EQ(written, data.size());
  EXPECT_TRUE(got == data) << "the bytes that arrived differ from those written";
  EXPECT_GT(g_signals.load(), 0);
}

TEST_F(PosixFileTest, PreadFullReadsUpToTheEndOfTheFile) {
  WriteFile(dir_ / "f", "0123456789");
  UniqueFd fd(open((dir_ / "f").c_str(), O_RDONLY | O_CLOEXEC));
  char buf[100];
  std::error_code ec;
  EXPECT_EQ(PreadFull(fd.get(), buf, sizeof buf, 4, ec), 6u);
  EXPECT_FALSE(ec);
  EXPECT_EQ(std::string(buf, 6), "456789");
  EXPECT_EQ(PreadFull(fd.get(), buf, sizeof buf, 10, ec), 0u);
  EXPECT_FALSE(ec);
}

TEST_F(PosixFileTest, PreadFullReportsADescriptorThatCannotSeek) {
  Pipe p;
  char buf[4];
  std::error_code ec;
  EXPECT_EQ(PreadFull(p.read_end.get(), buf, sizeof buf, 0, ec), 0u);
  EXPECT_EQ(ec, std::errc::invalid_seek);
}

TEST_F(PosixFileTest, PwriteFullWritesAtTheOffsetAndReportsErrors) {
  WriteFile(dir_ / "f", "0123456789");
  {
    UniqueFd fd(open((dir_ / "f").c_str(), O_WRONLY | O_CLOEXEC));
    std::error_code ec;
    EXPECT_EQ(PwriteFull(fd.get(), "abc", 3, 8, ec), 3u);
    EXPECT_FALSE(ec);
  }
  EXPECT_EQ(ReadFile(dir_ / "f"), "01234567abc");
  UniqueFd read_only(open((dir_ / "f").c_str(), O_RDONLY | O_CLOEXEC));
  std::error_code ec;
  EXPECT_EQ(PwriteFull(read_only.get(), "x", 1, 0, ec), 0u);
  EXPECT_EQ(ec, std::errc::bad_file_descriptor);
}

// The loop under both bounded reads (ReadWholeFile, user files): short reads (a pipe's) go
// on to the end, and one byte past the bound refuses the whole.
TEST(ReadToEnd, ReadsShortReadsToTheEndAndRefusesPastTheBound) {
  for (const std::size_t bound : {std::size_t{10000}, std::size_t{9999}}) {
    Pipe p;
    const std::string data = Pattern(10000);
    std::thread writer([&] {
      for (std::size_t i = 0; i < data.size(); i += 1000) {
        std::error_code ec;
        WriteFull(p.write_end.get(), data.data() + i, 1000, ec);
      }
      p.write_end.reset();
    });
    std::string out;
    std::error_code ec;
    const bool ok = ReadToEnd(p.read_end.get(), bound, 0, out, ec);
    writer.join();
    if (bound == data.size()) {
      EXPECT_TRUE(ok) << ec.message();
      EXPECT_TRUE(out == data);
    } else {
      EXPECT_FALSE(ok);
      EXPECT_EQ(ec, std::errc::file_too_large);
      EXPECT_EQ(out, "");
    }
  }
}

TEST_F(PosixFileTest, ReadWholeFileReadsAFileUpToItsBound) {
  std::string out = "stale";
  std::error_code ec;
  WriteFile(dir_ / "f", "0123456789");
  EXPECT_TRUE(ReadWholeFile(dir_ / "f", 10, out, ec));
  EXPECT_FALSE(ec);
  EXPECT_EQ(out, "0123456789");
  WriteFile(dir_ / "empty", "");
  EXPECT_TRUE(ReadWholeFile(dir_ / "empty", 10, out, ec));
  EXPECT_EQ(out, "");
  // Larger than the bound: refused whole, nothing of it kept.
  EXPECT_FALSE(ReadWholeFile(dir_ / "f", 9, out, ec));
  EXPECT_EQ(ec, std::errc::file_too_large);
  EXPECT_EQ(out, "");
  ec.clear();
  EXPECT_FALSE(ReadWholeFile(dir_ / "missing", 10, out, ec));
  EXPECT_EQ(ec, std::errc::no_such_file_or_directory);
}

TEST_F(PosixFileTest, ReadWholeFileRefusesWhatIsNotAFileWithoutWaiting) {
  // A FIFO with no writer: opening it to read without O_NONBLOCK would wait for ever.
  ASSERT_EQ(mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  std::string out;
  std::error_code ec;
  EXPECT_FALSE(ReadWholeFile(dir_ / "fifo", 10, out, ec));
  EXPECT_EQ(ec, std::errc::invalid_argument);
  ec.clear();
  EXPECT_FALSE(ReadWholeFile(dir_, 10, out, ec));  // a directory
  EXPECT_EQ(ec, std::errc::invalid_argument);
}

TEST_F(PosixFileTest, ReadWholeFileReadsPastTheSizeItWasOpenedWith) {
  // /proc files report size 0 and have content: read to the end, within the bound.
  std::string out;
  std::error_code ec;
  ASSERT_TRUE(ReadWholeFile("/proc/self/status", 1 << 20, out, ec)) << ec.message();
  EXPECT_NE(out.find("Name:"), std::string::npos);
  EXPECT_FALSE(ReadWholeFile("/proc/self/status", 16, out, ec));
  EXPECT_EQ(ec, std::errc::file_too_large);
}

TEST_F(PosixFileTest, WriteFileAtomicallyCreatesAndReplaces) {
  for (FileSync sync : {FileSync::kFsync, FileSync::kNoFsync}) {
    const fs::path path = dir_ / (sync == FileSync::kFsync ? "synced" : "unsynced");
    EXPECT_FALSE(WriteFileAtomically(path, "first", 0600, sync));
    EXPECT_EQ(ReadFile(path), "first");
    struct stat st {};
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_FALSE(WriteFileAtomically(path, "second, longer", 0600, sync));
    EXPECT_EQ(ReadFile(path), "second, longer");
    EXPECT_FALSE(fs::exists(path.string() + ".tmp"));
  }
}

// The write of the temp file fails part way (the file-size limit, as a full disk would):
// the old file is untouched and the temp file is gone.
TEST_F(PosixFileTest, WriteFileAtomicallyLeavesTheOldFileWhenTheWriteFails) {
  const fs::path path = dir_ / "info.json";
  WriteFile(path, "old content");
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of the signal
  struct rlimit old_limit {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct rlimit limit = old_limit;
  limit.rlim_cur = 16;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  const std::error_code ec =
      WriteFileAtomically(path, std::string(1000, 'n'), 0600, FileSync::kFsync);
  setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(ec, std::errc::file_too_large);
  EXPECT_EQ(ReadFile(path), "old content");
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));
}

TEST_F(PosixFileTest, WriteFileAtomicallyRemovesTheTempFileWhenTheRenameFails) {
  const fs::path path = dir_ / "taken";
  fs::create_directories(path / "child");  // rename(2) cannot replace a directory
  EXPECT_TRUE(WriteFileAtomically(path, "data", 0600, FileSync::kFsync));
  EXPECT_TRUE(fs::is_directory(path / "child"));
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));
}

TEST_F(PosixFileTest, WriteFileAtomicallyLeavesTheOldFileWhenTheTempFileCannotBeCreated) {
  const fs::path path = dir_ / "cursor";
  WriteFile(path, "old");
  fs::create_directories(path.string() + ".tmp");  // open(2) of a directory for writing fails
  EXPECT_EQ(WriteFileAtomically(path, "new", 0600, FileSync::kNoFsync), std::errc::is_a_directory);
  EXPECT_EQ(ReadFile(path), "old");
}

}  // namespace
}  // namespace skald
