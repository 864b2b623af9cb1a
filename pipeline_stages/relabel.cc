#include "pipeline_stages/relabel.h"

#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <map>

#include "pipeline_stages/common/config_error.h"
#include "pipeline_stages/common/did_you_mean.h"
#include "pipeline_stages/go/go_regexp.h"
#include "pipeline_stages/go/go_unicode_case.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {
namespace {

constexpr std::pair<std::string_view, RelabelConfig::Action> kActions[] = {
    {"replace", RelabelConfig::Action::kReplace},
    {"keep", RelabelConfig::Action::kKeep},
    {"drop", RelabelConfig::Action::kDrop},
    {"keepequal", RelabelConfig::Action::kKeepEqual},
    {"dropequal", RelabelConfig::Action::kDropEqual},
    {"labelmap", RelabelConfig::Action::kLabelMap},
    {"labeldrop", RelabelConfig::Action::kLabelDrop},
    {"labelkeep", RelabelConfig::Action::kLabelKeep},
    {"hashmod", RelabelConfig::Action::kHashMod},
    {"lowercase", RelabelConfig::Action::kLowercase},
    {"uppercase", RelabelConfig::Action::kUppercase},
};

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

uint64_t Md5Tail(std::string_view s) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(s.data(), s.size(), digest, &len, EVP_md5(), nullptr);
  uint64_t v = 0;
  for (int i = 8; i < 16; ++i) v = (v << 8) | digest[i];
  return v;
}

}  // namespace

void ExpandRegexTemplate(const RE2& re, std::string_view t, const re2::StringPiece* groups,
                         int ngroups, std::string& out) {
  const auto& names = re.NamedCapturingGroups();
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '$' || i + 1 >= t.size()) {
      out.push_back(t[i]);
      continue;
    }
    if (t[i + 1] == '$') {
      out.push_back('$');
      ++i;
      continue;
    }
    std::string_view name;
    size_t end;
    if (t[i + 1] == '{') {
      const size_t close = t.find('}', i + 2);
      if (close == std::string_view::npos) {
        out.push_back('$');
        continue;
      }
      name = t.substr(i + 2, close - i - 2);
      bool ok = !name.empty();
      for (char c : name) ok &= IsNameChar(c);
      if (!ok) {
        out.push_back('$');
        continue;
      }
      end = close + 1;
    } else {
      size_t j = i + 1;
      while (j < t.size() && IsNameChar(t[j])) ++j;
      if (j == i + 1) {
        out.push_back('$');
        continue;
      }
      name = t.substr(i + 1, j - i - 1);
      end = j;
    }
    int index = -1;
    int num = 0;
    auto r = std::from_chars(name.data(), name.data() + name.size(), num);
    if (r.ec == std::errc() && r.ptr == name.data() + name.size()) {
      index = num;
    } else {
      auto it = names.find(std::string(name));
      if (it != names.end()) index = it->second;
    }
    if (index >= 0 && index < ngroups && groups[index].data()) {
      out.append(groups[index].data(), groups[index].size());
    }
    i = end - 1;
  }
}

RelabelConfig RelabelConfig::FromYaml(std::string_view yaml) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    throw ConfigError("relabel config: invalid YAML at line " + std::to_string(e.mark.line + 1) +
                      ": " + e.msg);
  }
  return FromNode(root);
}

RelabelConfig RelabelConfig::FromNode(const YAML::Node& rules) {
  RelabelConfig config;
  if (!rules || rules.IsNull()) return config;
  if (!rules.IsSequence()) {
    throw ConfigError("relabel config: expected a YAML list of rules, got " + DescribeNode(rules));
  }
  BuildContext build;
  size_t position = 0;
  for (const auto& item : rules) {
    ++position;
    StageContext ctx;
    ctx.build = &build;
    const std::string action_text = item.IsMap() && item["action"] && item["action"].IsScalar()
                                        ? item["action"].Scalar()
                                        : "replace";
    // Prometheus lower-cases the action with strings.ToLower: "\u212Aeep" (a Kelvin sign) is keep.
    const std::string action_lower = GoToLower(action_text);
    ctx.where = "relabel rule " + std::to_string(position) + " (" + action_lower + ")";
    StageConfig c(item, ctx,
                  {"source_labels", "separator", "regex", "modulus", "target_label", "replacement",
                   "action"});
    Rule rule;
    bool known = false;
    for (const auto& [name, action] : kActions) {
      if (name == action_lower) {
        rule.action = action;
        known = true;
      }
    }
    if (!known) {
      std::vector<std::string_view> names;
      for (const auto& a : kActions) names.push_back(a.first);
      std::string msg = Quote(action_text) + " is not a relabel action";
      std::string guess = DidYouMean(action_lower, names);
      if (!guess.empty()) msg += " (did you mean " + guess + "?)";
      msg +=
          "; expected one of replace, keep, drop, keepequal, dropequal, labelmap, labeldrop, "
          "labelkeep, hashmod, lowercase, uppercase";
      c.Fail("action", msg);
    }
    rule.source_labels = c.StringOrList("source_labels");
    for (const auto& l : rule.source_labels) {
      if (!IsValidLabelName(l)) {
        c.Fail("source_labels", Quote(l) + " is not a valid label name ([a-zA-Z_][a-zA-Z0-9_]*)");
      }
    }
    if (c.Has("separator")) rule.separator = c.String("separator");
    if (c.Has("regex")) rule.regex_source = c.String("regex");
    RE2::Options opts;
    opts.set_log_errors(false);
    rule.regex =
        std::make_shared<RE2>("^(?:" + GoRegexpToRe2Syntax(rule.regex_source) + ")$", opts);
    if (!rule.regex->ok()) {
      c.Fail("regex",
             "invalid regular expression " + Quote(rule.regex_source) + ": " + rule.regex->error());
    }
    rule.target_label = c.String("target_label");
    if (c.Has("replacement")) rule.replacement = c.String("replacement");
    if (auto m = c.OptInt("modulus")) {
      if (*m <= 0) c.Fail("modulus", "must be greater than 0");
      rule.modulus = static_cast<uint64_t>(*m);
    }
    switch (rule.action) {
      case Action::kReplace:
        if (rule.target_label.empty()) {
          c.Fail("target_label", "is required for action replace");
        }
        if (rule.target_label.find('$') == std::string::npos &&
            !IsValidLabelName(rule.target_label)) {
          c.Fail("target_label", Quote(rule.target_label) + " is not a valid label name");
        }
        break;
      case Action::kHashMod:
        if (rule.modulus == 0) c.Fail("modulus", "is required for action hashmod");
        [[fallthrough]];
      case Action::kLowercase:
      case Action::kUppercase:
      case Action::kKeepEqual:
      case Action::kDropEqual:
        if (!IsValidLabelName(rule.target_label)) {
          c.Fail("target_label", Quote(rule.target_label) +
                                     " is not a valid label name (required "
                                     "for action " +
                                     action_lower + ")");
        }
        break;
      case Action::kLabelDrop:
      case Action::kLabelKeep:
        if (!rule.source_labels.empty() || !rule.target_label.empty()) {
          c.Fail(rule.source_labels.empty() ? "target_label" : "source_labels",
                 "is not used by action " + action_lower + " (it matches label names with regex)");
        }
        break;
      default:
        break;
    }
    config.rules_.push_back(std::move(rule));
  }
  return config;
}

