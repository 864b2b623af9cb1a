#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using testkit::MakeEntry;

TEST(PackStage, SortsKeysAndPutsEntryLast) {
  auto out = testkit::RunOne("- pack: {labels: [z, a], ingest_timestamp: false}",
                             MakeEntry("line", LabelSet{{"a", "1"}, {"z", "2"}, {"k", "3"}}));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line, R"({"a":"1","z":"2","_entry":"line"})");
  EXPECT_EQ(out[0].labels.ToString(), "{k=\"3\"}");
}

// Strings are written byte for byte as Promtail's pack writes them (json-iterator's Marshal; the
// expected texts are what it printed for these inputs, pinned Loki v3.7.8).
TEST(PackStage, EscapesAsPromtailDoes) {
  auto packed = [](const std::string& line) {
    auto out = testkit::RunOne("- pack: {labels: [a], ingest_timestamp: false}",
                               MakeEntry(line, LabelSet{{"a", "x<y"}}));
    return out.size() == 1 ? out[0].line : "";
  };
  EXPECT_EQ(packed("a<b>&c"), R"({"a":"x\u003cy","_entry":"a\u003cb\u003e\u0026c"})");
  EXPECT_EQ(packed("bad\xffx"), R"({"a":"x\u003cy","_entry":"bad\ufffdx"})");
  EXPECT_EQ(packed("\xed\xa0\x80"), R"({"a":"x\u003cy","_entry":"\ufffd\ufffd\ufffd"})");
  EXPECT_EQ(packed("\u2028\u2029"), R"({"a":"x\u003cy","_entry":"\u2028\u2029"})");
  EXPECT_EQ(packed("ctl\x01\x1f\x7f"),
            "{\"a\":\"x\\u003cy\",\"_entry\":\"ctl\\u0001\\u001f\x7f\"}");
  EXPECT_EQ(packed("b\bf\fv\v"), R"({"a":"x\u003cy","_entry":"b\u0008f\u000cv\u000b"})");
  EXPECT_EQ(packed("tab\t\n\r q\"\\/ \xc3\xa9\xe2\x82\xac"),
            R"({"a":"x\u003cy","_entry":"tab\t\n\r q\"\\/ )"
            "\xc3\xa9\xe2\x82\xac"
            R"("})");
}

}  // namespace
}  // namespace skald::stages
