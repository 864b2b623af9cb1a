#include "plugin/user_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "plugin/posix_file.h"

namespace skald {
namespace {

// The plugin's id: dockerd runs a managed plugin in a cgroup named by it (64 hex digits).
std::string PluginId() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    for (std::size_t i = 0; i + 64 <= line.size(); ++i) {
      std::size_t n = 0;
      while (n < 64 && std::isxdigit(static_cast<unsigned char>(line[i + n])) &&
             !std::isupper(static_cast<unsigned char>(line[i + n]))) {
        ++n;
      }
      if (n == 64 &&
          (i + 64 == line.size() || !std::isxdigit(static_cast<unsigned char>(line[i + 64])))) {
        return line.substr(i, 64);
      }
      i += n;
    }
  }
  return "";
}

}  // namespace

std::string HostLocationOf(const std::string& path) {
  const char* env = std::getenv("STATE_DIR");
  std::string state = env != nullptr && *env != '\0' ? env : "/var/lib/skald";
  while (state.size() > 1 && state.back() == '/') state.pop_back();
  if (path.rfind(state + "/", 0) != 0) return "";
  const std::string id = PluginId();
  if (id.empty()) return "";
  return "; on the host: <docker data root, /var/lib/docker by default>/plugins/" + id +
         "/propagated-mount/" + path.substr(state.size() + 1);
}

bool ReadUserFile(std::string_view option, const std::string& path, std::size_t max_bytes,
                  std::string* out, std::string* error) {
  const auto fail = [&](const std::string& why) {
    *error = std::string(option) + ": cannot read '" + path + "' (inside the plugin" +
             HostLocationOf(path) + "): " + why;
    return false;
  };
  const UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return fail(std::strerror(errno));
  out->clear();
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(std::strerror(errno));
    }
    if (n == 0) break;
    if (out->size() + static_cast<std::size_t>(n) > max_bytes) {
      return fail("longer than " + std::to_string(max_bytes) + " bytes");
    }
    out->append(buf, static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace skald
