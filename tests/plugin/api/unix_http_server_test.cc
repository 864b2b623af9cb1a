#include "plugin/api/unix_http_server.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "plugin/loki/http_response_reader.h"

namespace skald {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// A client speaking raw bytes over the unix socket, reading answers with the bounded reader.
class RawClient {
 public:
  explicit RawClient(const std::string& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, path.data(), path.size());
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  }
  ~RawClient() { ::close(fd_); }
  bool connected() const { return connected_; }

  bool Send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  // Reads one answer; state kFailed when the connection closed first or 10 s passed.
  HttpResponseReader Read() {
    HttpResponseReader reader;
    const auto deadline = steady_clock::now() + std::chrono::seconds(10);
    while (reader.state() == HttpResponseReader::State::kReading) {
      if (leftover_.empty()) {
        if (!Wait(deadline)) break;
        char buf[4096];
        const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
        if (n <= 0) {
          reader.FeedEnd();
          break;
        }
        leftover_.assign(buf, static_cast<std::size_t>(n));
      }
      const std::size_t used = reader.Feed(leftover_);
      leftover_.erase(0, used);
    }
    return reader;
  }
  // Whether the server closed the connection within `within`.
  bool ClosedWithin(milliseconds within) {
    const auto deadline = steady_clock::now() + within;
    char buf[256];
    while (Wait(deadline)) {
      if (::recv(fd_, buf, sizeof(buf), 0) <= 0) return true;
    }
    return false;
  }

 private:
  bool Wait(steady_clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<milliseconds>(deadline - steady_clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(left)) > 0;
  }

  int fd_ = -1;
  bool connected_ = false;
  std::string leftover_;
};

std::string Post(const std::string& path, const std::string& body, const std::string& extra = "") {
  return "POST " + path + " HTTP/1.1\r\nHost: \r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n" + extra + "\r\n" + body;
}

class UnixHttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("skald-unix-http-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    socket_ = (dir_ / "s.sock").string();
    server_.Handle("/echo", [](const UnixHttpServer::Request& req, UnixHttpServer::Response& res) {
      res.Send(200, "text/plain", req.body);
    });
    server_.Handle("/throws", [](const UnixHttpServer::Request&, UnixHttpServer::Response&) {
      throw std::runtime_error("boom \"quoted\"");
    });
    server_.Handle("/stream",
                   [this](const UnixHttpServer::Request&, UnixHttpServer::Response& res) {
                     ASSERT_TRUE(res.BeginChunked(200, "application/octet-stream"));
                     for (int i = 0; i < 3; ++i)
                       ASSERT_TRUE(res.WriteChunk("part" + std::to_string(i) + ";"));
                     if (follow_) {
                       streaming_ = true;
                       while (res.WriteChunk("")) {  // nothing to send: waits only for the stop
                         if (server_.stopping()) return;
                         std::this_thread::sleep_for(milliseconds(5));
                       }
                       return;
                     }
                     res.EndChunked();
                   });
    ASSERT_EQ(server_.Bind(socket_), "");
    server_.Start("test-api");
  }
  void TearDown() override {
    server_.Stop();
    std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
  std::string socket_;
  std::atomic<bool> follow_{false};
  std::atomic<bool> streaming_{false};
  UnixHttpServer server_;
};

TEST_F(UnixHttpServerTest, OneConnectionCarriesRequestAfterRequest) {
  RawClient c(socket_);
  ASSERT_TRUE(c.connected());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(c.Send(Post("/echo", "body " + std::to_string(i))));
    const HttpResponseReader r = c.Read();
    ASSERT_EQ(r.state(), HttpResponseReader::State::kDone) << r.error();
    EXPECT_EQ(r.status(), 200);
    EXPECT_EQ(r.body(), "body " + std::to_string(i));
    EXPECT_TRUE(r.keeps_connection());
  }
  // Two requests sent at once (pipelined) are answered in order.
  ASSERT_TRUE(c.Send(Post("/echo", "first") + Post("/echo", "second")));
  EXPECT_EQ(c.Read().body(), "first");
  EXPECT_EQ(c.Read().body(), "second");
}

