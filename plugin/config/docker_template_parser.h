// The parser of Docker templates (plugin/config/docker_template.h): `text` -> its Node tree, every
// field and function checked. Throws std::invalid_argument with a message quoting the template.
#pragma once

#include <string_view>

#include "plugin/config/docker_template_node.h"

namespace skald {

DockerTemplate::Node ParseDockerTemplate(std::string_view text);

}  // namespace skald
