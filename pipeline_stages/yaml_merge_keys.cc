#include "pipeline_stages/yaml_merge_keys.h"

#include <string>
#include <vector>

#include "pipeline_stages/common/config_error.h"

namespace skald::stages {
namespace {

class Merger {
 public:
  explicit Merger(std::string_view what) : what_(what) {}

  YAML::Node Copy(const YAML::Node& node) {
    if (++built_ > kMaxMergedYamlNodes) {
      throw ConfigError(what_ + ": the YAML expands to more than " +
                        std::to_string(kMaxMergedYamlNodes) + " nodes (nested aliases)");
    }
    switch (node.Type()) {
      case YAML::NodeType::Sequence: {
        YAML::Node out(YAML::NodeType::Sequence);
        for (const YAML::Node& item : node) out.push_back(Copy(item));
        return out;
      }
      case YAML::NodeType::Map:
        return CopyMap(node);
      default:
        return YAML::Clone(node);  // a scalar or null, with its tag
    }
  }

 private:
  YAML::Node CopyMap(const YAML::Node& node) {
    YAML::Node out(YAML::NodeType::Map);
    std::vector<YAML::Node> merged;  // the maps `<<` names, in order
    for (const auto& kv : node) {
      if (kv.first.IsScalar() && kv.first.Scalar() == "<<" && kv.first.Tag() != "!") {
        const YAML::Node& value = kv.second;
        if (value.IsMap()) {
          merged.push_back(value);
        } else if (value.IsSequence()) {
          for (const YAML::Node& m : value) {
            if (!m.IsMap()) throw Bad(m);
            merged.push_back(m);
          }
        } else {
          throw Bad(value);
        }
        continue;
      }
      out[Copy(kv.first)] = Copy(kv.second);
    }
    const YAML::Node& lookup = out;  // the const [] finds without adding
    for (const YAML::Node& m : merged) {
      for (const auto& kv : CopyMap(m)) {
        if (kv.first.IsScalar() && !lookup[kv.first.Scalar()]) out[kv.first] = kv.second;
      }
    }
    return out;
  }

  ConfigError Bad(const YAML::Node& value) const {
    return ConfigError(what_ + ": a merge key (<<) at line " +
                       std::to_string(value.Mark().line + 1) +
                       " names something other than a map or a list of maps");
  }

  std::string what_;
  std::size_t built_ = 0;
};

}  // namespace

YAML::Node ApplyYamlMergeKeys(const YAML::Node& root, std::string_view text,
                              std::string_view what) {
  if (text.find("<<") == std::string_view::npos) return root;
  return Merger(what).Copy(root);
}

}  // namespace skald::stages
