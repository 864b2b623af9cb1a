#include "plugin/ingest/decode_counters.h"

namespace skald {

DecodeCounters::DecodeCounters(MetricsRegistry& metrics)
    : lines_read(metrics.GetCounter("skald_lines_read_total",
                                    "Log lines read from containers (after partial-line "
                                    "assembly; a line cut at loki-max-line-size counts once "
                                    "per piece).")),
      blank_lines(metrics.GetCounter("skald_entries_dropped_total",
                                     "Entries not delivered, by reason.",
                                     {{"reason", "blank_line"}})),
      split_lines(metrics.GetCounter("skald_lines_split_total",
                                     "Lines longer than loki-max-line-size sent as pieces.")),
      corrupt_streams(metrics.GetCounter(
          "skald_streams_corrupt_total",
          "Streams closed (no-file) or journal segments skipped because a frame did not decode.")),
      torn_bytes(metrics.GetCounter(
          "skald_journal_skipped_bytes_total",
          "Journal bytes skipped: frames torn by a crash or a stream cut mid-frame.")),
      lost_bytes(metrics.GetCounter("skald_journal_lost_bytes_total",
                                    "Journal bytes that could not be read (a segment removed "
                                    "by hand, an I/O error): their lines are lost.")) {}

void DecodeCounters::ReportAssembler(const LineAssembler& assembler, AssemblerCounts& reported) {
  const AssemblerCounts& c = assembler.counts();
  blank_lines.Add(c.blank_lines - reported.blank_lines);
  split_lines.Add(c.split_lines - reported.split_lines);
  lines_read.Add(c.blank_lines - reported.blank_lines);  // blank lines were read too
  reported = c;
}

}  // namespace skald
