#include "pipeline_stages/json_stage.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>

#include "pipeline_stages/go/go_json_reencode.h"
#include "pipeline_stages/go/go_string.h"

namespace skald::stages {

namespace od = simdjson::ondemand;

namespace {

bool g_fast_path = true;

// The word-at-a-time code below (Load64, LeadingDigits, the key masks) reads bytes in memory
// order from the low end of a word: little-endian, as x86-64 and arm64 Linux are.
static_assert(std::endian::native == std::endian::little);

// Bytes of zeros after the text in the scanner's copy: the vector loads read up to 16 bytes
// past a position that is at most the end.
constexpr size_t kScanPadding = 32;

constexpr auto kSpace = [] {
  std::array<bool, 256> t{};
  t[' '] = t['\t'] = t['\n'] = t['\r'] = true;
  return t;
}();

inline bool IsJsonSpace(char c) { return kSpace[static_cast<uint8_t>(c)]; }
inline const char* SkipSpace(const char* p) {
  while (IsJsonSpace(*p)) ++p;
  return p;
}
inline bool IsDigit(char c) { return static_cast<unsigned char>(c - '0') < 10; }
inline bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// The fast scanner reads text followed by kScanPadding zero bytes. A zero byte is never valid
// where it reads one (it is a control character in a string and no token starts with it), so
// it stops at the end without bounds checks; a zero inside the text stops it too (simdjson then
// decides). Each function returns the position after what it read, or null when it does not
// accept the input (invalid JSON, or valid JSON it leaves to simdjson).

enum StringFlags : unsigned {
  kEscape = 1,    // a one-letter escape
  kUnicode = 2,   // a \u escape
  kNonAscii = 4,  // a byte from 0x80 up (the whole text is checked as UTF-8 at the end)
};

// p is after an opening quote; returns the position after the closing one.
[[gnu::always_inline]] inline const char* ScanString(const char* p, unsigned& flags) {
  for (;;) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20);
    for (;;) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      // Signed compare: bytes below 0x20 and from 0x80 up.
      const __m128i special =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                       _mm_cmplt_epi8(v, space));
      const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(special));
      if (mask != 0) {
        p += __builtin_ctz(mask);
        break;
      }
      p += 16;
    }
#elif defined(__aarch64__)
    const uint8x16_t quote = vdupq_n_u8('"');
    const uint8x16_t backslash = vdupq_n_u8('\\');
    const uint8x16_t space = vdupq_n_u8(0x20);
    const uint8x16_t high = vdupq_n_u8(0x80);
    for (;;) {
      const uint8x16_t v = vld1q_u8(reinterpret_cast<const uint8_t*>(p));
      // Unsigned compares: bytes below 0x20 and from 0x80 up.
      const uint8x16_t special = vorrq_u8(vorrq_u8(vceqq_u8(v, quote), vceqq_u8(v, backslash)),
                                          vorrq_u8(vcltq_u8(v, space), vcgeq_u8(v, high)));
      // Four bits per byte, in order (shift right and narrow each 16-bit pair by 4).
      const uint64_t mask =
          vget_lane_u64(vreinterpret_u64_u8(vshrn_n_u16(vreinterpretq_u16_u8(special), 4)), 0);
      if (mask != 0) {
        p += __builtin_ctzll(mask) >> 2;
        break;
      }
      p += 16;
    }
#else
    for (;;) {
      const unsigned char c = static_cast<unsigned char>(*p);
      if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
      ++p;
    }
#endif
    const unsigned char c = static_cast<unsigned char>(*p);
    if (c == '"') return p + 1;
    if (c >= 0x80) {
      flags |= kNonAscii;
      ++p;
      continue;
    }
    if (c != '\\') return nullptr;  // a control character (or the end)
    switch (p[1]) {
      case '"':
      case '\\':
      case '/':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't':
        flags |= kEscape;
        p += 2;
        break;
      case 'u':
        if (!IsHex(p[2]) || !IsHex(p[3]) || !IsHex(p[4]) || !IsHex(p[5])) return nullptr;
        flags |= kUnicode;
        p += 6;
        break;
      default:
        return nullptr;
    }
  }
}

