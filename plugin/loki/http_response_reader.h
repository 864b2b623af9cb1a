// HttpResponseReader: one HTTP/1.1 answer read from bytes as they arrive, within fixed bounds.
//
// Whatever a peer at loki-url (or a proxy on the way) sends, reading its answer holds at most
// one line (the status line, a header line, a chunk-size line: kMaxLineBytes) and the body kept
// (kMaxBodyBytes) in memory: a longer line, more or larger headers than the limits, or bytes
// that are not HTTP fail the answer with a message saying which bound was met. A body longer
// than the cap ends the answer early (body_capped(); the connection is not reused). Interim 1xx
// answers are skipped (at most kMaxInterimAnswers). Content-Length, chunked transfer coding and
// bodies that run to the close are understood; nothing is decompressed.
//
// Not thread-safe; one reader per answer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace skald {

class HttpResponseReader {
 public:
  static constexpr std::size_t kMaxLineBytes = 8 * 1024;
  static constexpr std::size_t kMaxHeaders = 100;
  static constexpr std::size_t kMaxHeaderBytes = 64 * 1024;  // all header lines of one answer
  static constexpr std::size_t kMaxBodyBytes = 64 * 1024;
  static constexpr int kMaxInterimAnswers = 8;

  enum class State { kReading, kDone, kFailed };

  // `answers_connect`: the answer is to a CONNECT, whose 2xx has no body whatever its headers say.
  explicit HttpResponseReader(bool answers_connect = false) : answers_connect_(answers_connect) {}

  // Reads from `data`; returns how many bytes it used (fewer than given once it is done: what is
  // left is not part of this answer; once it has failed the count means nothing).
  std::size_t Feed(std::string_view data);
  // The peer closed the connection: a body that runs to the close is complete; anything else
  // still being read fails.
  void FeedEnd();

  State state() const { return state_; }
  int status() const { return status_; }
  const std::string& body() const { return body_; }
  // The body was longer than kMaxBodyBytes: body() holds its start.
  bool body_capped() const { return body_capped_; }
  // The Location header (a redirect's target), at most one line.
  const std::string& location() const { return location_; }
  // The connection can carry the next request: the answer ended where its framing said, and
  // neither side asked to close.
  bool keeps_connection() const;
  // Why the answer failed, for the log: names the bound met or what was not HTTP.
  const std::string& error() const { return error_; }

 private:
  enum class Phase { kStatusLine, kHeaders, kBody, kChunkSize, kChunkData, kChunkEnd, kTrailers };
  enum class Framing { kNone, kLength, kChunked, kUntilClose };

  // Takes one complete line (without its line break); false when the answer failed.
  bool OnLine(std::string_view line);
  bool OnStatusLine(std::string_view line);
  bool OnHeaderLine(std::string_view line);
  bool OnHeadersEnd();
  // Keeps body bytes up to the cap and returns how many; past the cap the answer is done.
  std::size_t KeepBody(std::string_view bytes);
  void Fail(std::string why);
  void Finish() { state_ = State::kDone; }

  const bool answers_connect_;
  State state_ = State::kReading;
  Phase phase_ = Phase::kStatusLine;
  Framing framing_ = Framing::kNone;
  std::string line_;  // the line being read (at most kMaxLineBytes)
  int status_ = 0;
  int interim_answers_ = 0;
  std::size_t headers_ = 0;
  std::size_t header_bytes_ = 0;
  bool has_length_ = false;
  uint64_t length_ = 0;     // Content-Length
  uint64_t remaining_ = 0;  // of the body or of the current chunk
  bool chunked_ = false;
  bool close_ = false;  // Connection: close, or HTTP/1.0 without keep-alive
  bool http10_ = false;
  std::string body_;
  bool body_capped_ = false;
  std::string location_;
  std::string error_;
};

}  // namespace skald
