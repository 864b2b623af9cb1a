// YAML merge keys (`<<: *defaults`, `<<: [*a, *b]`): Promtail reads stage files with go-yaml,
// which applies them (YAML 1.1); yaml-cpp leaves `<<` as an ordinary key. Pipelines that share
// settings through merge keys therefore need them applied before a stage reads its config.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string_view>

namespace skald::stages {

// At most this many nodes are built while applying merge keys: aliases are copied at every
// use, so a few hundred bytes of nested aliases could otherwise ask for billions.
inline constexpr std::size_t kMaxMergedYamlNodes = 200'000;

// `root` with every map's `<<` key replaced by the keys of the map it names (or of each map of
// the list it names; an earlier map wins over a later one) that the map does not have itself,
// as go-yaml does. `root` itself when `text` (the YAML it was read from) has no `<<`.
// Throws ConfigError naming `what` when a `<<` names something other than a map or a list of
// maps, or past kMaxMergedYamlNodes.
YAML::Node ApplyYamlMergeKeys(const YAML::Node& root, std::string_view text, std::string_view what);

}  // namespace skald::stages
