// The Go template engine's functions: sprig's string functions. Declared, with the other families,
// in go_template_library.h; the function table is go_template_functions.cc's.
#include <absl/time/clock.h>
#include <openssl/rand.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>

#include "pipeline_stages/go/go_duration.h"
#include "pipeline_stages/go/go_regexp.h"
#include "pipeline_stages/go/go_string.h"
#include "pipeline_stages/go/go_time_layout.h"
#include "pipeline_stages/go_template/go_template_decimal.h"
#include "pipeline_stages/go_template/go_template_fmt.h"
#include "pipeline_stages/go_template/go_template_json.h"
#include "pipeline_stages/go_template/go_template_library.h"
#include "pipeline_stages/go_template/go_template_strings.h"

namespace skald::stages::go_template_internal {

bool FnHello(Args, CallContext& ctx, Value* r) { return SetString(ctx, "Hello!", r); }

bool FnTitle(Args a, CallContext& ctx, Value* r) { return SetString(ctx, Title(a[0].s), r); }

bool FnUntitle(Args a, CallContext& ctx, Value* r) {
  bool next = true;
  return SetString(ctx,
                   MapRunes(a[0].s,
                            [&](char32_t c) {
                              if (IsSpaceRune(c)) {
                                next = true;
                                return c;
                              }
                              if (next) {
                                next = false;
                                return GoToLowerRune(c);
                              }
                              return c;
                            }),
                   r);
}

bool FnSwapcase(Args a, CallContext& ctx, Value* r) {
  bool whitespace = true;
  return SetString(ctx,
                   MapRunes(a[0].s,
                            [&](char32_t c) {
                              if (IsUpperRune(c)) {
                                whitespace = false;
                                return GoToLowerRune(c);
                              }
                              if (IsLowerRune(c)) {
                                const char32_t mapped = GoToUpperRune(c);
                                whitespace = false;
                                return mapped;
                              }
                              whitespace = IsSpaceRune(c);
                              return c;
                            }),
                   r);
}

bool FnSubstr(Args a, CallContext& ctx, Value* r) {
  const int64_t start = a[0].i, end = a[1].i;
  const std::string_view s = a[2].s;
  const auto size = static_cast<int64_t>(s.size());
  auto out_of_range = [&](int64_t lo, int64_t hi, bool has_lo) {
    return ctx.Fail("runtime error: slice bounds out of range [" +
                    (has_lo ? std::to_string(lo) : std::string()) + ":" + std::to_string(hi) + "]" +
                    (hi > size ? " with length " + std::to_string(size) : ""));
  };
  if (start < 0) {
    if (end < 0 || end > size) return out_of_range(0, end, false);
    return SetString(ctx, std::string(s.substr(0, end)), r);
  }
  if (end < 0 || end > size) {
    if (start > size) return out_of_range(start, size, true);
    return SetString(ctx, std::string(s.substr(start)), r);
  }
  if (start > end) {
    return ctx.Fail("runtime error: slice bounds out of range [" + std::to_string(start) + ":" +
                    std::to_string(end) + "]");
  }
  return SetString(ctx, std::string(s.substr(start, end - start)), r);
}

bool FnTrunc(Args a, CallContext& ctx, Value* r) {
  const int64_t c = a[0].i;
  const std::string_view s = a[1].s;
  const auto size = static_cast<int64_t>(s.size());
  if (c < 0 && size + c > 0) return SetString(ctx, std::string(s.substr(size + c)), r);
  if (c >= 0 && size > c) return SetString(ctx, std::string(s.substr(0, c)), r);
  return SetString(ctx, std::string(s), r);
}

namespace {

bool Repeat(CallContext& ctx, std::string_view s, int64_t n, std::string* out) {
  if (n < 0) return ctx.Fail("strings: negative Repeat count");
  if (!s.empty() && static_cast<uint64_t>(n) > ctx.max_bytes() / s.size()) return ctx.TooLong();
  out->reserve(out->size() + s.size() * n);
  for (int64_t k = 0; k < n && !s.empty(); ++k) out->append(s);
  return true;
}

}  // namespace

bool FnRepeat(Args a, CallContext& ctx, Value* r) {
  std::string out;
  if (!Repeat(ctx, a[1].s, a[0].i, &out)) return false;
  return SetString(ctx, std::move(out), r);
}

bool FnTrimAll(Args a, CallContext& ctx, Value* r) {
  const auto in_set = CutsetPredicate(a[0].s);
  return SetString(ctx, std::string(TrimRightFunc(TrimLeftFunc(a[1].s, in_set), in_set)), r);
}
bool FnTrimPrefix(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, std::string(TrimPrefix(a[1].s, a[0].s)), r);
}
bool FnTrimSuffix(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, std::string(TrimSuffix(a[1].s, a[0].s)), r);
}

