#include "plugin/loki/loki_credentials.h"

#include <cctype>
#include <cstddef>
#include <string_view>
#include <utility>

#include "plugin/common/user_files.h"

namespace skald {
namespace {

// A secret file's content without trailing white space (a newline an editor adds), into
// `out`; returns why it cannot be used ("" when it can).
std::string ReadSecret(std::string_view option, const std::string& path, std::string& out) {
  if (std::string why = ReadUserFile(option, path, kMaxSecretFileBytes, out); !why.empty()) {
    return why;
  }
  while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
  if (out.empty()) return std::string(option) + ": '" + path + "' is empty";
  for (unsigned char c : out) {
    if (c < 0x20 || c == 0x7f)
      return std::string(option) + ": '" + path + "' holds a control character";
  }
  return "";
}

}  // namespace

std::string LoadLokiCredentials(const LokiClientConfig& config, const ParsedUrl& url,
                                LokiCredentials& out) {
  LokiCredentials c;
  if (url.has_userinfo) {
    c.basic_user = url.user;
    c.basic_password = url.password;
  }
  const LokiAuthConfig& a = config.auth;
  if (!a.basic_username.empty()) {
    c.basic_user = a.basic_username;
    if (std::string why =
            ReadSecret("loki-basic-auth-password-file", a.basic_password_file, c.basic_password);
        !why.empty()) {
      return why;
    }
  }
  c.bearer = a.bearer_token;
  if (!a.bearer_token_file.empty()) {
    if (std::string why = ReadSecret("loki-bearer-token-file", a.bearer_token_file, c.bearer);
        !why.empty()) {
      return why;
    }
  }
  out = std::move(c);
  return "";
}

}  // namespace skald
