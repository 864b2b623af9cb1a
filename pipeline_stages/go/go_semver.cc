#include "pipeline_stages/go/go_semver.h"

#include <re2/re2.h>

#include <array>

namespace skald::stages {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentifierChar(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}
bool AllDigits(std::string_view s) {
  for (char c : s) {
    if (!IsDigit(c)) return false;
  }
  return !s.empty();
}

// Dot-separated, non-empty identifiers of [0-9A-Za-z-]: what the version grammar admits after
// '-' and after '+'.
bool DotIdentifiers(std::string_view s) {
  if (s.empty()) return false;
  size_t run = 0;
  for (char c : s) {
    if (c == '.') {
      if (run == 0) return false;
      run = 0;
    } else if (IsIdentifierChar(c)) {
      ++run;
    } else {
      return false;
    }
  }
  return run > 0;
}

// strconv.ParseUint(digits, 10, 64) for a non-empty run of ASCII digits.
bool ParseDigits(std::string_view digits, uint64_t* out, std::string* error) {
  uint64_t x = 0;
  for (char c : digits) {
    const auto d = static_cast<uint64_t>(c - '0');
    if (x > (UINT64_MAX - d) / 10) {
      *error = "error parsing version segment: strconv.ParseUint: parsing \"" +
               std::string(digits) + "\": value out of range";
      return false;
    }
    x = x * 10 + d;
  }
  *out = x;
  return true;
}

// strconv.ParseUint(s, 10, 64) succeeds: digits only, within 64 bits.
bool ParsesAsNumber(std::string_view s, uint64_t* out) {
  std::string ignored;
  return AllDigits(s) && ParseDigits(s, out, &ignored);
}

int ComparePrereleasePart(std::string_view s, std::string_view o) {
  if (s == o) return 0;
  if (s.empty()) return -1;
  if (o.empty()) return 1;
  uint64_t si = 0, oi = 0;
  const bool s_number = ParsesAsNumber(s, &si), o_number = ParsesAsNumber(o, &oi);
  if (!s_number && !o_number) return s > o ? 1 : -1;
  if (!o_number) return -1;  // a number sorts before a word
  if (!s_number) return 1;
  return si > oi ? 1 : -1;
}

// Go's comparePrerelease: part by part, a missing part being "" (which sorts first).
int ComparePrerelease(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (true) {
    const size_t ai = a.find('.', i), bj = b.find('.', j);
    const bool a_done = i > a.size(), b_done = j > b.size();
    if (a_done && b_done) return 0;
    const std::string_view pa = a_done ? std::string_view() : a.substr(i, ai - i);
    const std::string_view pb = b_done ? std::string_view() : b.substr(j, bj - j);
    if (const int d = ComparePrereleasePart(pa, pb); d != 0) return d;
    i = ai == std::string_view::npos ? a.size() + 1 : ai + 1;
    j = bj == std::string_view::npos ? b.size() + 1 : bj + 1;
  }
}

int CompareNumbers(uint64_t a, uint64_t b) { return a < b ? -1 : a > b ? 1 : 0; }

// The grammar of constraints is Go's regular expressions (constraints.go), compiled here by
// RE2, whose leftmost-first matching is Go's: where the two differ from a plain reading (the
// empty operator tried second, '|' admitted among a version's digits) the same texts are
// accepted, split and refused.
//
// A version in a constraint: its numbers may be wildcards. Groups: 1 major, 2 ".minor",
// 3 ".patch", 4 "-prerelease" (5, 6 inside it), 7 "+metadata" (8, 9 inside it).
constexpr std::string_view kVersion = R"(v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?)"
                                      R"((-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?)"
                                      R"((\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?)";
constexpr int kVersionGroups = 9;
// The operators in Go's order of preference; the second alternative is the empty operator.
constexpr std::string_view kOperators = R"(=||!=|>|<|>=|=>|<=|=<|~|~>|\^)";

std::string Join(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out.append(p);
  return out;
}

// One constraint, the whole text: 1 operator, 2 version, 3.. the version's groups.
const RE2& OneConstraint() {
  static const RE2 re(Join({R"(^\s*()", kOperators, R"()\s*()", kVersion, R"()\s*$)"}));
  return re;
}
// A hyphen range "A - B": 1 A, 12 B (2..10 are A's groups).
const RE2& HyphenRange() {
  static const RE2 re(Join({R"(\s*()", kVersion, R"()\s+-\s+()", kVersion, R"()\s*)"}));
  return re;
}
// One constraint within an alternative (found anywhere).
const RE2& ConstraintInText() {
  static const RE2 re(Join({"(", kOperators, R"()\s*()", kVersion, ")"}));
  return re;
}
// An alternative: constraints separated by blanks or a comma.
const RE2& ValidAlternative() {
  static const RE2 re(Join({R"(^(\s*()", kOperators, R"()\s*()", kVersion, R"()\s*)((?:\s+|,\s*)()",
                            kOperators, R"()\s*()", kVersion, R"()\s*)*$)"}));
  return re;
}

std::string_view Group(const re2::StringPiece& g) { return std::string_view(g.data(), g.size()); }

// Go's FindAllStringSubmatch(text, -1) for a pattern that never matches the empty text: the
// successive leftmost matches, each with groups 0..n-1.
template <size_t N>
std::vector<std::array<std::string_view, N>> FindAll(const RE2& re, std::string_view text) {
  std::vector<std::array<std::string_view, N>> out;
  std::array<re2::StringPiece, N> groups;
  size_t pos = 0;
  while (pos <= text.size() &&
         re.Match(text, pos, text.size(), RE2::UNANCHORED, groups.data(), N)) {
    auto& match = out.emplace_back();
    for (size_t k = 0; k < N; ++k) match[k] = Group(groups[k]);
    pos = static_cast<size_t>(groups[0].data() - text.data()) + groups[0].size();
  }
  return out;
}

bool IsWildcard(std::string_view s) { return s == "x" || s == "X" || s == "*"; }
std::string_view WithoutDot(std::string_view s) {
  return !s.empty() && s[0] == '.' ? s.substr(1) : s;
}

// Go's rewriteRange: each "A - B" becomes ">= A, <= B " (Go replaces the first occurrence of the
// matched text, which is where it was found: a range holds no text a rewrite produces).
std::string RewriteRanges(std::string_view text) {
  constexpr size_t kGroups = 2 + 2 * kVersionGroups + 1;
  std::string out(text);
  for (const auto& m : FindAll<kGroups>(HyphenRange(), text)) {
    const std::string replacement = Join({">= ", m[1], ", <= ", m[2 + kVersionGroups], " "});
    const size_t at = out.find(m[0]);
    if (at != std::string::npos) out.replace(at, m[0].size(), replacement);
  }
  return out;
}

}  // namespace