namespace {

// goutils reads these byte by byte, each byte as the rune of the same number.
bool IsSpaceByte(unsigned char c) { return IsSpaceRune(c); }

}  // namespace

bool FnNospace(Args a, CallContext& ctx, Value* r) {
  std::string out;
  bool removed = false;
  for (char ch : a[0].s) {
    const auto c = static_cast<unsigned char>(ch);
    if (IsSpaceByte(c)) {
      removed = true;
    } else {
      AppendRune(c, &out);
    }
  }
  return SetString(ctx, removed ? std::move(out) : std::string(a[0].s), r);
}

bool FnInitials(Args a, CallContext& ctx, Value* r) {
  std::string out;
  bool gap = true;
  for (char ch : a[0].s) {
    const auto c = static_cast<unsigned char>(ch);
    if (IsSpaceByte(c)) {
      gap = true;
    } else if (gap) {
      AppendRune(c, &out);
      gap = false;
    }
  }
  return SetString(ctx, std::move(out), r);
}

namespace {

// goutils.AbbreviateFull (errors yield "").
std::string Abbreviate(std::string_view str, int64_t offset, int64_t max_width) {
  if (str.empty()) return "";
  if (max_width < 4) return "";
  const auto len = static_cast<int64_t>(str.size());
  if (len <= max_width) return std::string(str);
  if (offset > len) offset = len;
  if (len - offset < max_width - 3) offset = len - (max_width - 3);
  if (offset <= 4) return std::string(str.substr(0, max_width - 3)) + "...";
  if (max_width < 7) return "";
  if (offset + max_width - 3 < len) return "..." + Abbreviate(str.substr(offset), 0, max_width - 3);
  return "..." + std::string(str.substr(len - (max_width - 3)));
}

}  // namespace

bool FnAbbrev(Args a, CallContext& ctx, Value* r) {
  if (a[0].i < 4) return SetString(ctx, std::string(a[1].s), r);
  return SetString(ctx, Abbreviate(a[1].s, 0, a[0].i), r);
}

bool FnAbbrevboth(Args a, CallContext& ctx, Value* r) {
  const int64_t left = a[0].i, right = a[1].i;
  if (right < 4 || (left > 0 && right < 7)) return SetString(ctx, std::string(a[2].s), r);
  return SetString(ctx, Abbreviate(a[2].s, left, right), r);
}

namespace {

// goutils.WrapCustom.
bool Wrap(CallContext& ctx, std::string_view str, int64_t wrap_length, std::string_view newline,
          bool wrap_long_words, Value* r) {
  if (str.empty()) return SetString(ctx, "", r);
  if (newline.empty()) newline = "\n";
  if (wrap_length < 1) wrap_length = 1;
  const auto length = static_cast<int64_t>(str.size());
  int64_t offset = 0;
  std::string out;
  while (length - offset > wrap_length) {
    if (out.size() > ctx.max_bytes()) return ctx.TooLong();
    if (str[offset] == ' ') {
      ++offset;
      continue;
    }
    const int64_t end = wrap_length + offset + 1;
    const size_t space = str.substr(offset, end - offset).rfind(' ');
    if (space != std::string_view::npos) {
      const int64_t at = static_cast<int64_t>(space) + offset;
      out.append(str.substr(offset, at - offset)).append(newline);
      offset = at + 1;
    } else if (wrap_long_words) {
      out.append(str.substr(offset, wrap_length)).append(newline);
      offset += wrap_length;
    } else {
      const int64_t from = wrap_length + offset;
      const size_t next = str.substr(from).find(' ');
      if (next == std::string_view::npos) {
        out.append(str.substr(offset));
        offset = length;
      } else {
        const int64_t at = static_cast<int64_t>(next) + from;
        out.append(str.substr(offset, at - offset)).append(newline);
        offset = at + 1;
      }
    }
  }
  out.append(str.substr(offset));
  return SetString(ctx, std::move(out), r);
}

}  // namespace

bool FnWrap(Args a, CallContext& ctx, Value* r) { return Wrap(ctx, a[1].s, a[0].i, "", false, r); }
bool FnWrapWith(Args a, CallContext& ctx, Value* r) {
  return Wrap(ctx, a[2].s, a[0].i, a[1].s, true, r);
}

