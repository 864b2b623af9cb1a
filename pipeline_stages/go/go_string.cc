#include "pipeline_stages/go/go_string.h"

#include <charconv>
#include <cmath>

namespace skald::stages {
namespace {

size_t ReadRawString(std::string_view text, std::string* value, std::string* error) {
  const size_t end = text.find('`', 1);
  if (end == std::string_view::npos) {
    *error = "raw string " + std::string(text.substr(0, 20)) + " has no closing backquote";
    return 0;
  }
  // Go drops carriage returns from raw strings.
  for (char c : text.substr(1, end - 1)) {
    if (c != '\r') value->push_back(c);
  }
  return end + 1;
}

// strconv.IsPrint for non-ASCII runes, approximated: controls, format characters, separators
// other than ' ', private use and noncharacters are not printable; everything else is.
bool IsPrintableRune(char32_t r) {
  if (r < 0xA0) return false;  // C1 controls (ASCII is handled by the caller)
  switch (r) {
    case 0xA0:
    case 0xAD:
    case 0x061C:
    case 0x06DD:
    case 0x070F:
    case 0x180E:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
    case 0xFEFF:
      return false;
    default:
      break;
  }
  if (r >= 0x0600 && r <= 0x0605) return false;
  if (r >= 0x2000 && r <= 0x200F) return false;  // spaces, zero-width and direction marks
  if (r >= 0x202A && r <= 0x202E) return false;
  if (r >= 0x2060 && r <= 0x206F) return false;
  if (r >= 0xD800 && r <= 0xF8FF) return false;  // surrogates, private use
  if (r >= 0xFFF9 && r <= 0xFFFB) return false;
  if ((r & 0xFFFE) == 0xFFFE) return false;  // noncharacters U+xxFFFE/U+xxFFFF
  if (r >= 0xF0000) return false;            // supplementary private use
  return true;
}

}  // namespace

char32_t DecodeRune(std::string_view s, size_t i, size_t* size) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  *size = 1;
  if (b0 < 0x80) return b0;
  int n;
  char32_t r;
  char32_t min;
  if ((b0 & 0xE0) == 0xC0) {
    n = 2, r = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3, r = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4, r = b0 & 0x07, min = 0x10000;
  } else {
    return 0xFFFD;
  }
  if (i + n > s.size()) return 0xFFFD;
  for (int k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0xFFFD;
    r = (r << 6) | (b & 0x3F);
  }
  if (r < min || r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) return 0xFFFD;
  *size = n;
  return r;
}

void AppendRune(char32_t r, std::string* out) {
  if (r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) r = 0xFFFD;
  if (r < 0x80) {
    out->push_back(static_cast<char>(r));
  } else if (r < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (r >> 6)));
    out->push_back(static_cast<char>(0x80 | (r & 0x3F)));
  } else if (r < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (r >> 12)));
    out->push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (r & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (r >> 18)));
    out->push_back(static_cast<char>(0x80 | ((r >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (r & 0x3F)));
  }
}

size_t ReadGoStringLiteral(std::string_view text, std::string* value, std::string* error) {
  if (text.empty() || (text[0] != '"' && text[0] != '`')) {
    *error = "expected a string literal in double quotes or backquotes";
    return 0;
  }
  if (text[0] == '`') return ReadRawString(text, value, error);
  size_t i = 1;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"') return i + 1;
    if (c == '\n') {
      *error = "newline inside string " + std::string(text.substr(0, i)) +
               "; close the string or use a `raw string`";
      return 0;
    }
    if (c != '\\') {
      value->push_back(c);
      ++i;
      continue;
    }
    if (i + 1 >= text.size()) break;
    const char e = text[i + 1];
    const size_t escape_start = i;
    i += 2;
    switch (e) {
      case 'a':
        value->push_back('\a');
        continue;
      case 'b':
        value->push_back('\b');
        continue;
      case 'f':
        value->push_back('\f');
        continue;
      case 'n':
        value->push_back('\n');
        continue;
      case 'r':
        value->push_back('\r');
        continue;
      case 't':
        value->push_back('\t');
        continue;
      case 'v':
        value->push_back('\v');
        continue;
      case '\\':
        value->push_back('\\');
        continue;
      case '"':
        value->push_back('"');
        continue;
      default:
        break;
    }
    int digits = 0;
    int base = 16;
    if (e == 'x') {
      digits = 2;
    } else if (e == 'u') {
      digits = 4;
    } else if (e == 'U') {
      digits = 8;
    } else if (e >= '0' && e <= '7') {
      digits = 3, base = 8, i -= 1;
    }
    char32_t code = 0;
    bool ok = digits > 0 && i + digits <= text.size();
    for (int k = 0; ok && k < digits; ++k) {
      const int d = HexDigitValue(text[i + k]);
      ok = d >= 0 && d < base;
      code = code * base + d;
    }
    if (ok && base == 8) ok = code <= 255;
    if (ok && (e == 'u' || e == 'U')) ok = code <= 0x10FFFF && !(code >= 0xD800 && code <= 0xDFFF);
    if (!ok) {
      *error = "invalid escape " +
               std::string(text.substr(escape_start, std::min<size_t>(2 + digits, 10))) +
               " in string; Go escapes are \\a \\b \\f \\n \\r \\t \\v \\\\ \\\" \\xNN \\NNN "
               "(octal) \\uNNNN \\UNNNNNNNN";
      return 0;
    }
    i += digits;
    if (e == 'u' || e == 'U') {
      AppendRune(code, value);
    } else {
      value->push_back(static_cast<char>(code));  // \x and octal escapes are bytes
    }
  }
  *error = "string " + std::string(text.substr(0, 20)) + " has no closing double quote";
  return 0;
}