std::optional<SemanticVersion> SemanticVersion::Parse(std::string_view text, std::string* error) {
  // The grammar (Go's looseSemVerRegex) has one reading of any text: parse it left to right.
  SemanticVersion v;
  size_t i = 0;
  const size_t n = text.size();
  auto number = [&](std::string_view* digits) {
    const size_t start = i;
    while (i < n && IsDigit(text[i])) ++i;
    *digits = text.substr(start, i - start);
    return i > start;
  };
  auto invalid = [&]() -> std::optional<SemanticVersion> {
    *error = "invalid semantic version";
    return std::nullopt;
  };
  if (i < n && text[i] == 'v') ++i;
  std::string_view numbers[3];
  if (!number(&numbers[0])) return invalid();
  for (int k = 1; k < 3 && i < n && text[i] == '.'; ++k) {
    ++i;
    if (!number(&numbers[k])) return invalid();
  }
  if (i < n && text[i] == '-') {
    const size_t plus = text.find('+', i);
    const size_t end = plus == std::string_view::npos ? n : plus;
    v.prerelease = text.substr(i + 1, end - i - 1);
    if (!DotIdentifiers(v.prerelease)) return invalid();
    i = end;
  }
  if (i < n && text[i] == '+') {
    v.metadata = text.substr(i + 1);
    if (!DotIdentifiers(v.metadata)) return invalid();
    i = n;
  }
  if (i != n) return invalid();
  uint64_t* const fields[3] = {&v.major, &v.minor, &v.patch};
  for (int k = 0; k < 3; ++k) {
    if (!numbers[k].empty() && !ParseDigits(numbers[k], fields[k], error)) return std::nullopt;
  }
  // Numbers may start with 0 (coercion); numeric prerelease identifiers may not.
  for (size_t start = 0; start < v.prerelease.size();) {
    size_t end = v.prerelease.find('.', start);
    if (end == std::string::npos) end = v.prerelease.size();
    const std::string_view part = std::string_view(v.prerelease).substr(start, end - start);
    if (AllDigits(part) && part.size() > 1 && part[0] == '0') {
      *error = "version segment starts with 0";
      return std::nullopt;
    }
    start = end + 1;
  }
  v.original = text;
  return v;
}

