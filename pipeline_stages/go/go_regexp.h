// Go regular expressions on RE2, as Promtail's regex, replace, match and template stages use them.
//
// Go's regexp package is RE2 syntax, with one spelling RE2 lacks: named groups written
// `(?<name>...)` (Go 1.22+). Replacement templates follow Go's Regexp.ReplaceAllString.
#pragma once

#include <re2/re2.h>

#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace skald::stages {

// Returns `pattern` with every `(?<name>` group opener rewritten to RE2's `(?P<name>`; escaped
// parentheses and parentheses inside character classes are left alone.
std::string GoRegexpToRe2Syntax(std::string_view pattern);

// Compiles a Go regular expression (UTF-8, RE2 semantics, errors not logged). On a bad pattern
// returns nullptr and sets `*error` to RE2's reason (e.g. "missing ): (abc"). `dot_nl` lets `.`
// match a newline, as Prometheus label matchers do (they compile `^(?s:re)$`).
std::unique_ptr<RE2> CompileGoRegexp(std::string_view pattern, std::string* error,
                                     bool dot_nl = false);

// A text as Go's regexp reads it, prepared once for any number of matches (a replace-all or a
// find-all searches it again and again): where the text is not valid UTF-8, each byte that is
// not part of a valid sequence is one U+FFFD character (so `.`, `[^a]` and `\x{FFFD}` match it,
// as in Go; RE2 alone matches nothing there). RE2 then searches a copy with those bytes written
// as U+FFFD, and the groups are mapped back. Valid text (most of it) is searched as it is.
// `text` must outlive the object.
class GoRegexpText {
 public:
  explicit GoRegexpText(std::string_view text);
  GoRegexpText(const GoRegexpText&) = delete;
  GoRegexpText& operator=(const GoRegexpText&) = delete;

  // re.Match(text, start, end, anchor, groups, n) with Go's reading of the text; the groups
  // point into the text itself. `start` and `end` must be offsets of characters.
  bool Match(const RE2& re, size_t start, size_t end, RE2::Anchor anchor, re2::StringPiece* groups,
             int n);

 private:
  std::string_view text_;
  bool mapped_ = false;       // the text holds bytes that are not UTF-8
  std::string seen_;          // (mapped_) the text with each such byte as U+FFFD
  std::vector<size_t> from_;  // (mapped_) offset in seen_ -> offset in the text
  std::vector<size_t> to_;    // (mapped_) offset in the text -> offset in seen_
  std::vector<re2::StringPiece> groups_;
};

// One match of `re` on `text` as Go's regexp matches (GoRegexpText, prepared for this match).
inline bool GoRegexpMatch(const RE2& re, std::string_view text, size_t start, size_t end,
                          RE2::Anchor anchor, re2::StringPiece* groups, int n) {
  return GoRegexpText(text).Match(re, start, end, anchor, groups, n);
}
// GoRegexpMatch of the whole of `text`: a match anywhere (Go's MatchString), or of all of it
// (anchor = RE2::ANCHOR_BOTH).
inline bool GoRegexpMatches(const RE2& re, std::string_view text,
                            RE2::Anchor anchor = RE2::UNANCHORED) {
  return GoRegexpMatch(re, text, 0, text.size(), anchor, nullptr, 0);
}

// Appends to `*out` the text `src` with every match of `re` replaced, as Go's
// Regexp.ReplaceAllString (literal = false: `$1`, `${1}`, `$name`, `${name}` expand to groups,
// `$$` is a dollar sign, a name of no group expands to "") or ReplaceAllLiteralString
// (literal = true) does. Empty matches advance one character; an empty match right after a
// match is not replaced. Stops and returns false once `*out` is longer than `max_bytes`.
bool GoRegexpReplaceAll(const RE2& re, std::string_view src, std::string_view replacement,
                        bool literal, std::string* out,
                        size_t max_bytes = std::numeric_limits<size_t>::max());

}  // namespace skald::stages
