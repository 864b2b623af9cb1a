#include "pipeline_stages/go_template_functions.h"

#include <openssl/evp.h>

#include <charconv>
#include <cmath>

#include "pipeline_stages/go_regexp.h"
#include "pipeline_stages/go_string.h"

namespace skald::stages::go_template_internal {
namespace {

using P = ParamType;
constexpr P S = P::kString, I = P::kInt, A = P::kAny;

// Argument counts include the piped value. Types past the listed ones take `rest`.
constexpr Function kFunctions[] = {
    {"and", FunctionId::kAnd, 1, -1, {A, A, A, A}, A},
    {"or", FunctionId::kOr, 1, -1, {A, A, A, A}, A},
    {"not", FunctionId::kNot, 1, 1, {A}, A},
    {"eq", FunctionId::kEq, 2, -1, {A, A, A, A}, A},
    {"ne", FunctionId::kNe, 2, 2, {A, A}, A},
    {"lt", FunctionId::kLt, 2, 2, {A, A}, A},
    {"le", FunctionId::kLe, 2, 2, {A, A}, A},
    {"gt", FunctionId::kGt, 2, 2, {A, A}, A},
    {"ge", FunctionId::kGe, 2, 2, {A, A}, A},
    {"ToLower", FunctionId::kToLower, 1, 1, {S}, A},
    {"ToUpper", FunctionId::kToUpper, 1, 1, {S}, A},
    {"TrimSpace", FunctionId::kTrimSpace, 1, 1, {S}, A},
    {"Replace", FunctionId::kReplaceN, 4, 4, {S, S, S, I}, A},
    {"Trim", FunctionId::kTrim, 2, 2, {S, S}, A},
    {"TrimLeft", FunctionId::kTrimLeft, 2, 2, {S, S}, A},
    {"TrimRight", FunctionId::kTrimRight, 2, 2, {S, S}, A},
    {"TrimPrefix", FunctionId::kTrimPrefixGo, 2, 2, {S, S}, A},
    {"TrimSuffix", FunctionId::kTrimSuffixGo, 2, 2, {S, S}, A},
    {"regexReplaceAll", FunctionId::kRegexReplaceAll, 3, 3, {S, S, S}, A},
    {"regexReplaceAllLiteral", FunctionId::kRegexReplaceAllLiteral, 3, 3, {S, S, S}, A},
    {"Hash", FunctionId::kHash, 2, 2, {S, S}, A},
    {"Sha2Hash", FunctionId::kSha2Hash, 2, 2, {S, S}, A},
    {"lower", FunctionId::kLower, 1, 1, {S}, A},
    {"upper", FunctionId::kUpper, 1, 1, {S}, A},
    {"title", FunctionId::kTitle, 1, 1, {S}, A},
    {"trim", FunctionId::kTrimSprig, 1, 1, {S}, A},
    {"trimPrefix", FunctionId::kTrimPrefix, 2, 2, {S, S}, A},
    {"trimSuffix", FunctionId::kTrimSuffix, 2, 2, {S, S}, A},
    {"replace", FunctionId::kReplace, 3, 3, {S, S, S}, A},
    {"contains", FunctionId::kContains, 2, 2, {S, S}, A},
    {"hasPrefix", FunctionId::kHasPrefix, 2, 2, {S, S}, A},
    {"hasSuffix", FunctionId::kHasSuffix, 2, 2, {S, S}, A},
    {"default", FunctionId::kDefault, 1, -1, {A, A, A, A}, A},
    {"quote", FunctionId::kQuote, 0, -1, {A, A, A, A}, A},
    {"squote", FunctionId::kSquote, 0, -1, {A, A, A, A}, A},
    {"substr", FunctionId::kSubstr, 3, 3, {I, I, S}, A},
    {"trunc", FunctionId::kTrunc, 2, 2, {I, S}, A},
    {"repeat", FunctionId::kRepeat, 2, 2, {I, S}, A},
    {"add", FunctionId::kAdd, 0, -1, {A, A, A, A}, A},
    {"sub", FunctionId::kSub, 2, 2, {A, A}, A},
    {"mul", FunctionId::kMul, 1, -1, {A, A, A, A}, A},
    {"div", FunctionId::kDiv, 2, 2, {A, A}, A},
    {"mod", FunctionId::kMod, 2, 2, {A, A}, A},
    {"b64enc", FunctionId::kB64Enc, 1, 1, {S}, A},
    {"b64dec", FunctionId::kB64Dec, 1, 1, {S}, A},
};

std::string_view KindName(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kMissing:
      return "no value";
    case Value::Kind::kString:
      return "string";
    case Value::Kind::kInt:
      return v.int64_typed ? "int64" : "int";
    case Value::Kind::kDouble:
      return "float64";
    case Value::Kind::kBool:
      return "bool";
    case Value::Kind::kMap:
      return "map";
  }
  return "?";
}

// --- Unicode: simple case mappings for Latin, Greek, Cyrillic, Armenian and fullwidth letters.

char32_t ToUpperRune(char32_t r) {
  if (r < 0x80) return (r >= 'a' && r <= 'z') ? r - 32 : r;
  if (r == 0xB5) return 0x39C;
  if (r == 0xFF) return 0x178;
  if (r >= 0xE0 && r <= 0xFE && r != 0xF7) return r - 32;
  if (r == 0x131) return 'I';
  if (r == 0x17F) return 'S';
  if ((r >= 0x100 && r <= 0x137) || (r >= 0x14A && r <= 0x177)) return r & ~1u;
  if ((r >= 0x139 && r <= 0x148) || (r >= 0x179 && r <= 0x17E)) return (r % 2 == 0) ? r - 1 : r;
  if (r == 0x3C2) return 0x3A3;
  if (r >= 0x3B1 && r <= 0x3C9) return r - 32;
  if (r == 0x3AC) return 0x386;
  if (r >= 0x3AD && r <= 0x3AF) return r - 37;
  if (r == 0x3CC) return 0x38C;
  if (r == 0x3CD || r == 0x3CE) return r - 63;
  if (r >= 0x430 && r <= 0x44F) return r - 32;
  if (r >= 0x450 && r <= 0x45F) return r - 80;
  if ((r >= 0x460 && r <= 0x481) || (r >= 0x48A && r <= 0x4BF)) return r & ~1u;
  if (r >= 0x561 && r <= 0x586) return r - 48;
  if (r >= 0xFF41 && r <= 0xFF5A) return r - 32;
  return r;
}

char32_t ToLowerRune(char32_t r) {
  if (r < 0x80) return (r >= 'A' && r <= 'Z') ? r + 32 : r;
  if (r >= 0xC0 && r <= 0xDE && r != 0xD7) return r + 32;
  if (r == 0x130) return 'i';
  if (r == 0x178) return 0xFF;
  if ((r >= 0x100 && r <= 0x137) || (r >= 0x14A && r <= 0x177)) return r | 1u;
  if ((r >= 0x139 && r <= 0x148) || (r >= 0x179 && r <= 0x17E)) return (r % 2 == 1) ? r + 1 : r;
  if (r >= 0x391 && r <= 0x3A9 && r != 0x3A2) return r + 32;
  if (r == 0x386) return 0x3AC;
  if (r >= 0x388 && r <= 0x38A) return r + 37;
  if (r == 0x38C) return 0x3CC;
  if (r == 0x38E || r == 0x38F) return r + 63;
  if (r >= 0x410 && r <= 0x42F) return r + 32;
  if (r >= 0x400 && r <= 0x40F) return r + 80;
  if ((r >= 0x460 && r <= 0x481) || (r >= 0x48A && r <= 0x4BF)) return r | 1u;
  if (r >= 0x531 && r <= 0x556) return r + 48;
  if (r >= 0xFF21 && r <= 0xFF3A) return r + 32;
  return r;
}

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

// Go's strings.Map with a rune mapping (invalid UTF-8 becomes U+FFFD, as in Go).
template <typename F>
std::string MapRunes(std::string_view s, F f) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t n;
    const char32_t r = DecodeRune(s, i, &n);
    if (r < 0x80) {
      out.push_back(static_cast<char>(f(r)));
    } else {
      AppendRune(f(r), &out);
    }
    i += n;
  }
  return out;
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
    const char32_t mapped = is_separator(prev) ? ToUpperRune(r) : r;
    prev = r;
    return mapped;
  });
}

