// User files: what a user hands the plugin by path (TLS files, token and password files, a
// stage file, a GeoIP database) is read inside the plugin. In the managed plugin the one host
// directory it sees is its own, STATE_DIR (/var/lib/skald): Docker keeps it on the host as
// <data-root>/plugins/<plugin id>/propagated-mount. The plugin makes a `files` directory there;
// a file put on the host in .../propagated-mount/files/NAME is /var/lib/skald/files/NAME for
// the options. Errors name the path looked up and, for such a path, where it is on the host.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace skald {

// Reads `path`, named by `option`, whole (at most `max_bytes`). Returns false and sets *error
// (naming the option, the path, the reason and the host location) when it cannot.
bool ReadUserFile(std::string_view option, const std::string& path, std::size_t max_bytes,
                  std::string* out, std::string* error);

// "; on the host: <data-root>/plugins/<id>/propagated-mount/REST" for a path under STATE_DIR
// when running as a managed plugin, else "".
std::string HostLocationOf(const std::string& path);

}  // namespace skald
