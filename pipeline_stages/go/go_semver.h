// Semantic versions and version constraints as github.com/Masterminds/semver/v3 v3.4.0 reads and
// checks them: what sprig's `semver` and `semverCompare` template functions call (Promtail's
// templates pin sprig v3.3.0 over that semver). No template code here: the template functions
// are go_template/go_template_sprig_semver.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skald::stages {

// A version as semver.NewVersion reads it in its default (coercing) mode: an optional `v`, one
// to three dot-separated numbers (missing ones are 0, leading zeros are allowed: "v1.2" is
// 1.2.0, "01.2.3" is 1.2.3), then an optional `-prerelease` and `+metadata`, each dot-separated
// identifiers of [0-9A-Za-z-]; a numeric prerelease identifier has no leading zero.
struct SemanticVersion {
  uint64_t major = 0;
  uint64_t minor = 0;
  uint64_t patch = 0;
  std::string prerelease;  // without the '-'
  std::string metadata;    // without the '+'
  std::string original;    // the text parsed ("" for Go's zero Version)

  // NewVersion(text). On failure returns nullopt and sets *error to Go's message: "invalid
  // semantic version", "version segment starts with 0" or "error parsing version segment:
  // strconv.ParseUint: parsing \"99999999999999999999\": value out of range".
  static std::optional<SemanticVersion> Parse(std::string_view text, std::string* error);

  // Version.String(): the numbers without leading zeros and no `v` ("1.2.0-rc.1+build.5").
  std::string String() const;
};

// Version.Compare: -1, 0 or 1. Metadata is ignored; a prerelease sorts before its release;
// prerelease identifiers compare numerically when both are numbers, else as bytes, and a number
// sorts before a word.
int CompareVersions(const SemanticVersion& a, const SemanticVersion& b);

// A set of constraints as semver.NewConstraint reads it: `||` between alternatives; within one,
// constraints joined by commas or blanks, all of which must hold. A constraint is an operator
// (none or `=`, `!=`, `>`, `<`, `>=`, `=>`, `<=`, `=<`, `~`, `~>`, `^`) and a version whose
// numbers may be wildcards (`x`, `X`, `*`, or missing: "1.2" is 1.2.x); `1.2 - 1.4.5` is
// `>= 1.2, <= 1.4.5`. A version with a prerelease satisfies an alternative only when one of its
// constraints names a prerelease.
class VersionConstraints {
 public:
  // NewConstraint(text). On failure returns nullopt and sets *error to Go's message:
  // "improper constraint: <the alternative>" or "constraint parser error" (a version that the
  // grammar admits but NewVersion refuses, such as "1.2.3-01").
  static std::optional<VersionConstraints> Parse(std::string_view text, std::string* error);

  // Constraints.Check(v), pre-releases not included by default (as sprig's semverCompare).
  bool Check(const SemanticVersion& v) const;

 private:
  enum class Op {
    kTildeOrEqual,
    kNotEqual,
    kGreater,
    kLess,
    kGreaterEqual,
    kLessEqual,
    kTilde,
    kCaret
  };
  struct Constraint {
    Op op = Op::kTildeOrEqual;
    SemanticVersion version;   // wildcards read as 0
    bool dirty = false;        // some number is a wildcard
    bool minor_dirty = false;  // the minor (and so the patch) is
    bool patch_dirty = false;  // only the patch is
    bool Allows(const SemanticVersion& v, bool include_prerelease) const;
    bool AllowsTilde(const SemanticVersion& v) const;
  };
  struct Alternative {
    std::vector<Constraint> all;
    bool names_prerelease = false;
  };
  static std::optional<Constraint> ParseConstraint(std::string_view text, std::string* error);

  std::vector<Alternative> any_;
};

}  // namespace skald::stages
