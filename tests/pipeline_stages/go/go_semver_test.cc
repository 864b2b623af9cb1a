// github.com/Masterminds/semver/v3 v3.4.0 (the version Loki's go.mod pins under sprig v3.3.0),
// checked through its own test tables: constraints_test.go and version_test.go at that tag.
// Each expected value is what the library answered for NewConstraint + NewVersion + Check (what
// sprig's semverCompare calls) or NewVersion, printed by a throwaway Go program built against
// the pinned modules; it is not part of the repository. Where that differs from the Go test's
// own expectation (TestConstraintCheck calls the unexported parseConstraint, which accepts ""),
// the library's public answer is the one kept.
#include "pipeline_stages/go/go_semver.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace skald::stages {
namespace {

struct CheckCase {
  std::string_view constraint;
  std::string_view version;
  bool want;
};

void ExpectChecks(const std::vector<CheckCase>& cases) {
  for (const CheckCase& c : cases) {
    SCOPED_TRACE(std::string(c.constraint) + " with " + std::string(c.version));
    std::string error;
    const std::optional<VersionConstraints> constraints =
        VersionConstraints::Parse(c.constraint, &error);
    ASSERT_TRUE(constraints) << error;
    const std::optional<SemanticVersion> version = SemanticVersion::Parse(c.version, &error);
    ASSERT_TRUE(version) << error;
    EXPECT_EQ(constraints->Check(*version), c.want);
  }
}

// constraints_test.go, TestConstraintsCheck: every case (duplicates once).
TEST(GoSemver, ChecksAsTestConstraintsCheck) {
  ExpectChecks({
      {"*", "1.2.3", true},
      {"~0.0.0", "1.2.3", true},
      {"0.x.x", "1.2.3", false},
      {"0.0.x", "1.2.3", false},
      {"0.0.0", "1.2.3", false},
      {"^0.0.0", "1.2.3", false},
      {"= 2.0", "1.2.3", false},
      {"= 2.0", "2.0.0", true},
      {"4.1", "4.1.0", true},
      {"4.1.x", "4.1.3", true},
      {"1.x", "1.4", true},
      {"!=4.1", "4.1.0", false},
      {"!=4.1-alpha", "4.1.0-alpha", false},
      {"!=4.1-alpha", "4.1.1-alpha", false},
      {"!=4.1-alpha", "4.1.0", true},
      {"!=4.1", "5.1.0", true},
      {"!=4.x", "5.1.0", true},
      {"!=4.x", "4.1.0", false},
      {"!=4.1.x", "4.2.0", true},
      {"!=4.2.x", "4.2.3", false},
      {">1.1", "4.1.0", true},
      {">1.1", "1.1.0", false},
      {"<1.1", "0.1.0", true},
      {"<1.1", "1.1.0", false},
      {"<1.1", "1.1.1", false},
      {"<1.x", "1.1.1", false},
      {"<1.x", "0.1.1", true},
      {"<1.x", "2.0.0", false},
      {"<1.1.x", "1.2.1", false},
      {"<1.1.x", "1.1.500", false},
      {"<1.1.x", "1.0.500", true},
      {"<1.2.x", "1.1.1", true},
      {">=1.1", "4.1.0", true},
      {">=1.1", "4.1.0-beta", false},
      {">=1.1", "1.1.0", true},
      {">=1.1", "0.0.9", false},
      {"<=1.1", "0.1.0", true},
      {"<=1.1", "0.1.0-alpha", false},
      {"<=1.1-a", "0.1.0-alpha", true},
      {"<=1.1", "1.1.0", true},
      {"<=1.x", "1.1.0", true},
      {"<=2.x", "3.0.0", false},
      {"<=1.1", "1.1.1", true},
      {"<=1.1.x", "1.2.500", false},
      {"<=4.5", "3.4.0", true},
      {"<=4.5", "3.7.0", true},
      {"<=4.5", "4.6.3", false},
      {">1.1, <2", "1.1.1", false},
      {">1.1, <2", "1.2.1", true},
      {">1.1, <3", "4.3.2", false},
      {">=1.1, <2, !=1.2.3", "1.2.3", false},
      {">1.1 <2", "1.1.1", false},
      {">1.1 <2", "1.2.1", true},
      {">1.1    <3", "4.3.2", false},
      {">=1.1    <2    !=1.2.3", "1.2.3", false},
      {">=1.1, <2, !=1.2.3 || > 3", "4.1.2", true},
      {">=1.1, <2, !=1.2.3 || > 3", "3.1.2", false},
      {">=1.1, <2, !=1.2.3 || >= 3", "3.0.0", true},
      {">=1.1, <2, !=1.2.3 || > 3", "3.0.0", false},
      {">=1.1, <2, !=1.2.3 || > 3", "1.2.3", false},
      {">=1.1 <2 !=1.2.3", "1.2.3", false},
      {">=1.1 <2 !=1.2.3 || > 3", "4.1.2", true},
      {">=1.1 <2 !=1.2.3 || > 3", "3.1.2", false},
      {">=1.1 <2 !=1.2.3 || >= 3", "3.0.0", true},
      {">=1.1 <2 !=1.2.3 || > 3", "3.0.0", false},
      {">=1.1 <2 !=1.2.3 || > 3", "1.2.3", false},
      {"> 1.1, <     2", "1.1.1", false},
      {">   1.1, <2", "1.2.1", true},
      {">1.1, <  3", "4.3.2", false},
      {">= 1.1, <     2, !=1.2.3", "1.2.3", false},
      {"> 1.1 < 2", "1.1.1", false},
      {">1.1 < 2", "1.2.1", true},
      {"> 1.1    <3", "4.3.2", false},
      {">=1.1    < 2    != 1.2.3", "1.2.3", false},
      {">= 1.1, <2, !=1.2.3 || > 3", "4.1.2", true},
      {">= 1.1, <2, != 1.2.3 || > 3", "3.1.2", false},
      {">= 1.1, <2, != 1.2.3 || >= 3", "3.0.0", true},
      {">= 1.1, <2, !=1.2.3 || > 3", "3.0.0", false},
      {">= 1.1, <2, !=1.2.3 || > 3", "1.2.3", false},
      {">= 1.1 <2 != 1.2.3", "1.2.3", false},
      {">= 1.1 <2 != 1.2.3 || > 3", "4.1.2", true},
      {">= 1.1 <2 != 1.2.3 || > 3", "3.1.2", false},
      {">= 1.1 <2 != 1.2.3 || >= 3", "3.0.0", true},
      {">= 1.1 < 2 !=1.2.3 || > 3", "3.0.0", false},
      {">=1.1 < 2 !=1.2.3 || > 3", "1.2.3", false},
      {">= 1.0.0  <= 2.0.0-beta", "1.0.1-beta", true},
      {">= 1.0.0  <= 2.0.0-beta", "1.0.1", true},
      {">= 1.0.0  <= 2.0.0-beta", "3.0.0", false},
      {">= 1.0.0  <= 2.0.0-beta || > 3", "1.0.1-beta", true},
      {">= 1.0.0  <= 2.0.0-beta || > 3", "3.0.1-beta", false},
      {">= 1.0.0  <= 2.0.0-beta != 1.0.1 || > 3", "1.0.1-beta", true},
      {">= 1.0.0  <= 2.0.0-beta != 1.0.1-beta || > 3", "1.0.1-beta", false},
      {">= 1.0.0-0  <= 2.0.0", "1.0.1-beta", true},
      {"1.1 - 2", "1.1.1", true},
      {"1.5.0 - 4.5", "3.7.0", true},
      {"1.1-3", "4.3.2", false},
      {"^1.1", "1.1.1", true},
      {"^1.1", "4.3.2", false},
      {"^1.x", "1.1.1", true},
      {"^2.x", "1.1.1", false},
      {"^1.x", "2.1.1", false},
      {"^1.x", "1.1.1-beta1", false},
      {"^1.1.2-alpha", "1.2.1-beta1", true},
      {"^1.2.x-alpha", "1.1.1-beta1", false},
      {"^0.0.1", "0.0.1", true},
      {"^0.0.1", "0.3.1", false},
      {"~*", "2.1.1", true},
      {"~1", "2.1.1", false},
      {"~1", "1.3.5", true},
      {"~1", "1.4", true},
      {"~1.x", "2.1.1", false},
      {"~1.x", "1.3.5", true},
      {"~1.x", "1.4", true},
      {"~1.1", "1.1.1", true},
      {"~1.1", "1.1.1-alpha", false},
      {"~1.1-alpha", "1.1.1-beta", true},
      {"~1.1.1-beta", "1.1.1-alpha", false},
      {"~1.1.1-beta", "1.1.1", true},
      {"~1.2.3", "1.2.5", true},
      {"~1.2.3", "1.2.2", false},
      {"~1.2.3", "1.3.2", false},
      {"~1.1", "1.2.3", false},
      {"~1.3", "2.4.5", false},
      {"1.0.0 - 2.0.0 <=2.0.0", "1.5.0", true},
      {"1.0.0 - 2.0.0, <=2.0.0", "1.5.0", true},
  });
}

// constraints_test.go, TestConstraintCheck: single constraints, the cases not already above. The
// three with the constraint "" are in RefusesConstraintsAsGo: NewConstraint refuses "".
TEST(GoSemver, ChecksAsTestConstraintCheck) {
  ExpectChecks({
      {"=2.0.0", "1.2.3", false},
      {"=2.0.0", "2.0.0", true},
      {"=2.0", "1.2.3", false},
      {"=2.0", "2.0.0", true},
      {"=2.0", "2.0.1", true},
      {"!=4.1.0", "4.1.0", false},
      {"!=4.1.0", "4.1.1", true},
      {"!=4.1", "4.1.1", false},
      {"!=4.1", "5.1.0-alpha.1", false},
      {"!=4.1.0", "5.1.0-alpha.1", false},
      {"<11", "0.1.0", true},
      {"<11", "11.1.0", false},
      {"<=11", "1.2.3", true},
      {"<=11", "12.2.3", false},
      {"<=11", "11.2.3", true},
      {"<=1.1", "1.2.3", false},
      {">0", "0", false},
      {">0", "1", true},
      {">0", "0.0.1-alpha", false},
      {">0.0", "0.0.1-alpha", false},
      {">0-0", "0.0.1-alpha", false},
      {">0.0-0", "0.0.1-alpha", false},
      {">0", "0.0.0-alpha", false},
      {">0-0", "0.0.0-alpha", false},
      {">0.0.0-0", "0.0.0-alpha", true},
      {">1.2.3-alpha.1", "1.2.3-alpha.2", true},
      {">1.2.3-alpha.1", "1.3.3-alpha.2", true},
      {">11", "11.1.0", false},
      {">11.1", "11.1.0", false},
      {">11.1", "11.1.1", false},
      {">11.1", "11.2.1", true},
      {">=11", "11.1.2", true},
      {">=11.1", "11.1.2", true},
      {">=11.1", "11.0.2", false},
      {">=0", "0.0.1-alpha", false},
      {">=0.0", "0.0.1-alpha", false},
      {">=0-0", "0.0.1-alpha", true},
      {">=0.0-0", "0.0.1-alpha", true},
      {">=0", "0.0.0-alpha", false},
      {">=0-0", "0.0.0-alpha", true},
      {">=0.0.0-0", "0.0.0-alpha", true},
      {">=0.0.0-0", "1.2.3", true},
      {">=0.0.0-0", "3.4.5-beta.1", true},
      {"<0", "0.0.0-alpha", false},
      {"<0-z", "0.0.0-alpha", true},
      {">=0", "0", true},
      {"=0", "1", false},
      {"*", "1", true},
      {"*", "4.5.6", true},
      {"*", "1.2.3-alpha.1", false},
      {"*-0", "1.2.3-alpha.1", true},
      {"2.*", "1", false},
      {"2.*", "3.4.5", false},
      {"2.*", "2.1.1", true},
      {"2.1.*", "2.1.1", true},
      {"2.1.*", "2.2.1", false},
      {"2", "1", false},
      {"2", "3.4.5", false},
      {"2", "2.1.1", true},
      {"2.1", "2.1.1", true},
      {"2.1", "2.2.1", false},
      {"~1.2.3", "1.2.4", true},
      {"~1.2.3", "1.3.4", false},
      {"~1.2", "1.2.4", true},
      {"~1.2", "1.3.4", false},
      {"~1", "1.2.4", true},
      {"~1", "2.3.4", false},
      {"~0.2.3", "0.2.5", true},
      {"~0.2.3", "0.3.5", false},
      {"~1.2.3-beta.2", "1.2.3-beta.4", true},
      {"~1.2.3-beta.2", "1.2.4-beta.2", true},
      {"~1.2.3-beta.2", "1.3.4-beta.2", false},
      {"^1.2.3", "1.8.9", true},
      {"^1.2.3", "2.8.9", false},
      {"^1.2.3", "1.2.1", false},
      {"^1.1.0", "2.1.0", false},
      {"^1.2.0", "2.2.1", false},
      {"^1.2.0", "1.2.1-alpha.1", false},
      {"^1.2.0-alpha.0", "1.2.1-alpha.1", true},
      {"^1.2.0-alpha.0", "1.2.1-alpha.0", true},
      {"^1.2.0-alpha.2", "1.2.0-alpha.1", false},
      {"^1.2", "1.8.9", true},
      {"^1.2", "2.8.9", false},
      {"^1", "1.8.9", true},
      {"^1", "2.8.9", false},
      {"^0.2.3", "0.2.5", true},
      {"^0.2.3", "0.5.6", false},
      {"^0.2", "0.2.5", true},
      {"^0.2", "0.5.6", false},
      {"^0.0.3", "0.0.3", true},
      {"^0.0.3", "0.0.4", false},
      {"^0.0", "0.0.3", true},
      {"^0.0", "0.1.4", false},
      {"^0.0", "1.0.4", false},
      {"^0", "0.2.3", true},
      {"^0", "1.1.4", false},
      {"^0.2.3-beta.2", "0.2.3-beta.4", true},
      {"^0.2.3-beta.2", "0.2.4-beta.2", true},
      {"^0.2.3-beta.2", "0.3.4-beta.2", false},
      {"^0.2.3-beta.2", "0.2.3-beta.2", true},
  });
}

// The valid inputs of constraints_test.go's TestNewConstraint, TestRewriteRange and
// TestParseConstraint with a version each, then edges of the grammar: wildcards under each
// operator, hyphen ranges with other separators, metadata, prerelease ordering, numbers past 64
// bits in a prerelease, blanks and commas.
TEST(GoSemver, ChecksAtTheGrammarsEdges) {
  ExpectChecks({
      {">= 1.1", "1.1.0", true},
      {">40.50.60, < 50.70", "45.0.0", true},
      {"2.0", "2.0.5", true},
      {"v2.3.5-20161202202307-sha.e8fc5e5", "2.3.5-20161202202307-sha.e8fc5e5", true},
      {">= 1.2.3 < 2.0", "1.5.0", true},
      {">= 1.2.3 < 2.0 || => 3.0 < 4", "3.5.0", true},
      {">= 1.2.3, < 2.0", "2.0.0", false},
      {">= 1.2.3, < 2.0 || => 3.0, < 4", "3.9.9", true},
      {"3 - 4 || => 3.0, < 4", "4.0.1", true},
      {"12.3.34 ~1.2.3", "12.3.34", false},
      {"1.0.0 - 2.0.0, <=2.0.0", "2.0.0", true},
      {"2 - 3", "3.5.0", true},
      {"2 - 3, 2 - 3", "2.5.0", true},
      {"2 - 3, 4.0.0 - 5.1", "4.5.0", false},
      {"2 - 3 4.0.0 - 5.1", "3.0.0", false},
      {"1.0.0 - 2.0.0 <=2.0.0", "2.0.0", true},
      {">= 1.2", "1.2.0", true},
      {"1.0", "1.0.9", true},
      {"<= 1.2", "1.2.9", true},
      {"=< 1.2", "1.3.0", false},
      {"=> 1.2", "1.1.9", false},
      {"v1.2", "1.2.1", true},
      {"=1.5", "1.5.0", true},
      {"> 1.3", "1.3.1", false},
      {"< 1.4.1", "1.4.0", true},
      {"< 40.50.10", "40.50.10", false},
      {"!=1.2.x-beta", "1.2.5", true},
      {"!=1.2.x-beta", "1.2.5-beta", false},
      {"!=1.2.x", "1.2.5", false},
      {"!=*", "0.0.0", false},
      {"!=*", "0.0.1", true},
      {"!=*", "1.0.0", true},
      {">*", "1.0.0", true},
      {">*", "0.0.1", true},
      {">*", "0.0.0", false},
      {"<=*", "5.0.0", false},
      {"<*", "1.0.0", false},
      {">=*", "0.0.0", true},
      {"~0.0.0", "0.0.0", true},
      {"~0", "5.0.0", false},
      {"~0.0", "0.1.0", false},
      {"^*", "3.0.0", false},
      {"^0.0", "0.0.9", true},
      {"^0.x", "0.9.0", true},
      {"^0.0.x", "0.0.9", true},
      {"^0.0.x", "0.1.0", false},
      {"1.2.3+build", "1.2.3", true},
      {"=1.2.3+a", "1.2.3+b", true},
      {"1.x+build", "1.5.0", true},
      {"x.2.3", "7.0.0", true},
      {"1.x.3", "1.7.9", true},
      {"1 - 2 || 1 - 2", "1.5.0", true},
      {"1-2", "1.0.0-2", true},
      {"1-2", "1.0.0", true},
      {"1.2 - 1.4.5", "1.4.5", true},
      {"1.2 - 1.4.5", "1.4.6", false},
      {"1.2\t-\t1.4.5", "1.3.0", true},
      {">=1.0,<2.0", "1.5.0", true},
      {">=1.0 ,<2.0", "1.5.0", true},
      {">= 1.0 < 2 , !=1.5.0", "1.5.0", false},
      {"~> 1.2", "1.9.0", false},
      {"~>1.2.3", "1.2.9", true},
      {"=>1.0", "1.0.0", true},
      {">=1.0.0-alpha", "1.0.0-beta", true},
      {">=1.0.0-alpha", "1.0.0-alpha.1", true},
      {"<1.0.0-alpha.beta", "1.0.0-alpha.1", true},
      {">1.0.0-alpha.1", "1.0.0-alpha.beta", true},
      {">1.0.0-beta.11", "1.0.0-beta.2", false},
      {">=1.0.0-rc.1", "1.0.0", true},
      {"<1.0.0", "1.0.0-rc.1", false},
      {"<1.0.0-0", "1.0.0-rc.1", false},
      {"1.0.0-x.7.z.92", "1.0.0-x.7.z.92", true},
      {">0.0.0-99999999999999999999", "0.0.0-5", false},
      {">0.0.0-5", "0.0.0-99999999999999999999", true},
      {"v1.x", "1.9.9", true},
      {">=1.2 <1.1 || >=1.0 <1.1", "1.0.5", true},
      {">= 1.0.0\n", "1.0.0", true},
  });
}

// NewConstraint's refusals, with Go's text: TestNewConstraint's and TestParseConstraint's error
// cases, then "" (TestConstraintCheck's wildcard, refused by the public parser), empty
// alternatives, '|' inside a version (Go's character class admits it), versions NewVersion
// refuses, a range glued to an operator.
TEST(GoSemver, RefusesConstraintsAsGo) {
  struct Case {
    std::string_view text;
    std::string_view error;
  };
  for (const Case& c : std::vector<Case>{
           {">= bar", "improper constraint: >= bar"},
           {"BAR >= 1.2.3", "improper constraint: BAR >= 1.2.3"},
           {"12.3.4.1234", "improper constraint: 12.3.4.1234"},
           {"12.23.4.1234", "improper constraint: 12.23.4.1234"},
           {"12.3.34.1234", "improper constraint: 12.3.34.1234"},
           {"12.3.34~ 1.2.3", "improper constraint: 12.3.34~ 1.2.3"},
           {"foo", "improper constraint: foo"},
           {"", "improper constraint: "},
           {"||", "improper constraint: "},
           {">1 ||", "improper constraint: "},
           {"1 | 2", "constraint parser error"},
           {"1.2.3-01", "constraint parser error"},
           {">=99999999999999999999", "constraint parser error"},
           {"11x", "constraint parser error"},
           {"**", "constraint parser error"},
           {">=1.2.3 - 2", "improper constraint: >=>= 1.2.3, <= 2 "},
           {"1.2 -1.4.5", "improper constraint: 1.2 -1.4.5"},
           {">=1.0, ,<2.0", "improper constraint: >=1.0, ,<2.0"},
           {"V1.2", "improper constraint: V1.2"},
           {"\xC3\xA9"
            "1.0",
            "improper constraint: \xC3\xA9"
            "1.0"},
       }) {
    SCOPED_TRACE(std::string(c.text));
    std::string error;
    EXPECT_FALSE(VersionConstraints::Parse(c.text, &error));
    EXPECT_EQ(error, c.error);
  }
}

// version_test.go: TestNewVersion ("With loose NewVersion", the mode NewVersion runs in),
// TestCoerceString, TestOriginal and TestParts, then edges (64-bit limits, leading zeros, empty
// parts).
TEST(GoSemver, ParsesAsNewVersion) {
  struct Case {
    std::string_view text;
    uint64_t major, minor, patch;
    std::string_view prerelease, metadata, string;
  };
  for (const Case& c : std::vector<Case>{
           {"1.2.3", 1, 2, 3, "", "", "1.2.3"},
           {"1.2.3+test.01", 1, 2, 3, "", "test.01", "1.2.3+test.01"},
           {"1.2.3-alpha.-1", 1, 2, 3, "alpha.-1", "", "1.2.3-alpha.-1"},
           {"v1.2.3", 1, 2, 3, "", "", "1.2.3"},
           {"1.0", 1, 0, 0, "", "", "1.0.0"},
           {"v1.0", 1, 0, 0, "", "", "1.0.0"},
           {"1", 1, 0, 0, "", "", "1.0.0"},
           {"v1", 1, 0, 0, "", "", "1.0.0"},
           {"1.2-5", 1, 2, 0, "5", "", "1.2.0-5"},
           {"v1.2-5", 1, 2, 0, "5", "", "1.2.0-5"},
           {"1.2-beta.5", 1, 2, 0, "beta.5", "", "1.2.0-beta.5"},
           {"v1.2-beta.5", 1, 2, 0, "beta.5", "", "1.2.0-beta.5"},
           {"1.2.0-x.Y.0+metadata", 1, 2, 0, "x.Y.0", "metadata", "1.2.0-x.Y.0+metadata"},
           {"v1.2.0-x.Y.0+metadata", 1, 2, 0, "x.Y.0", "metadata", "1.2.0-x.Y.0+metadata"},
           {"1.2.0-x.Y.0+metadata-width-hypen", 1, 2, 0, "x.Y.0", "metadata-width-hypen",
            "1.2.0-x.Y.0+metadata-width-hypen"},
           {"v1.2.0-x.Y.0+metadata-width-hypen", 1, 2, 0, "x.Y.0", "metadata-width-hypen",
            "1.2.0-x.Y.0+metadata-width-hypen"},
           {"1.2.3-rc1-with-hypen", 1, 2, 3, "rc1-with-hypen", "", "1.2.3-rc1-with-hypen"},
           {"v1.2.3-rc1-with-hypen", 1, 2, 3, "rc1-with-hypen", "", "1.2.3-rc1-with-hypen"},
           {"1.2.2147483648", 1, 2, 2147483648, "", "", "1.2.2147483648"},
           {"1.2147483648.3", 1, 2147483648, 3, "", "", "1.2147483648.3"},
           {"2147483648.3.0", 2147483648, 3, 0, "", "", "2147483648.3.0"},
           {"20221209-update-renovatejson-v4", 20221209, 0, 0, "update-renovatejson-v4", "",
            "20221209.0.0-update-renovatejson-v4"},
           {"01.1.1", 1, 1, 1, "", "", "1.1.1"},
           {"1.01.1", 1, 1, 1, "", "", "1.1.1"},
           {"1.1.01", 1, 1, 1, "", "", "1.1.1"},
           {"1.2.3-beta.1+build.123", 1, 2, 3, "beta.1", "build.123", "1.2.3-beta.1+build.123"},
           {"18446744073709551615.0.0", 18446744073709551615u, 0, 0, "", "",
            "18446744073709551615.0.0"},
           {"00000000000000000000001.2.3", 1, 2, 3, "", "", "1.2.3"},
           {"1.2.3-0", 1, 2, 3, "0", "", "1.2.3-0"},
           {"1.2.3+00", 1, 2, 3, "", "00", "1.2.3+00"},
       }) {
    SCOPED_TRACE(std::string(c.text));
    std::string error;
    const std::optional<SemanticVersion> v = SemanticVersion::Parse(c.text, &error);
    ASSERT_TRUE(v) << error;
    EXPECT_EQ(v->major, c.major);
    EXPECT_EQ(v->minor, c.minor);
    EXPECT_EQ(v->patch, c.patch);
    EXPECT_EQ(v->prerelease, c.prerelease);
    EXPECT_EQ(v->metadata, c.metadata);
    EXPECT_EQ(v->original, c.text);
    EXPECT_EQ(v->String(), c.string);
  }
}

// version_test.go, TestNewVersion's error cases, with the text NewVersion returns, then edges.
TEST(GoSemver, RefusesVersionsAsNewVersion) {
  struct Case {
    std::string_view text;
    std::string_view error;
  };
  for (const Case& c : std::vector<Case>{
           {"99999999999999999999",
            "error parsing version segment: strconv.ParseUint: parsing \"99999999999999999999\": "
            "value out of range"},
           {"1.2.3.4", "invalid semantic version"},
           {"1.2.3-01", "version segment starts with 0"},
           {"", "invalid semantic version"},
           {"v", "invalid semantic version"},
           {" 1.2.3", "invalid semantic version"},
           {"1.2.3 ", "invalid semantic version"},
           {"\xC3\xA9"
            "1.0",
            "invalid semantic version"},
           {"1.2.3-alpha.01", "version segment starts with 0"},
           {"1.2.beta", "invalid semantic version"},
           {"v1.2.beta", "invalid semantic version"},
           {"foo", "invalid semantic version"},
           {"\n1.2", "invalid semantic version"},
           {"\nv1.2", "invalid semantic version"},
           {"v1.2.3.4", "invalid semantic version"},
           {"12.3.4.1234", "invalid semantic version"},
           {"12.23.4.1234", "invalid semantic version"},
           {"12.3.34.1234", "invalid semantic version"},
           {"1.1.2+.123", "invalid semantic version"},
           {"1.0.0-alpha_beta", "invalid semantic version"},
           {"1.0.0-alpha..", "invalid semantic version"},
           {"1.0.0-alpha..1", "invalid semantic version"},
           {"9.8.7+meta+meta", "invalid semantic version"},
           {"1.2.31----RC-SNAPSHOT.12.09.1--.12+788", "version segment starts with 0"},
           {"V1.2.3", "invalid semantic version"},
           {"1.2.3-", "invalid semantic version"},
           {"1.2.3+", "invalid semantic version"},
           {"18446744073709551616.0.0",
            "error parsing version segment: strconv.ParseUint: parsing \"18446744073709551616\": "
            "value out of range"},
           {"1.18446744073709551616",
            "error parsing version segment: strconv.ParseUint: parsing \"18446744073709551616\": "
            "value out of range"},
           {"1.2.99999999999999999999-01",
            "error parsing version segment: strconv.ParseUint: parsing \"99999999999999999999\": "
            "value out of range"},
           {"1.2.3-01+a..b", "invalid semantic version"},
           {"1.2.3-00", "version segment starts with 0"},
           {"1.2.3-a.00", "version segment starts with 0"},
           {"1..2", "invalid semantic version"},
           {"1.2.", "invalid semantic version"},
           {"-1.2.3", "invalid semantic version"},
           {"vv1", "invalid semantic version"},
           {" 1", "invalid semantic version"},
       }) {
    SCOPED_TRACE(std::string(c.text));
    std::string error;
    EXPECT_FALSE(SemanticVersion::Parse(c.text, &error));
    EXPECT_EQ(error, c.error);
  }
}

// version_test.go, TestCompare: every case, and each the other way round.
TEST(GoSemver, ComparesAsTestCompare) {
  struct Case {
    std::string_view a, b;
    int want;
  };
  for (const Case& c : std::vector<Case>{
           {"1.2.3", "1.5.1", -1},
           {"2.2.3", "1.5.1", 1},
           {"2.2.3", "2.2.2", 1},
           {"3.2-beta", "3.2-beta", 0},
           {"1.3", "1.1.4", 1},
           {"4.2", "4.2-beta", 1},
           {"4.2-beta", "4.2", -1},
           {"4.2-alpha", "4.2-beta", -1},
           {"4.2-alpha", "4.2-alpha", 0},
           {"4.2-beta.2", "4.2-beta.1", 1},
           {"4.2-beta2", "4.2-beta1", 1},
           {"4.2-beta", "4.2-beta.2", -1},
           {"4.2-beta", "4.2-beta.foo", -1},
           {"4.2-beta.2", "4.2-beta", 1},
           {"4.2-beta.foo", "4.2-beta", 1},
           {"1.2+bar", "1.2+baz", 0},
           {"1.0.0-beta.4", "1.0.0-beta.-2", -1},
           {"1.0.0-beta.-2", "1.0.0-beta.-3", -1},
           {"1.0.0-beta.-3", "1.0.0-beta.5", 1},
       }) {
    SCOPED_TRACE(std::string(c.a) + " vs " + std::string(c.b));
    std::string error;
    const std::optional<SemanticVersion> a = SemanticVersion::Parse(c.a, &error);
    const std::optional<SemanticVersion> b = SemanticVersion::Parse(c.b, &error);
    ASSERT_TRUE(a && b) << error;
    EXPECT_EQ(CompareVersions(*a, *b), c.want);
    EXPECT_EQ(CompareVersions(*b, *a), -c.want);
  }
}

}  // namespace
}  // namespace skald::stages
