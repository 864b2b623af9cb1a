#include "plugin/config/stream_labels.h"

#include <gtest/gtest.h>

#include "pipeline_stages/entry.h"
#include "pipeline_stages/go/go_string.h"

namespace skald {
namespace {

std::string Render(const StreamLabelSet& labels) {
  std::string out;
  EXPECT_EQ(RenderStreamLabels(labels, out), "");
  return out;
}

std::string Quote(std::string_view v) {
  std::string out;
  stages::AppendGoQuoted(v, &out);
  return out;
}

TEST(StreamLabels, NamesSortedWithCommaSpaceSeparators) {
  EXPECT_EQ(Render({{"job", "x"}, {"app", "y"}, {"_z", "1"}}), R"({_z="1", app="y", job="x"})");
}

TEST(StreamLabels, SingleLabel) { EXPECT_EQ(Render({{"a", "b"}}), R"({a="b"})"); }

TEST(StreamLabels, RenderingIsStableWhateverTheInputOrder) {
  EXPECT_EQ(Render({{"b", "2"}, {"a", "1"}, {"c", "3"}}),
            Render({{"c", "3"}, {"a", "1"}, {"b", "2"}}));
}

TEST(StreamLabels, EmptyValuesAreDropped) {
  EXPECT_EQ(Render({{"a", ""}, {"b", "x"}, {"c", ""}}), R"({b="x"})");
}

TEST(StreamLabels, NoNonEmptyLabelIsAnError) {
  std::string out, error;
  error = RenderStreamLabels({{"a", ""}}, out);
  EXPECT_NE(error, "");
  EXPECT_NE(error.find("at least one"), std::string::npos) << error;
  error = RenderStreamLabels({}, out);
  EXPECT_NE(error, "");
}

TEST(StreamLabels, InvalidNameIsNamedInTheError) {
  std::string out, error;
  error = RenderStreamLabels({{"com.docker.name", "x"}}, out);
  EXPECT_NE(error, "");
  EXPECT_NE(error.find("'com.docker.name'"), std::string::npos) << error;
  EXPECT_NE(error.find("[a-zA-Z_][a-zA-Z0-9_]*"), std::string::npos) << error;
}

TEST(StreamLabels, DuplicateNameIsAnError) {
  std::string out, error;
  error = RenderStreamLabels({{"a", "1"}, {"a", "2"}}, out);
  EXPECT_NE(error, "");
  EXPECT_NE(error.find("duplicate label name 'a'"), std::string::npos) << error;
}

// The stage library's check, which the renderer uses.
TEST(StreamLabels, ValidNames) {
  using stages::IsValidLabelName;
  EXPECT_TRUE(IsValidLabelName("a"));
  EXPECT_TRUE(IsValidLabelName("_"));
  EXPECT_TRUE(IsValidLabelName("container_name"));
  EXPECT_TRUE(IsValidLabelName("A9_b"));
  EXPECT_FALSE(IsValidLabelName(""));
  EXPECT_FALSE(IsValidLabelName("9a"));
  EXPECT_FALSE(IsValidLabelName("a-b"));
  EXPECT_FALSE(IsValidLabelName("a.b"));
  EXPECT_FALSE(IsValidLabelName("a b"));
  EXPECT_FALSE(IsValidLabelName("é"));
}

// Expected strings are what Go's strconv.Quote returns for the same input.
TEST(StreamLabels, QuotesLikeGoStrconvQuote) {
  EXPECT_EQ(Quote("plain"), R"("plain")");
  EXPECT_EQ(Quote(""), R"("")");
  EXPECT_EQ(Quote(R"(a"b\c)"), R"("a\"b\\c")");
  EXPECT_EQ(Quote("\a\b\f\n\r\t\v"), R"("\a\b\f\n\r\t\v")");
  EXPECT_EQ(Quote(std::string("\x00\x01\x1f\x7f", 4)), R"("\x00\x01\x1f\x7f")");
  EXPECT_EQ(Quote("héllo 世界 😀"), "\"héllo 世界 😀\"");
  EXPECT_EQ(Quote("\xff"), R"("\xff")");                    // invalid UTF-8 byte
  EXPECT_EQ(Quote("a\xc3"), R"("a\xc3")");                  // truncated sequence
  EXPECT_EQ(Quote("\xc0\x80"), R"("\xc0\x80")");            // overlong NUL
  EXPECT_EQ(Quote("\xed\xa0\x80"), R"("\xed\xa0\x80")");    // surrogate
  EXPECT_EQ(Quote("\xc2\x85"), R"("\u0085")");              // C1 control
  EXPECT_EQ(Quote("\xc2\xa0"), R"("\u00a0")");              // no-break space
  EXPECT_EQ(Quote("\xe2\x80\xa8"), R"("\u2028")");          // line separator
  EXPECT_EQ(Quote("\xef\xbb\xbf"), R"("\ufeff")");          // BOM
  EXPECT_EQ(Quote("\xf3\xb0\x80\x80"), R"("\U000f0000")");  // private use plane 15
}

TEST(StreamLabels, ValuesAreEscapedInTheSelector) {
  EXPECT_EQ(Render({{"path", "C:\\x \"y\"\n"}}), R"({path="C:\\x \"y\"\n"})");
}

}  // namespace
}  // namespace skald
