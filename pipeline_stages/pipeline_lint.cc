#include "pipeline_stages/pipeline_lint.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>

#include "pipeline_stages/stage_config.h"

namespace skald::stages {
namespace {

// One stage in the order entries meet it; match stages' own stages in their place.
struct FlatStage {
  std::string where;  // "pipeline stage 2 (json)", "pipeline stage 3 (match) > stage 1 (json)"
  std::string name;
  YAML::Node config;
};

void Flatten(const YAML::Node& stages, const std::string& prefix, std::vector<FlatStage>& out,
             int depth) {
  if (!stages || !stages.IsSequence() || depth > 16) return;
  std::size_t position = 0;
  for (const auto& item : stages) {
    ++position;
    if (!item.IsMap() || item.size() != 1) continue;
    const auto kv = *item.begin();
    const std::string name = kv.first.as<std::string>();
    const std::string where = prefix + " " + std::to_string(position) + " (" + name + ")";
    out.push_back({where, name, kv.second});
    if (name == "match" && kv.second.IsMap()) {
      Flatten(kv.second["stages"], where + " > stage", out, depth + 1);
    }
  }
}

std::string ScalarOr(const YAML::Node& config, const char* key, std::string fallback = "") {
  if (!config.IsMap()) return fallback;
  YAML::Node v = config[key];
  return v && v.IsScalar() ? v.Scalar() : fallback;
}

// The fields a parser stage puts into the extracted map.
std::vector<std::string> Extracts(const FlatStage& s) {
  std::vector<std::string> names;
  if (!s.config.IsMap()) return names;
  if (s.name == "json" || s.name == "logfmt") {
    YAML::Node m = s.config[s.name == "json" ? "expressions" : "mapping"];
    if (m && m.IsMap()) {
      for (const auto& kv : m) names.push_back(kv.first.as<std::string>());
    }
  } else if (s.name == "regex") {
    static const RE2 kGroup(R"(\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>)");
    re2::StringPiece expr_text;
    const std::string expr = ScalarOr(s.config, "expression");
    expr_text = expr;
    std::string group;
    while (RE2::FindAndConsume(&expr_text, kGroup, &group)) names.push_back(group);
  }
  return names;
}

// The fields of the extracted map a stage reads. `all` is set when it may read any (a
// template that passes `.` whole).
void Reads(const FlatStage& s, std::set<std::string>& fields, bool& all) {
  const YAML::Node& c = s.config;
  auto source = [&](const char* key = "source") {
    std::string v = ScalarOr(c, key);
    if (!v.empty()) fields.insert(v);
  };
  auto map_sources = [&](const YAML::Node& m) {
    if (!m || !m.IsMap()) return;
    for (const auto& kv : m) {
      const std::string key = kv.first.as<std::string>();
      const std::string value = kv.second.IsScalar() ? kv.second.Scalar() : "";
      fields.insert(value.empty() ? key : value);
    }
  };
  auto template_text = [&](const std::string& text) {
    static const RE2 kField(R"(\.([A-Za-z_][A-Za-z0-9_]*))");
    static const RE2 kIndexed(R"(index\s+\.\s+"([^"]*)\")");
    static const RE2 kWholeDot(R"((?:^|[\s(|{])\.(?:$|[\s)|}]))");
    re2::StringPiece rest(text);
    std::string name;
    while (RE2::FindAndConsume(&rest, kField, &name)) fields.insert(name);
    rest = re2::StringPiece(text);
    while (RE2::FindAndConsume(&rest, kIndexed, &name)) fields.insert(name);
    if (RE2::PartialMatch(text, kWholeDot)) all = true;
  };
  if (s.name == "labels" || s.name == "structured_metadata" || s.name == "non_indexed_labels") {
    map_sources(c);
  } else if (s.name == "output" || s.name == "timestamp" || s.name == "tenant" ||
             s.name == "geoip" || s.name == "json" || s.name == "regex" || s.name == "logfmt") {
    source();
  } else if (s.name == "replace") {
    source();
    template_text(ScalarOr(c, "replace"));
  } else if (s.name == "template") {
    // The template's .Value is its source field; it writes the field too.
    source();
    template_text(ScalarOr(c, "template"));
  } else if (s.name == "drop") {
    if (c.IsMap() && c["source"] && c["source"].IsSequence()) {
      for (const auto& v : c["source"]) {
        if (v.IsScalar()) fields.insert(v.Scalar());
      }
    } else {
      source();
    }
  } else if (s.name == "pack") {
    if (c.IsMap() && c["labels"] && c["labels"].IsSequence()) {
      for (const auto& v : c["labels"]) {
        if (v.IsScalar()) fields.insert(v.Scalar());
      }
    } else {
      source("labels");
    }
  } else if (s.name == "metrics" && c.IsMap()) {
    for (const auto& kv : c) {
      const std::string name = kv.first.as<std::string>();
      fields.insert(ScalarOr(kv.second, "source", name));
    }
  }
}

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + Quote(n);
  return out;
}

}  // namespace

bool LooksLikeAnId(std::string_view name) {
  std::string n;
  for (char ch : name) {
    if (ch == '_' || ch == '-' || ch == '.') continue;
    n += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  static constexpr std::string_view kIds[] = {
      "id",        "uuid",          "guid",      "traceid",   "spanid",
      "parentid",  "parentspanid",  "requestid", "reqid",     "correlationid",
      "sessionid", "transactionid", "txid",      "messageid", "msgid",
      "eventid",   "userid",        "orderid",   "jobrunid",  "executionid",
  };
  for (std::string_view id : kIds) {
    if (n == id) return true;
  }
  return n.find("uuid") != std::string::npos || n.find("traceid") != std::string::npos ||
         n.find("spanid") != std::string::npos || n.find("requestid") != std::string::npos;
}

std::vector<std::string> LintPipeline(const YAML::Node& stages) {
  std::vector<FlatStage> flat;
  Flatten(stages, "pipeline stage", flat, 0);
  std::vector<std::string> findings;
  for (std::size_t i = 0; i < flat.size(); ++i) {
    const std::vector<std::string> extracted = Extracts(flat[i]);
    if (extracted.empty()) continue;
    std::set<std::string> read;
    bool reads_all = false;
    for (std::size_t j = i + 1; j < flat.size(); ++j) Reads(flat[j], read, reads_all);
    if (reads_all) continue;
    std::vector<std::string> unused;
    for (const std::string& name : extracted) {
      if (!read.count(name)) unused.push_back(name);
    }
    if (unused.empty()) continue;
    if (unused.size() == extracted.size()) {
      findings.push_back(flat[i].where + ": no later stage reads what it extracts (" +
                         Join(unused) +
                         "), so it does nothing: add a labels, structured_metadata, output or "
                         "timestamp stage that uses them, or remove it");
    } else {
      findings.push_back(flat[i].where + ": extracts " + Join(unused) +
                         " but no later stage reads " + (unused.size() == 1 ? "it" : "them") +
                         " (labels, structured_metadata, output, timestamp, template, ...); the "
                         "work is thrown away");
    }
  }
  for (const FlatStage& s : flat) {
    if (s.name != "labels" || !s.config.IsMap()) continue;
    for (const auto& kv : s.config) {
      const std::string label = kv.first.as<std::string>();
      const std::string from =
          kv.second.IsScalar() && !kv.second.Scalar().empty() ? kv.second.Scalar() : label;
      if (!LooksLikeAnId(label) && !LooksLikeAnId(from)) continue;
      findings.push_back(s.where + ": label " + Quote(label) + " comes from the field " +
                         Quote(from) +
                         ", which looks like an id: every value makes a new stream, which Loki "
                         "limits (and slows every query on); put it in a structured_metadata "
                         "stage instead, where it stays searchable");
    }
  }
  return findings;
}

}  // namespace skald::stages
