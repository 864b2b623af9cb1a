#include "plugin/common/sha256_hex.h"

#include <openssl/evp.h>

namespace skald {

std::string Sha256Hex(std::string_view data, std::size_t hex_chars) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len && out.size() < hex_chars; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xF];
  }
  return out;
}

}  // namespace skald
