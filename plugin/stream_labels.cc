#include "plugin/stream_labels.h"

#include <algorithm>
#include <cstdint>

namespace skald {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// Decodes one UTF-8 rune at s[i]. Returns its length (1-4) and sets `rune`, or returns 0 for
// an invalid sequence (bad lead or continuation byte, overlong form, surrogate, > U+10FFFF).
int DecodeRune(std::string_view s, std::size_t i, uint32_t& rune) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  int len;
  uint32_t min;
  if (b0 < 0x80) {
    rune = b0;
    return 1;
  } else if ((b0 & 0xE0) == 0xC0) {
    len = 2, rune = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, rune = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, rune = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (int k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    rune = (rune << 6) | (b & 0x3F);
  }
  if (rune < min || rune > 0x10FFFF || (rune >= 0xD800 && rune <= 0xDFFF)) return 0;
  return len;
}

// Go's unicode.IsPrint is false for these runes at or above U+0080 (the spaces other than
// ASCII space, format characters, line/paragraph separators, private use, noncharacters).
bool IsNonPrintable(uint32_t r) {
  if (r <= 0x9F) return r >= 0x80;  // C1 controls
  if (r == 0xA0 || r == 0xAD || r == 0x1680 || r == 0x180E || r == 0x3000 || r == 0xFEFF) {
    return true;
  }
  if (r >= 0x2000 && r <= 0x200F) return true;
  if (r >= 0x2028 && r <= 0x202F) return true;
  if (r >= 0x205F && r <= 0x206F) return true;
  if (r >= 0xE000 && r <= 0xF8FF) return true;  // private use
  if (r >= 0xFFF9 && r <= 0xFFFB) return true;
  if (r == 0xFFFE || r == 0xFFFF) return true;
  if (r >= 0xF0000) return true;  // supplementary private use planes
  return false;
}

void AppendHexEscape(std::string& out, char kind, uint32_t r, int digits) {
  out += '\\';
  out += kind;
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) out += kHex[(r >> shift) & 0xF];
}

}  // namespace

bool IsValidLabelName(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!alpha && !(digit && i > 0)) return false;
  }
  return true;
}

void AppendGoQuoted(std::string& out, std::string_view value) {
  out += '"';
  std::size_t i = 0;
  while (i < value.size()) {
    const char c = value[i];
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7F) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
      ++i;
      continue;
    }
    if (u < 0x80) {
      switch (c) {
        case '\a':
          out += "\\a";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\v':
          out += "\\v";
          break;
        default:
          AppendHexEscape(out, 'x', u, 2);
      }
      ++i;
      continue;
    }
    uint32_t rune = 0;
    const int len = DecodeRune(value, i, rune);
    if (len == 0) {
      AppendHexEscape(out, 'x', u, 2);
      ++i;
      continue;
    }
    if (IsNonPrintable(rune)) {
      if (rune < 0x10000) {
        AppendHexEscape(out, 'u', rune, 4);
      } else {
        AppendHexEscape(out, 'U', rune, 8);
      }
    } else {
      out.append(value.substr(i, len));
    }
    i += len;
  }
  out += '"';
}

bool RenderStreamLabels(const StreamLabelSet& labels, std::string& out, std::string* error) {
  std::vector<const std::pair<std::string, std::string>*> sorted;
  sorted.reserve(labels.size());
  for (const auto& label : labels) {
    if (!IsValidLabelName(label.first)) {
      if (error) {
        *error = "invalid label name '" + label.first +
                 "': a label name must match [a-zA-Z_][a-zA-Z0-9_]*";
      }
      return false;
    }
    if (!label.second.empty()) sorted.push_back(&label);
  }
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->first < b->first; });
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i]->first == sorted[i - 1]->first) {
      if (error) *error = "duplicate label name '" + sorted[i]->first + "'";
      return false;
    }
  }
  if (sorted.empty()) {
    if (error) *error = "no label with a non-empty value: Loki needs at least one stream label";
    return false;
  }
  out.clear();
  out += '{';
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (i > 0) out += ", ";
    out += sorted[i]->first;
    out += '=';
    AppendGoQuoted(out, sorted[i]->second);
  }
  out += '}';
  return true;
}

}  // namespace skald
