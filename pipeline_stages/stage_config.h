// StageContext and StageConfig: what a stage constructor gets, and the helpers that read and
// validate its YAML so that every error names the stage, its position, the field and the value.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline_stages/common/config_error.h"
#include "pipeline_stages/go/go_duration.h"
#include "pipeline_stages/pipeline_observer.h"

namespace skald::stages {

// The largest files a pipeline reads: the stage file, a geoip database.
inline constexpr std::size_t kMaxStageFileBytes = 1024 * 1024;
inline constexpr std::size_t kMaxGeoIpDatabaseBytes = 256 * 1024 * 1024;

// Shared by all stages of one pipeline while it is built and run.
// Opens `path` read-only, for a stage file or a stage's file when no
// PipelineOptions::open_file is given: a descriptor the caller closes, or -1 with *why.
// O_NONBLOCK: a FIFO does not hang the open (the callers refuse anything but a regular file).
int OpenRegularFile(const std::string& path, std::string* why);

struct BuildContext {
  PipelineObserver* observer = nullptr;  // may be null
  const Clock* clock = nullptr;          // never null once the builder set it
  uint64_t seed = 0;                     // for sampling; 0 = from the clock
  std::string owner;                     // PipelineOptions::owner
  std::size_t max_line_size = 0;         // PipelineOptions::max_line_size
  std::function<std::string(const std::string&)> describe_path;  // PipelineOptions::describe_path
  // PipelineOptions::open_file
  std::function<int(const std::string&, std::size_t, std::string*)> open_file;
  // How far the build got (kept by BuildStageList for its bounds): stages begun so far, those
  // inside match stages and every use of a YAML alias included, and the stage lists being
  // built (the top level and one per match stage around the current stage).
  mutable std::size_t stages_begun = 0;
  mutable int lists_open = 0;
  // Problems of stages that could not be built, gathered while the rest is still checked;
  // the outermost list throws them together.
  mutable std::vector<std::string> problems;
};

struct StageContext {
  std::string where;  // "pipeline stage 2 (json)" or "... > stage 1 (json)" inside match
  std::string name;   // "json"
  const BuildContext* build = nullptr;

  void ReportDrop(std::string_view reason) const {
    if (build && build->observer) build->observer->EntryDropped(reason);
  }
  void ReportFailure(std::string_view reason) const {
    if (build && build->observer) build->observer->StageFailed(name, reason);
  }
  int64_t NowNs() const { return build->clock->NowNs(); }
  [[noreturn]] void Fail(std::string_view detail) const;
};

// Reads one stage's config map. Unknown fields are refused (with a did-you-mean).
class StageConfig {
 public:
  StageConfig(const YAML::Node& node, const StageContext& ctx,
              std::vector<std::string_view> known_fields);

  bool Has(std::string_view field) const;
  YAML::Node Get(std::string_view field) const;
  std::optional<std::string> OptString(std::string_view field) const;
  std::string String(std::string_view field, std::string_view def = {}) const;
  std::string RequiredString(std::string_view field) const;
  bool Bool(std::string_view field, bool def) const;
  std::optional<double> OptDouble(std::string_view field) const;
  std::optional<int64_t> OptInt(std::string_view field) const;
  std::optional<int64_t> OptDurationNs(std::string_view field) const;
  // A scalar or a list of scalars.
  std::vector<std::string> StringOrList(std::string_view field) const;

  // `<where>: field "<field>": <detail>`
  [[noreturn]] void Fail(std::string_view field, std::string_view detail) const;
  const StageContext& ctx() const { return ctx_; }

 private:
  YAML::Node node_;
  const StageContext& ctx_;
};

// "value" quoted for messages.
std::string Quote(std::string_view s);
// Byte sizes as Promtail reads them (flagext.ByteSize: c2h5oh/datasize): whole digits, then
// an optional unit, any case: b or byte, k kb kilo kilobyte(s), m mb mega..., g, t, p, e; each
// step is 1024 ("1kb" is 1024 bytes; "1KiB" and "1.5kb" are not sizes). nullopt when invalid.
std::optional<uint64_t> ParseByteSize(std::string_view s);
// The YAML node as a compact flow string for messages.
std::string DescribeNode(const YAML::Node& node);
// A map key's text: its scalar ("null" for an empty key), or its flow form when the key is a
// list or a map (for messages; no stage, field or label has such a name).
std::string KeyText(const YAML::Node& key);
// A map key that names something (an extracted key, a label, a metric): its scalar. Throws
// ConfigError (`<where>: <what> must be a string, got <key>`) for a list or a map.
std::string KeyName(const YAML::Node& key, const StageContext& ctx, std::string_view what);

}  // namespace skald::stages
