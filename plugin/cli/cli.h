// The command line, read in one place: serving the Docker plugin API (no command, or
// --socket PATH), and the commands a user runs by hand (`skald options`, `check`, `dry-run`,
// `quarantine`, `--version`, `--help`). One usage text (Usage in cli.cc) describes them all.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace skald {

struct CommandLine {
  // No command was given: the plugin is to serve its API, on `socket_path` when one was given
  // (else the default). Otherwise `status` is the exit status of the command run here.
  bool serve = false;
  std::string socket_path;
  int status = 0;
};

// Reads `args` (without the program name) and runs the command they name, writing to `out` and
// `err`; `version` is what --version prints.
CommandLine RunCommandLine(const std::vector<std::string>& args, std::string_view version,
                           std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace skald