std::string SemanticVersion::String() const {
  std::string out =
      std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  if (!prerelease.empty()) out.append("-").append(prerelease);
  if (!metadata.empty()) out.append("+").append(metadata);
  return out;
}

int CompareVersions(const SemanticVersion& a, const SemanticVersion& b) {
  if (const int d = CompareNumbers(a.major, b.major); d != 0) return d;
  if (const int d = CompareNumbers(a.minor, b.minor); d != 0) return d;
  if (const int d = CompareNumbers(a.patch, b.patch); d != 0) return d;
  if (a.prerelease.empty() || b.prerelease.empty()) {
    return a.prerelease.empty() == b.prerelease.empty() ? 0 : a.prerelease.empty() ? 1 : -1;
  }
  return ComparePrerelease(a.prerelease, b.prerelease);
}

std::optional<VersionConstraints::Constraint> VersionConstraints::ParseConstraint(
    std::string_view text, std::string* error) {
  // Groups: 1 operator, 2 version, then the version's own (3 major, 4 ".minor", 5 ".patch",
  // 6 "-prerelease").
  constexpr int kGroups = 3 + kVersionGroups;
  re2::StringPiece g[kGroups];
  if (!OneConstraint().Match(text, 0, text.size(), RE2::UNANCHORED, g, kGroups)) {
    *error = "improper constraint: " + std::string(text);
    return std::nullopt;
  }
  const std::string_view op = Group(g[1]), major = Group(g[3]), minor = Group(g[4]),
                         patch = Group(g[5]), prerelease = Group(g[6]);
  Constraint c;
  if (op.empty() || op == "=") {
    c.op = Op::kTildeOrEqual;
  } else if (op == "!=") {
    c.op = Op::kNotEqual;
  } else if (op == ">") {
    c.op = Op::kGreater;
  } else if (op == "<") {
    c.op = Op::kLess;
  } else if (op == ">=" || op == "=>") {
    c.op = Op::kGreaterEqual;
  } else if (op == "<=" || op == "=<") {
    c.op = Op::kLessEqual;
  } else if (op == "~" || op == "~>") {
    c.op = Op::kTilde;
  } else {
    c.op = Op::kCaret;
  }
  // A wildcard (or a missing number) zeroes itself and what follows; metadata is then dropped.
  std::string version;
  if (IsWildcard(major)) {
    c.dirty = true;
    version = Join({"0.0.0", prerelease});
  } else if (minor.empty() || IsWildcard(WithoutDot(minor))) {
    c.dirty = c.minor_dirty = true;
    version = Join({major, ".0.0", prerelease});
  } else if (patch.empty() || IsWildcard(WithoutDot(patch))) {
    c.dirty = c.patch_dirty = true;
    version = Join({major, minor, ".0", prerelease});
  } else {
    version = Group(g[2]);
  }
  std::string ignored;
  std::optional<SemanticVersion> v = SemanticVersion::Parse(version, &ignored);
  if (!v) {
    *error = "constraint parser error";
    return std::nullopt;
  }
  c.version = std::move(*v);
  return c;
}

