// Stream labels: renders a label set as the selector string Loki keys a stream by.
//
// The rendering is stable (one string per label set): names sorted, `{a="x", b="y"}`, values
// quoted the way Go's strconv.Quote does, so the string parses with Loki's own parser. Empty
// values are dropped (Loki drops them too). Names must match [a-zA-Z_][a-zA-Z0-9_]*
// (stages::IsValidLabelName) and be unique; a set left with no label at all is refused, since Loki
// needs one.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace skald {

using StreamLabelSet = std::vector<std::pair<std::string, std::string>>;

// Renders `labels` into `out` (replacing its content). Returns why Loki would refuse them, a
// message naming the offending label when a name is invalid or repeated, or when no label with
// a non-empty value remains; empty when `out` holds the rendering.
std::string RenderStreamLabels(const StreamLabelSet& labels, std::string& out);

}  // namespace skald
