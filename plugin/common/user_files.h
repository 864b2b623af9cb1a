// User files: what a user hands the plugin by path (TLS files, token and password files, a
// stage file, a GeoIP database) is read inside the plugin. In the managed plugin the one host
// directory it sees is its own, STATE_DIR (/var/lib/skald): Docker keeps it on the host as
// <data-root>/plugins/<plugin id>/propagated-mount. The plugin makes a `files` directory there;
// a file put on the host in .../propagated-mount/files/NAME is /var/lib/skald/files/NAME for
// the options. Errors name the path looked up and, for such a path, where it is on the host.
//
// Options are a container's input: once the plugin serves (SetUserFilesRoot), a file an option
// names is read only from that `files` directory (symlinks resolved and still inside it), only
// when it is a regular file, and only up to its kind's size: never a device, a FIFO, a
// directory, the journals or the secrets the state directory holds.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace skald {

// Size limits by kind of file (the stage file's and a geoip database's are the pipeline's:
// stages::kMaxStageFileBytes, stages::kMaxGeoIpDatabaseBytes).
inline constexpr std::size_t kMaxSecretFileBytes = 64 * 1024;
inline constexpr std::size_t kMaxTlsFileBytes = 1024 * 1024;

// The directory option files must lie in (its real path is taken when it is used). Empty, as
// before any call: any path (tests and the command-line tools, which read what their user
// names). Set once by the serving plugin before it takes requests.
void SetUserFilesRoot(std::string root);

// Opens `path` as a user file of at most `max_bytes`: inside the root (when one is set) once
// symlinks are resolved, a regular file, not larger. A descriptor the caller reads and closes
// (reading from it, not from the path again, leaves no moment to swap the file), or -1 with
// *why (without the option's name; the path is the caller's to show).
int OpenUserFileDescriptor(const std::string& path, std::size_t max_bytes, std::string* why);

// Reads `path`, named by `option`, whole (at most `max_bytes`) into `out`, opened as
// OpenUserFileDescriptor says. Returns why it cannot (naming the option, the path, the reason
// and the host location), empty when `out` holds the file.
std::string ReadUserFile(std::string_view option, const std::string& path, std::size_t max_bytes,
                         std::string& out);

// "; on the host: <data-root>/plugins/<id>/propagated-mount/REST" for a path under STATE_DIR
// when running as a managed plugin, else "".
std::string HostLocationOf(const std::string& path);

}  // namespace skald
