#include "plugin/loki/http_response_reader.h"

#include <algorithm>
#include <cctype>

#include "pipeline_stages/go/go_string.h"

namespace skald {
namespace {

constexpr std::size_t kShownBytes = 64;  // of a bad line, in an error message

// The start of `bytes` as it may go into a log line: control and non-ASCII bytes escaped.
std::string Shown(std::string_view bytes) {
  std::string out;
  for (unsigned char c : bytes.substr(0, kShownBytes)) {
    if (c < 0x20 || c >= 0x7f) {
      stages::AppendHexEscape("\\x", c, 2, &out);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (bytes.size() > kShownBytes) out += "...";
  return out;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IsTokenChar(unsigned char c) {
  return std::isalnum(c) ||
         std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

// A decimal number of at most 18 digits (no sign, no spaces).
bool ParseDecimal(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

// A chunk size: hex digits (at most 15), then optional extensions after ';'.
bool ParseChunkSize(std::string_view s, uint64_t* out) {
  s = Trim(s.substr(0, s.find(';')));
  if (s.empty() || s.size() > 15) return false;
  uint64_t v = 0;
  for (char c : s) {
    const int d = std::isdigit(static_cast<unsigned char>(c))
                      ? c - '0'
                      : (std::tolower(static_cast<unsigned char>(c)) >= 'a' &&
                                 std::tolower(static_cast<unsigned char>(c)) <= 'f'
                             ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                             : -1);
    if (d < 0) return false;
    v = v * 16 + static_cast<uint64_t>(d);
  }
  *out = v;
  return true;
}

}  // namespace

std::size_t HttpResponseReader::Feed(std::string_view data) {
  std::size_t used = 0;
  while (used < data.size() && state_ == State::kReading) {
    std::string_view rest = data.substr(used);
    if (phase_ == Phase::kBody) {
      if (framing_ == Framing::kLength) {
        const std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(remaining_, rest.size()));
        const std::size_t kept = KeepBody(rest.substr(0, n));
        used += kept;
        remaining_ -= kept;
        if (remaining_ == 0) Finish();
      } else {  // kUntilClose
        used += KeepBody(rest);
      }
      continue;
    }
    if (phase_ == Phase::kChunkData) {
      const std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(remaining_, rest.size()));
      const std::size_t kept = KeepBody(rest.substr(0, n));
      used += kept;
      remaining_ -= kept;
      if (remaining_ == 0 && state_ == State::kReading) phase_ = Phase::kChunkEnd;
      continue;
    }
    // A line: up to its line break, never more than kMaxLineBytes held.
    const std::size_t nl = rest.find('\n');
    const std::string_view piece = rest.substr(0, nl == std::string_view::npos ? rest.size() : nl);
    if (line_.size() + piece.size() > kMaxLineBytes) {
      const char* what = phase_ == Phase::kStatusLine ? "the status line"
                         : phase_ == Phase::kHeaders  ? "a header line"
                         : phase_ == Phase::kTrailers ? "a trailer line"
                                                      : "a chunk-size line";
      Fail(std::string(what) + " is longer than " + std::to_string(kMaxLineBytes) +
           " bytes: " + Shown(line_.empty() ? piece : std::string_view(line_)));
      used += piece.size();
      break;
    }
    line_.append(piece);
    used += piece.size();
    if (nl == std::string_view::npos) break;  // the line goes on in the next bytes
    ++used;                                   // the '\n'
    std::string line = std::move(line_);
    line_.clear();
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!OnLine(line)) break;
  }
  return used;
}

void HttpResponseReader::FeedEnd() {
  if (state_ != State::kReading) return;
  if (phase_ == Phase::kBody && framing_ == Framing::kUntilClose) {
    close_ = true;
    Finish();
    return;
  }
  if (phase_ == Phase::kStatusLine && line_.empty() && interim_answers_ == 0) {
    Fail("the connection was closed before an answer");
    return;
  }
  Fail("the connection was closed in the middle of the answer");
}

bool HttpResponseReader::keeps_connection() const {
  return state_ == State::kDone && !close_ && !body_capped_ && framing_ != Framing::kUntilClose;
}

bool HttpResponseReader::OnLine(std::string_view line) {
  switch (phase_) {
    case Phase::kStatusLine:
      return OnStatusLine(line);
    case Phase::kHeaders:
    case Phase::kTrailers:
      if (line.empty()) {
        if (phase_ == Phase::kTrailers) {
          Finish();
          return false;
        }
        return OnHeadersEnd();
      }
      return OnHeaderLine(line);
    case Phase::kChunkSize: {
      uint64_t size = 0;
      if (!ParseChunkSize(line, &size)) {
        Fail("a chunk size that is not hexadecimal: " + Shown(line));
        return false;
      }
      if (size == 0) {
        phase_ = Phase::kTrailers;
      } else {
        remaining_ = size;
        phase_ = Phase::kChunkData;
      }
      return true;
    }
    case Phase::kChunkEnd:
      if (!line.empty()) {
        Fail("a chunk longer than its size: " + Shown(line));
        return false;
      }
      phase_ = Phase::kChunkSize;
      return true;
    case Phase::kBody:
    case Phase::kChunkData:
      break;
  }
  return true;
}

bool HttpResponseReader::OnStatusLine(std::string_view line) {
  header_bytes_ += line.size() + 2;
  // HTTP/1.x SP 3DIGIT [SP reason]
  const bool shaped =
      line.size() >= 12 && line.substr(0, 7) == "HTTP/1." && (line[7] == '0' || line[7] == '1') &&
      line[8] == ' ' && std::isdigit(static_cast<unsigned char>(line[9])) &&
      std::isdigit(static_cast<unsigned char>(line[10])) &&
      std::isdigit(static_cast<unsigned char>(line[11])) && (line.size() == 12 || line[12] == ' ');
  if (!shaped) {
    Fail("not an HTTP answer: " + Shown(line));
    return false;
  }
  status_ = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
  if (status_ < 100) {
    Fail("not an HTTP status: " + Shown(line));
    return false;
  }
  http10_ = line[7] == '0';
  close_ = http10_;
  phase_ = Phase::kHeaders;
  return true;
}

bool HttpResponseReader::OnHeaderLine(std::string_view line) {
  header_bytes_ += line.size() + 2;
  if (++headers_ > kMaxHeaders) {
    Fail("more than " + std::to_string(kMaxHeaders) + " header lines");
    return false;
  }
  if (header_bytes_ > kMaxHeaderBytes) {
    Fail("header lines longer than " + std::to_string(kMaxHeaderBytes) + " bytes together");
    return false;
  }
  const std::size_t colon = line.find(':');
  const std::string_view name = line.substr(0, colon == std::string_view::npos ? 0 : colon);
  if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) {
        return IsTokenChar(static_cast<unsigned char>(c));
      })) {
    Fail("a malformed header line: " + Shown(line));
    return false;
  }
  if (phase_ == Phase::kTrailers) return true;  // trailers are counted, not used
  const std::string_view value = Trim(line.substr(colon + 1));
  if (EqualsIgnoringCase(name, "Content-Length")) {
    uint64_t length = 0;
    if (!ParseDecimal(value, &length) || (has_length_ && length != length_)) {
      Fail("a bad Content-Length: " + Shown(value));
      return false;
    }
    has_length_ = true;
    length_ = length;
  } else if (EqualsIgnoringCase(name, "Transfer-Encoding")) {
    // Chunked when it is the last coding; any other coding runs to the close.
    std::string_view last =
        value.substr(value.rfind(',') == std::string_view::npos ? 0 : value.rfind(',') + 1);
    chunked_ = EqualsIgnoringCase(Trim(last), "chunked");
    if (!chunked_) close_ = true;
  } else if (EqualsIgnoringCase(name, "Connection")) {
    if (EqualsIgnoringCase(value, "close")) close_ = true;
    if (http10_ && EqualsIgnoringCase(value, "keep-alive")) close_ = false;
  } else if (EqualsIgnoringCase(name, "Location")) {
    location_ = std::string(value);
  }
  return true;
}

