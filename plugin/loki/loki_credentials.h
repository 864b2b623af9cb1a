// LokiCredentials: what a Loki client authenticates with, read from its configuration (the
// URL's user info, the basic-auth password file, the bearer token or its file).
#pragma once

#include <string>

#include "plugin/loki/loki_client_config.h"
#include "plugin/loki/loki_url.h"

namespace skald {

struct LokiCredentials {
  std::string basic_user;
  std::string basic_password;
  std::string bearer;
  friend bool operator==(const LokiCredentials&, const LokiCredentials&) = default;
};

// Reads what `config` authenticates with (`url` is config.url parsed). Secret files hold at
// most 64 KiB; trailing white space is removed, and an empty file or one with a control
// character is refused. Returns why they cannot be read (naming the option and the file), empty
// when `out` holds them (`out` is left as it was otherwise).
std::string LoadLokiCredentials(const LokiClientConfig& config, const ParsedUrl& url,
                                LokiCredentials& out);

}  // namespace skald
