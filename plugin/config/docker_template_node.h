// DockerTemplate::Node: a parsed Docker template, as plugin/config/docker_template_parser.h builds
// it and DockerTemplate::Render (docker_template.cc) evaluates it.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "plugin/config/container_info.h"
#include "plugin/config/docker_template.h"

namespace skald {

// What an operand or a command yields: text, a list (split), or a number.
using DockerTemplateValue = std::variant<std::string, std::vector<std::string>, long long>;

// A node is literal text, or an action: a pipeline of commands, each a list of operands.
struct DockerTemplate::Node {
  enum class Kind { kText, kField, kString, kNumber, kFunction, kPipeline, kSequence };
  Kind kind = Kind::kSequence;
  std::string text;                         // literal, field name, function name
  long long number = 0;                     // kNumber
  std::vector<std::vector<Node>> commands;  // kPipeline: commands; each command: operands
  std::vector<Node> children;               // kSequence

  DockerTemplateValue Eval(const ContainerInfo& info, const std::string& host) const;
  static DockerTemplateValue Call(const std::string& fn,
                                  const std::vector<DockerTemplateValue>& args);
};

}  // namespace skald
