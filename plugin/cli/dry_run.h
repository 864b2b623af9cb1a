// DryRun: what `skald dry-run` prints. Each input line is one line a container wrote (to
// stdout, or stderr), framed as dockerd frames it and run through the same labels, relabel
// rules and pipeline stages as in the plugin (a ContainerPipeline); for each, the entries that
// come out (labels, timestamp, line, structured metadata, tenant) or why none did. Nothing is
// sent anywhere.
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <ostream>
#include <string>

#include "plugin/config/log_options.h"
#include "plugin/ingest/line_assembler.h"

namespace skald {

struct DryRunInput {
  LogOptions options;                           // already checked (CheckLoggingConfig)
  std::map<std::string, std::string> log_opts;  // as given: the pretend container's config
  LogSource source = LogSource::kStdout;
  // The time the first line is read at (Unix ns; each next line 1 ms later): lines without a
  // timestamp stage keep it. 0 = now.
  int64_t start_ns = 0;
};

// Returns the number of entries that would be sent.
std::size_t DryRun(const DryRunInput& input, std::istream& lines, std::ostream& out);

// `ns` as RFC 3339 in UTC with the nanoseconds that are not zero ("2026-12-01T18:00:00.5Z").
std::string FormatRfc3339Utc(int64_t ns);

}  // namespace skald