inline uint64_t Load64(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

// How many of the 8 bytes of w (in memory order) are digits before the first that is not.
inline size_t LeadingDigits(uint64_t w) {
  const uint64_t m =
      ((w + 0x4646464646464646ull) | (w - 0x3030303030303030ull)) & 0x8080808080808080ull;
  return m ? static_cast<size_t>(__builtin_ctzll(m)) >> 3 : 8;
}
// The value of the first n (1..8) bytes of w, all digits (SWAR, as fast_float does).
inline uint64_t DigitsValue(uint64_t w, size_t n) {
  w -= 0x3030303030303030ull;
  w <<= 8 * (8 - n);  // leading zeros
  w = w * 10 + (w >> 8);
  return (((w & 0x000000FF000000FFull) * 0x000F424000000064ull) +
          (((w >> 16) & 0x000000FF000000FFull) * 0x0000271000000001ull)) >>
         32;
}
constexpr uint64_t kPow10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

// A number. `simple` tells whether it is an integer of at most 18 digits (not -0), then in
// `value`.
[[gnu::always_inline]] inline const char* ScanNumber(const char* p, bool& simple, int64_t& value) {
  const bool negative = *p == '-';
  p += negative;
  uint64_t w = Load64(p);
  size_t n = LeadingDigits(w);
  if (n == 0 || (*p == '0' && n > 1)) return nullptr;  // no digit, or a leading zero
  uint64_t v = DigitsValue(w, n);
  size_t total = n;
  p += n;
  while (n == 8) {
    w = Load64(p);
    n = LeadingDigits(w);
    if (n == 0) break;
    if (total + n <= 18) v = v * kPow10[n] + DigitsValue(w, n);
    total += n;
    p += n;
  }
  // Past float64's range Go refuses the document: such numbers (an exponent, hundreds of
  // digits) go to the slower path, which checks them.
  if (total > 300) return nullptr;
  simple = total <= 18 && !(negative && v == 0);
  if (*p == '.') {
    simple = false;
    ++p;
    if (!IsDigit(*p)) return nullptr;
    while (IsDigit(*p)) ++p;
  }
  if (*p == 'e' || *p == 'E') return nullptr;
  if (simple) value = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return p;
}

inline const char* ScanLiteral(const char* p, const char* word, size_t n) {
  return std::memcmp(p, word, n) == 0 ? p + n : nullptr;
}

constexpr int kMaxDepth = 64;
constexpr size_t kMaxLayout = 64;  // key positions remembered

// Any value, checked and skipped.
const char* SkipValue(const char* p, int depth, unsigned& flags) {
  switch (*p) {
    case '"':
      return ScanString(p + 1, flags);
    case '{':
      if (depth >= kMaxDepth) return nullptr;
      p = SkipSpace(p + 1);
      if (*p == '}') return p + 1;
      for (;;) {
        if (*p != '"' || !(p = ScanString(p + 1, flags))) return nullptr;
        p = SkipSpace(p);
        if (*p != ':') return nullptr;
        p = SkipSpace(p + 1);
        if (!(p = SkipValue(p, depth + 1, flags))) return nullptr;
        p = SkipSpace(p);
        if (*p == '}') return p + 1;
        if (*p != ',') return nullptr;
        p = SkipSpace(p + 1);
      }
    case '[':
      if (depth >= kMaxDepth) return nullptr;
      p = SkipSpace(p + 1);
      if (*p == ']') return p + 1;
      for (;;) {
        if (!(p = SkipValue(p, depth + 1, flags))) return nullptr;
        p = SkipSpace(p);
        if (*p == ']') return p + 1;
        if (*p != ',') return nullptr;
        p = SkipSpace(p + 1);
      }
    case 't':
      return ScanLiteral(p, "true", 4);
    case 'f':
      return ScanLiteral(p, "false", 5);
    case 'n':
      return ScanLiteral(p, "null", 4);
    default: {
      bool simple;
      int64_t v;
      return ScanNumber(p, simple, v);
    }
  }
}

// A value of an extracted field into out.
inline const char* ReadValue(const char* p, JsonStage::Scanned& out, unsigned& flags) {
  using Kind = JsonStage::Scanned::Kind;
  switch (*p) {
    case '"': {
      const char* begin = p + 1;
      unsigned f = 0;
      if (!(p = ScanString(begin, f)) || (f & kUnicode)) return nullptr;
      flags |= f;
      out.kind = (f & kEscape) ? Kind::kEscaped : Kind::kString;
      out.begin = begin;
      out.size = static_cast<size_t>(p - 1 - begin);
      return p;
    }
    case '{':
    case '[': {
      const char* begin = p;
      if (!(p = SkipValue(p, 1, flags))) return nullptr;
      out.kind = Kind::kComposite;
      out.begin = begin;
      out.size = static_cast<size_t>(p - begin);
      return p;
    }
    case 't':
      out.kind = Kind::kBool;
      out.boolean = true;
      return ScanLiteral(p, "true", 4);
    case 'f':
      out.kind = Kind::kBool;
      out.boolean = false;
      return ScanLiteral(p, "false", 5);
    case 'n':
      out.kind = Kind::kNull;
      return ScanLiteral(p, "null", 4);
    default: {
      bool simple;
      if (!(p = ScanNumber(p, simple, out.integer)) || !simple) return nullptr;
      out.kind = Kind::kInt;
      return p;
    }
  }
}

// The string between quotes with one-letter escapes (all others were refused) undone.
void Unescape(const char* p, size_t n, std::string& out) {
  out.resize(n);
  char* o = out.data();
  const char* end = p + n;
  while (p < end) {
    const char* bs = static_cast<const char*>(std::memchr(p, '\\', static_cast<size_t>(end - p)));
    const size_t run = static_cast<size_t>((bs ? bs : end) - p);
    std::memcpy(o, p, run);
    o += run;
    p += run;
    if (!bs) break;
    switch (p[1]) {
      case 'b':
        *o++ = '\b';
        break;
      case 'f':
        *o++ = '\f';
        break;
      case 'n':
        *o++ = '\n';
        break;
      case 'r':
        *o++ = '\r';
        break;
      case 't':
        *o++ = '\t';
        break;
      default:  // " \ /
        *o++ = p[1];
        break;
    }
    p += 2;
  }
  out.resize(static_cast<size_t>(o - out.data()));
}

// Masks of the first n bytes of a 16-byte key as two words.
struct KeyMasks {
  uint64_t m0[17], m1[17];
};
constexpr KeyMasks kKeyMasks = [] {
  KeyMasks k{};
  for (size_t n = 0; n <= 16; ++n) {
    const size_t a = n < 8 ? n : 8, b = n > 8 ? n - 8 : 0;
    k.m0[n] = a == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * a)) - 1;
    k.m1[n] = b == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * b)) - 1;
  }
  return k;
}();
inline size_t KeyHash(uint64_t w0, uint64_t w1, size_t len) {
  return static_cast<size_t>(((w0 ^ (w1 * 31) ^ len) * 0x9E3779B97F4A7C15ull) >> 40);
}