int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

char ShortEscapeLetter(char32_t r) {
  switch (r) {
    case '\a':
      return 'a';
    case '\b':
      return 'b';
    case '\f':
      return 'f';
    case '\n':
      return 'n';
    case '\r':
      return 'r';
    case '\t':
      return 't';
    case '\v':
      return 'v';
    default:
      return 0;
  }
}

void AppendHexEscape(std::string_view prefix, uint32_t value, int digits, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->append(prefix);
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4)
    out->push_back(kHex[(value >> shift) & 15]);
}

std::string GoQuoted(std::string_view s) {
  std::string out;
  AppendGoQuoted(s, &out);
  return out;
}

void AppendGoQuoted(std::string_view s, std::string* out) {
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    size_t n;
    const char32_t r = DecodeRune(s, i, &n);
    const auto byte = static_cast<unsigned char>(s[i]);
    if (r == 0xFFFD && n == 1) {  // invalid UTF-8 byte
      AppendHexEscape("\\x", byte, 2, out);
    } else if (r == '"' || r == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(r));
    } else if (r >= 0x20 && r < 0x7F) {
      out->push_back(static_cast<char>(r));
    } else if (r < 0x80) {
      if (const char letter = ShortEscapeLetter(r); letter != 0) {
        out->push_back('\\');
        out->push_back(letter);
      } else {
        AppendHexEscape("\\x", byte, 2, out);
      }
    } else if (!IsPrintableRune(r)) {
      if (r < 0x10000) {
        AppendHexEscape("\\u", r, 4, out);
      } else {
        AppendHexEscape("\\U", r, 8, out);
      }
    } else {
      out->append(s.substr(i, n));
    }
    i += n;
  }
  out->push_back('"');
}

void AppendGoFloat(double v, char format, std::string* out) {
  if (v == 0) {
    out->append(std::signbit(v) ? "-0" : "0");
    if (format == 'e') out->append("e+00");
    return;
  }
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<size_t>(r.ptr - buf));  // -d.ddde+XX
  if (format == 'e') {
    out->append(sci);
    return;
  }
  const size_t e_at = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_at)) {
    if (c >= '0' && c <= '9') digits.push_back(c);
  }
  int exponent = 0;
  std::from_chars(sci.data() + e_at + (sci[e_at + 1] == '+' ? 2 : 1), sci.data() + sci.size(),
                  exponent);
  if (v < 0) out->push_back('-');
  const int point = exponent + 1;  // digits before the decimal point
  const int n = static_cast<int>(digits.size());
  if (point <= 0) {
    out->append("0.");
    out->append(static_cast<size_t>(-point), '0');
    out->append(digits);
  } else if (point >= n) {
    out->append(digits);
    out->append(static_cast<size_t>(point - n), '0');
  } else {
    out->append(digits, 0, static_cast<size_t>(point));
    out->push_back('.');
    out->append(digits, static_cast<size_t>(point), std::string::npos);
  }
}

void AppendGoJsonString(std::string_view s, bool escape_html, bool short_bf, std::string* out) {
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      const bool html = b == '<' || b == '>' || b == '&';
      const char letter = ShortEscapeLetter(b);
      if (b >= 0x20 && b != '"' && b != '\\' && !(html && escape_html)) {
        out->push_back(static_cast<char>(b));
      } else if (b == '"' || b == '\\') {
        out->push_back('\\');
        out->push_back(static_cast<char>(b));
      } else if (letter == 'n' || letter == 'r' || letter == 't' ||
                 (short_bf && (letter == 'b' || letter == 'f'))) {  // JSON has no \a or \v
        out->push_back('\\');
        out->push_back(letter);
      } else {
        AppendHexEscape("\\u", b, 4, out);
      }
      ++i;
      continue;
    }
    size_t n;
    const char32_t r = DecodeRune(s, i, &n);
    if (r == 0xFFFD && n == 1) {
      out->append("\\ufffd");
    } else if (r == 0x2028 || r == 0x2029) {
      AppendHexEscape("\\u", r, 4, out);
    } else {
      out->append(s.substr(i, n));
    }
    i += n;
  }
  out->push_back('"');
}

int32_t Hex4At(std::string_view s, size_t at) {
  if (at + 4 > s.size()) return -1;
  int32_t v = 0;
  for (size_t k = at; k < at + 4; ++k) {
    const int h = HexDigitValue(s[k]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

}  // namespace skald::stages
