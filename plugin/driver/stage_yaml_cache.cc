#include "plugin/driver/stage_yaml_cache.h"

#include "pipeline_stages/pipeline.h"

namespace skald {

YAML::Node StageYamlCache::StagesOf(std::string_view text) {
  if (text.size() > kMaxTextBytes) return stages::Pipeline::StagesFromYaml(text);
  {
    absl::MutexLock lock(&mu_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first != text) continue;
      entries_.splice(entries_.begin(), entries_, it);
      // Copied under the lock: the kept tree is only ever read here.
      return YAML::Clone(entries_.front().second);
    }
  }
  // Parsed without the lock (two containers may both parse a new text; one copy is kept).
  YAML::Node parsed = stages::Pipeline::StagesFromYaml(text);
  YAML::Node mine = YAML::Clone(parsed);
  absl::MutexLock lock(&mu_);
  for (const auto& [kept, node] : entries_) {
    if (kept == text) return mine;
  }
  entries_.emplace_front(std::string(text), std::move(parsed));
  if (entries_.size() > kMaxEntries) entries_.pop_back();
  return mine;
}

std::size_t StageYamlCache::size() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

StageYamlCache& StageYamlCache::Shared() {
  static StageYamlCache* cache = new StageYamlCache();  // never destroyed: used until exit
  return *cache;
}

}  // namespace skald
