#include "plugin/driver/stage_yaml_cache.h"

#include <vector>

#include "pipeline_stages/pipeline.h"

namespace skald {
namespace {

// Whether walking `root` visits at most `limit` nodes (an alias at every use). Stops at the
// limit, so a tree that shares its nodes many times over costs no more than that.
bool WalksWithin(const YAML::Node& root, std::size_t limit) {
  std::vector<YAML::Node> to_visit{root};
  std::size_t visited = 0;
  while (!to_visit.empty()) {
    if (++visited > limit) return false;
    const YAML::Node node = to_visit.back();
    to_visit.pop_back();
    if (node.IsSequence()) {
      for (const YAML::Node& item : node) to_visit.push_back(item);
    } else if (node.IsMap()) {
      for (const auto& kv : node) {
        to_visit.push_back(kv.first);
        to_visit.push_back(kv.second);
      }
    }
  }
  return true;
}

}  // namespace

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
  if (!WalksWithin(parsed, kMaxKeptNodes)) return parsed;
  // The copy kept holds the stage list alone: `parsed` shares the memory of the whole document.
  YAML::Node kept_copy = YAML::Clone(parsed);
  absl::MutexLock lock(&mu_);
  for (const auto& [kept, node] : entries_) {
    if (kept == text) return parsed;
  }
  entries_.emplace_front(std::string(text), std::move(kept_copy));
  if (entries_.size() > kMaxEntries) entries_.pop_back();
  return parsed;
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
