// ConfigError: a pipeline, relabel rule or stage language that cannot be built.
//
// Thrown only while a pipeline is being built, never while entries run through it. The message
// is for the user: it names the stage (and its position), the field and the bad value, and
// says what would be accepted.
#pragma once

#include <stdexcept>

namespace skald::stages {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace skald::stages
