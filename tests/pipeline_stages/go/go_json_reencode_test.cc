#include "pipeline_stages/go/go_json_reencode.h"

#include <gtest/gtest.h>

#include <string>

namespace skald::stages {
namespace {

// The re-encoded text, or "<refused>".
std::string Reencoded(std::string_view json) {
  std::string out;
  return ReencodeAsGoJson(json, &out) ? out : "<refused>";
}

TEST(GoJsonReencode, NumbersAreWrittenAsTheFloat64TheyDecodeTo) {
  EXPECT_EQ(Reencoded("[1.50, 1e3, 1E2, -0, 0, 0.0, 100, -2.5e0]"),
            "[1.5,1000,100,-0,0,0,100,-2.5]");
  EXPECT_EQ(Reencoded("[12345678901234567890]"), "[12345678901234567000]");
  EXPECT_EQ(Reencoded("[9007199254740993]"), "[9007199254740992]");
  EXPECT_EQ(Reencoded("[0.1, 0.000001, 123456789.125]"), "[0.1,0.000001,123456789.125]");
}

TEST(GoJsonReencode, VerySmallAndVeryLargeNumbersUseGosExponentForm) {
  // json-iterator writes strconv's 'e' form below 1e-6 and from 1e21 on, exponent unpadded to
  // two digits as strconv gives it.
  EXPECT_EQ(Reencoded("[1e-7, 0.0000001, 1.5e-10, 1e21, -1e21, 1e20]"),
            "[1e-07,1e-07,1.5e-10,1e+21,-1e+21,100000000000000000000]");
  EXPECT_EQ(Reencoded("[1e-400]"), "[0]");  // below float64's range: zero, as Go reads it
}

TEST(GoJsonReencode, ANumberBeyondFloat64IsRefusedAsGoRefusesTheDocument) {
  EXPECT_EQ(Reencoded("[1e400]"), "<refused>");
  EXPECT_EQ(Reencoded(R"({"a":{"b":-1e309}})"), "<refused>");
}

TEST(GoJsonReencode, StringsAreEscapedAsJsonIteratorWritesThem) {
  EXPECT_EQ(Reencoded(R"(["<a href='x'>&amp;</a>"])"),
            R"(["\u003ca href='x'\u003e\u0026amp;\u003c/a\u003e"])");
  EXPECT_EQ(Reencoded(R"(["a\/b", "\u0041\u00e9", "\b\f\n\r\t\u001f\u007f"])"),
            "[\"a/b\",\"A\xC3\xA9\",\"\\u0008\\u000c\\n\\r\\t\\u001f\x7f\"]");
  EXPECT_EQ(Reencoded("[\"\xE2\x80\xA8 \xE2\x80\xA9 \xF0\x9F\x98\x80\"]"),
            "[\"\\u2028 \\u2029 \xF0\x9F\x98\x80\"]");
  EXPECT_EQ(Reencoded(R"(["\ud83d\ude00"])"), "[\"\xF0\x9F\x98\x80\"]");  // a surrogate pair
}

TEST(GoJsonReencode, ALoneSurrogateEscapeBecomesTheReplacementCharacter) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(Reencoded(R"(["a\ud800b"])"), "[\"a" + fffd + "b\"]");
  EXPECT_EQ(Reencoded(R"(["\udc00"])"), "[\"" + fffd + "\"]");
  EXPECT_EQ(Reencoded(R"(["\ud800\u0041"])"), "[\"" + fffd + "A\"]");
  EXPECT_EQ(Reencoded(R"(["\ud800\ud800"])"), "[\"" + fffd + fffd + "\"]");
}

TEST(GoJsonReencode, ADuplicateKeyKeepsItsLastValueOnce) {
  EXPECT_EQ(Reencoded(R"({"a":1,"b":2,"a":3})"), R"({"b":2,"a":3})");
  EXPECT_EQ(Reencoded(R"({"x":{"k":1,"k":{"k":2,"k":3}}})"), R"({"x":{"k":{"k":3}}})");
  EXPECT_EQ(Reencoded(R"({"\u0061":1,"a":2})"), R"({"a":2})");  // the same key, escaped
}

TEST(GoJsonReencode, KeysAreEscapedLikeValuesAndKeepTheDocumentsOrder) {
  EXPECT_EQ(Reencoded(R"({ "z<" : true , "a" : [ null , false ] , "m" : {} , "e" : [] })"),
            R"({"z\u003c":true,"a":[null,false],"m":{},"e":[]})");
}

TEST(GoJsonReencode, TextThatIsNotOneJsonValueIsRefused) {
  for (const char* bad : {"", "{", "[1,]", "{\"a\":1,}", "{a:1}", "['x']", "[01]", "[1.]", "[.5]",
                          "[1e]", "[+1]", "[tru]", "[1] x", "[\"\x01\"]", "[\"\\x\"]",
                          "[\"\\u12\"]", "{\"a\" 1}", "[1 2]", "[\"abc]"}) {
    EXPECT_EQ(Reencoded(bad), "<refused>") << bad;
  }
  EXPECT_EQ(Reencoded(" \t\n[1]\r\n "), "[1]");
  EXPECT_EQ(Reencoded("\"s\""), "\"s\"");
}

TEST(GoJsonReencode, NestingIsBoundedAtTheParsersDepth) {
  const std::string ok = std::string(1024, '[') + std::string(1024, ']');
  EXPECT_EQ(Reencoded(ok), ok);
  const std::string deep = std::string(1025, '[') + std::string(1025, ']');
  EXPECT_EQ(Reencoded(deep), "<refused>");
  const std::string bomb = std::string(1'000'000, '[');
  EXPECT_EQ(Reencoded(bomb), "<refused>");
}

}  // namespace
}  // namespace skald::stages
