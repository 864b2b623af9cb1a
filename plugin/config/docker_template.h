// DockerTemplate: the Go-template subset Docker uses for `tag` and skald for the values of
// `loki-external-labels` (moby daemon/logger/templates): fields of the container such as
// {{.Name}}, {{.ID}}, {{.ImageName}}, string literals, pipes, parentheses and Docker's
// functions json, split, join, title, lower, upper, pad, truncate.
//
// Parse() validates the whole template (unknown fields and functions included) and throws
// std::invalid_argument with a message quoting the template. Render() fails only when the output,
// or a value on the way to it, would be longer than kMaxOutputBytes (`{{pad .Name 2000000000 0}}`
// would take 2 GB): it throws std::length_error quoting the template, before building it.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "plugin/config/container_info.h"

namespace skald {

class DockerTemplate {
 public:
  static constexpr std::size_t kMaxOutputBytes = 1 << 20;

  static DockerTemplate Parse(std::string_view text);
  std::string Render(const ContainerInfo& info, const std::string& hostname) const;

  DockerTemplate(DockerTemplate&&) noexcept;
  DockerTemplate& operator=(DockerTemplate&&) noexcept;
  ~DockerTemplate();

  struct Node;

 private:
  DockerTemplate();
  std::string text_;
  std::unique_ptr<Node> root_;
};

}  // namespace skald
