// How FifoReader cuts a stream's lines into hand-overs to its sink (LineSink::OnLines), and how
// much of one FIFO it reads per loop round. One rule for the three ways lines are read: a FIFO
// with no journal (Drain), a journal (Decode) and a FIFO whose journal refuses bytes
// (MemoryFallback).
//
// The shipping thread serves the streams a hand-over at a time and runs the stream's pipeline
// on all of it first, so a hand-over's size bounds how long one flooding stream holds up the
// lines of the others; the round bounds how long one FIFO its writer keeps full keeps the
// reader's loop to itself.
#pragma once

#include <cstddef>
#include <vector>

#include "plugin/ingest/line_assembler.h"

namespace skald::hand_over {

// A hand-over ends at kMaxLines lines or once its lines hold kMaxBytes bytes, whichever comes
// first (so it holds at most kMaxBytes plus one line's bytes).
inline constexpr std::size_t kMaxLines = 256;
inline constexpr std::size_t kMaxBytes = 64 * 1024;
// Bytes read from one FIFO per loop round at most (give or take one read(2)).
inline constexpr std::size_t kRoundBytes = 1024 * 1024;

// Whether a hand-over of `lines` lines holding `bytes` bytes is full.
constexpr bool Full(std::size_t lines, std::size_t bytes) {
  return lines >= kMaxLines || bytes >= kMaxBytes;
}

// Bytes of the lines of `lines` from index `from` on (what a hand-over's byte bound counts).
inline std::size_t LineBytesFrom(const std::vector<LogLine>& lines, std::size_t from) {
  std::size_t bytes = 0;
  for (std::size_t i = from; i < lines.size(); ++i) bytes += lines[i].line.size();
  return bytes;
}

}  // namespace skald::hand_over
