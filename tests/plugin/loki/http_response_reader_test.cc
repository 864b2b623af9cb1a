// HttpResponseReader: answers read whole or failed within their bounds, whatever the bytes and
// however they are split.
#include "plugin/loki/http_response_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

namespace skald {
namespace {

using State = HttpResponseReader::State;
using ::testing::HasSubstr;

struct Read {
  State state;
  int status;
  std::string body;
  bool capped;
  bool keeps;
  std::string error;
  std::size_t used;
};

// Feeds `bytes` in pieces of `piece` bytes (0: at once), then the close when `close` is set.
Read Feed(const std::string& bytes, std::size_t piece = 0, bool close = false,
          bool answers_connect = false) {
  HttpResponseReader r(answers_connect);
  std::size_t used = 0;
  if (piece == 0) piece = bytes.size() + 1;
  for (std::size_t at = 0; at < bytes.size() && r.state() == State::kReading; at += piece) {
    const std::string_view p = std::string_view(bytes).substr(at, piece);
    used += r.Feed(p);
  }
  if (close) r.FeedEnd();
  return {r.state(), r.status(), r.body(), r.body_capped(), r.keeps_connection(), r.error(), used};
}

TEST(HttpResponseReaderTest, ReadsAnAnswerWithContentLength) {
  const std::string a = "HTTP/1.1 400 Bad Request\r\nContent-Length: 5\r\n\r\nhello";
  for (std::size_t piece : {0, 1, 3, 7}) {
    const Read r = Feed(a, piece);
    EXPECT_EQ(r.state, State::kDone) << piece;
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(r.body, "hello");
    EXPECT_TRUE(r.keeps);
    EXPECT_EQ(r.used, a.size());
  }
}

TEST(HttpResponseReaderTest, NoContentHasNoBodyAndLeavesWhatFollows) {
  const std::string a = "HTTP/1.1 204 No Content\r\n\r\n";
  const Read r = Feed(a + "HTTP/1.1 200 OK\r\n");
  EXPECT_EQ(r.state, State::kDone);
  EXPECT_EQ(r.status, 204);
  EXPECT_EQ(r.used, a.size());  // the rest is not part of this answer
}

TEST(HttpResponseReaderTest, DecodesChunkedBodiesWithTrailers) {
  const std::string a =
      "HTTP/1.1 500 Internal Server Error\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n";
  for (std::size_t piece : {0, 1, 2, 5}) {
    const Read r = Feed(a, piece);
    EXPECT_EQ(r.state, State::kDone) << piece;
    EXPECT_EQ(r.body, "hello world");
    EXPECT_TRUE(r.keeps);
  }
}

TEST(HttpResponseReaderTest, ABodyWithoutLengthRunsToTheClose) {
  const Read open = Feed("HTTP/1.0 502 Bad Gateway\r\n\r\nupstream gone");
  EXPECT_EQ(open.state, State::kReading);
  const Read closed = Feed("HTTP/1.0 502 Bad Gateway\r\n\r\nupstream gone", 0, true);
  EXPECT_EQ(closed.state, State::kDone);
  EXPECT_EQ(closed.body, "upstream gone");
  EXPECT_FALSE(closed.keeps);
}

TEST(HttpResponseReaderTest, InterimAnswersAreSkippedUpToABound) {
  const Read r = Feed("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n");
  EXPECT_EQ(r.state, State::kDone);
  EXPECT_EQ(r.status, 204);
  std::string many;
  for (int i = 0; i <= HttpResponseReader::kMaxInterimAnswers; ++i)
    many += "HTTP/1.1 103 X\r\n\r\n";
  const Read endless = Feed(many + "HTTP/1.1 204 No Content\r\n\r\n");
  EXPECT_EQ(endless.state, State::kFailed);
  EXPECT_THAT(endless.error, HasSubstr("interim (1xx) answers"));
}

TEST(HttpResponseReaderTest, AStatusLineLongerThanTheBoundFailsBeforeItEnds) {
  // 20 MB with no line break: the reader fails as soon as the bound is passed, having held at
  // most the bound, and uses no more of the bytes than that.
  const std::string status = "HTTP/1.1 200 " + std::string(20 << 20, 'x');
  const Read r = Feed(status, 64 * 1024);
  EXPECT_EQ(r.state, State::kFailed);
  EXPECT_THAT(r.error, HasSubstr("the status line is longer than 8192 bytes: HTTP/1.1 200 xxx"));
  EXPECT_LE(r.used, 64u * 1024);
  EXPECT_LE(r.error.size(), 200u);
}

TEST(HttpResponseReaderTest, HeaderLinesAreBoundedInLengthCountAndTotal) {
  const std::string head = "HTTP/1.1 204 No Content\r\n";
  const Read long_line = Feed(head + "X-Long: " + std::string(10'000, 'a') + "\r\n\r\n");
  EXPECT_EQ(long_line.state, State::kFailed);
  EXPECT_THAT(long_line.error, HasSubstr("a header line is longer than 8192 bytes"));

  std::string many = head;
  for (int i = 0; i < 1'000'000; ++i) many += "A: b\r\n";
  const Read r = Feed(many + "\r\n", 4096);
  EXPECT_EQ(r.state, State::kFailed);
  EXPECT_THAT(r.error, HasSubstr("more than 100 header lines"));
  EXPECT_LT(r.used, 8192u);

  std::string big = head;
  for (int i = 0; i < 99; ++i) big += "X-Big: " + std::string(8000, 'b') + "\r\n";
  const Read total = Feed(big + "\r\n");
  EXPECT_EQ(total.state, State::kFailed);
  EXPECT_THAT(total.error, HasSubstr("header lines longer than 65536 bytes together"));
}

TEST(HttpResponseReaderTest, ABodyPastTheCapEndsTheAnswerEarly) {
  const std::string a =
      "HTTP/1.1 500 X\r\nContent-Length: 1000000\r\n\r\n" + std::string(1'000'000, 'z');
  const Read r = Feed(a, 10'000);
  EXPECT_EQ(r.state, State::kDone);
  EXPECT_TRUE(r.capped);
  EXPECT_EQ(r.body.size(), HttpResponseReader::kMaxBodyBytes);
  EXPECT_FALSE(r.keeps);  // the rest of the body is still on the connection
  EXPECT_LT(r.used, 100'000u);
}

TEST(HttpResponseReaderTest, BytesThatAreNotHttpFailNamingThem) {
  struct Case {
    std::string bytes;
    const char* error;
  };
  const Case cases[] = {
      {"SSH-2.0-OpenSSH_9.6\r\n", "not an HTTP answer: SSH-2.0-OpenSSH_9.6"},
      {std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\n", 12),
       "not an HTTP answer: \\x16\\x03\\x01\\x02\\x00"},
      {"HTTP/2 200\r\n", "not an HTTP answer"},
      {"HTTP/1.1 2x4 No\r\n", "not an HTTP answer"},
      {"HTTP/1.1 204 OK\r\nno colon here\r\n\r\n", "a malformed header line: no colon here"},
      {"HTTP/1.1 204 OK\r\n: empty name\r\n\r\n", "a malformed header line"},
      {"HTTP/1.1 500 OK\r\nContent-Length: -1\r\n\r\n", "a bad Content-Length: -1"},
      {"HTTP/1.1 500 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
       "a bad Content-Length: 2"},
      {"HTTP/1.1 500 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", "a bad Content-Length"},
      {"HTTP/1.1 500 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "not hexadecimal: zz"},
      {"HTTP/1.1 500 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n", "longer than its size"},
      {"HTTP/1.1 101 Switching Protocols\r\n\r\n", "switched protocols"},
  };
  for (const Case& c : cases) {
    const Read r = Feed(c.bytes);
    EXPECT_EQ(r.state, State::kFailed) << c.bytes;
    EXPECT_THAT(r.error, HasSubstr(c.error)) << c.bytes;
  }
}

TEST(HttpResponseReaderTest, AnAnswerCutShortFailsAtTheClose) {
  EXPECT_THAT(Feed("", 0, true).error, HasSubstr("closed before an answer"));
  EXPECT_THAT(Feed("HTTP/1.1 500 X\r\nContent-Length: 9\r\n\r\nabc", 0, true).error,
              HasSubstr("closed in the middle of the answer"));
  EXPECT_THAT(Feed("HTTP/1.1 204 X\r\nA: b", 0, true).error,
              HasSubstr("closed in the middle of the answer"));
}

TEST(HttpResponseReaderTest, ConnectionHeadersDecideWhetherTheConnectionIsKept) {
  EXPECT_FALSE(Feed("HTTP/1.1 204 X\r\nConnection: close\r\n\r\n").keeps);
  EXPECT_FALSE(Feed("HTTP/1.0 204 X\r\n\r\n").keeps);
  EXPECT_TRUE(Feed("HTTP/1.0 204 X\r\nConnection: keep-alive\r\n\r\n").keeps);
  EXPECT_TRUE(Feed("HTTP/1.1 204 X\r\n\r\n").keeps);
}

TEST(HttpResponseReaderTest, AProxysAnswerToConnectHasNoBodyWhenItAccepts) {
  const Read ok = Feed("HTTP/1.1 200 Connection established\r\n\r\n", 0, false, true);
  EXPECT_EQ(ok.state, State::kDone);
  EXPECT_EQ(ok.status, 200);
  const Read refused =
      Feed("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 4\r\n\r\nauth", 0, false,
           true);
  EXPECT_EQ(refused.state, State::kDone);
  EXPECT_EQ(refused.status, 407);
  EXPECT_EQ(refused.body, "auth");
}

TEST(HttpResponseReaderTest, RandomBytesNeverPassTheBounds) {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string bytes = round % 2 == 0 ? "HTTP/1.1 200 OK\r\n" : "";
    const std::size_t n = rng() % 20000;
    for (std::size_t i = 0; i < n; ++i) {
      bytes += "\r\n:ab0 HTTP/1.1chunked\x00\xff"[rng() % 24];
    }
    const Read r = Feed(bytes, 1 + rng() % 97, rng() % 2 == 0);
    EXPECT_LE(r.body.size(), HttpResponseReader::kMaxBodyBytes);
    EXPECT_LE(r.used, bytes.size());
    EXPECT_EQ(r.state == State::kFailed, !r.error.empty());
  }
}

}  // namespace
}  // namespace skald