template <typename Pred>
std::string_view TrimLeftFunc(std::string_view s, Pred in_set) {
  while (!s.empty()) {
    size_t n;
    if (!in_set(DecodeRune(s, 0, &n))) break;
    s.remove_prefix(n);
  }
  return s;
}

template <typename Pred>
std::string_view TrimRightFunc(std::string_view s, Pred in_set) {
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

auto CutsetPredicate(std::string_view cutset) {
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

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

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

std::string HexDigest(const EVP_MD* md, std::string_view a, std::string_view b) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, md, nullptr);
  EVP_DigestUpdate(ctx, a.data(), a.size());
  EVP_DigestUpdate(ctx, b.data(), b.size());
  EVP_DigestFinal_ex(ctx, digest, &len);
  EVP_MD_CTX_free(ctx);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int k = 0; k < len; ++k) {
    out.push_back(kHex[digest[k] >> 4]);
    out.push_back(kHex[digest[k] & 15]);
  }
  return out;
}

// spf13/cast.ToInt64 (v1.10, as Loki 3 vendors it) as sprig's arithmetic uses it: a string
// with a '.' keeps its integer part when it looks like a decimal number; then Go's ParseInt
// with base prefixes (0x, 0o, 0b, a leading 0 is octal). Anything unparsable is 0.
int64_t ToInt64(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kInt:
      return v.i;
    case Value::Kind::kDouble:
      if (std::isnan(v.d) || std::fabs(v.d) >= 9.2e18) return 0;
      return static_cast<int64_t>(v.d);
    case Value::Kind::kBool:
      return v.b ? 1 : 0;
    case Value::Kind::kString:
      break;
    default:
      return 0;
  }
  std::string_view s = v.str();
  if (const size_t dot = s.find('.'); dot != std::string_view::npos) {
    // ^([-+]?\d*)(\.\d*)?$
    const size_t sign = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
    const bool digits_before = s.find_first_not_of("0123456789", sign) == dot;
    const bool digits_after = s.find_first_not_of("0123456789", dot + 1) == std::string_view::npos;
    if (digits_before && digits_after) {
      s = s.substr(0, dot);
      if (s.size() == sign) return 0;  // "", "+", "-": zero
    }
  }
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.size() > 1 && s[0] == '0') {
    const char p = s[1] | 0x20;
    if (p == 'x')
      base = 16, s.remove_prefix(2);
    else if (p == 'o')
      base = 8, s.remove_prefix(2);
    else if (p == 'b')
      base = 2, s.remove_prefix(2);
    else
      base = 8, s.remove_prefix(1);
  }
  std::string digits;
  for (char c : s) {
    if (c != '_') digits.push_back(c);
  }
  uint64_t u = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), u, base);
  if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size()) return 0;
  if (u > (negative ? uint64_t{1} << 63 : static_cast<uint64_t>(INT64_MAX))) return 0;
  return negative ? static_cast<int64_t>(0 - u) : static_cast<int64_t>(u);
}