TEST_F(UnixHttpServerTest, ABadRequestIsAnsweredAndItsConnectionClosed) {
  struct Case {
    std::string request;
    int status;
  };
  for (const Case& c :
       {Case{"GARBAGE\r\n\r\n", 400},
        Case{"POST /echo HTTP/1.1\r\nContent-Length: 12x\r\n\r\n", 400},
        Case{"POST /echo HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400},
        Case{"POST /echo HTTP/1.1\r\nNoColonHere\r\n\r\n", 400},
        Case{"POST /echo HTTP/2.0\r\nContent-Length: 0\r\n\r\n", 400},
        Case{"POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 501},
        Case{"POST /echo HTTP/1.1\r\nContent-Length: " +
                 std::to_string(UnixHttpServer::kMaxBodyBytes + 1) + "\r\n\r\n",
             413},
        Case{"POST /echo HTTP/1.1\r\nX: " + std::string(UnixHttpServer::kMaxHeadBytes, 'a') +
                 "\r\n\r\n",
             400}}) {
    RawClient client(socket_);
    ASSERT_TRUE(client.Send(c.request));
    const HttpResponseReader r = client.Read();
    ASSERT_EQ(r.state(), HttpResponseReader::State::kDone) << c.request.substr(0, 60);
    EXPECT_FALSE(r.keeps_connection()) << "the answer says Connection: close";
    EXPECT_EQ(r.status(), c.status) << c.request.substr(0, 60);
    EXPECT_NE(r.body().find("\"Err\""), std::string::npos) << r.body();
    EXPECT_TRUE(client.ClosedWithin(milliseconds(3000))) << c.request.substr(0, 60);
  }
  RawClient after(socket_);  // the server is still there
  ASSERT_TRUE(after.Send(Post("/echo", "still")));
  EXPECT_EQ(after.Read().body(), "still");
}

TEST_F(UnixHttpServerTest, UnknownPathsMethodsAndHandlerErrorsGetTheirStatus) {
  RawClient c(socket_);
  ASSERT_TRUE(c.Send(Post("/nowhere", "")));
  EXPECT_EQ(c.Read().status(), 404);
  ASSERT_TRUE(c.Send("GET /echo HTTP/1.1\r\n\r\n"));
  EXPECT_EQ(c.Read().status(), 405);
  ASSERT_TRUE(c.Send(Post("/throws", "")));
  const HttpResponseReader r = c.Read();
  EXPECT_EQ(r.status(), 500);
  EXPECT_EQ(r.body(), "{\"Err\":\"skald: boom \\\"quoted\\\"\"}\n");
  ASSERT_TRUE(c.Send(Post("/echo", "after")));
  EXPECT_EQ(c.Read().body(), "after");
}

TEST_F(UnixHttpServerTest, AChunkedAnswerArrivesWhole) {
  RawClient c(socket_);
  ASSERT_TRUE(c.Send(Post("/stream", "")));
  const HttpResponseReader r = c.Read();
  ASSERT_EQ(r.state(), HttpResponseReader::State::kDone) << r.error();
  EXPECT_EQ(r.body(), "part0;part1;part2;");
  EXPECT_TRUE(r.keeps_connection());
}

TEST_F(UnixHttpServerTest, ConnectionCloseAndHttp10EndTheConnectionAfterTheAnswer) {
  RawClient a(socket_);
  ASSERT_TRUE(a.Send(Post("/echo", "x", "Connection: close\r\n")));
  const HttpResponseReader answer = a.Read();
  EXPECT_EQ(answer.body(), "x");
  EXPECT_FALSE(answer.keeps_connection());
  EXPECT_TRUE(a.ClosedWithin(milliseconds(3000)));
  RawClient b(socket_);
  ASSERT_TRUE(b.Send("POST /echo HTTP/1.0\r\nContent-Length: 1\r\n\r\ny"));
  EXPECT_EQ(b.Read().body(), "y");
  EXPECT_TRUE(b.ClosedWithin(milliseconds(3000)));
}

// Stopping closes idle connections and ends streams at once (a stop that normally takes well
// under 0.1 s; 3 s is the bound), and the socket file goes.
TEST_F(UnixHttpServerTest, StopEndsIdleConnectionsAndStreamsAtOnce) {
  follow_ = true;
  RawClient idle(socket_);
  ASSERT_TRUE(idle.Send(Post("/echo", "a")));
  EXPECT_EQ(idle.Read().body(), "a");
  RawClient streaming(socket_);
  ASSERT_TRUE(streaming.Send(Post("/stream", "")));
  const auto until = steady_clock::now() + std::chrono::seconds(10);
  while (!streaming_ && steady_clock::now() < until) std::this_thread::sleep_for(milliseconds(5));
  ASSERT_TRUE(streaming_);
  EXPECT_TRUE(server_.Serving());
  const auto started = steady_clock::now();
  server_.Stop();
  EXPECT_LT(steady_clock::now() - started, std::chrono::seconds(3));
  EXPECT_FALSE(server_.Serving());
  EXPECT_FALSE(std::filesystem::exists(socket_));
  EXPECT_TRUE(idle.ClosedWithin(milliseconds(3000)));
  const HttpResponseReader cut = streaming.Read();
  EXPECT_EQ(cut.state(), HttpResponseReader::State::kFailed) << "a cut stream has no last chunk";
}

// A connection with nothing to say stays (as with Go's server: dockerd may be sending on it
// when a close would come) and serves a request later.
TEST_F(UnixHttpServerTest, AnIdleConnectionStaysForALaterRequest) {
  RawClient c(socket_);
  ASSERT_TRUE(c.connected());
  EXPECT_FALSE(c.ClosedWithin(milliseconds(1500)));
  ASSERT_TRUE(c.Send(Post("/echo", "later")));
  EXPECT_EQ(c.Read().body(), "later");
}

// The threads serving a connection (SetThreadName: skald-api-conn) in this process.
int ConnectionThreads() {
  int n = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (name == "skald-api-conn") ++n;
  }
  return n;
}

std::size_t OpenDescriptors() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

// Waits up to `within` for ConnectionThreads() to be `want`.
bool ConnectionThreadsBecome(int want, milliseconds within) {
  const auto until = steady_clock::now() + within;
  while (ConnectionThreads() != want) {
    if (steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return true;
}

// Kept connections idle for kIdleLinger are parked: no thread waits on them, each is served
// again when it speaks, and one closed while parked lets its thread go again.
TEST_F(UnixHttpServerTest, AnIdleConnectionHoldsNoThreadAfterTheLinger) {
  const milliseconds settle = UnixHttpServer::kIdleLinger + milliseconds(2000);
  std::vector<std::unique_ptr<RawClient>> clients;
  for (int i = 0; i < 3; ++i) {
    clients.push_back(std::make_unique<RawClient>(socket_));
    ASSERT_TRUE(clients.back()->Send(Post("/echo", "first " + std::to_string(i))));
    EXPECT_EQ(clients.back()->Read().body(), "first " + std::to_string(i));
  }
  EXPECT_TRUE(ConnectionThreadsBecome(0, settle)) << ConnectionThreads() << " threads idle";
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 3; ++i) {
      const std::string body = "again " + std::to_string(round) + " " + std::to_string(i);
      ASSERT_TRUE(clients[i]->Send(Post("/echo", body)));
      const HttpResponseReader r = clients[i]->Read();
      ASSERT_EQ(r.state(), HttpResponseReader::State::kDone) << r.error();
      EXPECT_EQ(r.body(), body);
      EXPECT_TRUE(r.keeps_connection());
    }
    EXPECT_TRUE(ConnectionThreadsBecome(0, settle)) << "round " << round;
  }
  // Closed while parked: a thread reads the end, closes the server's side, and goes.
  const std::size_t fds = OpenDescriptors();
  clients[0].reset();  // the client's side
  const auto until = steady_clock::now() + settle;
  while (OpenDescriptors() > fds - 2 && steady_clock::now() < until) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_EQ(OpenDescriptors(), fds - 2) << "the server's side of the closed connection stayed";
  EXPECT_TRUE(ConnectionThreadsBecome(0, settle));
  RawClient after(socket_);
  ASSERT_TRUE(after.Send(Post("/echo", "still")));
  EXPECT_EQ(after.Read().body(), "still");
}

// Stopping closes parked connections at once too.
TEST_F(UnixHttpServerTest, StopClosesParkedConnections) {
  RawClient c(socket_);
  ASSERT_TRUE(c.Send(Post("/echo", "a")));
  EXPECT_EQ(c.Read().body(), "a");
  ASSERT_TRUE(ConnectionThreadsBecome(0, UnixHttpServer::kIdleLinger + milliseconds(2000)));
  const auto started = steady_clock::now();
  server_.Stop();
  EXPECT_LT(steady_clock::now() - started, std::chrono::seconds(3));
  EXPECT_TRUE(c.ClosedWithin(milliseconds(3000)));
}

// A request begun before the stop is answered 503 (the driver behind the handlers is going),
// and one that never completes is given up kStopGrace after the stop.
TEST_F(UnixHttpServerTest, RequestsCaughtByTheStopEndPromptly) {
  RawClient partial(socket_);
  ASSERT_TRUE(partial.Send("POST /echo HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc"));
  std::this_thread::sleep_for(milliseconds(100));
  const auto started = steady_clock::now();
  server_.Stop();
  EXPECT_LT(steady_clock::now() - started, UnixHttpServer::kStopGrace + std::chrono::seconds(3));
  EXPECT_TRUE(partial.ClosedWithin(milliseconds(3000)));
}

TEST_F(UnixHttpServerTest, ManyConnectionsAtOnceAreServed) {
  std::vector<std::thread> clients;
  std::atomic<int> answered{0};
  for (int i = 0; i < 64; ++i) {
    clients.emplace_back([&, i] {
      RawClient c(socket_);
      if (c.Send(Post("/echo", std::to_string(i))) && c.Read().body() == std::to_string(i)) {
        ++answered;
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(answered.load(), 64);
}

}  // namespace
}  // namespace skald
