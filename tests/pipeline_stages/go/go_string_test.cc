#include "pipeline_stages/go/go_string.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skald::stages {
namespace {

using ::testing::HasSubstr;

struct Read {
  size_t consumed;
  std::string value;
  std::string error;
};

Read ReadLiteral(std::string_view text) {
  Read r;
  r.consumed = ReadGoStringLiteral(text, &r.value, &r.error);
  return r;
}

TEST(GoString, DoubleQuotedDecodesGoEscapes) {
  const Read r = ReadLiteral(R"("a\tb\n\\\"\a\b\f\r\v\x41\101\u00e9\U0001F600" rest)");
  EXPECT_EQ(r.value, "a\tb\n\\\"\a\b\f\r\vAA\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(r.consumed, 46u);
}

TEST(GoString, HexAndOctalEscapesAreBytes) {
  EXPECT_EQ(ReadLiteral(R"("\xff\377")").value, "\xff\xff");
}

TEST(GoString, RawStringKeepsBackslashesAndDropsCarriageReturns) {
  const Read r = ReadLiteral("`a\\d+\r\n\"x\"` tail");
  EXPECT_EQ(r.value, "a\\d+\n\"x\"");
  EXPECT_EQ(r.consumed, 11u);
}

TEST(GoString, MalformedLiteralsReportWhy) {
  EXPECT_EQ(ReadLiteral(R"("abc)").consumed, 0u);
  EXPECT_THAT(ReadLiteral(R"("abc)").error, HasSubstr("no closing double quote"));
  EXPECT_THAT(ReadLiteral("`abc").error, HasSubstr("no closing backquote"));
  EXPECT_THAT(ReadLiteral("\"a\nb\"").error, HasSubstr("newline inside string"));
  EXPECT_THAT(ReadLiteral(R"("\q")").error, HasSubstr("invalid escape \\q"));
  EXPECT_THAT(ReadLiteral(R"("\'")").error, HasSubstr("invalid escape"));
  EXPECT_THAT(ReadLiteral(R"("\x4")").error, HasSubstr("invalid escape \\x4"));
  EXPECT_THAT(ReadLiteral(R"("\400")").error, HasSubstr("invalid escape"));
  EXPECT_THAT(ReadLiteral(R"("\ud800")").error, HasSubstr("invalid escape"));
  EXPECT_THAT(ReadLiteral("abc").error, HasSubstr("expected a string literal"));
}

TEST(GoString, QuoteMatchesGoPercentQ) {
  std::string out;
  AppendGoQuoted("a\"b\\c\n\t\x01\x7f\xff\xc3\xa9\xc2\x85", &out);
  EXPECT_EQ(out, R"("a\"b\\c\n\t\x01\x7f\xffé\u0085")");
  out.clear();
  AppendGoQuoted("\xc2\xa0x\xe3\x80\x80\xe2\x80\x8b\xf3\xb0\x80\x80 \xf0\x9f\x98\x80", &out);
  EXPECT_EQ(out, R"("\u00a0x\u3000\u200b\U000f0000 😀")");
}

TEST(GoString, DecodeRuneRejectsInvalidSequences) {
  size_t n;
  EXPECT_EQ(DecodeRune("\xc3\xa9", 0, &n), U'\u00e9');
  EXPECT_EQ(n, 2u);
  EXPECT_EQ(DecodeRune("\xc3", 0, &n), 0xFFFDu);
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(DecodeRune("\xc0\x80", 0, &n), 0xFFFDu);      // overlong
  EXPECT_EQ(DecodeRune("\xed\xa0\x80", 0, &n), 0xFFFDu);  // surrogate
}

std::string GoFloat(double v, char format) {
  std::string out;
  AppendGoFloat(v, format, &out);
  return out;
}

// strconv.FormatFloat(v, format, -1, 64), as Go 1.26 prints them.
TEST(GoString, FloatsAreTheShortestDigitsThatReadBack) {
  EXPECT_EQ(GoFloat(1e23, 'f'), "100000000000000000000000");  // not the double's exact value
  EXPECT_EQ(GoFloat(12345678901234567890.0, 'f'), "12345678901234567000");
  EXPECT_EQ(GoFloat(0.1, 'f'), "0.1");
  EXPECT_EQ(GoFloat(-123.456, 'f'), "-123.456");
  EXPECT_EQ(GoFloat(1e-7, 'f'), "0.0000001");
  EXPECT_EQ(GoFloat(-0.0, 'f'), "-0");
  EXPECT_EQ(GoFloat(0.0, 'f'), "0");
  EXPECT_EQ(GoFloat(1e-7, 'e'), "1e-07");
  EXPECT_EQ(GoFloat(1.5e21, 'e'), "1.5e+21");
  EXPECT_EQ(GoFloat(0.0, 'e'), "0e+00");
  EXPECT_EQ(GoFloat(5e-324, 'e'), "5e-324");
}

std::string GoJson(std::string_view s, bool escape_html, bool short_bf) {
  std::string out;
  AppendGoJsonString(s, escape_html, short_bf, &out);
  return out;
}

// encoding/json (Go 1.26's json.Marshal, expectation printed by it) and json-iterator's default
// configuration differ only in \b and \f.
TEST(GoString, JsonStringsAreWrittenAsGosJsonWritersWriteThem) {
  const std::string s = "\b\f\n\r\t\x01\x7f<&> \xE2\x80\xA8\xff\"\\\xC3\xA9";
  EXPECT_EQ(GoJson(s, true, true),
            "\"\\b\\f\\n\\r\\t\\u0001\x7f\\u003c\\u0026\\u003e \\u2028\\ufffd\\\"\\\\\xC3\xA9\"");
  EXPECT_EQ(
      GoJson(s, true, false),
      "\"\\u0008\\u000c\\n\\r\\t\\u0001\x7f\\u003c\\u0026\\u003e \\u2028\\ufffd\\\"\\\\\xC3\xA9\"");
  EXPECT_EQ(GoJson("<&>", false, true), "\"<&>\"");
}

}  // namespace
}  // namespace skald::stages
