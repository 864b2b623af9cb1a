// ConfigError: a pipeline, relabel rule or stage language that cannot be built.
//
// Thrown only while a pipeline is being built, never while entries run through it. The message
// is for the user: it names the stage (and its position), the field and the bad value, and
// says what would be accepted.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace skald::stages {

// what() is every problem joined by "; "; problems() lists them one by one (a pipeline with
// several broken stages reports each, so a user fixes them in one try).
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(const std::string& message)
      : std::runtime_error(message), problems_{message} {}
  explicit ConfigError(std::vector<std::string> problems)
      : std::runtime_error(Join(problems)), problems_(std::move(problems)) {}
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  static std::string Join(const std::vector<std::string>& problems) {
    std::string out;
    for (const std::string& p : problems) out += (out.empty() ? "" : "; ") + p;
    return out;
  }
  std::vector<std::string> problems_;
};

}  // namespace skald::stages
