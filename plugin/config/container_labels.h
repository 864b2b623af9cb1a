// Container labels: the labels every line of a container carries, from its options and what
// Docker tells of it (before `source`, relabel rules and the pipeline).
//
// In the order the Go driver builds them: loki-external-labels (Docker templates), then the
// container labels and environment variables that labels, labels-regex, env and env-regex
// select (names with '.' and '-' become '_'), compose and swarm labels, `host`, and `tag`.
#pragma once

#include <string>
#include <string_view>

#include "plugin/config/container_info.h"
#include "plugin/config/log_options.h"
#include "plugin/config/stream_labels.h"

namespace skald {

// Throws OptionError naming the option for a template whose execution fails or whose output is
// too long.
StreamLabelSet BuildContainerLabels(const ContainerInfo& info, const LogOptions& options,
                                    const std::string& hostname);

// `info` with only the environment variables and container labels BuildContainerLabels reads,
// and the command line only when a template of the options names it (what a replay needs; the
// rest may hold secrets). A template naming ContainerLabels keeps all labels; one naming
// ContainerEnv is kept as its output for `hostname` (rendered_templates), never the environment.
ContainerInfo KeepLabelSources(const ContainerInfo& info, const LogOptions& options,
                               const std::string& hostname);

// Whether a template of the options (loki-external-labels, tag) names `field` of logger.Info.
bool TemplatesName(const LogOptions& options, std::string_view field);

}  // namespace skald
