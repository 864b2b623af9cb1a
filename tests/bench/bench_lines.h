// Pino-style JSON log lines for the benchmarks, like the e2e image's `loggen --json` writes.
//
// PinoLine(seq) is deterministic, about 230 bytes, and varies in level, context, message, and
// trace id from line to line (as a real service's output does, so compression and label
// rendering see realistic input).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace skald::bench {

inline std::string PinoLine(uint64_t seq, int64_t time_ms = 1'700'000'000'000) {
  static const char* const kLevels[] = {"info", "info", "info", "debug", "warn", "error"};
  static const char* const kContexts[] = {"HttpService", "UserRepository", "AuthGuard",
                                          "CacheWarmer"};
  char buf[512];
  const int n = std::snprintf(
      buf, sizeof buf,
      R"({"seq":%llu,"level":"%s","time":%lld,"pid":1,"hostname":"skald-bench-host-01",)"
      R"("context":"%s","msg":"loadgen request handled GET /api/v1/items/%llu status=200 )"
      R"(durationMs=%llu","traceID":"%016llx%016llx"})",
      static_cast<unsigned long long>(seq), kLevels[seq % 6],
      static_cast<long long>(time_ms + static_cast<int64_t>(seq / 50)), kContexts[seq % 4],
      static_cast<unsigned long long>(seq * 7919 % 100000),
      static_cast<unsigned long long>(seq % 97),
      static_cast<unsigned long long>(seq * 2654435761ULL),
      static_cast<unsigned long long>(seq ^ 0x5bd1e995ULL));
  return std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
}

// The issue's seed pipeline: json with 7 expressions, labels level + context, output msg.
inline constexpr const char* kSeedPipeline = R"(
- json:
    expressions:
      output: msg
      level: level
      timestamp: time
      pid: pid
      hostname: hostname
      context: context
      traceID: traceID
- labels:
    level:
    context:
- output:
    source: output
)";

}  // namespace skald::bench
