// A container id as the plugin accepts it. Ids name journal directories, quarantine entries
// and replay markers, so one that could climb out of a directory (`../x`, `a/b`) or name a
// hidden file is refused wherever an id arrives from outside.
#pragma once

#include <string>

namespace skald {

// What Docker produces: letters, digits and '_', 1 to 128 of them.
bool ValidContainerId(const std::string& id);

}  // namespace skald
