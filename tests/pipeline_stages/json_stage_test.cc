#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using ::testing::HasSubstr;
using testkit::BuildError;
using testkit::MakeEntry;
using testkit::OnlyLine;
using testkit::RunOne;

constexpr char kPino[] =
    R"({"level":30,"time":1700000000000,"pid":7,"hostname":"web-1","context":"HttpService",)"
    R"("traceID":"4bf92f3577b34da6a3ce929d0e0e4736","msg":"request completed","reqId":"r1"})";

TEST(JsonStage, MissingFieldSetsNull) {
  // null has no string form: the template renders it as a missing key.
  EXPECT_EQ(OnlyLine(R"(
- json: {expressions: {user: user}}
- template: {source: out, template: '{{ .user }}'}
- output: {source: out}
)",
                     R"({"a":1})"),
            "<no value>");
}

TEST(JsonStage, MissingFieldOverridesTheLabelCopy) {
  auto out = RunOne(R"(
- json: {expressions: {app: app}}
- labels: {copy: app}
)",
                    MakeEntry(R"({"x":1})", LabelSet{{"app", "web"}}));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].labels.Contains("copy"));
}

TEST(JsonStage, ExtractsEveryTypeOfThePinoLine) {
  auto out = RunOne(R"(
- json:
    expressions: {level: level, time: time, host: hostname, trace: traceID, msg: msg}
- labels: {level: , host: }
- structured_metadata: {trace: }
- template: {source: o, template: '{{ .time }} {{ .msg }}'}
- output: {source: o}
)",
                    MakeEntry(kPino));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line, "1700000000000 request completed");
  EXPECT_EQ(out[0].labels.ToString(), "{host=\"web-1\", level=\"30\"}");
  ASSERT_EQ(out[0].structured_metadata.size(), 1u);
  EXPECT_EQ(out[0].structured_metadata[0].value, "4bf92f3577b34da6a3ce929d0e0e4736");
}

// json-iterator, Promtail's reader, takes a byte that is not UTF-8 inside a string as it is:
// the string keeps it, and an object or array holding it is marshalled with \ufffd there.
TEST(JsonStage, BytesThatAreNotUtf8InStringsAreReadAsPromtailReadsThem) {
  auto out = RunOne(R"(
- json: {expressions: {msg: msg, o: o}, drop_malformed: true}
- template: {source: both, template: '{{ .msg }}|{{ .o }}'}
- output: {source: both}
)",
                    MakeEntry("{\"msg\":\"a\xff"
                              "b\",\"o\":{\"k\xfe\":[\"\xc3\"]}}"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line,
            "a\xff"
            "b|{\"k\\ufffd\":[\"\\ufffd\"]}");

  // A text that already holds the characters standing in for such bytes is not read.
  auto kept = RunOne("- json: {expressions: {msg: msg}}\n- output: {source: msg}",
                     MakeEntry("{\"msg\":\"\xf4\x8f\xbf\xbf\xff\"}"));
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].line, "{\"msg\":\"\xf4\x8f\xbf\xbf\xff\"}");
}

TEST(JsonStage, SameStageServesManyLines) {
  // The parser, padded buffer and extracted slots are reused between lines.
  testkit::FakeClock clock;
  auto p =
      Pipeline::FromYaml("- json: {expressions: {m: msg}}\n- output: {source: m}", nullptr, &clock);
  std::vector<Entry> out;
  for (int i = 0; i < 100; ++i) {
    p->Process(MakeEntry(R"({"msg":")" + std::string(i * 10, 'x') + R"("})"), out);
  }
  ASSERT_EQ(out.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(out[i].line.size(), static_cast<size_t>(i * 10));
}

TEST(JsonStage, MalformedInputDoesNotChangeExtracted) {
  auto out = RunOne(R"(
- json: {expressions: {app: app}}
- labels: {copy: app}
)",
                    MakeEntry(R"({"app":"new" "oops"})", LabelSet{{"app", "orig"}}));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].labels.Get("copy"), "orig");
}

TEST(JsonStage, DropMalformedReportsReason) {
  testkit::RecordingObserver obs;
  auto out = RunOne("- json: {expressions: {a: a}, drop_malformed: true}", MakeEntry("{"), &obs);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(obs.drops, std::vector<std::string>{"drop_malformed"});
}

// make fuzz (json_stage): simdjson gives a document up (its parser null) at an error in the text
// that a path runs into, and the next path's rewind dereferenced it (a null-pointer member
// access under UBSan; in a release build, a SIGSEGV of the plugin for one container's line).
// Here a path into "user" meets the stray ':' and the next one is evaluated after it.
TEST(JsonStage, ATextErrorMetByOneDeepPathMakesTheLineMalformed) {
  testkit::RecordingObserver obs;
  auto out = RunOne(
      R"(
- json:
    expressions: {id: user.id, first_tag: 'user.tags[0]', tags: user.tags, q: '"a.b"'}
    drop_malformed: true
)",
      MakeEntry(R"({"user":{"id":123456789012:4567891,"tags":["x"]},"a.b":"quoted"})"), &obs);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(obs.drops, std::vector<std::string>{"drop_malformed"});
  // The same stage reads the next, well-formed line.
  EXPECT_EQ(OnlyLine(R"(
- json: {expressions: {id: user.id, first_tag: 'user.tags[0]'}}
- template: {source: o, template: '{{ .id }} {{ .first_tag }}'}
- output: {source: o}
)",
                     R"({"user":{"id":12,"tags":["x"]}})"),
            "12 x");
}

TEST(JsonStage, ErrorNamesStageKeyAndExpression) {
  const std::string e = BuildError(R"(
- static_labels: {a: b}
- json: {expressions: {ua: user-agent}}
)");
  EXPECT_THAT(e, HasSubstr("pipeline stage 2 (json): expression \"user-agent\" for key \"ua\""));
  EXPECT_THAT(e, HasSubstr("'\"user-agent\"'"));  // how to quote it
}

TEST(JsonStage, ErrorForNonMapExpressions) {
  EXPECT_THAT(BuildError("- json: {expressions: [a, b]}"),
              HasSubstr("field \"expressions\": is required: a map"));
}

}  // namespace
}  // namespace skald::stages
