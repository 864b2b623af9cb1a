#include "pipeline_stages/go/go_unicode_case.h"

#include <gtest/gtest.h>

namespace skald::stages {
namespace {

// Expected values are Go 1.26's strings.ToLower / strings.ToUpper and unicode.ToTitle.

TEST(GoUnicodeCase, AsciiOnlyStringsMapAsciiLetters) {
  EXPECT_EQ(GoToLower("Hello, World 42!"), "hello, world 42!");
  EXPECT_EQ(GoToUpper("Hello, World 42!"), "HELLO, WORLD 42!");
  EXPECT_EQ(GoToLower(""), "");
}

TEST(GoUnicodeCase, LatinLettersBeyondAscii) {
  EXPECT_EQ(GoToLower("ÄÖÜ"), "äöü");
  EXPECT_EQ(GoToUpper("äöü éà"), "ÄÖÜ ÉÀ");
  // Latin Extended-A alternates upper and lower case rune by rune.
  EXPECT_EQ(GoToLower("ĀĂĄŁŽ"), "āăąłž");
  EXPECT_EQ(GoToUpper("āăąłž"), "ĀĂĄŁŽ");
  // Vietnamese (Latin Extended Additional).
  EXPECT_EQ(GoToUpper("tiếng việt"), "TIẾNG VIỆT");
  EXPECT_EQ(GoToLower("TIẾNG VIỆT"), "tiếng việt");
}

TEST(GoUnicodeCase, SimpleMappingsOnlyNoSpecialCasing) {
  EXPECT_EQ(GoToUpper("Straße"), "STRAßE");  // not "STRASSE"
  EXPECT_EQ(GoToLower("ẞ"), "ß");
  EXPECT_EQ(GoToUpper("ς"), "Σ");
  EXPECT_EQ(GoToLower("ΌΣΟΣ"), "όσοσ");  // no final sigma
  EXPECT_EQ(GoToLower("İ"), "i");        // one rune, no combining dot
  EXPECT_EQ(GoToUpper("ı"), "I");
  EXPECT_EQ(GoToLower("\u212A"), "k");  // KELVIN SIGN
  EXPECT_EQ(GoToUpper("ſ"), "S");
  EXPECT_EQ(GoToUpper("µÿ"), "\u039C\u0178");
}

TEST(GoUnicodeCase, OtherScripts) {
  EXPECT_EQ(GoToLower("ΑΒΓ ΔΕΖ"), "αβγ δεζ");
  EXPECT_EQ(GoToUpper("жёлтый"), "ЖЁЛТЫЙ");
  EXPECT_EQ(GoToUpper("\u10D0"), "\u1C90");          // Georgian Mkhedruli to Mtavruli
  EXPECT_EQ(GoToLower("\u13A0"), "\uAB70");          // Cherokee
  EXPECT_EQ(GoToLower("\U00010400"), "\U00010428");  // Deseret, beyond the BMP
  EXPECT_EQ(GoToUpper("\U00010428"), "\U00010400");
  EXPECT_EQ(GoToUpper("日本語 123"), "日本語 123");
}

TEST(GoUnicodeCase, TitleCaseDiffersFromUpperCase) {
  // DŽ, Dž, dž: upper, title and lower case of one letter.
  for (char32_t r : {U'\u01C4', U'\u01C5', U'\u01C6'}) {
    EXPECT_EQ(GoToUpperRune(r), U'\u01C4');
    EXPECT_EQ(GoToTitleRune(r), U'\u01C5');
    EXPECT_EQ(GoToLowerRune(r), U'\u01C6');
  }
  EXPECT_EQ(GoToTitleRune(U'\u10D0'), U'\u10D0');  // Georgian has no title case
  EXPECT_EQ(GoToTitleRune(U'a'), U'A');
  EXPECT_EQ(GoToTitleRune(U'\u00FF'), U'\u0178');
}

TEST(GoUnicodeCase, InvalidUtf8BytesBecomeReplacementCharacters) {
  EXPECT_EQ(GoToLower("a\xff"
                      "B"),
            "a\uFFFDb");
  EXPECT_EQ(GoToUpper("a\xff"
                      "B"),
            "A\uFFFDB");
  // A bad continuation and a truncated sequence: one U+FFFD per byte.
  EXPECT_EQ(GoToLower("\xc3(\xe2\x82"), "\uFFFD(\uFFFD\uFFFD");
  // An encoded surrogate is three bad bytes.
  EXPECT_EQ(GoToUpper("\xed\xa0\x80"), "\uFFFD\uFFFD\uFFFD");
  // A string that needs no change still has its bad bytes replaced.
  EXPECT_EQ(GoToLower("caf\xe9"), "caf\uFFFD");
  EXPECT_EQ(GoToLower("\uFFFD"), "\uFFFD");
}

}  // namespace
}  // namespace skald::stages
