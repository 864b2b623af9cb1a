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

namespace skald::stages {
namespace {

// Expressions that are not plain paths are evaluated as go-jmespath does and stored as
// Promtail stores them: a string as is, anything else in Go's JSON encoding.
TEST(JsonStageJmesPath, ProjectionsFunctionsFiltersAndMultiselects) {
  const char* line =
      R"({"items":[{"name":"b","n":1,"tags":["x"]},{"name":"a","n":2.5,"tags":["y","z"]}],)"
      R"("s":"<x&y>"})";
  auto run = [&](const std::string& expression) {
    return OnlyLine("- json: {expressions: {r: '" + expression +
                        "'}}\n- template: {source: o, template: '{{ .r }}'}\n- output: {source: "
                        "o}",
                    line);
  };
  EXPECT_EQ(run("items[*].name"), R"(["b","a"])");
  EXPECT_EQ(run("items[].tags[]"), R"(["x","y","z"])");
  EXPECT_EQ(run("length(items)"), "2");
  EXPECT_EQ(run("sum(items[*].n)"), "3.5");
  EXPECT_EQ(run("items[?n > `1`].name | [0]"), "a");
  EXPECT_EQ(run("sort_by(items, &name)[0].name"), "a");
  EXPECT_EQ(run("{z: s, a: items[0].n}"), R"({"a":1,"z":"\u003cx\u0026y\u003e"})");
  EXPECT_EQ(run("[s, items[1].n]"), R"(["\u003cx\u0026y\u003e",2.5])");
  EXPECT_EQ(run("s"), "<x&y>");  // a plain path: the string as is
  EXPECT_EQ(run("join(`\"-\"`, items[*].name)"), "b-a");
  EXPECT_EQ(run("items[0].n == `1` && !missing"), "true");
  EXPECT_EQ(run("items[:1]"), R"([{"n":1,"name":"b","tags":["x"]}])");
}

TEST(JsonStageJmesPath, RunTimeErrorLeavesTheKeyAndNullSetsNull) {
  EXPECT_EQ(OnlyLine(R"(
- json: {expressions: {r: s}}
- json: {expressions: {r: 'abs(s)'}}
- output: {source: r}
)",
                     R"({"s":"text"})"),
            "text");
  EXPECT_EQ(OnlyLine(R"(
- json: {expressions: {r: s}}
- json: {expressions: {r: 'missing[*].a'}}
- template: {source: o, template: '{{ .r }}'}
- output: {source: o}
)",
                     R"({"s":"text"})"),
            "<no value>");
}

// Numbers at Go's edges, as go-jmespath's to_number (strconv.ParseFloat) gives them and
// Promtail stores them: a float64 printed by strconv.FormatFloat, a composite by json.Marshal,
// which refuses NaN and infinities (the key is then left as it was).
TEST(JsonStageJmesPath, NumbersAtGosEdgesAsPromtailStoresThem) {
  auto run = [](const std::string& expression) {
    return OnlyLine("- json: {expressions: {r: s}}\n- json: {expressions: {r: \"" + expression +
                        "\"}}\n- output: {source: r}",
                    R"({"s":"unchanged"})");
  };
  EXPECT_EQ(run("to_number('1e-400')"), "0");  // below float64: 0, not an error
  // A subnormal, printed by Go as "0." and 319 zeros before the 1.
  EXPECT_EQ(run("to_number('1e-320')"), "0." + std::string(319, '0') + "1");
  EXPECT_EQ(run("to_number('-0')"), "-0");
  EXPECT_EQ(run("[to_number('-0')]"), "[-0]");
  EXPECT_EQ(run("to_number('inf')"), "+Inf");
  EXPECT_EQ(run("to_number('nan')"), "NaN");
  EXPECT_EQ(run("to_number('1_000')"), "1000");
  EXPECT_EQ(run("to_number('0x1p-2')"), "0.25");
  EXPECT_EQ(run("[to_number('inf')]"), "unchanged");
  EXPECT_EQ(run("{a: to_number('nan')}"), "unchanged");
  EXPECT_EQ(run("[[`1`, to_number('-inf')]]"), "unchanged");
}

TEST(JsonStageJmesPath, SyntaxErrorsAndBoundsAreConfigErrors) {
  EXPECT_THAT(BuildError("- json: {expressions: {r: 'items[?a == ]'}}"),
              HasSubstr("at position 12"));
  EXPECT_THAT(BuildError("- json: {expressions: {r: 'nope(a)'}}"),
              HasSubstr("unknown function nope()"));
  EXPECT_THAT(BuildError("- json: {expressions: {r: 'length(a, b)'}}"),
              HasSubstr("length() takes 1 argument, not 2"));
  EXPECT_THAT(BuildError("- json: {expressions: {r: '" + std::string(70, '[') + "'}}"),
              HasSubstr("nest deeper than 64 levels"));
  EXPECT_THAT(BuildError("- json: {expressions: {r: '" + std::string(300, '!') + "a'}}"),
              HasSubstr("nests deeper than 256"));
  EXPECT_THAT(BuildError("- json: {expressions: {r: '" + std::string(5000, 'a') + "'}}"),
              HasSubstr("the limit is 4096"));
}

}  // namespace
}  // namespace skald::stages
