// timestamp: sets the entry's timestamp from extracted[source], parsed with `format` (a named
// format or a Go layout), then each of `fallback_formats`; `location` (IANA zone) applies to
// texts without a zone. On failure (missing source or no format parses), action_on_failure
// `fudge` (default) sets the last good timestamp of the same label set + 1 ns, if there is
// one; `skip` keeps the entry's timestamp.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "pipeline_stages/go/go_time_layout.h"
#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

class TimestampStage final : public Stage {
 public:
  TimestampStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;

 private:
  struct Format {
    GoTimeLayout layout;
    int64_t int_scale;  // > 0: an integral value is that many ns per unit (Unix* formats)
  };
  std::optional<int64_t> Parse(const Value& v, int64_t now) const;

  StageContext ctx_;
  std::string source_;
  std::vector<Format> formats_;
  bool fudge_;
  std::unordered_map<uint64_t, int64_t> last_;  // label-set hash -> last good timestamp
};

}  // namespace skald::stages