// Promtail's JSON reader (json-iterator) takes a \\u escape of a UTF-16 surrogate that is not
// half of a pair as U+FFFD (a second escape that does not complete the pair is taken with it:
// as itself, or as U+FFFD when it is a surrogate too); simdjson refuses the document. Returns
// the text with those escapes written as \\ufffd, or nullopt when it has none.
std::optional<std::string> WithLoneSurrogatesReplaced(std::string_view text) {
  auto hex4 = [&](size_t at, uint32_t* v) {  // the 4 hex digits after "\\u" at `at`
    if (at + 2 > text.size() || text[at + 1] != 'u') return false;
    const int32_t r = Hex4At(text, at + 2);
    if (r < 0) return false;
    *v = static_cast<uint32_t>(r);
    return true;
  };
  auto surrogate = [](uint32_t r) { return r >= 0xD800 && r <= 0xDFFF; };
  std::string out;
  bool changed = false;
  size_t copied = 0;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != '\\') continue;
    uint32_t r;
    if (!hex4(i, &r)) {
      ++i;  // another escape: skip its letter (an escaped backslash among them)
      continue;
    }
    if (!surrogate(r)) {
      i += 5;
      continue;
    }
    uint32_t r2;
    const bool second = text.size() > i + 6 && text[i + 6] == '\\' && hex4(i + 6, &r2);
    if (second && r <= 0xDBFF && r2 >= 0xDC00 && r2 <= 0xDFFF) {  // a pair
      i += 11;
      continue;
    }
    out.append(text, copied, i - copied);
    out += "\\ufffd";
    changed = true;
    copied = i + 6;
    if (second && surrogate(r2)) {
      out += "\\ufffd";
      copied = i + 12;
    }
    i = copied - 1;
  }
  if (!changed) return std::nullopt;
  out.append(text, copied, std::string_view::npos);
  return out;
}

