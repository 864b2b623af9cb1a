// Helpers shared by the fuzz targets: invariant checks that stop the run, splitting an input
// into parts, a scratch directory per process, and sample lines to run parsed configurations on.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace skald::fuzz {

// An invariant the code under test must keep: a violation is reported and aborts, so that
// libFuzzer saves the input as a crash.
#define FUZZ_CHECK(cond)                                                                \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)

inline std::string_view AsView(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

// Splits `text` at every '\n' (a trailing newline gives a last empty part).
inline std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> parts;
  for (;;) {
    const size_t nl = text.find('\n');
    parts.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) return parts;
    text.remove_prefix(nl + 1);
  }
}

// The first line of `text` and the rest after its newline (empty when there is none).
inline std::pair<std::string_view, std::string_view> FirstLine(std::string_view text) {
  const size_t nl = text.find('\n');
  if (nl == std::string_view::npos) return {text, {}};
  return {text.substr(0, nl), text.substr(nl + 1)};
}

// An empty directory of this process under $TMPDIR (or /tmp), emptied again by Reset() and
// removed at exit.
class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/skald-fuzz-XXXXXX";
    if (mkdtemp(templ.data()) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    path_ = templ;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // Removes everything inside (the directory stays).
  void Reset() const {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(path_, ec)) {
      std::filesystem::remove_all(entry.path(), ec);
    }
  }

 private:
  std::filesystem::path path_;
};

// Lines of the formats stages parse, to run a parsed configuration on.
inline const std::vector<std::string>& SampleLines() {
  static const std::vector<std::string> lines = {
      R"({"level":"error","msg":"disk full","ts":"2024-05-01T10:00:00.123Z","n":42,"user":{"id":7,"tags":["a","b"]}})",
      "level=info msg=\"request done\" status=200 duration=1.5ms path=/api/v1/push",
      "2024-05-01T10:00:00.123456789Z stdout F a CRI line",
      R"({"log":"a docker json line\n","stream":"stderr","time":"2024-05-01T10:00:00.5Z"})",
      "127.0.0.1 - - [01/May/2024:10:00:00 +0000] \"GET / HTTP/1.1\" 200 512",
      "  at com.example.Main.run(Main.java:42)",
      "\x1b[31mcolored\x1b[0m text with unicode \xc3\xa9\xe2\x82\xac",
      "",
  };
  return lines;
}

}  // namespace skald::fuzz
