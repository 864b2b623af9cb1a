// StageYamlCache: the parsed `loki-pipeline-stages` of recent containers, by their text.
//
// Containers of one compose file or one daemon.json default share one stages text, and
// parsing it (yaml-cpp's scanner) was a third of the plugin's CPU for a container of a few
// lines with the usual pipeline. A text seen before is copied from its parsed tree instead;
// every caller gets a tree of its own (YAML::Clone), since building a pipeline may add to the
// tree it reads. Bounded: kMaxEntries texts of at most kMaxTextBytes each (a longer one is
// parsed each time), the least recently used going first, and what is kept of a text is a copy
// of its stage list alone (the document around it, which merge keys may have expanded to many
// nodes, goes), and only when that list walks to at most kMaxKeptNodes nodes, an alias counted
// at every use (an alias bomb is parsed each time, and refused each time by the builder). A
// text that does not parse is not kept: it fails the same way each time. Thread-safe.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <list>
#include <string>
#include <string_view>
#include <utility>

namespace skald {

class StageYamlCache {
 public:
  static constexpr std::size_t kMaxEntries = 16;
  static constexpr std::size_t kMaxTextBytes = 64 * 1024;
  static constexpr std::size_t kMaxKeptNodes = 20'000;

  // The stage list `text` holds (stages::Pipeline::StagesFromYaml), as a tree of the caller's
  // own. Throws what StagesFromYaml throws (stages::ConfigError naming the problem).
  YAML::Node StagesOf(std::string_view text) ABSL_LOCKS_EXCLUDED(mu_);

  // Texts kept now.
  std::size_t size() const ABSL_LOCKS_EXCLUDED(mu_);

  // The one the plugin's containers share.
  static StageYamlCache& Shared();

 private:
  mutable absl::Mutex mu_;
  // The most recently used first.
  std::list<std::pair<std::string, YAML::Node>> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace skald
