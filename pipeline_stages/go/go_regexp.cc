#include "pipeline_stages/go/go_regexp.h"

#include <vector>

#include "pipeline_stages/go/go_string.h"

namespace skald::stages {
namespace {

bool IsNameByte(char c) {
  // Go accepts Unicode letters and digits in group references; bytes >= 0x80 stand in for them.
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

// Go's regexp.extract: parses `name` or `{name}` after a '$'. Returns false when malformed.
bool ExtractGroupRef(std::string_view s, std::string_view* name, int* num, size_t* consumed) {
  size_t i = 0;
  const bool brace = !s.empty() && s[0] == '{';
  if (brace) ++i;
  const size_t start = i;
  while (i < s.size() && IsNameByte(s[i])) ++i;
  if (i == start) return false;
  *name = s.substr(start, i - start);
  if (brace) {
    if (i >= s.size() || s[i] != '}') return false;
    ++i;
  }
  *num = 0;
  for (char c : *name) {
    if (c < '0' || c > '9' || *num >= 100000000) {
      *num = -1;
      break;
    }
    *num = *num * 10 + (c - '0');
  }
  if ((*name)[0] == '0' && name->size() > 1) *num = -1;  // no leading zeros
  *consumed = i;
  return true;
}

// Returns false once *out is longer than max_bytes (each step appends at most one group).
bool Expand(const RE2& re, std::string_view replacement,
            const std::vector<re2::StringPiece>& groups, std::string* out, size_t max_bytes) {
  while (!replacement.empty()) {
    const size_t dollar = replacement.find('$');
    if (dollar == std::string_view::npos) break;
    out->append(replacement.substr(0, dollar));
    replacement.remove_prefix(dollar + 1);
    if (!replacement.empty() && replacement[0] == '$') {
      out->push_back('$');
      replacement.remove_prefix(1);
      continue;
    }
    std::string_view name;
    int num;
    size_t consumed;
    if (!ExtractGroupRef(replacement, &name, &num, &consumed)) {
      out->push_back('$');
      continue;
    }
    replacement.remove_prefix(consumed);
    if (num < 0) {
      const auto& named = re.NamedCapturingGroups();
      auto it = named.find(std::string(name));
      if (it == named.end()) continue;
      num = it->second;
    }
    if (static_cast<size_t>(num) < groups.size() && groups[num].data() != nullptr) {
      out->append(groups[num].data(), groups[num].size());
      if (out->size() > max_bytes) return false;
    }
  }
  out->append(replacement);
  return out->size() <= max_bytes;
}

}  // namespace

std::string GoRegexpToRe2Syntax(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size() + 4);
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      out.push_back(c);
      out.push_back(pattern[++i]);
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      out.push_back(c);
      continue;
    }
    if (c == '[') {
      in_class = true;
      out.push_back(c);
      // A ']' right after '[' or '[^' is a literal member of the class.
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out.push_back(pattern[++i]);
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out.push_back(pattern[++i]);
      continue;
    }
    if (c == '(' && pattern.substr(i, 3) == "(?<" && i + 3 < pattern.size() &&
        pattern[i + 3] != '=' && pattern[i + 3] != '!') {
      out.append("(?P<");
      i += 2;
      continue;
    }
    out.push_back(c);
  }
  return out;
}

std::unique_ptr<RE2> CompileGoRegexp(std::string_view pattern, std::string* error, bool dot_nl) {
  RE2::Options options;
  options.set_log_errors(false);
  options.set_dot_nl(dot_nl);
  const std::string re2_pattern = GoRegexpToRe2Syntax(pattern);
  auto re = std::make_unique<RE2>(re2_pattern, options);
  if (!re->ok()) {
    *error = re->error();
    return nullptr;
  }
  return re;
}

GoRegexpText::GoRegexpText(std::string_view text) : text_(text) {
  // Up to the first byte that is not UTF-8 nothing needs mapping; most text has none.
  size_t i = 0;
  while (i < text.size()) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t width = 0;
    if (DecodeRune(text, i, &width) == 0xFFFD && width == 1) break;
    i += width;
  }
  if (i == text.size()) return;
  mapped_ = true;
  seen_.assign(text.substr(0, i));
  from_.resize(i);
  to_.resize(text.size() + 1);
  for (size_t k = 0; k < i; ++k) from_[k] = to_[k] = k;
  while (i < text.size()) {
    size_t width = 0;
    const bool stray = DecodeRune(text, i, &width) == 0xFFFD && width == 1;
    if (stray) {
      to_[i] = seen_.size();
      seen_.append("\xEF\xBF\xBD");
      from_.insert(from_.end(), 3, i);
    } else {
      for (size_t k = 0; k < width; ++k) {
        to_[i + k] = seen_.size() + k;
        from_.push_back(i + k);
      }
      seen_.append(text.substr(i, width));
    }
    i += width;
  }
  to_[text.size()] = seen_.size();
  from_.push_back(text.size());
}

bool GoRegexpText::Match(const RE2& re, size_t start, size_t end, RE2::Anchor anchor,
                         re2::StringPiece* groups, int n) {
  if (!mapped_) {
    return re.Match(re2::StringPiece(text_.data(), text_.size()), start, end, anchor, groups, n);
  }
  groups_.assign(static_cast<size_t>(n), re2::StringPiece());
  if (!re.Match(re2::StringPiece(seen_.data(), seen_.size()), to_[start], to_[end], anchor,
                groups_.data(), n)) {
    return false;
  }
  for (int g = 0; g < n; ++g) {
    if (groups_[g].data() == nullptr) {
      groups[g] = re2::StringPiece();
      continue;
    }
    const size_t at = static_cast<size_t>(groups_[g].data() - seen_.data());
    const size_t b = from_[at], e = from_[at + groups_[g].size()];
    groups[g] = re2::StringPiece(text_.data() + b, e - b);
  }
  return true;
}

bool GoRegexpReplaceAll(const RE2& re, std::string_view src, std::string_view replacement,
                        bool literal, std::string* out, size_t max_bytes) {
  const int ngroups = literal ? 1 : re.NumberOfCapturingGroups() + 1;
  std::vector<re2::StringPiece> groups(ngroups);
  GoRegexpText subject(src);
  size_t last_match_end = 0;
  size_t search = 0;
  while (search <= src.size()) {
    if (!subject.Match(re, search, src.size(), RE2::UNANCHORED, groups.data(), ngroups)) break;
    const size_t a0 = groups[0].data() - src.data();
    const size_t a1 = a0 + groups[0].size();
    out->append(src.substr(last_match_end, a0 - last_match_end));
    // No replacement for an empty match right after the previous match.
    if (a1 > last_match_end || a0 == 0) {
      if (literal) {
        out->append(replacement);
      } else if (!Expand(re, replacement, groups, out, max_bytes)) {
        return false;
      }
      if (out->size() > max_bytes) return false;
    }
    last_match_end = a1;
    size_t width = 0;
    if (search < src.size()) DecodeRune(src, search, &width);
    if (search + width > a1) {
      search += width;
    } else if (search + 1 > a1) {
      ++search;
    } else {
      search = a1;
    }
  }
  out->append(src.substr(last_match_end));
  return out->size() <= max_bytes;
}

}  // namespace skald::stages