bool HttpResponseReader::OnHeadersEnd() {
  if (status_ < 200) {
    if (status_ == 101) {
      Fail("the peer switched protocols (101), which was not asked for");
      return false;
    }
    if (++interim_answers_ > kMaxInterimAnswers) {
      Fail("more than " + std::to_string(kMaxInterimAnswers) + " interim (1xx) answers");
      return false;
    }
    // An interim answer: the final one follows. Its headers count towards the bounds.
    phase_ = Phase::kStatusLine;
    has_length_ = false;
    chunked_ = false;
    location_.clear();
    return true;
  }
  if ((answers_connect_ && status_ < 300) || status_ == 204 || status_ == 304) {
    framing_ = Framing::kNone;
    Finish();
    return false;
  }
  if (chunked_) {
    framing_ = Framing::kChunked;
    phase_ = Phase::kChunkSize;
    return true;
  }
  if (has_length_) {
    framing_ = Framing::kLength;
    if (length_ == 0) {
      Finish();
      return false;
    }
    remaining_ = length_;
    phase_ = Phase::kBody;
    return true;
  }
  framing_ = Framing::kUntilClose;
  phase_ = Phase::kBody;
  return true;
}

std::size_t HttpResponseReader::KeepBody(std::string_view bytes) {
  const std::size_t room = kMaxBodyBytes - body_.size();
  const std::size_t kept = std::min(bytes.size(), room);
  body_.append(bytes.substr(0, kept));
  if (bytes.size() > room) {
    body_capped_ = true;
    Finish();
  }
  return kept;
}

void HttpResponseReader::Fail(std::string why) {
  state_ = State::kFailed;
  error_ = std::move(why);
  line_.clear();
}

}  // namespace skald
