// YamlAliasBomb: loki-pipeline-stages YAML whose `match` stages nest through aliases, each
// level using the one below `uses` times: uses^depth stages if every use of an alias were
// built (8 deep, 10 uses: 776 bytes, 1.1 * 10^8 stages).
#pragma once

#include <string>

namespace skald::testkit {

inline std::string YamlAliasBomb(int depth = 8, int uses = 10) {
  std::string yaml = "- &s0 {match: {selector: '{a=\"b\"}', stages: [{static_labels: {x: y}}]}}\n";
  for (int level = 1; level <= depth; ++level) {
    const std::string use = "*s" + std::to_string(level - 1);
    yaml += "- &s" + std::to_string(level) + " {match: {selector: '{a=\"b\"}', stages: [" + use;
    for (int k = 1; k < uses; ++k) yaml += "," + use;
    yaml += "]}}\n";
  }
  return yaml;
}

}  // namespace skald::testkit
