#include "plugin/ingest/frame_codec.h"

namespace skald {
namespace {

// Minimal protobuf wire reader over a string_view.
class WireReader {
 public:
  explicit WireReader(std::string_view data) : p_(data.data()), end_(data.data() + data.size()) {}

  bool done() const { return p_ == end_; }

  bool ReadVarint(uint64_t* v) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) return false;
      uint8_t b = static_cast<uint8_t>(*p_++);
      result |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        *v = result;
        return true;
      }
    }
    return false;
  }

  bool ReadBytes(std::string_view* out) {
    uint64_t len;
    if (!ReadVarint(&len)) return false;
    if (len > static_cast<uint64_t>(end_ - p_)) return false;
    *out = std::string_view(p_, len);
    p_ += len;
    return true;
  }

  bool Skip(uint32_t wire_type) {
    uint64_t v;
    std::string_view s;
    switch (wire_type) {
      case 0:
        return ReadVarint(&v);
      case 1:
        if (end_ - p_ < 8) return false;
        p_ += 8;
        return true;
      case 2:
        return ReadBytes(&s);
      case 5:
        if (end_ - p_ < 4) return false;
        p_ += 4;
        return true;
      default:
        return false;  // groups are not used by LogEntry
    }
  }

 private:
  const char* p_;
  const char* end_;
};

bool DecodePartialMetadata(std::string_view body, LogEntryView* e) {
  WireReader r(body);
  while (!r.done()) {
    uint64_t key;
    if (!r.ReadVarint(&key)) return false;
    uint32_t field = static_cast<uint32_t>(key >> 3), wt = key & 7;
    uint64_t v;
    if (field == 1 && wt == 0) {
      if (!r.ReadVarint(&v)) return false;
      e->partial_last = v != 0;
    } else if (field == 2 && wt == 2) {
      if (!r.ReadBytes(&e->partial_id)) return false;
    } else if (field == 3 && wt == 0) {
      if (!r.ReadVarint(&v)) return false;
      e->partial_ordinal = static_cast<int32_t>(v);
    } else if (!r.Skip(wt)) {
      return false;
    }
  }
  return true;
}

void PutVarint(uint64_t v, std::string& out) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

void PutBytesField(uint32_t field, std::string_view s, std::string& out) {
  PutVarint((field << 3) | 2, out);
  PutVarint(s.size(), out);
  out.append(s);
}

}  // namespace

std::optional<LogEntryView> DecodeLogEntry(std::string_view body) {
  LogEntryView e;
  WireReader r(body);
  while (!r.done()) {
    uint64_t key;
    if (!r.ReadVarint(&key)) return std::nullopt;
    uint32_t field = static_cast<uint32_t>(key >> 3), wt = key & 7;
    uint64_t v;
    std::string_view s;
    if (field == 1 && wt == 2) {
      if (!r.ReadBytes(&e.source)) return std::nullopt;
    } else if (field == 2 && wt == 0) {
      if (!r.ReadVarint(&v)) return std::nullopt;
      e.time_nano = static_cast<int64_t>(v);
    } else if (field == 3 && wt == 2) {
      if (!r.ReadBytes(&e.line)) return std::nullopt;
    } else if (field == 4 && wt == 0) {
      if (!r.ReadVarint(&v)) return std::nullopt;
      e.partial = v != 0;
    } else if (field == 5 && wt == 2) {
      if (!r.ReadBytes(&s)) return std::nullopt;
      e.has_partial_metadata = true;
      if (!DecodePartialMetadata(s, &e)) return std::nullopt;
    } else if (!r.Skip(wt)) {
      return std::nullopt;
    }
  }
  return e;
}

FrameStatus NextFrame(std::string_view buffer, std::string_view* body, std::size_t* consumed) {
  if (buffer.size() < kFrameLengthBytes) return FrameStatus::kNeedMore;
  uint32_t len = ReadFrameLength(buffer.data());
  if (len > kMaxFrameBytes) return FrameStatus::kTooLarge;
  if (buffer.size() - kFrameLengthBytes < len) return FrameStatus::kNeedMore;
  *body = buffer.substr(kFrameLengthBytes, len);
  *consumed = kFrameLengthBytes + static_cast<std::size_t>(len);
  return FrameStatus::kOk;
}

void EncodeFrame(const LogEntryView& e, std::string& out) {
  std::size_t header = out.size();
  out.append(kFrameLengthBytes, '\0');
  if (!e.source.empty()) PutBytesField(1, e.source, out);
  if (e.time_nano != 0) {
    PutVarint(2 << 3, out);
    PutVarint(static_cast<uint64_t>(e.time_nano), out);
  }
  if (!e.line.empty()) PutBytesField(3, e.line, out);
  if (e.partial) {
    PutVarint(4 << 3, out);
    PutVarint(1, out);
  }
  if (e.has_partial_metadata) {
    std::string meta;
    if (e.partial_last) {
      PutVarint(1 << 3, meta);
      PutVarint(1, meta);
    }
    if (!e.partial_id.empty()) PutBytesField(2, e.partial_id, meta);
    if (e.partial_ordinal != 0) {
      PutVarint(3 << 3, meta);
      PutVarint(static_cast<uint64_t>(static_cast<uint32_t>(e.partial_ordinal)), meta);
    }
    PutBytesField(5, meta, out);
  }
  WriteFrameLength(static_cast<uint32_t>(out.size() - header - kFrameLengthBytes), &out[header]);
}

}  // namespace skald