// sprig's empty(): the values `default` replaces.
bool IsEmpty(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kMissing:
      return true;
    case Value::Kind::kString:
      return v.str().empty();
    case Value::Kind::kInt:
      return v.i == 0;
    case Value::Kind::kDouble:
      return v.d == 0;
    case Value::Kind::kBool:
      return !v.b;
    case Value::Kind::kMap:
      return false;
  }
  return true;
}

// sprig's strval: %v, but a missing value has none (quote skips it).
std::string StrVal(const Value& v) {
  std::string out;
  AppendValue(v, &out);
  return out;
}

enum class Cmp { kLess, kEqual, kGreater };

// Go's eq/lt rules: only values of the same basic kind compare. Returns false on a type error.
bool Compare(const Value& a, const Value& b, bool ordered, Cmp* result, std::string* error) {
  using K = Value::Kind;
  if (!ordered) {
    if (a.kind == K::kMissing || b.kind == K::kMissing) {
      *result = a.kind == b.kind ? Cmp::kEqual : Cmp::kLess;  // missing equals only missing
      return true;
    }
  } else if (a.kind == K::kMissing || b.kind == K::kMissing || a.kind == K::kBool ||
             b.kind == K::kBool || a.kind == K::kMap || b.kind == K::kMap) {
    *error = "invalid type for comparison";
    return false;
  }
  if (a.kind != b.kind || a.kind == K::kMap) {
    *error = "incompatible types for comparison (" + std::string(KindName(a)) + " and " +
             std::string(KindName(b)) + ")";
    return false;
  }
  auto three_way = [](const auto& x, const auto& y) {
    return x < y ? Cmp::kLess : (y < x ? Cmp::kGreater : Cmp::kEqual);
  };
  switch (a.kind) {
    case K::kString:
      *result = three_way(a.str(), b.str());
      break;
    case K::kInt:
      *result = three_way(a.i, b.i);
      break;
    case K::kDouble:
      *result = a.d == b.d ? Cmp::kEqual : (a.d < b.d ? Cmp::kLess : Cmp::kGreater);
      break;
    case K::kBool:
      *result = a.b == b.b ? Cmp::kEqual : Cmp::kLess;
      break;
    default:
      *result = Cmp::kEqual;
      break;
  }
  return true;
}

}  // namespace

