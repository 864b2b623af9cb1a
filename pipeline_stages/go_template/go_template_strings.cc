#include "pipeline_stages/go_template/go_template_strings.h"

#include <openssl/evp.h>

#include <algorithm>

#include "pipeline_stages/go/go_string.h"

namespace skald::stages::go_template_internal {

bool IsSpaceRune(char32_t r) {
  switch (r) {
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case ' ':
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return r >= 0x2000 && r <= 0x200A;
  }
}

// Go's strings.Title: upper-cases the first letter of each word.
std::string Title(std::string_view s) {
  auto is_separator = [](char32_t r) {
    if (r <= 0x7F) {
      return !((r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') ||
               r == '_');
    }
    return IsSpaceRune(r);
  };
  char32_t prev = ' ';
  return MapRunes(s, [&](char32_t r) {
    const char32_t mapped = is_separator(prev) ? GoToTitleRune(r) : r;
    prev = r;
    return mapped;
  });
}

std::string_view TrimLeftFunc(std::string_view s, const std::function<bool(char32_t)>& in_set) {
  while (!s.empty()) {
    size_t n;
    if (!in_set(DecodeRune(s, 0, &n))) break;
    s.remove_prefix(n);
  }
  return s;
}

std::string_view TrimRightFunc(std::string_view s, const std::function<bool(char32_t)>& in_set) {
  while (!s.empty()) {
    // Find the start of the last rune.
    size_t start = s.size() - 1;
    while (start > 0 && s.size() - start < 4 &&
           (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) {
      --start;
    }
    size_t n;
    char32_t r = DecodeRune(s, start, &n);
    if (start + n != s.size()) {  // not a whole rune: the last byte alone is invalid
      start = s.size() - 1;
      r = 0xFFFD;
    }
    if (!in_set(r)) break;
    s.remove_suffix(s.size() - start);
  }
  return s;
}

std::function<bool(char32_t)> CutsetPredicate(std::string_view cutset) {
  return [cutset](char32_t r) {
    for (size_t i = 0; i < cutset.size();) {
      size_t n;
      if (DecodeRune(cutset, i, &n) == r) return true;
      i += n;
    }
    return false;
  };
}

// Go's strings.Replace into *out; false (and nothing built) when the result would be longer than
// max_bytes.
bool ReplaceN(std::string_view s, std::string_view old_s, std::string_view new_s, int64_t n,
              size_t max_bytes, std::string* out) {
  out->clear();
  if (old_s == new_s || n == 0) {
    out->assign(s);
    return true;
  }
  int64_t count = 0;
  if (old_s.empty()) {
    for (size_t i = 0; i < s.size(); ++count) {
      size_t w;
      DecodeRune(s, i, &w);
      i += w;
    }
    ++count;
  } else {
    for (size_t at = s.find(old_s); at != std::string_view::npos;
         at = s.find(old_s, at + old_s.size())) {
      ++count;
    }
  }
  if (count == 0) {
    out->assign(s);
    return true;
  }
  if (n < 0 || count < n) n = count;
  // Each replacement removes old_s (or nothing, when it is empty) and inserts new_s.
  const auto replaced = static_cast<uint64_t>(n);
  if (new_s.size() > old_s.size() &&
      (new_s.size() - old_s.size()) > (max_bytes - std::min(max_bytes, s.size())) / replaced) {
    return false;
  }
  size_t start = 0;
  for (int64_t i = 0; i < n; ++i) {
    size_t j = start;
    if (old_s.empty()) {
      if (i > 0 && start < s.size()) {
        size_t w;
        DecodeRune(s, start, &w);
        j += w;
      }
    } else {
      j = s.find(old_s, start);
    }
    out->append(s.substr(start, j - start)).append(new_s);
    start = j + old_s.size();
  }
  out->append(s.substr(std::min(start, s.size())));
  return true;
}

namespace {

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

}  // namespace

std::string Base64Encode(std::string_view s) {
  std::string out;
  out.reserve((s.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < s.size(); i += 3) {
    const uint32_t v = (uint8_t(s[i]) << 16) | (uint8_t(s[i + 1]) << 8) | uint8_t(s[i + 2]);
    for (int k = 18; k >= 0; k -= 6) out.push_back(kBase64[(v >> k) & 63]);
  }
  if (i < s.size()) {
    uint32_t v = uint8_t(s[i]) << 16;
    if (i + 1 < s.size()) v |= uint8_t(s[i + 1]) << 8;
    out.push_back(kBase64[(v >> 18) & 63]);
    out.push_back(kBase64[(v >> 12) & 63]);
    out.push_back(i + 1 < s.size() ? kBase64[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

// Go's base64.StdEncoding.DecodeString (padding required, \r and \n ignored). On failure returns
// Go's error text, which is what sprig's b64dec yields.
std::string Base64Decode(std::string_view s) {
  auto sextet = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  auto illegal = [](size_t at) {
    return "illegal base64 data at input byte " + std::to_string(at);
  };
  std::string out;
  uint32_t acc = 0;
  int have = 0;
  size_t i = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\r' || c == '\n') continue;
    if (c == '=') break;
    const int v = sextet(c);
    if (v < 0) return illegal(i);
    acc = (acc << 6) | v;
    if (++have == 4) {
      out.push_back(static_cast<char>(acc >> 16));
      out.push_back(static_cast<char>(acc >> 8));
      out.push_back(static_cast<char>(acc));
      acc = 0, have = 0;
    }
  }
  if (i == s.size()) {
    if (have != 0) return illegal(s.size() - have);  // unpadded final quantum
    return out;
  }
  // s[i] is the first '=': "xx==" or "xxx=", then only line breaks.
  if (have < 2) return illegal(i);
  auto is_newline = [&](size_t k) { return s[k] == '\r' || s[k] == '\n'; };
  size_t si = i + 1;
  if (have == 2) {
    while (si < s.size() && is_newline(si)) ++si;
    if (si == s.size()) return illegal(s.size());
    if (s[si] != '=') return illegal(si - 1);
    ++si;
  }
  while (si < s.size() && is_newline(si)) ++si;
  if (si < s.size()) return illegal(si);
  if (have == 2) {
    out.push_back(static_cast<char>(acc >> 4));
  } else {
    out.push_back(static_cast<char>(acc >> 10));
    out.push_back(static_cast<char>(acc >> 2));
  }
  return out;
}

bool IsUpperRune(char32_t r) { return GoToLowerRune(r) != r; }
bool IsLowerRune(char32_t r) {
  if (r == 0xDF) return true;  // ß has no simple upper case
  return GoToUpperRune(r) != r;
}
bool IsDigitRune(char32_t r) { return (r >= '0' && r <= '9') || (r >= 0xFF10 && r <= 0xFF19); }
bool IsPunctRune(char32_t r) {
  if (r < 0x80) {
    switch (r) {
      case '!':
      case '"':
      case '#':
      case '%':
      case '&':
      case '\'':
      case '(':
      case ')':
      case '*':
      case ',':
      case '-':
      case '.':
      case '/':
      case ':':
      case ';':
      case '?':
      case '@':
      case '[':
      case '\\':
      case ']':
      case '_':
      case '{':
      case '}':
        return true;
      default:
        return false;
    }
  }
  return r == 0xA1 || r == 0xA7 || r == 0xAB || r == 0xB6 || r == 0xB7 || r == 0xBB || r == 0xBF ||
         (r >= 0x2010 && r <= 0x2027) || (r >= 0x2030 && r <= 0x205E) ||
         (r >= 0x3001 && r <= 0x3003) || (r >= 0x3008 && r <= 0x3011);
}
bool IsLetterRune(char32_t r) {
  if (r < 0x80) return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z');
  if (r == 0xAA || r == 0xB5 || r == 0xBA) return true;
  if (r < 0xC0 || r == 0xD7 || r == 0xF7) return false;
  if (IsSpaceRune(r) || IsPunctRune(r) || IsDigitRune(r)) return false;
  if (r >= 0x2000 && r <= 0x2BFF) return false;  // punctuation, symbols, arrows, shapes
  if (r >= 0x3000 && r <= 0x303F) return false;  // CJK symbols
  if (r >= 0xD800 && r <= 0xF8FF) return false;  // surrogates, private use
  if (r >= 0x1F000) return false;                // emoji and other symbols
  return r != 0xFFFD;
}

std::string_view TrimSpace(std::string_view s) {
  return TrimRightFunc(TrimLeftFunc(s, IsSpaceRune), IsSpaceRune);
}

std::vector<std::string_view> SplitN(std::string_view s, std::string_view sep, int64_t n) {
  std::vector<std::string_view> parts;
  if (n == 0) return parts;
  if (sep.empty()) {
    // explode: one part per UTF-8 sequence, the last holding the rest.
    for (size_t i = 0; i < s.size();) {
      if (n > 0 && static_cast<int64_t>(parts.size()) == n - 1) {
        parts.push_back(s.substr(i));
        return parts;
      }
      size_t w;
      DecodeRune(s, i, &w);
      parts.push_back(s.substr(i, w));
      i += w;
    }
    return parts;
  }
  size_t start = 0;
  while (n < 0 || static_cast<int64_t>(parts.size()) < n - 1) {
    const size_t at = s.find(sep, start);
    if (at == std::string_view::npos) break;
    parts.push_back(s.substr(start, at - start));
    start = at + sep.size();
  }
  parts.push_back(s.substr(start));
  return parts;
}

std::vector<std::string_view> Fields(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t w;
    while (i < s.size() && IsSpaceRune(DecodeRune(s, i, &w))) i += w;
    const size_t start = i;
    while (i < s.size() && !IsSpaceRune(DecodeRune(s, i, &w))) i += w;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

namespace {

constexpr char kBase32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

}  // namespace

std::string Base32Encode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i += 5) {
    uint64_t block = 0;
    const size_t n = std::min<size_t>(5, s.size() - i);
    for (size_t k = 0; k < 5; ++k) {
      block = (block << 8) | (k < n ? static_cast<uint8_t>(s[i + k]) : 0);
    }
    static constexpr size_t kChars[] = {0, 2, 4, 5, 7, 8};
    const size_t chars = kChars[n];
    for (size_t k = 0; k < 8; ++k) {
      out.push_back(k < chars ? kBase32[(block >> (35 - 5 * k)) & 31] : '=');
    }
  }
  return out;
}

std::string Base32Decode(std::string_view in) {
  std::string s;
  for (char c : in) {
    if (c != '\r' && c != '\n') s.push_back(c);
  }
  auto illegal = [](size_t at) {
    return "illegal base32 data at input byte " + std::to_string(at);
  };
  std::string out;
  for (size_t i = 0; i < s.size(); i += 8) {
    if (s.size() - i < 8) return illegal(s.size() - (s.size() - i) % 8 == 0 ? 0 : i);
    uint64_t block = 0;
    size_t chars = 8;
    for (size_t k = 0; k < 8; ++k) {
      const char c = s[i + k];
      int v = -1;
      if (c >= 'A' && c <= 'Z') v = c - 'A';
      if (c >= '2' && c <= '7') v = c - '2' + 26;
      if (c == '=' && chars == 8) {
        // Padding: only at the end, and only in the amounts base32 produces.
        chars = k;
        for (size_t j = k; j < 8; ++j) {
          if (s[i + j] != '=') return illegal(i + j);
        }
        if (i + 8 != s.size() || !(k == 2 || k == 4 || k == 5 || k == 7)) return illegal(i + k);
        break;
      }
      if (v < 0) return illegal(i + k);
      block = (block << 5) | static_cast<uint64_t>(v);
    }
    block <<= 5 * (8 - chars);
    static constexpr size_t kBytes[] = {0, 0, 1, 0, 2, 3, 0, 4, 5};
    for (size_t k = 0; k < kBytes[chars]; ++k) {
      out.push_back(static_cast<char>((block >> (32 - 8 * k)) & 0xFF));
    }
  }
  return out;
}

std::string HexDigest(const char* digest, std::string_view a, std::string_view b) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_get_digestbyname(digest), nullptr);
  EVP_DigestUpdate(ctx, a.data(), a.size());
  EVP_DigestUpdate(ctx, b.data(), b.size());
  EVP_DigestFinal_ex(ctx, md, &len);
  EVP_MD_CTX_free(ctx);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int k = 0; k < len; ++k) {
    out.push_back(kHex[md[k] >> 4]);
    out.push_back(kHex[md[k] & 15]);
  }
  return out;
}

std::string PathClean(std::string_view path) {
  if (path.empty()) return ".";
  const bool rooted = path[0] == '/';
  std::string out;
  size_t r = 0;
  if (rooted) {
    out.push_back('/');
    r = 1;
  }
  size_t floor = out.size();  // ".." cannot back up past this
  while (r < path.size()) {
    if (path[r] == '/') {
      ++r;
    } else if (path[r] == '.' && (r + 1 == path.size() || path[r + 1] == '/')) {
      ++r;
    } else if (path[r] == '.' && path[r + 1] == '.' &&
               (r + 2 == path.size() || path[r + 2] == '/')) {
      r += 2;
      if (out.size() > floor) {
        size_t w = out.size() - 1;
        while (w > floor && out[w] != '/') --w;
        out.resize(w);
      } else if (!rooted) {
        if (!out.empty()) out.push_back('/');
        out.append("..");
        floor = out.size();
      }
    } else {
      if ((rooted && out.size() != 1) || (!rooted && !out.empty())) out.push_back('/');
      while (r < path.size() && path[r] != '/') out.push_back(path[r++]);
    }
  }
  if (out.empty()) return ".";
  return out;
}

std::string PathBase(std::string_view path) {
  if (path.empty()) return ".";
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  const size_t slash = path.rfind('/');
  if (slash != std::string_view::npos) path.remove_prefix(slash + 1);
  if (path.empty()) return "/";
  return std::string(path);
}

std::string PathDir(std::string_view path) {
  const size_t slash = path.rfind('/');
  return PathClean(path.substr(0, slash == std::string_view::npos ? 0 : slash + 1));
}

std::string_view PathExt(std::string_view path) {
  for (size_t i = path.size(); i > 0 && path[i - 1] != '/'; --i) {
    if (path[i - 1] == '.') return path.substr(i - 1);
  }
  return {};
}

}  // namespace skald::stages::go_template_internal