bool FnContains(Args a, CallContext&, Value* r) {
  *r = Value::Bool(a[1].s.find(a[0].s) != std::string_view::npos);
  return true;
}
bool FnHasPrefix(Args a, CallContext&, Value* r) {
  *r = Value::Bool(a[1].s.substr(0, a[0].s.size()) == a[0].s);
  return true;
}
bool FnHasSuffix(Args a, CallContext&, Value* r) {
  *r = Value::Bool(a[1].s.size() >= a[0].s.size() &&
                   a[1].s.substr(a[1].s.size() - a[0].s.size()) == a[0].s);
  return true;
}

bool FnQuote(Args a, CallContext& ctx, Value* r) {
  std::string out;
  for (const Value& v : a) {
    if (v.is_nil()) continue;
    if (!out.empty()) out.push_back(' ');
    AppendGoQuoted(StrVal(v), &out);
    if (out.size() > ctx.max_bytes()) return ctx.TooLong();
  }
  return SetString(ctx, std::move(out), r);
}

bool FnSquote(Args a, CallContext& ctx, Value* r) {
  std::string out;
  bool first = true;
  for (const Value& v : a) {
    if (v.is_nil()) continue;
    if (!first) out.push_back(' ');
    first = false;
    out.push_back('\'');
    if (!AppendValue(v, &out, ctx.max_bytes())) return ctx.TooLong();
    out.push_back('\'');
  }
  return SetString(ctx, std::move(out), r);
}

bool FnCat(Args a, CallContext& ctx, Value* r) {
  std::string out;
  bool first = true;
  for (const Value& v : a) {
    if (v.is_nil()) continue;
    if (!first) out.push_back(' ');
    first = false;
    if (!AppendValue(v, &out, ctx.max_bytes())) return ctx.TooLong();
  }
  return SetString(ctx, std::move(out), r);
}

namespace {

bool Indent(CallContext& ctx, int64_t spaces, std::string_view s, bool leading_newline, Value* r) {
  std::string pad;
  if (!Repeat(ctx, " ", spaces, &pad)) return false;
  std::string out = leading_newline ? "\n" + pad : pad;
  std::string replaced;
  if (!ReplaceN(s, "\n", "\n" + pad, -1, ctx.max_bytes(), &replaced)) return ctx.TooLong();
  out += replaced;
  return SetString(ctx, std::move(out), r);
}

}  // namespace

bool FnIndent(Args a, CallContext& ctx, Value* r) { return Indent(ctx, a[0].i, a[1].s, false, r); }
bool FnNindent(Args a, CallContext& ctx, Value* r) { return Indent(ctx, a[0].i, a[1].s, true, r); }

bool FnReplace(Args a, CallContext& ctx, Value* r) {
  std::string out;
  if (!ReplaceN(a[2].s, a[0].s, a[1].s, -1, ctx.max_bytes(), &out)) return ctx.TooLong();
  return SetString(ctx, std::move(out), r);
}

bool FnPlural(Args a, CallContext&, Value* r) {
  *r = a[2].i == 1 ? a[0] : a[1];
  return true;
}

bool FnSha1sum(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, HexDigest("SHA1", a[0].s), r);
}
bool FnSha256sum(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, HexDigest("SHA256", a[0].s), r);
}
bool FnSha512sum(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, HexDigest("SHA512", a[0].s), r);
}
bool FnAdler32sum(Args a, CallContext& ctx, Value* r) {
  uint32_t s1 = 1, s2 = 0;
  for (char c : a[0].s) {
    s1 = (s1 + static_cast<unsigned char>(c)) % 65521;
    s2 = (s2 + s1) % 65521;
  }
  return SetString(ctx, std::to_string((s2 << 16) | s1), r);
}

bool FnToString(Args a, CallContext& ctx, Value* r) {
  std::string out;
  if (a[0].is_string()) {
    out.assign(a[0].s);
  } else if (!AppendValue(a[0], &out, ctx.max_bytes())) {
    return ctx.TooLong();
  }
  return SetString(ctx, std::move(out), r);
}

bool FnRandAlphaNum(Args a, CallContext& ctx, Value* r) {
  return RandomString(
      ctx, a[0].i, ' ', 'z', [](char c) { return IsLetterRune(c) || (c >= '0' && c <= '9'); }, r);
}
bool FnRandAlpha(Args a, CallContext& ctx, Value* r) {
  return RandomString(
      ctx, a[0].i, ' ', 'z', [](char c) { return IsLetterRune(c); }, r);
}
bool FnRandAscii(Args a, CallContext& ctx, Value* r) {
  return RandomString(
      ctx, a[0].i, ' ', '~', [](char) { return true; }, r);
}
bool FnRandNumeric(Args a, CallContext& ctx, Value* r) {
  return RandomString(
      ctx, a[0].i, ' ', 'z', [](char c) { return c >= '0' && c <= '9'; }, r);
}

