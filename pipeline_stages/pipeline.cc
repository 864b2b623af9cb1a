#include "pipeline_stages/pipeline.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "pipeline_stages/stage_registry.h"
#include "pipeline_stages/tenant_id.h"
#include "pipeline_stages/yaml_merge_keys.h"

namespace skald::stages {
namespace {

uint64_t g_sampling_seed = 0;

// Reads the open file `fd` whole when it is a regular file of at most `max_bytes`; else
// returns why not. Closes `fd`.
std::string ReadRegularFile(int fd, std::size_t max_bytes, std::string* out) {
  struct stat st {};
  std::string why;
  if (::fstat(fd, &st) != 0) {
    why = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    why = S_ISDIR(st.st_mode) ? "a directory, not a file" : "not a regular file";
  } else if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    why = "larger than " + std::to_string(max_bytes) + " bytes";
  }
  char buf[16384];
  while (why.empty()) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) why = std::strerror(errno);
    if (n <= 0) break;
    if (out->size() + static_cast<std::size_t>(n) > max_bytes) {
      why = "larger than " + std::to_string(max_bytes) + " bytes";
      break;
    }
    out->append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return why;
}

YAML::Node ParseYaml(std::string_view text, std::string_view what) {
  try {
    return ApplyYamlMergeKeys(YAML::Load(std::string(text)), text, what);
  } catch (const YAML::Exception& e) {
    throw ConfigError(std::string(what) + ": invalid YAML at line " +
                      std::to_string(e.mark.line + 1) + ", column " +
                      std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
}

// Accepts the list itself or a map {pipeline_stages: list}.
YAML::Node StageList(const YAML::Node& root, std::string_view what) {
  if (root.IsMap()) {
    YAML::Node list = root["pipeline_stages"];
    if (!list) {
      std::string keys;
      for (const auto& kv : root) keys += (keys.empty() ? "" : ", ") + KeyText(kv.first);
      throw ConfigError(std::string(what) + ": expected a top-level pipeline_stages: list, found " +
                        "keys " + keys);
    }
    return list;
  }
  return root;
}

}  // namespace

void Pipeline::SetSamplingSeedForTesting(uint64_t seed) { g_sampling_seed = seed; }

std::unique_ptr<Pipeline> Pipeline::FromNode(const YAML::Node& stages,
                                             const PipelineOptions& options) {
  std::unique_ptr<Pipeline> p(new Pipeline());
  p->build_ = std::make_unique<BuildContext>();
  p->build_->observer = options.observer;
  p->build_->clock = options.clock ? options.clock : &Clock::System();
  p->build_->seed = g_sampling_seed;
  p->build_->owner = options.owner;
  p->build_->max_line_size = options.max_line_size;
  p->build_->describe_path = options.describe_path;
  p->build_->open_file = options.open_file;
  p->keep_extracted_ = options.keep_extracted;
  BuildStageList(stages, *p->build_, "pipeline stage", p->chain_);
  return p;
}

YAML::Node Pipeline::StagesFromYaml(std::string_view stages_yaml) {
  YAML::Node root = ParseYaml(stages_yaml, "pipeline stages");
  return StageList(root, "pipeline stages");
}

YAML::Node Pipeline::StagesFromFile(const std::string& path, const PipelineOptions& options) {
  const std::string what = "pipeline stage file " + Quote(path);
  const std::string where = options.describe_path ? options.describe_path(path) : "";
  std::string why;
  const int fd = options.open_file ? options.open_file(path, kMaxStageFileBytes, &why)
                                   : OpenRegularFile(path, &why);
  if (fd < 0) throw ConfigError(what + where + ": cannot be read: " + why);
  std::string text;
  if (why = ReadRegularFile(fd, kMaxStageFileBytes, &text); !why.empty()) {
    throw ConfigError(what + where + ": cannot be read: " + why);
  }
  YAML::Node root = ParseYaml(text, what);
  if (!root.IsMap() || !root["pipeline_stages"]) {
    throw ConfigError(what + ": expected a top-level pipeline_stages: list");
  }
  return root["pipeline_stages"];
}

std::unique_ptr<Pipeline> Pipeline::FromYaml(std::string_view stages_yaml,
                                             const PipelineOptions& options) {
  return FromNode(StagesFromYaml(stages_yaml), options);
}

std::unique_ptr<Pipeline> Pipeline::FromFile(const std::string& path,
                                             const PipelineOptions& options) {
  return FromNode(StagesFromFile(path, options), options);
}

std::unique_ptr<Pipeline> Pipeline::FromYaml(std::string_view stages_yaml,
                                             PipelineObserver* observer, const Clock* clock) {
  PipelineOptions options;
  options.observer = observer;
  options.clock = clock;
  return FromYaml(stages_yaml, options);
}

std::unique_ptr<Pipeline> Pipeline::FromFile(const std::string& path, PipelineObserver* observer,
                                             const Clock* clock) {
  PipelineOptions options;
  options.observer = observer;
  options.clock = clock;
  return FromFile(path, options);
}

void Pipeline::Output::Emit(Entry&& entry) {
  TakeTenantLabel(entry);
  // The extracted map stays for the next entry (or is freed): entries leave without one.
  if (pipeline_->keep_extracted_) {
    entry.extracted.MaterializeAll();
  } else if (!pipeline_->spare_.has_storage()) {
    pipeline_->spare_ = std::move(entry.extracted);
  } else {
    entry.extracted = Extracted();
  }
  out->push_back(std::move(entry));
}

void Pipeline::Process(Entry&& entry, std::vector<Entry>& out) {
  Run(std::move(entry), nullptr, out);
}

void Pipeline::Process(Entry&& entry, const std::vector<std::pair<std::string, Value>>& seed,
                       std::vector<Entry>& out) {
  Run(std::move(entry), &seed, out);
}

void Pipeline::Run(Entry&& entry, const std::vector<std::pair<std::string, Value>>* seed,
                   std::vector<Entry>& out) {
  if (chain_.empty()) {
    TakeTenantLabel(entry);
    out.push_back(std::move(entry));
    return;
  }
  if (spare_.has_storage()) entry.extracted = std::move(spare_);
  entry.extracted.Reset(entry.labels.SharedBase());
  if (seed) {
    for (const auto& [key, value] : *seed) {
      if (!entry.labels.Contains(key)) entry.extracted.Upsert(key) = value;
    }
  }
  output_.out = &out;
  chain_.Run(entry, output_);
  if (entry.extracted.has_storage() && !spare_.has_storage()) {
    spare_ = std::move(entry.extracted);
  }
}

void Pipeline::Flush(int64_t now_ns, bool final, std::vector<Entry>& out) {
  output_.out = &out;
  chain_.Flush(now_ns, final, output_);
}

}  // namespace skald::stages