Value Value::FromData(const TemplateValue& t) {
  switch (t.kind) {
    case TemplateValue::Kind::kString:
      return Borrow(t.str);
    case TemplateValue::Kind::kInt:
      return Int(t.i);
    case TemplateValue::Kind::kDouble:
      return Double(t.d);
    case TemplateValue::Kind::kBool:
      return Bool(t.b);
    default:
      return Value();
  }
}

void AppendValue(const Value& v, std::string* out) {
  switch (v.kind) {
    case Value::Kind::kMissing:
      out->append("<no value>");
      return;
    case Value::Kind::kString:
      out->append(v.str());
      return;
    case Value::Kind::kInt:
      out->append(std::to_string(v.i));
      return;
    case Value::Kind::kBool:
      out->append(v.b ? "true" : "false");
      return;
    case Value::Kind::kDouble: {
      if (std::isnan(v.d)) {
        out->append("NaN");
      } else if (std::isinf(v.d)) {
        out->append(v.d > 0 ? "+Inf" : "-Inf");
      } else {
        char buf[400];
        auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v.d, std::chars_format::fixed);
        if (ec == std::errc()) out->append(buf, end);
      }
      return;
    }
    case Value::Kind::kMap: {
      out->append("map[");
      bool first = true;
      v.map->ForEach([&](std::string_view name, const TemplateValue& value) {
        if (!first) out->push_back(' ');
        first = false;
        out->append(name).push_back(':');
        const Value item = Value::FromData(value);
        if (item.kind == Value::Kind::kMissing) {
          out->append("<nil>");
        } else {
          AppendValue(item, out);
        }
      });
      out->push_back(']');
      return;
    }
  }
}

bool IsTrue(const Value& v) { return !IsEmpty(v); }