bool FnShuffle(Args a, CallContext& ctx, Value* r) {
  std::vector<std::string_view> runes;
  const std::string_view s = a[0].s;
  std::string decoded;
  for (size_t i = 0; i < s.size();) {
    size_t w;
    const char32_t c = DecodeRune(s, i, &w);
    if (c == 0xFFFD && w == 1) {
      runes.emplace_back("\xef\xbf\xbd");
    } else {
      runes.push_back(s.substr(i, w));
    }
    i += w;
  }
  for (size_t i = runes.size(); i > 1; --i) {
    std::swap(runes[i - 1], runes[CryptoRandomBelow(static_cast<int64_t>(i))]);
  }
  std::string out;
  for (std::string_view p : runes) out.append(p);
  return SetString(ctx, std::move(out), r);
}

// xstrings' word splitting (ToSnakeCase, ToKebabCase).
enum WordType {
  kInvalidWord,
  kNumberWord,
  kUpperCaseWord,
  kAlphabetWord,
  kConnectorWord,
  kPunctWord,
  kOtherWord
};

namespace {

bool IsConnector(char32_t c) { return c == '-' || c == '_' || IsSpaceRune(c); }

}  // namespace

namespace {

bool IsAlphabet(char32_t c) {
  if (!IsLetterRune(c)) return false;
  if (c < 0x2E80) return true;
  return !((c >= 0x4E00 && c <= 0x9FCC) || (c >= 0x3400 && c <= 0x4DB5) ||
           (c >= 0x2E80 && c <= 0x2FDF) || (c >= 0x3040 && c <= 0x30FF) ||
           (c >= 0xAC00 && c <= 0xD7AF));
}

// xstrings.nextValidRune: the next rune that decodes (invalid bytes are skipped); `prev` when
// none is left.
char32_t NextValidRune(std::string_view s, char32_t prev, size_t* size) {
  *size = 0;
  while (!s.empty()) {
    size_t w;
    const char32_t c = DecodeRune(s, 0, &w);
    *size += w;
    if (!(c == 0xFFFD && w == 1)) return c;
    s.remove_prefix(w);
  }
  return prev;
}

void NextWord(std::string_view str, WordType* wt, std::string_view* word,
              std::string_view* remaining) {
  *wt = kInvalidWord;
  *word = {};
  *remaining = {};
  if (str.empty()) return;
  size_t offset = 0;
  *remaining = str;
  size_t size;
  char32_t c = NextValidRune(*remaining, 0xFFFD, &size);
  offset += size;
  if (c == 0xFFFD) {
    *wt = kInvalidWord;
    *word = str.substr(0, offset);
    *remaining = str.substr(offset);
    return;
  }
  auto advance_while = [&](auto pred) {
    while (!remaining->empty()) {
      c = NextValidRune(*remaining, c, &size);
      if (!pred(c)) break;
      offset += size;
      remaining->remove_prefix(size);
    }
  };
  if (IsConnector(c)) {
    *wt = kConnectorWord;
    remaining->remove_prefix(size);
    advance_while(IsConnector);
  } else if (IsPunctRune(c)) {
    *wt = kPunctWord;
    remaining->remove_prefix(size);
    advance_while(IsPunctRune);
  } else if (IsUpperRune(c)) {
    *wt = kUpperCaseWord;
    remaining->remove_prefix(size);
    if (!remaining->empty()) {
      c = NextValidRune(*remaining, c, &size);
      if (IsUpperRune(c)) {
        size_t prev_size = size;
        offset += size;
        remaining->remove_prefix(size);
        while (!remaining->empty()) {
          c = NextValidRune(*remaining, c, &size);
          if (!IsUpperRune(c)) break;
          prev_size = size;
          offset += size;
          remaining->remove_prefix(size);
        }
        if (!remaining->empty() && IsAlphabet(c)) {
          offset -= prev_size;
          *remaining = str.substr(offset);
        }
      } else if (IsAlphabet(c)) {
        offset += size;
        remaining->remove_prefix(size);
        advance_while([](char32_t x) { return IsAlphabet(x) && !IsUpperRune(x); });
      }
    }
  } else if (IsAlphabet(c)) {
    *wt = kAlphabetWord;
    remaining->remove_prefix(size);
    advance_while([](char32_t x) { return IsAlphabet(x) && !IsUpperRune(x); });
  } else if (IsDigitRune(c)) {
    *wt = kNumberWord;
    remaining->remove_prefix(size);
    advance_while(IsDigitRune);
  } else {
    *wt = kOtherWord;
    remaining->remove_prefix(size);
    while (!remaining->empty()) {
      c = NextValidRune(*remaining, c, &size);
      if (size == 0 || IsConnector(c) || IsAlphabet(c) || IsDigitRune(c) || IsPunctRune(c)) break;
      offset += size;
      remaining->remove_prefix(size);
    }
  }
  *word = str.substr(0, offset);
}

void LowerWord(std::string* buf, WordType wt, std::string_view str, char connector) {
  if (wt != kUpperCaseWord && wt != kConnectorWord) {
    buf->append(str);
    return;
  }
  for (size_t i = 0; i < str.size();) {
    size_t w;
    const char32_t c = DecodeRune(str, i, &w);
    if (IsConnector(c)) {
      buf->push_back(connector);
    } else if (IsUpperRune(c)) {
      AppendRune(GoToLowerRune(c), buf);
    } else {
      AppendRune(c, buf);
    }
    i += w;
  }
}

std::string CamelCaseToLowerCase(std::string_view str, char connector) {
  if (str.empty()) return "";
  std::string buf;
  WordType wt;
  std::string_view word, remaining;
  NextWord(str, &wt, &word, &remaining);
  while (!remaining.empty()) {
    if (wt != kConnectorWord) LowerWord(&buf, wt, word, connector);
    const WordType prev = wt;
    const std::string_view last = word;
    NextWord(remaining, &wt, &word, &remaining);
    switch (prev) {
      case kNumberWord:
        while (wt == kAlphabetWord || wt == kNumberWord) {
          LowerWord(&buf, wt, word, connector);
          NextWord(remaining, &wt, &word, &remaining);
        }
        if (wt != kInvalidWord && wt != kPunctWord && wt != kConnectorWord) {
          buf.push_back(connector);
        }
        break;
      case kConnectorWord:
        LowerWord(&buf, prev, last, connector);
        break;
      case kPunctWord:
        break;
      default: {
        if (wt != kNumberWord) {
          if (wt != kConnectorWord && wt != kPunctWord) buf.push_back(connector);
          break;
        }
        if (remaining.empty()) break;
        const std::string_view number = word;
        NextWord(remaining, &wt, &word, &remaining);
        if (wt != kAlphabetWord) {
          LowerWord(&buf, kNumberWord, number, connector);
          if (wt != kConnectorWord && wt != kPunctWord) buf.push_back(connector);
          break;
        }
        buf.push_back(connector);
        LowerWord(&buf, kNumberWord, number, connector);
        while (wt == kAlphabetWord || wt == kNumberWord) {
          LowerWord(&buf, wt, word, connector);
          NextWord(remaining, &wt, &word, &remaining);
        }
        if (wt != kInvalidWord && wt != kConnectorWord && wt != kPunctWord) {
          buf.push_back(connector);
        }
        break;
      }
    }
  }
  LowerWord(&buf, wt, word, connector);
  return buf;
}

}  // namespace

