#include "plugin/loki/push_encoder.h"

#include <snappy.h>

#include <cstring>

#include "plugin/loki/loki_entry.h"

namespace skald {
namespace {

// Protobuf wire tags: (field_number << 3) | wire_type; 0 = varint, 2 = length-delimited.
constexpr char kTagFirstVarint = 0x08;   // Timestamp.seconds
constexpr char kTagSecondVarint = 0x10;  // Timestamp.nanos
constexpr char kTagField1Bytes = 0x0A;   // streams / labels / timestamp / name
constexpr char kTagField2Bytes = 0x12;   // entries / line / value
constexpr char kTagField3Bytes = 0x1A;   // structuredMetadata

constexpr int64_t kNanosPerSecond = 1'000'000'000;

uint64_t VarintSize(uint64_t v) {
  uint64_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Size of a length-delimited field (tag + length + payload), omitted when empty as proto3 does.
uint64_t StringFieldSize(std::size_t len) { return len == 0 ? 0 : 1 + VarintSize(len) + len; }

uint64_t MessageFieldSize(uint64_t len) { return 1 + VarintSize(len) + len; }

struct SplitTime {
  int64_t seconds;
  int32_t nanos;
};

// google.protobuf.Timestamp wants nanos in [0, 1e9) also for times before 1970.
SplitTime Split(int64_t ts_ns) {
  int64_t seconds = ts_ns / kNanosPerSecond;
  int64_t nanos = ts_ns % kNanosPerSecond;
  if (nanos < 0) {
    nanos += kNanosPerSecond;
    --seconds;
  }
  return {seconds, static_cast<int32_t>(nanos)};
}

uint64_t TimestampSize(SplitTime t) {
  uint64_t n = 0;
  if (t.seconds != 0) n += 1 + VarintSize(static_cast<uint64_t>(t.seconds));
  if (t.nanos != 0) n += 1 + VarintSize(static_cast<uint64_t>(t.nanos));
  return n;
}

uint64_t EntrySize(const LokiEntry& e) {
  uint64_t n = MessageFieldSize(TimestampSize(Split(e.timestamp_ns)));
  n += StringFieldSize(e.line.size());
  for (const auto& [name, value] : e.structured_metadata) {
    n += MessageFieldSize(StringFieldSize(name.size()) + StringFieldSize(value.size()));
  }
  return n;
}

// Writes into a buffer already sized for the whole request.
class Writer {
 public:
  explicit Writer(char* p) : p_(p) {}
  char* pos() const { return p_; }

  void Byte(char c) { *p_++ = c; }
  void Varint(uint64_t v) {
    while (v >= 0x80) {
      *p_++ = static_cast<char>((v & 0x7F) | 0x80);
      v >>= 7;
    }
    *p_++ = static_cast<char>(v);
  }
  void String(char tag, std::string_view s) {
    if (s.empty()) return;
    Byte(tag);
    Varint(s.size());
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  void MessageHeader(char tag, uint64_t len) {
    Byte(tag);
    Varint(len);
  }

 private:
  char* p_;
};

}  // namespace

std::string_view PushEncoder::Encode(std::span<const PushStream> streams) {
  // Pass 1: sizes of every entry and stream message, so lengths can be written up front.
  entry_sizes_.clear();
  stream_sizes_.clear();
  uint64_t total = 0;
  for (const PushStream& s : streams) {
    uint64_t stream_size = StringFieldSize(s.labels.size());
    for (const LokiEntry* e : s.entries) {
      const uint64_t es = EntrySize(*e);
      entry_sizes_.push_back(es);
      stream_size += MessageFieldSize(es);
    }
    stream_sizes_.push_back(stream_size);
    total += MessageFieldSize(stream_size);
  }

  // Pass 2: write.
  raw_.resize(total);
  Writer w(raw_.data());
  std::size_t entry_index = 0;
  for (std::size_t si = 0; si < streams.size(); ++si) {
    const PushStream& s = streams[si];
    w.MessageHeader(kTagField1Bytes, stream_sizes_[si]);
    w.String(kTagField1Bytes, s.labels);
    for (const LokiEntry* e : s.entries) {
      w.MessageHeader(kTagField2Bytes, entry_sizes_[entry_index++]);
      const SplitTime t = Split(e->timestamp_ns);
      w.MessageHeader(kTagField1Bytes, TimestampSize(t));
      if (t.seconds != 0) {
        w.Byte(kTagFirstVarint);
        w.Varint(static_cast<uint64_t>(t.seconds));
      }
      if (t.nanos != 0) {
        w.Byte(kTagSecondVarint);
        w.Varint(static_cast<uint64_t>(t.nanos));
      }
      w.String(kTagField2Bytes, e->line);
      for (const auto& [name, value] : e->structured_metadata) {
        w.MessageHeader(kTagField3Bytes,
                        StringFieldSize(name.size()) + StringFieldSize(value.size()));
        w.String(kTagField1Bytes, name);
        w.String(kTagField2Bytes, value);
      }
    }
  }

  // Snappy block format, into a buffer kept for the next request. Not zero-filled: of the
  // worst-case size snappy asks for, only the pages it writes (the compressed size) are ever
  // resident.
  const std::size_t bound = snappy::MaxCompressedLength(raw_.size());
  if (bound > compressed_capacity_) {
    compressed_.reset(new char[bound]);
    compressed_capacity_ = bound;
  }
  std::size_t compressed_len = 0;
  snappy::RawCompress(raw_.data(), raw_.size(), compressed_.get(), &compressed_len);
  return std::string_view(compressed_.get(), compressed_len);
}

}  // namespace skald