// Promtail's JSON reader (json-iterator) takes a byte that is not part of valid UTF-8 inside a
// string as it is; simdjson refuses the document. Such a text is parsed with each such byte b
// written as the private-use character U+10FF00 + b (valid UTF-8), and the values found are
// given their bytes back (RestoreStrayBytes). Returns nullopt when the text is valid UTF-8, or
// already holds one of those characters (the two could not be told apart).
constexpr char32_t kStrayByteBase = 0x10FF00;
bool IsStrayBytePlaceholder(char32_t r) {
  return r >= kStrayByteBase + 0x80 && r <= kStrayByteBase + 0xFF;
}
std::optional<std::string> WithStrayBytesAsPlaceholders(std::string_view text) {
  std::string out;
  bool any = false;
  for (size_t i = 0; i < text.size();) {
    size_t width = 0;
    const char32_t r = DecodeRune(text, i, &width);
    if (r == 0xFFFD && width == 1) {
      AppendRune(kStrayByteBase + static_cast<unsigned char>(text[i]), &out);
      any = true;
    } else if (IsStrayBytePlaceholder(r)) {
      return std::nullopt;
    } else {
      out.append(text.substr(i, width));
    }
    i += width;
  }
  if (!any) return std::nullopt;
  return out;
}
// Writes each placeholder in `*s` back: as its byte (`raw`: a string value), or as the escape
// \ufffd that json-iterator writes for such a byte when it marshals an object or array.
void RestoreStrayBytes(std::string* s, bool raw) {
  if (s->find('\xF4') == std::string::npos) return;  // every placeholder begins with it
  std::string out;
  for (size_t i = 0; i < s->size();) {
    size_t width = 0;
    const char32_t r = DecodeRune(*s, i, &width);
    if (IsStrayBytePlaceholder(r)) {
      if (raw) {
        out.push_back(static_cast<char>(r - kStrayByteBase));
      } else {
        out.append("\\ufffd");
      }
    } else {
      out.append(*s, i, width);
    }
    i += width;
  }
  s->swap(out);
}

// The document is JSON's null (Go's json.Unmarshal into a map takes it without error).
bool IsJsonNull(std::string_view text) {
  const size_t b = text.find_first_not_of(" \t\r\n");
  const size_t e = text.find_last_not_of(" \t\r\n");
  return b != std::string_view::npos && text.substr(b, e - b + 1) == "null";
}

}  // namespace

void JsonStage::SetFastPathForTesting(bool enabled) { g_fast_path = enabled; }

JsonStage::JsonStage(const YAML::Node& config, const StageContext& ctx) : ctx_(ctx) {
  StageConfig c(config, ctx, {"expressions", "source", "drop_malformed"});
  YAML::Node exprs = c.Get("expressions");
  if (!exprs || !exprs.IsMap() || exprs.size() == 0) {
    c.Fail("expressions",
           "is required: a map of extracted key to JMESPath expression, e.g. {level: level}, got " +
               DescribeNode(exprs));
  }
  for (const auto& kv : exprs) {
    Expression e;
    e.key = KeyName(kv.first, ctx, "an extracted key");
    std::string expr = e.key;
    if (kv.second && !kv.second.IsNull()) {
      if (!kv.second.IsScalar()) {
        ctx.Fail("expression for key " + Quote(e.key) + " must be a string, got " +
                 DescribeNode(kv.second));
      }
      if (!kv.second.Scalar().empty()) expr = kv.second.Scalar();
    }
    try {
      JmesExpression compiled(expr);  // validates any expression
      try {
        e.path = ParseJmesPath(expr);
      } catch (const ConfigError&) {
        e.general = std::move(compiled);  // not a plain path
      }
    } catch (const ConfigError& err) {
      ctx.Fail("expression " + Quote(expr) + " for key " + Quote(e.key) + ": " + err.what() +
               (expr.find('-') != std::string::npos && expr.find('"') == std::string::npos
                    ? std::string(" (quote keys that contain '-': '\"" + expr + "\"')")
                    : std::string()));
    }
    if (e.path.empty() && !e.general)
      ctx.Fail("expression " + Quote(expr) + " for key " + Quote(e.key) + " is empty");
    expressions_.push_back(std::move(e));
  }
  for (size_t i = 0; i < expressions_.size(); ++i) {
    const JmesPath& p = expressions_[i].path;
    if (expressions_[i].general) {
      general_.push_back(i);
    } else if (p.size() == 1 && p[0].kind == JmesPathStep::Kind::kField) {
      auto it = std::find_if(top_fields_.begin(), top_fields_.end(),
                             [&](const TopField& f) { return f.name == p[0].field; });
      if (it == top_fields_.end()) {
        top_fields_.push_back(TopField{p[0].field, {i}});
      } else {
        it->expressions.push_back(i);
      }
    } else {
      deep_.push_back(i);
    }
  }
  for (size_t i = 0; i < top_fields_.size(); ++i) {
    const size_t len = top_fields_[i].name.size();
    if (by_length_.size() <= len) by_length_.resize(len + 1);
    by_length_[len].push_back(static_cast<uint16_t>(i));
  }
  source_ = c.OptString("source");
  if (source_ && source_->empty()) c.Fail("source", "must not be empty when given");
  drop_malformed_ = c.Bool("drop_malformed", false);
  found_.resize(expressions_.size());
  values_.resize(expressions_.size());
  skipped_.resize(expressions_.size());
  fast_path_ = g_fast_path && deep_.empty() && general_.empty() && top_fields_.size() < 0xFFFF;
  if (fast_path_) {
    top_of_.resize(expressions_.size());
    for (size_t t = 0; t < top_fields_.size(); ++t) {
      for (size_t idx : top_fields_[t].expressions) top_of_[idx] = static_cast<uint16_t>(t);
    }
    scanned_.resize(top_fields_.size());
    empty_key_field_ = by_length_.empty() || by_length_[0].empty()
                           ? int16_t{-1}
                           : static_cast<int16_t>(by_length_[0][0]);
    // Names of up to 16 bytes in an open-addressing table of their bytes as two words.
    size_t size = 16;
    while (size < 4 * top_fields_.size()) size *= 2;
    key_table_.assign(size, 0);
    key_mask_ = size - 1;
    for (size_t t = 0; t < top_fields_.size(); ++t) {
      const std::string& name = top_fields_[t].name;
      if (name.size() > 16) continue;
      char buf[16] = {};
      std::memcpy(buf, name.data(), name.size());
      key_words_.push_back(KeyWords{Load64(buf), Load64(buf + 8),
                                    static_cast<uint32_t>(name.size()), static_cast<uint16_t>(t)});
      size_t b = KeyHash(key_words_.back().w0, key_words_.back().w1, name.size()) & key_mask_;
      while (key_table_[b] != 0) b = (b + 1) & key_mask_;
      key_table_[b] = static_cast<uint16_t>(key_words_.size());
    }
  }
}