bool RelabelConfig::Apply(LabelSet& labels) const {
  if (rules_.empty()) return true;
  std::map<std::string, std::string> m;
  labels.ForEach([&](std::string_view n, std::string_view v) { m.emplace(n, v); });
  auto get = [&](const std::string& n) -> std::string {
    auto it = m.find(n);
    return it == m.end() ? std::string() : it->second;
  };
  std::vector<re2::StringPiece> groups;
  std::string val, out;
  for (const Rule& r : rules_) {
    val.clear();
    for (size_t i = 0; i < r.source_labels.size(); ++i) {
      if (i) val += r.separator;
      val += get(r.source_labels[i]);
    }
    groups.assign(r.regex->NumberOfCapturingGroups() + 1, re2::StringPiece());
    switch (r.action) {
      case Action::kDrop:
        if (GoRegexpMatches(*r.regex, val, RE2::ANCHOR_BOTH)) return false;
        break;
      case Action::kKeep:
        if (!GoRegexpMatches(*r.regex, val, RE2::ANCHOR_BOTH)) return false;
        break;
      case Action::kDropEqual:
        if (val == get(r.target_label)) return false;
        break;
      case Action::kKeepEqual:
        if (val != get(r.target_label)) return false;
        break;
      case Action::kReplace: {
        if (!GoRegexpMatch(*r.regex, val, 0, val.size(), RE2::ANCHOR_BOTH, groups.data(),
                           static_cast<int>(groups.size()))) {
          break;
        }
        std::string target;
        ExpandRegexTemplate(*r.regex, r.target_label, groups.data(),
                            static_cast<int>(groups.size()), target);
        if (!IsValidLabelName(target)) break;
        out.clear();
        ExpandRegexTemplate(*r.regex, r.replacement, groups.data(), static_cast<int>(groups.size()),
                            out);
        if (out.empty()) {
          m.erase(target);
        } else {
          m[target] = out;
        }
        break;
      }
      case Action::kLowercase:
      case Action::kUppercase:
        m[r.target_label] = r.action == Action::kLowercase ? GoToLower(val) : GoToUpper(val);
        break;
      case Action::kHashMod:
        m[r.target_label] = std::to_string(Md5Tail(val) % r.modulus);
        break;
      case Action::kLabelMap: {
        std::map<std::string, std::string> added;
        for (const auto& [name, value] : m) {
          if (!GoRegexpMatch(*r.regex, name, 0, name.size(), RE2::ANCHOR_BOTH, groups.data(),
                             static_cast<int>(groups.size()))) {
            continue;
          }
          out.clear();
          ExpandRegexTemplate(*r.regex, r.replacement, groups.data(),
                              static_cast<int>(groups.size()), out);
          if (IsValidLabelName(out)) added[out] = value;
        }
        for (auto& [name, value] : added) m[name] = value;
        break;
      }
      case Action::kLabelDrop:
      case Action::kLabelKeep:
        for (auto it = m.begin(); it != m.end();) {
          const bool match = GoRegexpMatches(*r.regex, it->first, RE2::ANCHOR_BOTH);
          if (match == (r.action == Action::kLabelDrop)) {
            it = m.erase(it);
          } else {
            ++it;
          }
        }
        break;
    }
  }
  std::vector<Label> result;
  for (auto& [n, v] : m) {
    if (!v.empty()) result.push_back(Label{n, v});
  }
  labels = LabelSet::FromVector(std::move(result));
  return true;
}

}  // namespace skald::stages
