// DockerTemplate: the templates of `tag` and of the values of `loki-external-labels`, as Docker
// and Grafana's driver run them: Go's text/template (the engine of the template stage) over
// Docker's logger.Info, with Go's builtins and Docker's log-tag functions json, split, join,
// title, lower, upper, pad and truncate.
//
// The data is the container as dockerd describes it: the fields Config, ContainerID,
// ContainerName, ContainerEntrypoint, ContainerArgs, ContainerImageID, ContainerImageName,
// ContainerCreated (a time), ContainerEnv, ContainerLabels, LogPath, DaemonName, and the
// methods ID (12 characters), FullID, Name (without the '/'), ImageID (the first 12 characters
// of ContainerImageID, "sha256:" included, as Docker prints it), ImageFullID, ImageName, Command
// and Hostname. `{{index .ContainerLabels "team"}}`, `{{range .ContainerArgs}}`, `{{if}}`,
// `{{printf}}` and `{{eq}}` work as in Go.
//
// Parse() throws std::invalid_argument quoting the template on what Go refuses when it parses
// (syntax, an unknown function, a wrong argument count) and on a field logger.Info lacks, which
// Go reports only when the container starts. Render() throws std::invalid_argument when the
// execution fails as Go's would (`{{index .ContainerArgs 5}}` with two arguments), and
// std::length_error when the output, or a value on the way to it, would be longer than
// kMaxOutputBytes (`{{pad .Name 2000000000 0}}` would take 2 GB), before building it.
#pragma once

#include <string>
#include <string_view>

#include "pipeline_stages/go_template/go_template.h"
#include "plugin/config/container_info.h"

namespace skald {

class DockerTemplate {
 public:
  static constexpr std::size_t kMaxOutputBytes = stages::GoTemplate::kMaxOutputBytes;

  static DockerTemplate Parse(std::string_view text);
  std::string Render(const ContainerInfo& info, const std::string& hostname) const;

 private:
  explicit DockerTemplate(stages::GoTemplate parsed) : parsed_(std::move(parsed)) {}
  stages::GoTemplate parsed_;
};

}  // namespace skald