inline int JsonStage::TopFieldOf(const char* key, size_t len) const {
  if (len > 16) {
    if (len >= by_length_.size()) return -1;
    for (uint16_t t : by_length_[len]) {
      if (std::memcmp(top_fields_[t].name.data(), key, len) == 0) return t;
    }
    return -1;
  }
  // The scanner's copy is padded: 16 bytes can be read from any key.
  const uint64_t w0 = Load64(key) & kKeyMasks.m0[len];
  const uint64_t w1 = Load64(key + 8) & kKeyMasks.m1[len];
  for (size_t b = KeyHash(w0, w1, len) & key_mask_;; b = (b + 1) & key_mask_) {
    const uint16_t e = key_table_[b];
    if (e == 0) return -1;
    const KeyWords& k = key_words_[e - 1];
    if (k.w0 == w0 && k.w1 == w1 && k.len == len) return k.field;
  }
}

bool JsonStage::Scan(std::string_view text) {
  for (Scanned& s : scanned_) s.kind = Scanned::Kind::kMissing;
  const size_t need = text.size() + std::max(kScanPadding, size_t{simdjson::SIMDJSON_PADDING});
  if (padded_.size() < need) padded_.resize(need);
  char* const copy = padded_.data();
  std::memcpy(copy, text.data(), text.size());
  std::memset(copy + text.size(), 0, kScanPadding);
  const char* const end = copy + text.size();

  // Whitespace is skipped only where the expected byte is not found: compact JSON pays nothing.
  unsigned flags = 0;
  size_t position = 0;  // of the key in the object
  const char* p = copy;
  if (*p != '{') {
    p = SkipSpace(p);
    if (*p != '{') return false;
  }
  ++p;
  if (*p != '"') {
    p = SkipSpace(p);
    if (*p != '"' && *p != '}') return false;
  }
  if (*p == '"') {
    for (;;) {
      const char* key = p + 1;
      int t;
      // Lines of a stream mostly share a layout: first try the key that was at this position
      // on the previous line (its bytes, then the closing quote right after them).
      const KeyAt* predicted = position < layout_.size() ? &layout_[position] : nullptr;
      if (predicted && key[predicted->len] == '"' &&
          (Load64(key) & kKeyMasks.m0[predicted->len]) == predicted->w0 &&
          (Load64(key + 8) & kKeyMasks.m1[predicted->len]) == predicted->w1) {
        t = predicted->field;
        flags |= predicted->flags;
        p = key + predicted->len + 1;
      } else {
        unsigned key_flags = 0;
        if (!(p = ScanString(key, key_flags))) return false;
        if (key_flags & (kEscape | kUnicode)) return false;  // simdjson unescapes keys
        flags |= key_flags;
        const size_t len = static_cast<size_t>(p - 1 - key);
        t = TopFieldOf(key, len);
        if (len <= 16 && position < kMaxLayout) {
          // Positions skipped (longer keys) hold the empty key, which is then looked up right.
          if (!predicted) layout_.resize(position + 1, KeyAt{0, 0, 0, empty_key_field_, 0});
          KeyAt& k = layout_[position];
          k.w0 = Load64(key) & kKeyMasks.m0[len];
          k.w1 = Load64(key + 8) & kKeyMasks.m1[len];
          k.len = static_cast<uint32_t>(len);
          k.field = static_cast<int16_t>(t);
          k.flags = static_cast<uint16_t>(key_flags);
        }
      }
      ++position;
      if (*p != ':') {
        p = SkipSpace(p);
        if (*p != ':') return false;
      }
      ++p;
      if (IsJsonSpace(*p)) p = SkipSpace(p);
      if (t >= 0) {
        if (!(p = ReadValue(p, scanned_[static_cast<size_t>(t)], flags))) return false;
      } else if (!(p = SkipValue(p, 1, flags))) {
        return false;
      }
      if (*p != ',' && *p != '}') p = SkipSpace(p);
      if (*p == ',') {
        ++p;
        if (*p != '"') {
          p = SkipSpace(p);
          if (*p != '"') return false;
        }
        continue;
      }
      if (*p != '}') return false;
      break;
    }
  }
  p = SkipSpace(p + 1);  // after the closing brace
  if (p != end) return false;
  return !(flags & kNonAscii) || IsValidUtf8(text);
}

