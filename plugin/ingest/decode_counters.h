// DecodeCounters: the metrics of decoding container output into lines, shared by the FIFO
// reader's memory streams and its journal streams (JournalStreamDecoder).
#pragma once

#include <cstdint>

#include "plugin/ingest/line_assembler.h"
#include "plugin/metrics/metrics.h"

namespace skald {

struct DecodeCounters {
  explicit DecodeCounters(MetricsRegistry& metrics);

  // Adds what `assembler` counted since `reported` (blank lines, lines cut into pieces) and
  // updates `reported`.
  void ReportAssembler(const LineAssembler& assembler, AssemblerCounts& reported);

  Counter& lines_read;
  Counter& blank_lines;
  Counter& split_lines;
  Counter& corrupt_streams;
  Counter& torn_bytes;
  Counter& lost_bytes;
};

}  // namespace skald