std::optional<VersionConstraints> VersionConstraints::Parse(std::string_view text,
                                                            std::string* error) {
  const std::string rewritten = RewriteRanges(text);
  const std::string_view all = rewritten;
  VersionConstraints out;
  size_t start = 0;
  while (true) {
    const size_t bars = all.find("||", start);
    const std::string_view alternative =
        all.substr(start, bars == std::string_view::npos ? std::string_view::npos : bars - start);
    if (!RE2::PartialMatch(alternative, ValidAlternative())) {
      *error = "improper constraint: " + std::string(alternative);
      return std::nullopt;
    }
    Alternative& alt = out.any_.emplace_back();
    // An alternative the grammar accepts holds at least one constraint.
    for (const auto& m : FindAll<1>(ConstraintInText(), alternative)) {
      std::optional<Constraint> c = ParseConstraint(m[0], error);
      if (!c) return std::nullopt;
      if (!c->version.prerelease.empty()) alt.names_prerelease = true;
      alt.all.push_back(std::move(*c));
    }
    if (bars == std::string_view::npos) break;
    start = bars + 2;
  }
  return out;
}

bool VersionConstraints::Check(const SemanticVersion& v) const {
  for (const Alternative& alt : any_) {
    bool all = true;
    for (const Constraint& c : alt.all) {
      if (!c.Allows(v, alt.names_prerelease)) {
        all = false;
        break;
      }
    }
    if (all) return true;
  }
  return false;
}

// ~1.2.3 is >=1.2.3 <1.3.0; ~1.2 and ~1.2.x are >=1.2.0 <1.3.0; ~1 and ~1.x are >=1.0.0 <2.0.0;
// ~0.0.0 (and ~*) is any version.
bool VersionConstraints::Constraint::AllowsTilde(const SemanticVersion& v) const {
  if (CompareVersions(v, version) < 0) return false;
  if (version.major == 0 && version.minor == 0 && version.patch == 0 && !minor_dirty &&
      !patch_dirty) {
    return true;
  }
  if (v.major != version.major) return false;
  return v.minor == version.minor || minor_dirty;
}

bool VersionConstraints::Constraint::Allows(const SemanticVersion& v,
                                            bool include_prerelease) const {
  if (!v.prerelease.empty() && !include_prerelease) return false;
  const SemanticVersion& c = version;
  switch (op) {
    case Op::kTildeOrEqual:
      return dirty ? AllowsTilde(v) : CompareVersions(v, c) == 0;
    case Op::kNotEqual:
      if (dirty) {
        if (c.major != v.major) return true;
        if (c.minor != v.minor && !minor_dirty) return true;
        if (minor_dirty) return false;
        if (c.patch != v.patch && !patch_dirty) return true;
        if (patch_dirty) {
          // Equal unless the prereleases differ.
          if (!v.prerelease.empty() || !c.prerelease.empty()) {
            return ComparePrerelease(v.prerelease, c.prerelease) != 0;
          }
          return false;
        }
      }
      return CompareVersions(v, c) != 0;
    case Op::kGreater:
      if (!dirty) return CompareVersions(v, c) > 0;
      if (v.major != c.major) return v.major > c.major;
      if (minor_dirty) return false;              // >11 needs 12 or more
      if (patch_dirty) return v.minor > c.minor;  // >11.1 needs 11.2 or more
      return CompareVersions(v, c) > 0;
    case Op::kLess:
      return CompareVersions(v, c) < 0;
    case Op::kGreaterEqual:
      return CompareVersions(v, c) >= 0;
    case Op::kLessEqual:
      if (!dirty) return CompareVersions(v, c) <= 0;
      if (v.major > c.major) return false;
      return !(v.major == c.major && v.minor > c.minor && !minor_dirty);
    case Op::kTilde:
      return AllowsTilde(v);
    case Op::kCaret:
      // ^1.2.3 is >=1.2.3 <2.0.0; ^0.2.3 is >=0.2.3 <0.3.0; ^0.0.3 is =0.0.3; ^0.0 is
      // >=0.0.0 <0.1.0; ^0 is >=0.0.0 <1.0.0.
      if (CompareVersions(v, c) < 0) return false;
      if (c.major > 0 || minor_dirty) return v.major == c.major;
      if (v.major > 0) return false;
      if (c.minor > 0 || patch_dirty) return v.minor == c.minor;
      if (v.minor > 0) return false;
      return v.patch == c.patch;
  }
  return false;
}

}  // namespace skald::stages