bool FnSnakecase(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, CamelCaseToLowerCase(a[0].s, '_'), r);
}
bool FnKebabcase(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, CamelCaseToLowerCase(a[0].s, '-'), r);
}

// xstrings.ToPascalCase.
bool FnCamelcase(Args a, CallContext& ctx, Value* r) {
  std::string_view str = a[0].s;
  if (str.empty()) return SetString(ctx, "", r);
  std::string buf;
  bool first_upper = false;
  char32_t r0 = 0, r1;
  size_t size = 0;
  while (!str.empty()) {
    r0 = DecodeRune(str, 0, &size);
    str.remove_prefix(size);
    if (!IsConnector(r0)) {
      first_upper = IsUpperRune(r0);
      r0 = GoToUpperRune(r0);
      break;
    }
    AppendRune(r0, &buf);
  }
  if (str.empty()) {
    if (size != 0) AppendRune(r0, &buf);
    return SetString(ctx, std::move(buf), r);
  }
  while (!str.empty()) {
    r1 = r0;
    r0 = DecodeRune(str, 0, &size);
    str.remove_prefix(size);
    if (IsConnector(r0) && IsConnector(r1)) {
      AppendRune(r1, &buf);
      continue;
    }
    if (IsConnector(r1)) {
      first_upper = IsUpperRune(r0);
      r0 = GoToUpperRune(r0);
    } else {
      if (first_upper) {
        if (IsUpperRune(r0)) {
          r0 = GoToLowerRune(r0);
        } else {
          first_upper = false;
        }
      }
      AppendRune(r1, &buf);
    }
  }
  AppendRune(r0, &buf);
  return SetString(ctx, std::move(buf), r);
}

}  // namespace skald::stages::go_template_internal