bool JsonStage::Store(od::value v, Value& dst) {
  const std::string_view token = v.raw_json_token();
  if (token.empty()) return false;
  switch (token[0]) {
    case '"': {
      std::string_view s;
      if (v.get_string().get(s)) return false;
      if (stray_bytes_) {
        std::string& raw = dst.MutableString();
        raw.assign(s.data(), s.size());
        RestoreStrayBytes(&raw, true);
      } else {
        dst.SetString(s);
      }
      return true;
    }
    case 't':
    case 'f': {
      bool b;
      if (v.get_bool().get(b)) return false;
      dst.SetBool(b);
      return true;
    }
    case 'n': {
      bool is_null;
      if (v.is_null().get(is_null) || !is_null) return false;
      dst.SetNull();
      return true;
    }
    case '{':
    case '[': {
      std::string_view raw;
      if (simdjson::to_json_string(v).get(raw)) return false;
      std::string& text = dst.MutableString();
      if (!ReencodeAsGoJson(raw, &text)) return false;
      if (stray_bytes_) RestoreStrayBytes(&text, false);
      return true;
    }
    default: {
      // Integers stay exact; anything else (fractions, exponents, huge) is a double.
      int64_t i;
      if (v.get_int64().get(i) == simdjson::SUCCESS) {
        dst.SetInt(i);
        return true;
      }
      double d;
      if (v.get_double().get(d)) return false;
      dst.SetDouble(d);
      return true;
    }
  }
}

