// Fuzz target: an endpoint's answer as the Loki client reads it (HttpResponseReader).
//
// Input: one byte choosing how the answer is split into reads and whether it answers a CONNECT,
// then the bytes a peer sends. Checks: the reader holds at most its bounds (body <= 64 KiB),
// never uses more bytes than given, says why when it fails, and reads the same answer however
// the bytes are split (one piece against the chosen pieces).
#include <cstddef>
#include <cstdint>
#include <string>

#include "plugin/loki/http_response_reader.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using skald::HttpResponseReader;
using skald::fuzz::AsView;

struct Outcome {
  HttpResponseReader::State state;
  int status;
  std::string body;
  bool capped;
  bool keeps;
  std::string location;
  size_t used;
};

Outcome Read(std::string_view bytes, size_t piece, bool answers_connect, bool close) {
  HttpResponseReader reader(answers_connect);
  size_t used = 0;
  for (size_t at = 0; at < bytes.size() && reader.state() == HttpResponseReader::State::kReading;
       at += piece) {
    const std::string_view p = bytes.substr(at, piece);
    const size_t n = reader.Feed(p);
    FUZZ_CHECK(n <= p.size());
    // Fewer bytes used than given only once the answer ended or failed.
    FUZZ_CHECK(n == p.size() || reader.state() != HttpResponseReader::State::kReading);
    used += n;
  }
  if (close) reader.FeedEnd();
  FUZZ_CHECK(reader.body().size() <= HttpResponseReader::kMaxBodyBytes);
  FUZZ_CHECK(reader.location().size() <= HttpResponseReader::kMaxLineBytes);
  FUZZ_CHECK((reader.state() == HttpResponseReader::State::kFailed) == !reader.error().empty());
  FUZZ_CHECK(reader.error().size() <= 512);
  FUZZ_CHECK(!reader.keeps_connection() || reader.state() == HttpResponseReader::State::kDone);
  if (reader.state() == HttpResponseReader::State::kDone) {
    FUZZ_CHECK(reader.status() >= 200 && reader.status() <= 999);
  }
  return {reader.state(),
          reader.status(),
          reader.body(),
          reader.body_capped(),
          reader.keeps_connection(),
          reader.location(),
          used};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static constexpr size_t kPieces[] = {1, 2, 3, 5, 16, 100, 4096};
  const size_t piece = kPieces[data[0] % std::size(kPieces)];
  const bool answers_connect = (data[0] & 0x80) != 0;
  const bool close = (data[0] & 0x40) != 0;
  const std::string_view bytes = AsView(data + 1, size - 1);

  const Outcome whole = Read(bytes, bytes.size() + 1, answers_connect, close);
  const Outcome split = Read(bytes, piece, answers_connect, close);
  FUZZ_CHECK(whole.state == split.state);
  if (whole.state != HttpResponseReader::State::kFailed) {
    FUZZ_CHECK(whole.used == split.used);
    FUZZ_CHECK(whole.status == split.status);
    FUZZ_CHECK(whole.body == split.body);
    FUZZ_CHECK(whole.capped == split.capped);
    FUZZ_CHECK(whole.keeps == split.keeps);
    FUZZ_CHECK(whole.location == split.location);
  }
  return 0;
}
