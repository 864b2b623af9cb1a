#include "plugin/config/stream_labels.h"

#include <algorithm>
#include <cstdint>

#include "pipeline_stages/entry.h"
#include "pipeline_stages/go/go_string.h"

namespace skald {

std::string RenderStreamLabels(const StreamLabelSet& labels, std::string& out) {
  std::vector<const std::pair<std::string, std::string>*> sorted;
  sorted.reserve(labels.size());
  for (const auto& label : labels) {
    if (!stages::IsValidLabelName(label.first)) {
      return "invalid label name '" + label.first +
             "': a label name must match [a-zA-Z_][a-zA-Z0-9_]*";
    }
    if (!label.second.empty()) sorted.push_back(&label);
  }
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->first < b->first; });
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i]->first == sorted[i - 1]->first) {
      return "duplicate label name '" + sorted[i]->first + "'";
    }
  }
  if (sorted.empty()) {
    return "no label with a non-empty value: Loki needs at least one stream label";
  }
  out.clear();
  out += '{';
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (i > 0) out += ", ";
    out += sorted[i]->first;
    out += '=';
    stages::AppendGoQuoted(sorted[i]->second, &out);
  }
  out += '}';
  return "";
}

}  // namespace skald
