#include "plugin/common/user_files.h"

#include <absl/synchronization/mutex.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "plugin/common/posix_file.h"

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

absl::Mutex g_root_mu;
std::string& Root() {
  static std::string* root = new std::string;
  return *root;
}

std::string RealPath(const std::string& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) return "";
  std::string out(real);
  std::free(real);
  return out;
}

// Why the file open as `fd` is not one to read (not regular, too large), or "".
std::string FileRefusal(int fd, std::size_t max_bytes) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return std::strerror(errno);
  if (!S_ISREG(st.st_mode)) {
    return S_ISDIR(st.st_mode)                          ? "a directory, not a file"
           : S_ISFIFO(st.st_mode)                       ? "a FIFO, not a regular file"
           : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device, not a regular file"
                                                        : "not a regular file";
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return "larger than " + std::to_string(max_bytes) + " bytes (" + std::to_string(st.st_size) +
           ")";
  }
  return "";
}

bool Inside(const std::string& path, const std::string& dir) {
  return !dir.empty() && path.rfind(dir + "/", 0) == 0;
}

// Opens `path` as a user file of at most `max_bytes`, or returns an empty fd with *why. With a
// root, the path is resolved (without opening anything) and must lie inside it, and the file
// opened is checked again by its descriptor's own path: a symlink swapped in between is caught.
// Nothing is said of a path outside the root but that it is outside.
UniqueFd OpenUserFile(const std::string& path, std::size_t max_bytes, std::string* why) {
  std::string root;
  {
    absl::MutexLock lock(&g_root_mu);
    root = Root();
  }
  const std::string outside = "not in " + root + " (option files are read from there only)";
  std::string real_root;
  if (!root.empty()) {
    real_root = RealPath(root);
    const std::string real = RealPath(path);
    if (real.empty()) {
      const int err = errno;
      const bool lexically_inside =
          Inside(std::filesystem::path(path).lexically_normal().string(), root);
      *why = lexically_inside ? std::strerror(err) : outside;
      return UniqueFd();
    }
    if (!Inside(real, real_root)) {
      *why = outside;
      return UniqueFd();
    }
  }
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd) {
    *why = std::strerror(errno);
    return UniqueFd();
  }
  if (!root.empty()) {
    char opened[4096];
    const std::string link = "/proc/self/fd/" + std::to_string(fd.get());
    const ssize_t n = readlink(link.c_str(), opened, sizeof opened - 1);
    if (n <= 0 || !Inside(std::string(opened, static_cast<std::size_t>(n)), real_root)) {
      *why = outside;
      return UniqueFd();
    }
  }
  if (std::string refusal = FileRefusal(fd.get(), max_bytes); !refusal.empty()) {
    *why = refusal;
    return UniqueFd();
  }
  return fd;
}

}  // namespace

void SetUserFilesRoot(std::string root) {
  absl::MutexLock lock(&g_root_mu);
  Root() = std::move(root);
}

int OpenUserFileDescriptor(const std::string& path, std::size_t max_bytes, std::string* why) {
  UniqueFd fd = OpenUserFile(path, max_bytes, why);
  return fd ? fd.release() : -1;
}

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

std::string ReadUserFile(std::string_view option, const std::string& path, std::size_t max_bytes,
                         std::string& out) {
  const auto fail = [&](const std::string& why) {
    return std::string(option) + ": cannot read '" + path + "' (inside the plugin" +
           HostLocationOf(path) + "): " + why;
  };
  std::string why;
  const UniqueFd fd = OpenUserFile(path, max_bytes, &why);
  if (!fd) return fail(why);
  std::error_code ec;
  if (!ReadToEnd(fd.get(), max_bytes, 0, out, ec)) {
    return fail(ec.value() == EFBIG ? "longer than " + std::to_string(max_bytes) + " bytes"
                                    : ec.message());
  }
  return "";
}

}  // namespace skald
