#include "plugin/common/container_id.h"

#include <algorithm>
#include <cctype>

namespace skald {

bool ValidContainerId(const std::string& id) {
  return !id.empty() && id.size() <= 128 && std::all_of(id.begin(), id.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_';
  });
}

}  // namespace skald