bool JsonStage::Extract(std::string_view text) {
  const size_t need = text.size() + simdjson::SIMDJSON_PADDING;
  if (padded_.size() < need) padded_.resize(need);
  std::memcpy(padded_.data(), text.data(), text.size());
  std::memset(padded_.data() + text.size(), 0, simdjson::SIMDJSON_PADDING);
  simdjson::padded_string_view input(padded_.data(), text.size(), padded_.size());

  od::document doc;
  if (parser_.iterate(input).get(doc)) return false;
  od::object obj;
  if (doc.get_object().get(obj)) return false;
  std::fill(found_.begin(), found_.end(), 0);
  std::fill(skipped_.begin(), skipped_.end(), 0);
  for (auto field_result : obj) {
    od::field field;
    if (std::move(field_result).get(field)) return false;
    // The raw key (the input is padded and every string is closed), unescaped only if needed.
    const char* raw = field.key().raw();
    size_t len = 0;
    while (raw[len] != '"' && raw[len] != '\\') ++len;
    std::string_view key(raw, len);
    if (raw[len] == '\\' && field.unescaped_key().get(key)) return false;
    if (key.size() >= by_length_.size()) continue;
    for (uint16_t t : by_length_[key.size()]) {
      const TopField& tf = top_fields_[t];
      if (std::memcmp(tf.name.data(), key.data(), key.size()) != 0) continue;
      const size_t first = tf.expressions[0];
      if (!Store(field.value(), values_[first])) return false;
      found_[first] = 1;
      for (size_t k = 1; k < tf.expressions.size(); ++k) {
        const size_t idx = tf.expressions[k];
        values_[idx] = values_[first];
        found_[idx] = 1;
      }
      break;
    }
  }
  const char* trailing;
  if (doc.current_location().get(trailing) == simdjson::SUCCESS) return false;  // text after }

  for (size_t idx : deep_) {
    // simdjson gives the document up at an error in the text that a path ran into (its parser
    // is gone: a rewind would dereference null): the line is not JSON.
    if (!doc.is_alive()) return false;
    doc.rewind();
    od::value cur;
    if (doc.get_value().get(cur)) return false;
    bool ok = true;
    for (const JmesPathStep& step : expressions_[idx].path) {
      if (step.kind == JmesPathStep::Kind::kField) {
        od::object o;
        if (cur.get_object().get(o) || o.find_field_unordered(step.field).get(cur)) {
          ok = false;
          break;
        }
      } else {
        od::array a;
        if (cur.get_array().get(a)) {
          ok = false;
          break;
        }
        int64_t i = step.index;
        if (i < 0) {
          size_t n;
          if (a.count_elements().get(n)) return false;
          i += static_cast<int64_t>(n);
          if (i < 0) {
            ok = false;
            break;
          }
        }
        if (a.at(static_cast<size_t>(i)).get(cur)) {
          ok = false;
          break;
        }
      }
    }
    if (ok && Store(cur, values_[idx])) found_[idx] = 1;
  }
  if (!doc.is_alive()) return false;
  if (!general_.empty() && !SearchGeneral(text, false)) return false;
  for (size_t i = 0; i < expressions_.size(); ++i) {
    if (!found_[i]) values_[i].SetNull();
  }
  return true;
}

namespace {

// Whether `text` (a JSON text) nests arrays and objects deeper than `limit`. The decoder and
// the walks over its tree recurse once per level: a 240 KB line of brackets is 120,000 levels,
// past any thread's stack. Go's decoder refuses nesting past 10,000; the line checks refuse
// it past about a thousand (IsGoJson), so a line deeper than this is malformed either way.
bool NestedDeeperThan(std::string_view text, int limit) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

constexpr int kMaxDecodedDepth = 2048;

}  // namespace

bool JsonStage::SearchGeneral(std::string_view text, bool null_document) {
  nlohmann::json document = nlohmann::json::object();
  if (!null_document) {
    if (NestedDeeperThan(text, kMaxDecodedDepth)) return false;
    // The line must be one JSON object (simdjson checked); nlohmann keeps a duplicated key's
    // last value, as Go's map does.
    document = nlohmann::json::parse(text, nullptr, false);
    if (document.is_discarded()) return false;
    JmesNumbersToDoubles(document);
  }
  for (size_t idx : general_) {
    const std::optional<nlohmann::json> result = expressions_[idx].general->Search(document);
    found_[idx] = 1;
    skipped_[idx] = !result || !StoreResult(*result, values_[idx]);
  }
  return true;
}

namespace {

// Whether `value` holds NaN or an infinity (to_number('nan'), to_number('-inf')): Go's
// json.Marshal refuses those ("unsupported value"), so Promtail leaves the key unset.
bool HoldsNonFinite(const nlohmann::json& value) {
  if (value.is_number_float()) return !std::isfinite(value.get<double>());
  if (!value.is_structured()) return false;
  for (const nlohmann::json& item : value) {
    if (HoldsNonFinite(item)) return true;
  }
  return false;
}

}  // namespace

bool JsonStage::StoreResult(const nlohmann::json& result, Value& dst) {
  switch (result.type()) {
    case nlohmann::json::value_t::null:
      dst.SetNull();
      return true;
    case nlohmann::json::value_t::boolean:
      dst.SetBool(result.get<bool>());
      return true;
    case nlohmann::json::value_t::string: {
      std::string& s = dst.MutableString();
      s = result.get_ref<const std::string&>();
      if (stray_bytes_) RestoreStrayBytes(&s, true);
      return true;
    }
    case nlohmann::json::value_t::object:
    case nlohmann::json::value_t::array: {
      if (HoldsNonFinite(result)) return false;
      std::string& text = dst.MutableString();
      if (!ReencodeAsGoJson(result.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                            &text)) {
        return false;
      }
      if (stray_bytes_) RestoreStrayBytes(&text, false);
      return true;
    }
    default:
      dst.SetDouble(result.get<double>());
      return true;
  }
}

