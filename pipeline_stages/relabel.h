// Relabeling: Prometheus relabel_configs (the loki-relabel-config option), applied to a stream's
// labels once, before its pipeline.
//
// Rules are a YAML list of {source_labels, separator (";"), regex ("(.*)", fully anchored),
// target_label, replacement ("$1"), modulus, action (replace)}; actions replace, keep, drop,
// keepequal, dropequal, labelmap, labeldrop, labelkeep, hashmod, lowercase, uppercase, with
// Prometheus semantics (replacement expands $1, ${1}, $name, ${name} like Go's Regexp.Expand;
// lowercase and uppercase, and the action's own name, map case as Go's strings.ToLower and
// ToUpper do, all of Unicode).
// Build errors throw ConfigError naming the rule (1-based), the field and the value.
#pragma once

#include <re2/re2.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline_stages/entry.h"

namespace YAML {
class Node;
}

namespace skald::stages {

class RelabelConfig {
 public:
  enum class Action {
    kReplace,
    kKeep,
    kDrop,
    kKeepEqual,
    kDropEqual,
    kLabelMap,
    kLabelDrop,
    kLabelKeep,
    kHashMod,
    kLowercase,
    kUppercase,
  };
  struct Rule {
    Action action = Action::kReplace;
    std::vector<std::string> source_labels;
    std::string separator = ";";
    std::string regex_source = "(.*)";
    std::shared_ptr<RE2> regex;  // anchored at both ends
    std::string target_label;
    std::string replacement = "$1";
    uint64_t modulus = 0;
  };

  RelabelConfig() = default;
  // `yaml`: the list of rules (empty text: no rules).
  static RelabelConfig FromYaml(std::string_view yaml);
  static RelabelConfig FromNode(const YAML::Node& rules);

  // Applies every rule in order. Returns false when a rule drops the stream (labels are then
  // unspecified). Labels left with an empty value are removed.
  bool Apply(LabelSet& labels) const;

  bool empty() const { return rules_.empty(); }
  const std::vector<Rule>& rules() const { return rules_; }

 private:
  std::vector<Rule> rules_;
};

// Go's Regexp.Expand of `tmpl` against the groups of a match of `re` on some text:
// $1 ${1} $name ${name}, $$ for a dollar; an unknown group expands to "".
void ExpandRegexTemplate(const RE2& re, std::string_view tmpl, const re2::StringPiece* groups,
                         int ngroups, std::string& out);

}  // namespace skald::stages
