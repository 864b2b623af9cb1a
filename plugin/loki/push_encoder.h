// PushEncoder: encodes a Loki push request (logproto.PushRequest) by hand and compresses it
// with snappy (block format, as Loki expects for Content-Type application/x-protobuf).
//
// Streams are given as label strings with the entries that belong to them, in order. Sizes
// are computed first so every byte is written once, and the raw and compressed buffers are
// kept between calls: an encoder reused for every batch does not allocate in steady state.
// Not thread-safe: one encoder per sender.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace skald {

struct LokiEntry;

struct PushStream {
  std::string_view labels;                    // rendered selector, e.g. {job="x"}
  std::span<const LokiEntry* const> entries;  // in the order Loki should receive them
};

class PushEncoder {
 public:
  // Encodes and compresses `streams`. The returned view stays valid until the next call.
  std::string_view Encode(std::span<const PushStream> streams);

  // Size of the last request before compression.
  std::size_t raw_size() const { return raw_.size(); }

  // The protobuf bytes of the last request, before compression (for tests).
  std::string_view raw() const { return raw_; }

 private:
  std::string raw_;
  std::unique_ptr<char[]> compressed_;
  std::size_t compressed_capacity_ = 0;
  std::vector<uint64_t> entry_sizes_;   // encoded size of each entry message, in visit order
  std::vector<uint64_t> stream_sizes_;  // encoded size of each stream message
};

}  // namespace skald
