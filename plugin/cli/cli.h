// The commands a user runs by hand: `skald check` and `skald dry-run` (see Usage in cli.cc).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace skald {

// Runs `args` (without the program name) when its first word is a command this file serves,
// writing to `out` and `err`; returns the exit status. Returns -1 when it is not one.
int RunCliCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                  std::ostream& err);

}  // namespace skald
