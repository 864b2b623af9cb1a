#include "plugin/loki/loki_credentials.h"

#include <cctype>
#include <cstddef>
#include <string_view>
#include <utility>

#include "plugin/common/user_files.h"

namespace skald {
namespace {

// A secret file's content without trailing white space (a newline an editor adds).
bool ReadSecret(std::string_view option, const std::string& path, std::string* out,
                std::string* error) {
  if (!ReadUserFile(option, path, kMaxSecretFileBytes, out, error)) return false;
  while (!out->empty() && std::isspace(static_cast<unsigned char>(out->back()))) out->pop_back();
  if (out->empty()) {
    *error = std::string(option) + ": '" + path + "' is empty";
    return false;
  }
  for (unsigned char c : *out) {
    if (c < 0x20 || c == 0x7f) {
      *error = std::string(option) + ": '" + path + "' holds a control character";
      return false;
    }
  }
  return true;
}

}  // namespace

bool LoadLokiCredentials(const LokiClientConfig& config, const ParsedUrl& url, LokiCredentials* out,
                         std::string* error) {
  LokiCredentials c;
  if (url.has_userinfo) {
    c.basic_user = url.user;
    c.basic_password = url.password;
  }
  const LokiAuthConfig& a = config.auth;
  if (!a.basic_username.empty()) {
    c.basic_user = a.basic_username;
    if (!ReadSecret("loki-basic-auth-password-file", a.basic_password_file, &c.basic_password,
                    error)) {
      return false;
    }
  }
  c.bearer = a.bearer_token;
  if (!a.bearer_token_file.empty() &&
      !ReadSecret("loki-bearer-token-file", a.bearer_token_file, &c.bearer, error)) {
    return false;
  }
  *out = std::move(c);
  return true;
}

}  // namespace skald