bool JsonStage::IsGoJson(std::string_view text) {
  bool duplicates = false;
  if (!ReencodeAsGoJson(text, &validated_, &duplicates)) return false;
  // Go's map keeps a duplicated key's last value; simdjson finds a path's first. The paths are
  // read again from the text as Go's map holds it (numbers there as the float64 Go reads).
  if (duplicates && !deep_.empty()) return Extract(validated_);
  return true;
}

bool JsonStage::ReencodeComposites() {
  if (composites_.size() < scanned_.size()) composites_.resize(scanned_.size());
  for (size_t t = 0; t < scanned_.size(); ++t) {
    const Scanned& s = scanned_[t];
    if (s.kind != Scanned::Kind::kComposite) continue;
    if (!ReencodeAsGoJson(std::string_view(s.begin, s.size), &composites_[t])) return false;
  }
  return true;
}

Verdict JsonStage::Process(Entry& entry, Downstream&) {
  std::string_view text = entry.line;
  std::string copy;
  if (source_) {
    const Value* v = entry.extracted.Find(*source_);
    if (!v) return Verdict::kPass;
    auto s = v->AsString();
    if (!s) return Verdict::kPass;
    copy.assign(s->data(), s->size());  // the extracted map changes while we read
    text = copy;
  }
  if (fast_path_ && Scan(text) && ReencodeComposites()) {
    // Under the layout of the last line, the hints are known to be right.
    const bool known = entry.extracted.layout() == layout_seen_ && layout_seen_ != 0;
    for (size_t i = 0; i < expressions_.size(); ++i) {
      const Scanned& s = scanned_[top_of_[i]];
      Expression& e = expressions_[i];
      Value& v =
          known ? entry.extracted.UpsertAt(e.hint) : entry.extracted.UpsertHinted(e.key, e.hint);
      switch (s.kind) {
        case Scanned::Kind::kMissing:
        case Scanned::Kind::kNull:
          v.SetNull();
          break;
        case Scanned::Kind::kBool:
          v.SetBool(s.boolean);
          break;
        case Scanned::Kind::kInt:
          v.SetInt(s.integer);
          break;
        case Scanned::Kind::kString:
          v.SetString(std::string_view(s.begin, s.size));
          break;
        case Scanned::Kind::kEscaped:
          Unescape(s.begin, s.size, v.MutableString());
          break;
        case Scanned::Kind::kComposite:
          v.MutableString() = composites_[top_of_[i]];
          break;
      }
    }
    layout_seen_ = entry.extracted.layout();
    return Verdict::kPass;
  }
  // simdjson reads only the parts of the document the expressions reach: the rest must still
  // be JSON that Go reads (json-iterator decodes all of it), or the line is malformed.
  bool extracted = Extract(text) && IsGoJson(text);
  if (!extracted) {
    const std::optional<std::string> fixed = WithLoneSurrogatesReplaced(text);
    const std::string_view readable = fixed ? std::string_view(*fixed) : text;
    if (fixed) extracted = Extract(readable);
    if (!extracted) {
      if (const std::optional<std::string> mapped = WithStrayBytesAsPlaceholders(readable)) {
        stray_bytes_ = true;
        extracted = Extract(*mapped) && IsGoJson(*mapped);
        stray_bytes_ = false;
      }
    } else {
      extracted = IsGoJson(readable);
    }
    if (!extracted && !fixed && IsJsonNull(text)) {  // as Promtail: every expression finds nothing
      for (Value& v : values_) v.SetNull();
      std::fill(skipped_.begin(), skipped_.end(), 0);
      // Go's decoder leaves its map nil: general expressions see an empty object.
      if (!general_.empty()) SearchGeneral(text, true);
      extracted = true;
    }
  }
  if (extracted) {
    for (size_t i = 0; i < expressions_.size(); ++i) {
      if (skipped_[i]) continue;  // as Promtail: a run-time error leaves the key as it was
      swap(entry.extracted.UpsertHinted(expressions_[i].key, expressions_[i].hint), values_[i]);
    }
    // Every hint was just set, unless an expression was skipped.
    layout_seen_ = std::find(skipped_.begin(), skipped_.end(), 1) == skipped_.end()
                       ? entry.extracted.layout()
                       : 0;
    return Verdict::kPass;
  }
  if (!drop_malformed_) return Verdict::kPass;
  ctx_.ReportDrop("drop_malformed");
  return Verdict::kDrop;
}

}  // namespace skald::stages