const Function* FindFunction(std::string_view name) {
  for (const Function& f : kFunctions) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string SupportedFunctionNames() {
  std::string out;
  for (const Function& f : kFunctions) {
    if (!out.empty()) out.append(", ");
    out.append(f.name);
  }
  return out;
}

namespace {

bool CallUnchecked(const Function& f, std::span<Value> args, const RE2* regex, size_t max_bytes,
                   Value* result, std::string* error, bool* too_long) {
  for (size_t k = 0; k < args.size(); ++k) {
    const ParamType want = f.TypeOf(k);
    const Value& a = args[k];
    if (want == P::kAny) continue;
    // Go passes int64 (sprig's arithmetic, int64 data) to an int parameter only by failing.
    const bool ok = want == P::kString ? a.kind == Value::Kind::kString
                                       : a.kind == Value::Kind::kInt && !a.int64_typed;
    if (!ok) {
      const std::string_view type = want == P::kString ? "string" : "int";
      *error = a.kind == Value::Kind::kMissing
                   ? "invalid value; expected " + std::string(type)
                   : "wrong type for value; expected " + std::string(type) + "; got " +
                         std::string(KindName(a));
      *error = "error calling " + std::string(f.name) + ": argument " + std::to_string(k + 1) +
               ": " + *error;
      return false;
    }
  }
  auto str = [&](size_t k) { return args[k].str(); };
  auto fail = [&](std::string why) {
    *error = "error calling " + std::string(f.name) + ": " + why;
    return false;
  };
  auto fail_too_long = [&]() {
    *too_long = true;
    return fail("result longer than " + std::to_string(max_bytes) + " bytes");
  };
  Cmp cmp;
  switch (f.id) {
    case FunctionId::kAnd:
    case FunctionId::kOr:
      return fail("and/or are evaluated by the executor");
    case FunctionId::kNot:
      *result = Value::Bool(!IsTrue(args[0]));
      return true;
    case FunctionId::kEq:
      for (size_t k = 1; k < args.size(); ++k) {
        if (!Compare(args[0], args[k], false, &cmp, error)) return fail(*error);
        if (cmp == Cmp::kEqual) {
          *result = Value::Bool(true);
          return true;
        }
      }
      *result = Value::Bool(false);
      return true;
    case FunctionId::kNe:
      if (!Compare(args[0], args[1], false, &cmp, error)) return fail(*error);
      *result = Value::Bool(cmp != Cmp::kEqual);
      return true;
    case FunctionId::kLt:
    case FunctionId::kLe:
    case FunctionId::kGt:
    case FunctionId::kGe:
      if (!Compare(args[0], args[1], true, &cmp, error)) return fail(*error);
      *result = Value::Bool(f.id == FunctionId::kLt   ? cmp == Cmp::kLess
                            : f.id == FunctionId::kLe ? cmp != Cmp::kGreater
                            : f.id == FunctionId::kGt ? cmp == Cmp::kGreater
                                                      : cmp != Cmp::kLess);
      return true;
    case FunctionId::kToLower:
    case FunctionId::kLower:
      *result = Value::Own(MapRunes(str(0), ToLowerRune));
      return true;
    case FunctionId::kToUpper:
    case FunctionId::kUpper:
      *result = Value::Own(MapRunes(str(0), ToUpperRune));
      return true;
    case FunctionId::kTitle:
      *result = Value::Own(Title(str(0)));
      return true;
    case FunctionId::kTrimSpace:
    case FunctionId::kTrimSprig:
      *result =
          Value::Own(std::string(TrimRightFunc(TrimLeftFunc(str(0), IsSpaceRune), IsSpaceRune)));
      return true;
    case FunctionId::kReplaceN:
    case FunctionId::kReplace: {
      std::string out;
      const bool fits = f.id == FunctionId::kReplaceN
                            ? ReplaceN(str(0), str(1), str(2), args[3].i, max_bytes, &out)
                            : ReplaceN(str(2), str(0), str(1), -1, max_bytes, &out);
      if (!fits) return fail_too_long();
      *result = Value::Own(std::move(out));
      return true;
    }
    case FunctionId::kTrim: {
      const auto in_set = CutsetPredicate(str(1));
      *result = Value::Own(std::string(TrimRightFunc(TrimLeftFunc(str(0), in_set), in_set)));
      return true;
    }
    case FunctionId::kTrimLeft:
      *result = Value::Own(std::string(TrimLeftFunc(str(0), CutsetPredicate(str(1)))));
      return true;
    case FunctionId::kTrimRight:
      *result = Value::Own(std::string(TrimRightFunc(str(0), CutsetPredicate(str(1)))));
      return true;
    case FunctionId::kTrimPrefixGo:
    case FunctionId::kTrimPrefix: {
      // Go: TrimPrefix(s, prefix); sprig: trimPrefix prefix s.
      const bool go = f.id == FunctionId::kTrimPrefixGo;
      std::string_view s = str(go ? 0 : 1), prefix = str(go ? 1 : 0);
      if (s.substr(0, prefix.size()) == prefix) s.remove_prefix(prefix.size());
      *result = Value::Own(std::string(s));
      return true;
    }
    case FunctionId::kTrimSuffixGo:
    case FunctionId::kTrimSuffix: {
      const bool go = f.id == FunctionId::kTrimSuffixGo;
      std::string_view s = str(go ? 0 : 1), suffix = str(go ? 1 : 0);
      if (s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix) {
        s.remove_suffix(suffix.size());
      }
      *result = Value::Own(std::string(s));
      return true;
    }
    case FunctionId::kRegexReplaceAll:
    case FunctionId::kRegexReplaceAllLiteral: {
      std::unique_ptr<RE2> compiled;
      if (regex == nullptr) {
        std::string why;
        compiled = CompileGoRegexp(str(0), &why);
        if (!compiled) return fail("invalid regex \"" + std::string(str(0)) + "\": " + why);
        regex = compiled.get();
      }
      std::string out;
      if (!GoRegexpReplaceAll(*regex, str(1), str(2), f.id == FunctionId::kRegexReplaceAllLiteral,
                              &out, max_bytes)) {
        return fail_too_long();
      }
      *result = Value::Own(std::move(out));
      return true;
    }
    case FunctionId::kHash:
      *result = Value::Own(HexDigest(EVP_sha3_256(), str(0), str(1)));
      return true;
    case FunctionId::kSha2Hash:
      *result = Value::Own(HexDigest(EVP_sha256(), str(0), str(1)));
      return true;
    case FunctionId::kContains:
      *result = Value::Bool(str(1).find(str(0)) != std::string_view::npos);
      return true;
    case FunctionId::kHasPrefix:
      *result = Value::Bool(str(1).substr(0, str(0).size()) == str(0));
      return true;
    case FunctionId::kHasSuffix:
      *result = Value::Bool(str(1).size() >= str(0).size() &&
                            str(1).substr(str(1).size() - str(0).size()) == str(0));
      return true;
    case FunctionId::kDefault:
      *result = (args.size() < 2 || IsEmpty(args[1])) ? args[0] : args[1];
      return true;
    case FunctionId::kQuote:
    case FunctionId::kSquote: {
      std::string out;
      for (const Value& a : args) {
        if (a.kind == Value::Kind::kMissing) continue;
        if (!out.empty()) out.push_back(' ');
        if (f.id == FunctionId::kQuote) {
          AppendGoQuoted(StrVal(a), &out);
        } else {
          out.append("'").append(StrVal(a)).append("'");
        }
      }
      *result = Value::Own(std::move(out));
      return true;
    }
    case FunctionId::kSubstr: {
      // sprig: substr start end s; out-of-range slices panic in Go, so they fail here.
      const int64_t start = args[0].i, end = args[1].i;
      const std::string_view s = str(2);
      const auto size = static_cast<int64_t>(s.size());
      int64_t from = start, to = end;
      if (start < 0) {
        from = 0;
      } else if (end < 0 || end > size) {
        to = size;
      }
      if (from > to || to > size || to < 0) {
        return fail("slice bounds out of range [" + std::to_string(start) + ":" +
                    std::to_string(end) + "] with length " + std::to_string(size));
      }
      *result = Value::Own(std::string(s.substr(from, to - from)));
      return true;
    }
    case FunctionId::kTrunc: {
      const int64_t c = args[0].i;
      const std::string_view s = str(1);
      const auto size = static_cast<int64_t>(s.size());
      if (c < 0 && size + c > 0) {
        *result = Value::Own(std::string(s.substr(size + c)));
      } else if (c >= 0 && size > c) {
        *result = Value::Own(std::string(s.substr(0, c)));
      } else {
        *result = Value::Own(std::string(s));
      }
      return true;
    }
    case FunctionId::kRepeat: {
      const int64_t n = args[0].i;
      const std::string_view s = str(1);
      if (n < 0) return fail("negative Repeat count");
      if (!s.empty() && static_cast<uint64_t>(n) > max_bytes / s.size()) return fail_too_long();
      std::string out;
      out.reserve(s.size() * n);
      for (int64_t k = 0; k < n && !s.empty(); ++k) out.append(s);
      *result = Value::Own(std::move(out));
      return true;
    }
    case FunctionId::kAdd:
    case FunctionId::kMul: {
      int64_t acc = f.id == FunctionId::kAdd ? 0 : 1;
      for (const Value& a : args) {
        // Go's int64 arithmetic wraps around.
        const uint64_t x = static_cast<uint64_t>(acc), y = static_cast<uint64_t>(ToInt64(a));
        acc = static_cast<int64_t>(f.id == FunctionId::kAdd ? x + y : x * y);
      }
      *result = Value::Int64(acc);
      return true;
    }
    case FunctionId::kSub:
      *result = Value::Int64(static_cast<int64_t>(static_cast<uint64_t>(ToInt64(args[0])) -
                                                  static_cast<uint64_t>(ToInt64(args[1]))));
      return true;
    case FunctionId::kDiv:
    case FunctionId::kMod: {
      const int64_t a = ToInt64(args[0]), b = ToInt64(args[1]);
      if (b == 0) return fail("integer divide by zero");
      if (a == INT64_MIN && b == -1) {
        *result = Value::Int64(f.id == FunctionId::kDiv ? a : 0);  // Go wraps
      } else {
        *result = Value::Int64(f.id == FunctionId::kDiv ? a / b : a % b);
      }
      return true;
    }
    case FunctionId::kB64Enc:
      *result = Value::Own(Base64Encode(str(0)));
      return true;
    case FunctionId::kB64Dec:
      *result = Value::Own(Base64Decode(str(0)));
      return true;
  }
  return fail("unknown function");
}

}  // namespace

bool CallFunction(const Function& f, std::span<Value> args, const RE2* regex, size_t max_bytes,
                  Value* result, std::string* error, bool* too_long) {
  *too_long = false;
  if (!CallUnchecked(f, args, regex, max_bytes, result, error, too_long)) return false;
  // What the other functions return is at most a few times their arguments: checked here.
  if (result->kind == Value::Kind::kString && result->str().size() > max_bytes) {
    *too_long = true;
    *error = "error calling " + std::string(f.name) + ": result longer than " +
             std::to_string(max_bytes) + " bytes";
    return false;
  }
  return true;
}

}  // namespace skald::stages::go_template_internal
