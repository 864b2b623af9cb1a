// Frame format: dockerd's log stream on a logging plugin's FIFO, which the journal also stores
// byte for byte. A frame is `[uint32 big-endian length][body]`, the body one protobuf LogEntry
// (plugin/ingest/frame_codec.h decodes it). A length over kMaxFrameBytes marks a corrupt stream.
#pragma once

#include <cstddef>
#include <cstdint>

namespace skald {

// The length prefix in front of every frame body.
inline constexpr std::size_t kFrameLengthBytes = 4;

// Frames longer than this are treated as a corrupt stream (real frames are about 16.5 KiB).
inline constexpr std::size_t kMaxFrameBytes = 1024 * 1024;

// The body length in the prefix at `p` (kFrameLengthBytes bytes must be readable).
inline uint32_t ReadFrameLength(const char* p) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
}

// Writes the prefix for a body of `len` bytes to `p` (kFrameLengthBytes bytes).
inline void WriteFrameLength(uint32_t len, char* p) {
  p[0] = static_cast<char>(len >> 24);
  p[1] = static_cast<char>(len >> 16);
  p[2] = static_cast<char>(len >> 8);
  p[3] = static_cast<char>(len);
}

}  // namespace skald
