// Pipeline: the stages of one container stream, built from YAML, run one entry at a time.
//
// Build with FromYaml (the inline list of loki-pipeline-stages) or FromFile (a file whose top
// level is `pipeline_stages:`); both throw ConfigError naming the stage, field and value.
// Process runs an entry through the stages and appends what comes out (zero, one or several
// entries) to `out`; Flush releases entries that stages hold (multiline blocks, rate-limited or
// partial CRI entries) whose time has come, or all of them when `final` (end of stream).
// One Pipeline per stream, called from one thread at a time; it never blocks or sleeps.
// The metrics its stages declared to the observer are withdrawn when it is destroyed.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline_stages/entry.h"
#include "pipeline_stages/pipeline_observer.h"
#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace YAML {
class Node;
}

namespace skald::stages {

// What a pipeline is built with besides its stages.
struct PipelineOptions {
  PipelineObserver* observer = nullptr;  // may be null; must outlive the pipeline
  const Clock* clock = nullptr;          // null = the system clock; must outlive the pipeline
  // Whom the pipeline serves, as messages about it name it to others (e.g. the container: a
  // metric declared here and refused to another pipeline is "declared by <owner>, <stage>").
  std::string owner;
  // The longest line the host sends on (loki-max-line-size): a multiline block is emitted when
  // it reaches this many bytes. 0 = no bound.
  std::size_t max_line_size = 0;
  // What errors about a file a stage opens (geoip's db) add after its path to say where it is
  // for the host, e.g. " (inside the plugin; on the host: ...)". Null: nothing.
  std::function<std::string(const std::string& path)> describe_path;
  // Opens a file the stage file option or a stage (geoip's db) names, by the host's rule (where
  // such files must lie): a descriptor the caller closes, or -1 with *why. The file is read from
  // that descriptor only, so nothing can be swapped in between the check and the read. Null:
  // any regular file within its kind's size (OpenRegularFile). Whatever it opens, only regular
  // files are read, and only up to kMaxStageFileBytes (the stage file) or
  // kMaxGeoIpDatabaseBytes (a geoip database).
  std::function<int(const std::string& path, std::size_t max_bytes, std::string* why)> open_file;
  // For tools and tests: entries leave with their extracted map (what the stages extracted,
  // the initial labels included), so that it can be shown or compared. Off: they leave
  // without one, and the map's storage serves the next entry.
  bool keep_extracted = false;
};

class Pipeline {
 public:
  static std::unique_ptr<Pipeline> FromYaml(std::string_view stages_yaml,
                                            const PipelineOptions& options);
  static std::unique_ptr<Pipeline> FromFile(const std::string& path,
                                            const PipelineOptions& options);
  // The list of stages FromYaml and FromFile build from (for tools that read it, such as the
  // lint); throw ConfigError as they do.
  static YAML::Node StagesFromYaml(std::string_view stages_yaml);
  static YAML::Node StagesFromFile(const std::string& path, const PipelineOptions& options = {});
  // The YAML list of stages, already parsed.
  static std::unique_ptr<Pipeline> FromNode(const YAML::Node& stages,
                                            const PipelineOptions& options);
  // Shorthands for tests and tools.
  static std::unique_ptr<Pipeline> FromYaml(std::string_view stages_yaml,
                                            PipelineObserver* observer = nullptr,
                                            const Clock* clock = nullptr);
  static std::unique_ptr<Pipeline> FromFile(const std::string& path,
                                            PipelineObserver* observer = nullptr,
                                            const Clock* clock = nullptr);

  // The entry is moved from (or left as it was, when dropped); the copying overload is for
  // callers that keep theirs.
  void Process(Entry&& entry, std::vector<Entry>& out);
  void Process(const Entry& entry, std::vector<Entry>& out) { Process(Entry(entry), out); }
  // For tools and tests: Process with `seed` in the extracted map before the first stage (as
  // Promtail's own tests build entries with a filled map); a label of the entry wins over a
  // seeded key of the same name, as the reference copies labels in over the map it is given.
  void Process(Entry&& entry, const std::vector<std::pair<std::string, Value>>& seed,
               std::vector<Entry>& out);
  // `now_ns` is read from the same clock the pipeline was built with.
  void Flush(int64_t now_ns, bool final, std::vector<Entry>& out);
  // True while a stage holds entries (multiline, limit, cri) that Process or Flush will emit
  // later; false means every entry given so far has come out or was dropped.
  bool Holds() const { return chain_.Holds(); }
  // Line bytes of what its stages hold.
  size_t HeldBytes() const { return chain_.HeldBytes(); }
  // The smallest Entry::origin among held entries; nullopt when none is held.
  std::optional<uint64_t> OldestHeldOrigin() const { return chain_.OldestHeldOrigin(); }

  bool empty() const { return chain_.empty(); }
  size_t size() const { return chain_.size(); }

  // For tests: fixes the random seed of sampling stages built afterwards (0 = from the clock).
  static void SetSamplingSeedForTesting(uint64_t seed);

 private:
  class Output final : public Downstream {
   public:
    explicit Output(Pipeline* p) : pipeline_(p) {}
    void Emit(Entry&& entry) override;
    std::vector<Entry>* out = nullptr;

   private:
    Pipeline* pipeline_;
  };

  Pipeline() : output_(this) {}
  // Process, with `seed` (when not null) set in the extracted map before the first stage.
  void Run(Entry&& entry, const std::vector<std::pair<std::string, Value>>* seed,
           std::vector<Entry>& out);

  std::unique_ptr<BuildContext> build_;
  StageChain chain_;
  Output output_;
  Extracted spare_;  // recycled extracted storage
  bool keep_extracted_ = false;
};

}  // namespace skald::stages
