// DockerTemplate: the Go-template subset Docker uses for `tag` and skald for the values of
// `loki-external-labels` (moby daemon/logger/templates): fields of the container such as
// {{.Name}}, {{.ID}}, {{.ImageName}}, string literals, pipes, parentheses and Docker's
// functions json, split, join, title, lower, upper, pad, truncate.
//
// Parse() validates the whole template (unknown fields and functions included) and throws
// std::invalid_argument with a message quoting the template; Render() cannot fail.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "plugin/container_info.h"

namespace skald {

class DockerTemplate {
 public:
  static DockerTemplate Parse(std::string_view text);
  std::string Render(const ContainerInfo& info, const std::string& hostname) const;

  DockerTemplate(DockerTemplate&&) noexcept;
  DockerTemplate& operator=(DockerTemplate&&) noexcept;
  ~DockerTemplate();

  struct Node;

 private:
  DockerTemplate();
  std::unique_ptr<Node> root_;
};

}  // namespace skald
