#include "pipeline_stages/go_template/go_template.h"

#include <absl/time/clock.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

#include "pipeline_stages/common/config_error.h"

namespace skald::stages {
namespace {

using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::HasSubstr;

// Renders `text` over `data`; a failed execution renders as "ERROR: <why>".
std::string Render(std::string_view text, const MapTemplateData& data = {}) {
  const GoTemplate t = GoTemplate::Parse(text);
  std::string out, error;
  if (t.Execute(data, &out, &error) != GoTemplate::Result::kOk) return "ERROR: " + error;
  return out;
}

std::string ErrorOf(std::string_view text) {
  try {
    GoTemplate::Parse(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

const MapTemplateData kData{{"Value", "Hello World"}, {"Entry", "the line"},
                            {"app", "api"},           {"empty", ""},
                            {"level", "WARN"},        {"n", "7"}};

// --- Text, fields, literals.

TEST(GoTemplate, PlainTextIsCopied) {
  EXPECT_EQ(Render("just text"), "just text");
  EXPECT_EQ(Render(""), "");
  EXPECT_EQ(Render("a } b { c"), "a } b { c");
}

TEST(GoTemplate, FieldsReadDataKeys) {
  EXPECT_EQ(Render("{{ .Value }}|{{.Entry}}|{{ .app }}", kData), "Hello World|the line|api");
  EXPECT_EQ(Render("{{ $.app }}", kData), "api");
}

TEST(GoTemplate, MissingKeyRendersNoValue) {
  EXPECT_EQ(Render("[{{ .nope }}]", kData), "[<no value>]");
}

TEST(GoTemplate, NullRendersNoValue) {
  MapTemplateData d;
  d.SetNull("x");
  EXPECT_EQ(Render("{{ .x }}", d), "<no value>");
}

TEST(GoTemplate, NumbersAndBoolsInDataPrintLikeGo) {
  MapTemplateData d;
  d.SetInt("i", 125);
  d.SetDouble("f", 12.34);
  d.SetDouble("big", 1562723913000.0);
  d.SetBool("b", true);
  // fmt's %v: floats in the shortest form, with an exponent from 1e21 (and 1e6 in %g style).
  EXPECT_EQ(Render("{{.i}} {{.f}} {{.big}} {{.b}}", d), "125 12.34 1.562723913e+12 true");
}

TEST(GoTemplate, DotPrintsTheDataLikeGo) {
  const MapTemplateData d{{"b", "2"}, {"a", "1"}};
  EXPECT_EQ(Render("{{ . }}", d), "map[a:1 b:2]");
  EXPECT_EQ(Render("{{ $ }}", d), "map[a:1 b:2]");
}

TEST(GoTemplate, StringLiteralsUseGoEscapes) {
  EXPECT_EQ(Render(R"({{ "a\tb\"c\u00e9" }})"), "a\tb\"c\xc3\xa9");
  EXPECT_EQ(Render("{{ `raw \\n` }}"), "raw \\n");
}

TEST(GoTemplate, NumberLiterals) {
  EXPECT_EQ(Render("{{ 42 }} {{ -3 }} {{ 0x1F }} {{ 0o17 }} {{ 017 }} {{ 0b101 }} {{ 1_000 }}"),
            "42 -3 31 15 15 5 1000");
  EXPECT_EQ(Render("{{ 1.5 }} {{ 1e3 }} {{ .25 }}"), "1.5 1000 0.25");
  EXPECT_EQ(Render("{{ true }} {{ false }}"), "true false");
}

TEST(GoTemplate, CommentsRenderNothing) {
  EXPECT_EQ(Render("a{{/* note */}}b"), "ab");
  EXPECT_EQ(Render("a  {{- /* note */ -}}  b"), "ab");
}

// --- Trim markers.

TEST(GoTemplate, TrimMarkersEatAdjacentWhitespace) {
  EXPECT_EQ(Render("a  \n {{- .app }} b", kData), "aapi b");
  EXPECT_EQ(Render("a {{ .app -}} \n\t b", kData), "a apib");
  EXPECT_EQ(Render("{{- .app -}}", kData), "api");
  EXPECT_EQ(Render("x {{- 3 -}} y {{- 4 }}"), "x3y4");
}

TEST(GoTemplate, TrimMarkersOnControlActions) {
  const std::string_view t = "<\n  {{- if .a -}}\n  yes\n  {{- else -}}\n  no\n  {{- end -}}\n>";
  EXPECT_EQ(Render(t, {{"a", "1"}}), "<yes>");
  EXPECT_EQ(Render(t, {}), "<no>");
  EXPECT_EQ(Render("a {{- /* c */ -}} b {{- \"x\" }}"), "abx");
}

TEST(GoTemplate, DashWithoutSpaceIsANumber) { EXPECT_EQ(Render("a {{-3}} b"), "a -3 b"); }

// --- Pipelines and calls.

TEST(GoTemplate, PipedValueIsLastArgument) {
  EXPECT_EQ(Render("{{ .Value | ToUpper }}", kData), "HELLO WORLD");
  EXPECT_EQ(Render("{{ .Value | replace \"World\" \"There\" }}", kData), "Hello There");
  EXPECT_EQ(Render("{{ .Value | ToLower | trunc 5 }}", kData), "hello");
  EXPECT_EQ(Render("{{ .nope | default \"none\" }}", kData), "none");
}

TEST(GoTemplate, ParenthesisedSubExpressions) {
  EXPECT_EQ(Render("{{ ToUpper (Replace .Value \"World\" \"x\" -1) }}", kData), "HELLO X");
  EXPECT_EQ(Render("{{ (.app) }}", kData), "api");
  EXPECT_EQ(Render("{{ add (add 1 2) (mul 2 3) }}"), "9");
}

// --- Conditionals and comparisons.

TEST(GoTemplate, IfElseFromPromtailDocs) {
  const std::string_view t =
      R"({{ if eq .Value "WARN" }}{{ Replace .Value "WARN" "OK" -1 }}{{ else }}{{ .Value }}{{ end }})";
  EXPECT_EQ(Render(t, {{"Value", "WARN"}}), "OK");
  EXPECT_EQ(Render(t, {{"Value", "ERROR"}}), "ERROR");
}

TEST(GoTemplate, ElseIfChains) {
  const std::string_view t =
      "{{ if eq .l \"a\" }}A{{ else if eq .l \"b\" }}B{{ else if eq .l \"c\" }}C{{ else }}?{{ end "
      "}}";
  EXPECT_EQ(Render(t, {{"l", "a"}}), "A");
  EXPECT_EQ(Render(t, {{"l", "b"}}), "B");
  EXPECT_EQ(Render(t, {{"l", "c"}}), "C");
  EXPECT_EQ(Render(t, {{"l", "d"}}), "?");
  EXPECT_EQ(Render("{{if .x}}yes{{end}}", {{"x", ""}}), "");
}

TEST(GoTemplate, NestedIfs) {
  const std::string_view t = "{{ if .a }}{{ if .b }}ab{{ else }}a{{ end }}{{ else }}-{{ end }}";
  EXPECT_EQ(Render(t, {{"a", "1"}, {"b", "1"}}), "ab");
  EXPECT_EQ(Render(t, {{"a", "1"}}), "a");
  EXPECT_EQ(Render(t, {}), "-");
}

TEST(GoTemplate, TruthFollowsGo) {
  MapTemplateData d{{"s", "x"}, {"e", ""}};
  d.SetInt("zero", 0);
  d.SetInt("one", 1);
  d.SetBool("f", false);
  EXPECT_EQ(Render("{{if .s}}1{{end}}{{if .e}}2{{end}}{{if .zero}}3{{end}}{{if .one}}4{{end}}"
                   "{{if .f}}5{{end}}{{if .missing}}6{{end}}{{if .}}7{{end}}",
                   d),
            "147");
}

TEST(GoTemplate, EqNeAndMultiArgEq) {
  EXPECT_EQ(Render("{{ eq .app \"api\" }} {{ ne .app \"api\" }}", kData), "true false");
  EXPECT_EQ(Render("{{ eq .app \"web\" \"api\" }}", kData), "true");
  EXPECT_EQ(Render("{{ eq 1 1 }} {{ eq 1.5 1.5 }} {{ eq true false }}"), "true true false");
}

TEST(GoTemplate, EqWithMissingValueIsFalse) {
  EXPECT_EQ(Render("{{ eq .nope \"x\" }} {{ ne .nope \"x\" }}", kData), "false true");
}

TEST(GoTemplate, IncompatibleComparisonFailsExecution) {
  EXPECT_THAT(Render("{{ eq .n 7 }}", kData),
              HasSubstr("ERROR: error calling eq: incompatible types"));
  EXPECT_THAT(Render("{{ lt .nope 1 }}", kData), HasSubstr("invalid type for comparison"));
  EXPECT_THAT(Render("{{ lt true false }}"), HasSubstr("invalid type for comparison"));
}

TEST(GoTemplate, OrderedComparisons) {
  EXPECT_EQ(Render("{{ lt 1 2 }} {{ le 2 2 }} {{ gt 1 2 }} {{ ge 2 3 }}"), "true true false false");
  EXPECT_EQ(Render("{{ lt \"a\" \"b\" }} {{ gt 2.5 1.5 }}"), "true true");
}

TEST(GoTemplate, AndOrNotShortCircuitAndReturnDecidingValue) {
  EXPECT_EQ(Render("{{ and .app .Value }}", kData), "Hello World");
  EXPECT_EQ(Render("{{ and .empty .Value }}", kData), "");
  EXPECT_EQ(Render("{{ or .empty .app }}", kData), "api");
  EXPECT_EQ(Render("{{ or .empty 0 }}", kData), "0");
  EXPECT_EQ(Render("{{ not .empty }} {{ not .app }}", kData), "true false");
  // The division by zero is never evaluated.
  EXPECT_EQ(Render("{{ or 1 (div 1 0) }} {{ and 0 (div 1 0) }}"), "1 0");
}

// --- Promtail's functions.

TEST(GoTemplate, PromtailCaseFunctions) {
  EXPECT_EQ(Render("{{ ToUpper .Value }} {{ ToLower .Value }}", kData), "HELLO WORLD hello world");
  EXPECT_EQ(Render("{{ ToUpper \"straße éà ωσ жё\" }}"), "STRAßE ÉÀ ΩΣ ЖЁ");
  EXPECT_EQ(Render("{{ ToLower \"ÉÀ ΩΣ ЖЁ İ\" }}"), "éà ωσ жё i");
  // Every script with case, as Go's unicode tables: Vietnamese, Georgian, Latin Extended-A.
  EXPECT_EQ(Render("{{ ToUpper \"tiếng việt \u10D0\" }}"), "TI\u1EBENG VI\u1EC6T \u1C90");
  EXPECT_EQ(Render("{{ ToLower \"ĀĂĄ\" }} {{ lower \"ŁŽ\" }} {{ upper \"łž\" }}"), "āăą łž ŁŽ");
}

TEST(GoTemplate, PromtailReplace) {
  EXPECT_EQ(Render("{{ Replace .Value \"o\" \"0\" -1 }}", kData), "Hell0 W0rld");
  EXPECT_EQ(Render("{{ Replace .Value \"o\" \"0\" 1 }}", kData), "Hell0 World");
  EXPECT_EQ(Render("{{ Replace .Value \"o\" \"0\" 0 }}", kData), "Hello World");
  EXPECT_EQ(Render("{{ Replace \"abc\" \"\" \"-\" -1 }}"), "-a-b-c-");
  EXPECT_EQ(Render("{{ Replace \"abc\" \"\" \"-\" 2 }}"), "-a-bc");
}

TEST(GoTemplate, PromtailTrimFunctions) {
  EXPECT_EQ(Render("[{{ TrimSpace \"  \\t x y \\n\" }}]"), "[x y]");
  EXPECT_EQ(Render("[{{ TrimSpace \"\u00a0x\u3000\" }}]"), "[x]");
  EXPECT_EQ(Render("{{ Trim \"xxhixx\" \"x\" }}"), "hi");
  EXPECT_EQ(Render("{{ Trim \"¡¡hi!!\" \"!¡\" }}"), "hi");
  EXPECT_EQ(Render("{{ TrimLeft \"xxhixx\" \"x\" }}"), "hixx");
  EXPECT_EQ(Render("{{ TrimRight \"xxhixx\" \"x\" }}"), "xxhi");
  EXPECT_EQ(Render("{{ TrimPrefix \"prefix-x\" \"prefix-\" }}"), "x");
  EXPECT_EQ(Render("{{ TrimPrefix \"x\" \"prefix-\" }}"), "x");
  EXPECT_EQ(Render("{{ TrimSuffix \"x.log\" \".log\" }}"), "x");
}

TEST(GoTemplate, PromtailRegexReplaceAll) {
  EXPECT_EQ(
      Render(R"({{ regexReplaceAll "(\\d+)ms" .Value "${1} ms" }})", {{"Value", "t=15ms u=3ms"}}),
      "t=15 ms u=3 ms");
  EXPECT_EQ(Render(R"t({{ regexReplaceAll "(?<n>\\d+)" .Value "<$n>" }})t", {{"Value", "a1b22"}}),
            "a<1>b<22>");
  EXPECT_EQ(Render(R"t({{ regexReplaceAllLiteral "(ts=)" .Value "${1}" }})t", {{"Value", "ts=1"}}),
            "${1}1");
}

TEST(GoTemplate, RegexFromDataIsCompiledAtRunTime) {
  EXPECT_EQ(Render("{{ regexReplaceAll .re \"abc\" \"x\" }}", {{"re", "b+"}}), "axc");
  EXPECT_THAT(
      Render("{{ regexReplaceAll .re \"abc\" \"x\" }}", {{"re", "(b"}}),
      HasSubstr("ERROR: error calling regexReplaceAll: regexp: Compile(`(b`): error parsing "
                "regexp: missing closing ): `(b`"));
}

TEST(GoTemplate, PromtailHashes) {
  // sha3-256("abc") and sha256("abc"): the salt and the value are concatenated.
  EXPECT_EQ(Render("{{ Hash \"a\" \"bc\" }}"),
            "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532");
  EXPECT_EQ(Render("{{ Sha2Hash \"ab\" \"c\" }}"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Render("{{ Hash .Value \"salt\" }}", {{"Value", "ab"}}),
            Render("{{ Hash \"a\" \"bsalt\" }}"));
}

// --- Sprig functions (argument orders as in sprig).

TEST(GoTemplate, SprigCase) {
  EXPECT_EQ(Render("{{ lower \"HeLLo\" }} {{ upper \"HeLLo\" }}"), "hello HELLO");
  EXPECT_EQ(Render("{{ title \"hello wide-world o'neil x_y\" }}"), "Hello Wide-World O'Neil X_y");
  EXPECT_EQ(Render("{{ title \"élan vital\" }}"), "Élan Vital");
  // strings.Title maps to title case, which is not upper case for "ǆ" (U+01C6: title U+01C5,
  // upper U+01C4) nor for Georgian (title case is itself).
  EXPECT_EQ(Render("{{ title \"\u01C6emal \u10D0\" }}"), "\u01C5emal \u10D0");
}

TEST(GoTemplate, SprigTrim) {
  EXPECT_EQ(Render("[{{ trim \"  x  \" }}]"), "[x]");
  EXPECT_EQ(Render("{{ trimPrefix \"pre-\" \"pre-x\" }}"), "x");
  EXPECT_EQ(Render("{{ trimSuffix \".log\" \"x.log\" }}"), "x");
  EXPECT_EQ(Render("{{ \"x.log\" | trimSuffix \".log\" }}"), "x");
}

TEST(GoTemplate, SprigReplaceIsOldNewSource) {
  EXPECT_EQ(Render("{{ replace \" \" \"-\" .Value }}", kData), "Hello-World");
}

TEST(GoTemplate, SprigPredicates) {
  EXPECT_EQ(Render("{{ contains \"lo W\" .Value }} {{ contains \"x\" .Value }}", kData),
            "true false");
  EXPECT_EQ(Render("{{ hasPrefix \"Hell\" .Value }} {{ hasPrefix \"World\" .Value }}", kData),
            "true false");
  EXPECT_EQ(Render("{{ hasSuffix \"World\" .Value }} {{ hasSuffix \"Hell\" .Value }}", kData),
            "true false");
  EXPECT_EQ(Render("{{ if .Value | contains \"World\" }}y{{ end }}", kData), "y");
}

TEST(GoTemplate, SprigDefault) {
  EXPECT_EQ(Render("{{ default \"d\" .app }}", kData), "api");
  EXPECT_EQ(Render("{{ default \"d\" .empty }}", kData), "d");
  EXPECT_EQ(Render("{{ default \"d\" .nope }}", kData), "d");
  EXPECT_EQ(Render("{{ default \"d\" 0 }} {{ default \"d\" false }} {{ default \"d\" }}"), "d d d");
}

TEST(GoTemplate, SprigQuote) {
  EXPECT_EQ(Render("{{ quote .Value }}", {{"Value", "a\"b\\c\nd"}}), R"("a\"b\\c\nd")");
  EXPECT_EQ(Render("{{ quote \"a\" 1 .nope \"b\" }}"), R"("a" "1" "b")");
  EXPECT_EQ(Render("{{ squote \"a\" 1 }}"), "'a' '1'");
  EXPECT_EQ(Render("[{{ quote }}]"), "[]");
}

TEST(GoTemplate, SprigSubstrAndTrunc) {
  EXPECT_EQ(Render("{{ substr 0 5 \"hello world\" }}"), "hello");
  EXPECT_EQ(Render("{{ substr 6 99 \"hello world\" }}"), "world");
  EXPECT_EQ(Render("{{ substr 6 -1 \"hello world\" }}"), "world");
  EXPECT_EQ(Render("{{ substr -1 5 \"hello world\" }}"), "hello");
  EXPECT_THAT(Render("{{ substr 5 2 \"hello\" }}"), HasSubstr("ERROR: error calling substr"));
  EXPECT_THAT(Render("{{ substr -1 9 \"hello\" }}"), HasSubstr("out of range"));
  EXPECT_EQ(Render("{{ trunc 5 \"hello world\" }}"), "hello");
  EXPECT_EQ(Render("{{ trunc -5 \"hello world\" }}"), "world");
  EXPECT_EQ(Render("{{ trunc 50 \"hello\" }} {{ trunc -50 \"hello\" }}"), "hello hello");
}

TEST(GoTemplate, SprigRepeat) {
  EXPECT_EQ(Render("{{ repeat 3 \"ab\" }}"), "ababab");
  EXPECT_EQ(Render("[{{ repeat 0 \"ab\" }}]"), "[]");
  EXPECT_THAT(Render("{{ repeat -1 \"ab\" }}"), HasSubstr("negative Repeat count"));
  EXPECT_THAT(Render("{{ repeat 100000000 \"ab\" }}"), HasSubstr("result longer than"));
}

TEST(GoTemplate, SprigArithmeticCastsLikeSprig) {
  EXPECT_EQ(
      Render("{{ add 1 2 3 }} {{ add }} {{ sub 3 5 }} {{ mul 2 3 4 }} {{ div 7 2 }} {{ mod 7 3 }}"),
      "6 0 -2 24 3 1");
  EXPECT_EQ(Render("{{ add .n 1 }}", kData), "8");  // strings are parsed
  EXPECT_EQ(Render("{{ add \"0x10\" \"010\" \"2.0\" \"x\" }}"),
            "26");  // hex, octal, ".0"; else 0
  EXPECT_EQ(Render("{{ add 1.9 true .nope }}"), "2");
  // cast v1.10 keeps the integer part of a decimal string; other text is 0.
  EXPECT_EQ(Render("{{ add \"2.5\" \"-1.\" \".5\" \"1e3\" }}"), "1");
  EXPECT_EQ(Render("{{ .n | add 1 }}", kData), "8");
  EXPECT_EQ(Render("{{ div -7 2 }} {{ mod -7 3 }}"), "-3 -1");
}

TEST(GoTemplate, ArithmeticResultsAreInt64AndIntParametersRefuseThem) {
  // Go: sprig's add returns int64; trunc wants int.
  EXPECT_EQ(
      Render("{{ trunc (add 1 1) \"abc\" }}"),
      "ERROR: error calling trunc: argument 1: wrong type for value; expected int; got int64");
  EXPECT_EQ(Render("{{ eq (add 1 1) 2 }}"), "true");
}

TEST(GoTemplate, DivisionByZeroFailsExecution) {
  EXPECT_THAT(Render("{{ div 1 0 }}"),
              HasSubstr("ERROR: error calling div: runtime error: integer divide by zero"));
  EXPECT_THAT(Render("{{ mod 1 0 }}"), HasSubstr("integer divide by zero"));
}

TEST(GoTemplate, SprigBase64) {
  EXPECT_EQ(Render("{{ b64enc \"hello\" }} {{ b64enc \"\" }} {{ b64enc \"ab\" }}"),
            "aGVsbG8= "
            " YWI=");
  EXPECT_EQ(Render("{{ b64dec \"aGVsbG8=\" }}|{{ b64dec \"YWI=\" }}|{{ b64dec \"YW\\nI=\" }}"),
            "hello|ab|ab");
  // sprig returns Go's error text.
  EXPECT_EQ(Render("{{ b64dec \"a!==\" }}"), "illegal base64 data at input byte 1");
  EXPECT_EQ(Render("{{ b64dec \"YWI\" }}"), "illegal base64 data at input byte 0");
  EXPECT_EQ(Render("{{ b64dec \"YQ==x\" }}"), "illegal base64 data at input byte 4");
}

// --- Execution errors Go reports.

TEST(GoTemplate, MissingValueGivenToStringFunctionFailsExecution) {
  EXPECT_EQ(Render("{{ ToUpper .nope }}", kData),
            "ERROR: error calling ToUpper: argument 1: invalid value; expected string");
  EXPECT_THAT(Render("{{ .nope | ToUpper }}", kData), HasSubstr("invalid value; expected string"));
}

TEST(GoTemplate, NumberGivenToStringFunctionFailsExecution) {
  MapTemplateData d;
  d.SetInt("i", 3);
  EXPECT_EQ(
      Render("{{ ToUpper .i }}", d),
      "ERROR: error calling ToUpper: argument 1: wrong type for value; expected string; got int64");
  EXPECT_THAT(Render("{{ trunc .n \"abc\" }}", kData), HasSubstr("expected int; got string"));
}

// Go has no bound; here an execution produces at most 1 MiB, and functions whose result can
// outgrow their arguments stop before building more (a 2-byte replace with a 1000-byte
// replacement would otherwise build 2 MB, nested, terabytes).
TEST(GoTemplate, AnExecutionProducesAtMostOneMebibyte) {
  auto run = [](std::string_view text, std::string* error) {
    std::string out;
    return GoTemplate::Parse(text).Execute(MapTemplateData{{"Value", "ab"}}, &out, error);
  };
  using R = GoTemplate::Result;
  std::string error;
  std::string out;
  ASSERT_EQ(GoTemplate::Parse("{{ repeat 1048576 \"a\" }}").Execute(MapTemplateData{}, &out),
            R::kOk);
  EXPECT_EQ(out.size(), GoTemplate::kMaxOutputBytes);
  EXPECT_EQ(run("{{ repeat 1048576 \"a\" }}!", &error), R::kTooLong);
  EXPECT_EQ(error, "output longer than 1048576 bytes");
  EXPECT_EQ(run("{{ repeat 600000 \"a\" }}{{ repeat 600000 \"b\" }}", &error), R::kTooLong);
  EXPECT_EQ(run("{{ repeat 1048577 \"a\" }}", &error), R::kTooLong);
  EXPECT_EQ(error, "error calling repeat: result longer than 1048576 bytes");
  EXPECT_EQ(run("{{ replace \"a\" (repeat 1000 \"b\") (repeat 2000 \"a\") }}", &error),
            R::kTooLong);
  EXPECT_EQ(error, "error calling replace: result longer than 1048576 bytes");
  EXPECT_EQ(run("{{ Replace (repeat 2000 \"a\") \"\" (repeat 1000 \"b\") -1 }}", &error),
            R::kTooLong);
  EXPECT_EQ(run("{{ regexReplaceAll \"a\" (repeat 2000 \"a\") (repeat 1000 \"b\") }}", &error),
            R::kTooLong);
  EXPECT_EQ(error, "error calling regexReplaceAll: result longer than 1048576 bytes");
  EXPECT_EQ(run("{{ regexReplaceAll \"(a)\" (repeat 2000 \"a\") (repeat 1000 \"$1\") }}", &error),
            R::kTooLong);
  // A string function's result is checked as well, even when no output follows.
  EXPECT_EQ(run("{{ if eq (quote (repeat 1048576 \"a\")) \"\" }}x{{ end }}", &error), R::kTooLong);
  EXPECT_EQ(error, "error calling quote: result longer than 1048576 bytes");
  // Below the bound everything is as before, and other failures stay failures.
  EXPECT_EQ(run("{{ replace \"a\" (repeat 500 \"b\") (repeat 2000 \"a\") }}", &error), R::kOk);
  EXPECT_EQ(run("{{ div 1 0 }}", &error), R::kFailed);
}

// Hostile templates stop with kTooLong and a message naming the bound, before building what they
// ask for. Each runs well under a second (the slowest, 10^6 steps, about 0.3 s); the 10 s bound is
// only a liveness check.
struct Bounded {
  GoTemplate::Result result;
  std::string error;
  std::string out;
  double seconds;
};
Bounded RunBounded(std::string_view text) {
  const auto start = std::chrono::steady_clock::now();
  Bounded b;
  b.result = GoTemplate::Parse(text).Execute(MapTemplateData{{"Value", "x"}}, &b.out, &b.error);
  b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return b;
}

TEST(GoTemplate, RangeOverAHugeListStopsBeforeBuildingIt) {
  for (const std::string_view text :
       {"{{ range until 1000000000 }}x{{ end }}", "{{ seq 1 1000000000 }}",
        "{{ untilStep 0 1000000000 1 }}", "{{ range $i, $v := until -1000000000 }}{{ end }}"}) {
    SCOPED_TRACE(text);
    const Bounded b = RunBounded(text);
    EXPECT_EQ(b.result, GoTemplate::Result::kTooLong);
    EXPECT_THAT(b.error, HasSubstr("the template takes too many steps"));
    EXPECT_LT(b.seconds, 10);
  }
}

TEST(GoTemplate, LoopsStopAtTheStepBound) {
  for (const std::string_view text :
       {"{{ range 1000000000 }}{{ end }}",
        "{{ range until 1000 }}{{ range until 1000 }}{{ end }}{{ end }}",
        "{{ range until 100000 }}{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end "
        "}}{{ end }}",
        "{{ range $i := 1000000000 }}{{ $x := add $i 1 }}{{ end }}",
        // 2^40 calls of a template that calls itself twice.
        "{{ define \"r\" }}{{ if lt . 40 }}{{ template \"r\" (add1 .) }}{{ template \"r\" "
        "(add1 .) }}{{ end }}{{ end }}{{ template \"r\" 0 }}",
        "{{ $l := until 20000 }}{{ range $l }}{{ $x := has . $l }}{{ end }}"}) {
    SCOPED_TRACE(text);
    const Bounded b = RunBounded(text);
    EXPECT_EQ(b.result, GoTemplate::Result::kTooLong);
    EXPECT_THAT(b.error, AnyOf(HasSubstr("the template takes more than 1000000 steps"),
                               HasSubstr("the template takes too many steps"),
                               HasSubstr("the template builds too much data")));
    EXPECT_LT(b.seconds, 10);
  }
}

TEST(GoTemplate, RecursiveTemplateStopsAtTheDepthBound) {
  const Bounded b =
      RunBounded("{{ define \"r\" }}x{{ template \"r\" . }}{{ end }}{{ template \"r\" . }}");
  EXPECT_EQ(b.result, GoTemplate::Result::kTooLong);
  EXPECT_EQ(b.error, "exceeded maximum template depth (1000)");
  EXPECT_LT(b.seconds, 10);
  // Below the bound recursion works.
  EXPECT_EQ(Render("{{ define \"c\" }}{{ if gt . 0 }}{{ . }}{{ template \"c\" (sub . 1) }}{{ end "
                   "}}{{ end }}{{ template \"c\" 3 }}"),
            "321");
}

TEST(GoTemplate, GrowingStringsAndListsStopAtTheirBounds) {
  struct Case {
    std::string_view text;
    std::string_view error;
  };
  for (const Case& c : std::vector<Case>{
           {"{{ repeat 1000000000 \"x\" }}", "error calling repeat: result longer than 1048576"},
           {"{{ indent 1000000000 \"x\" }}", "error calling indent: result longer than 1048576"},
           {"{{ printf \"%1000001d|%*d\" 1 1000000 2 }}",
            "error calling printf: result longer than 1048576"},
           {"{{ randAlpha 1000000000 }}", "error calling randAlpha: result longer than 1048576"},
           {"{{ $s := \"x\" }}{{ range until 64 }}{{ $s = print $s $s }}{{ end }}",
            "error calling print: result longer than 1048576"},
           {"{{ $l := list 1 }}{{ range until 64 }}{{ $l = concat $l $l }}{{ end }}",
            "error calling concat: the template builds too much data"},
           {"{{ $l := list }}{{ range until 10000 }}{{ $l = append $l . }}{{ end }}",
            "error calling append: the template builds too much data"},
           {"{{ $l := list }}{{ range until 100 }}{{ $l = append $l (repeat 1000000 \"x\") "
            "}}{{ end }}",
            "error calling repeat: the template builds too much data"},
       }) {
    SCOPED_TRACE(c.text);
    const Bounded b = RunBounded(c.text);
    EXPECT_EQ(b.result, GoTemplate::Result::kTooLong);
    EXPECT_THAT(b.error, HasSubstr(c.error));
    EXPECT_LT(b.seconds, 10);
  }
}

// Go overflows its stack printing a map that holds itself; here printing stops at 100 levels.
TEST(GoTemplate, AMapHoldingItselfFailsCleanly) {
  const std::string_view self = "{{ $d := dict }}{{ $_ := set $d \"d\" $d }}";
  EXPECT_EQ(RunBounded(std::string(self) + "{{ $d }}").result, GoTemplate::Result::kTooLong);
  EXPECT_THAT(Render(std::string(self) + "{{ deepCopy $d }}"), HasSubstr("too deeply nested"));
  EXPECT_EQ(Render(std::string(self) + "[{{ toJson $d }}]"), "[]");  // Go: a cycle, no JSON
  EXPECT_THAT(Render(std::string(self) + "{{ mustToJson $d }}"), HasSubstr("cycle"));
}

// now and date depend on the clock: checked by property.
TEST(GoTemplate, NowIsTheCurrentTime) {
  const int64_t before = absl::ToUnixSeconds(absl::Now());
  const std::string unix = Render("{{ now.Unix }}");
  const int64_t after = absl::ToUnixSeconds(absl::Now());
  EXPECT_GE(std::stoll(unix), before);
  EXPECT_LE(std::stoll(unix), after);
  // time.Time.String() with the monotonic reading Go prints for now.
  EXPECT_THAT(Render("{{ now }}"),
              ::testing::MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}"
                                      "(\\.[0-9]+)? [+-][0-9]{4} [A-Z]+ m=\\+[0-9]+\\.[0-9]{9}"));
  EXPECT_EQ(Render("{{ typeOf now }} {{ kindOf now }} {{ empty now }} {{ if now }}true{{ end }}"),
            "time.Time struct false true");
  const std::string year = Render("{{ now.UTC.Year }}");
  EXPECT_EQ(year, absl::FormatTime("%Y", absl::Now(), absl::UTCTimeZone()));
}

TEST(GoTemplate, DateFormatsTheCurrentTimeByDefault) {
  const std::string today = absl::FormatTime("%Y-%m-%d", absl::Now(), absl::UTCTimeZone());
  // date of anything but a time or Unix seconds is now (sprig's rule).
  EXPECT_EQ(Render("{{ dateInZone \"2006-01-02\" \"not a time\" \"UTC\" }}"), today);
  EXPECT_EQ(Render("{{ dateInZone \"2006-01-02\" now \"UTC\" }}"), today);
  EXPECT_EQ(Render("{{ htmlDateInZone now \"UTC\" }}"), today);
  // A minute from now, formatted, is after now formatted the same way (RFC 3339 sorts).
  const std::string later = Render(
      "{{ $f := \"2006-01-02T15:04:05.000000000Z07:00\" }}{{ $n := now }}"
      "{{ lt (dateInZone $f $n \"UTC\") (dateInZone $f (dateModify \"1m\" $n) \"UTC\") }}");
  EXPECT_EQ(later, "true");
  // ago of a time an hour back.
  EXPECT_EQ(Render("{{ ago (dateModify \"-1h\" now) }}"), "1h0m0s");
  EXPECT_EQ(Render("{{ unixEpoch now }}").size(),
            std::to_string(absl::ToUnixSeconds(absl::Now())).size());
}

TEST(GoTemplate, FieldOfAStringFailsExecution) {
  EXPECT_THAT(Render("{{ .app.name }}", kData), HasSubstr("can't evaluate field name"));
}

TEST(GoTemplate, ExecuteReusesTheOutputBuffer) {
  const GoTemplate t = GoTemplate::Parse("{{ .Value | ToUpper }}!");
  std::string out = "stale";
  ASSERT_EQ(t.Execute(MapTemplateData{{"Value", "a"}}, &out), GoTemplate::Result::kOk);
  EXPECT_EQ(out, "A!");
  ASSERT_EQ(t.Execute(MapTemplateData{{"Value", "b"}}, &out), GoTemplate::Result::kOk);
  EXPECT_EQ(out, "B!");
  EXPECT_EQ(t.source(), "{{ .Value | ToUpper }}!");
}

// --- Parse errors.

TEST(GoTemplate, UnknownFunctionIsConfigErrorNamingIt) {
  EXPECT_THAT(ErrorOf("{{ prinft \"%s\" .Value }}"),
              AllOf(HasSubstr("invalid template \"{{ prinft \"%s\" .Value }}\""),
                    HasSubstr("function \"prinft\" is not supported at position 3"),
                    HasSubstr("supported functions: and, or"), HasSubstr("b64dec")));
  EXPECT_THAT(ErrorOf("{{ .Value | toUpper }}"), HasSubstr("function \"toUpper\""));
}

TEST(GoTemplate, WrongArgumentCountIsConfigError) {
  EXPECT_THAT(ErrorOf("{{ ToUpper }}"),
              HasSubstr("wrong number of arguments for ToUpper: want 1, got 0"));
  EXPECT_THAT(ErrorOf("{{ Replace .Value \"a\" \"b\" }}"),
              HasSubstr("wrong number of arguments for Replace: want 4, got 3"));
  EXPECT_THAT(ErrorOf("{{ .Value | ToUpper .x }}"),
              HasSubstr("got 2 (the piped value counts as the last)"));
  EXPECT_THAT(ErrorOf("{{ eq .a }}"), HasSubstr("want at least 2, got 1"));
}

TEST(GoTemplate, WrongLiteralTypeIsConfigError) {
  EXPECT_THAT(ErrorOf("{{ Replace .Value \"a\" \"b\" \"x\" }}"),
              HasSubstr("argument 4 of Replace must be an integer"));
  EXPECT_THAT(ErrorOf("{{ ToUpper 3 }}"), HasSubstr("argument 1 of ToUpper must be a string"));
  EXPECT_THAT(ErrorOf("{{ trunc 1.5 .Value }}"), HasSubstr("must be an integer"));
  EXPECT_EQ(ErrorOf("{{ trunc 2.0 .Value }}"), "no error");
}

TEST(GoTemplate, BadRegexLiteralIsConfigError) {
  EXPECT_THAT(ErrorOf(R"({{ regexReplaceAll "(a" .Value "x" }})"),
              AllOf(HasSubstr("invalid regex \"(a\" for regexReplaceAll"), HasSubstr("missing )"),
                    HasSubstr("position 19")));
}

TEST(GoTemplate, StructureErrors) {
  EXPECT_THAT(ErrorOf("{{ if .a }}x"), HasSubstr("{{if}} has no matching {{end}} at position 0"));
  EXPECT_THAT(ErrorOf("x{{ end }}"), HasSubstr("unexpected {{end}} at position 1"));
  EXPECT_THAT(ErrorOf("{{ else }}"), HasSubstr("unexpected {{else}}"));
  EXPECT_THAT(ErrorOf("{{ else if .a }}"), HasSubstr("unexpected {{else if}}"));
  EXPECT_THAT(ErrorOf("{{ if .a }}{{ else }}{{ else }}{{ end }}"),
              HasSubstr("{{else}} after {{else}}"));
  EXPECT_THAT(ErrorOf("{{ .Value"), HasSubstr("unclosed action"));
  EXPECT_THAT(ErrorOf("{{ }}"), HasSubstr("missing value for command"));
  EXPECT_THAT(ErrorOf("{{ .Value | }}"), HasSubstr("missing command after |"));
  EXPECT_THAT(ErrorOf("{{ (.Value }}"), HasSubstr("unclosed"));
  EXPECT_THAT(ErrorOf("{{ .Value) }}"), HasSubstr("unexpected \")\""));
  EXPECT_THAT(ErrorOf("{{/* x }}"), HasSubstr("unclosed comment"));
  EXPECT_THAT(ErrorOf("{{/* x */ .a }}"), HasSubstr("comment must be followed directly by }}"));
  EXPECT_THAT(ErrorOf("{{/* x */ }}"), HasSubstr("comment must be followed directly by }}"));
  EXPECT_THAT(ErrorOf("{{ /* x */}}"), HasSubstr("unexpected \"/\" in action"));
  EXPECT_THAT(ErrorOf("{{/* x */-}}"), HasSubstr("comment must be followed directly"));
  EXPECT_THAT(ErrorOf("{{ .Value-}}"), HasSubstr("unexpected \"-\" after an operand"));
}

TEST(GoTemplate, OperandErrors) {
  EXPECT_THAT(ErrorOf("{{ .Value \"x\" }}"), HasSubstr("can't give an argument to a non-function"));
  EXPECT_THAT(ErrorOf("{{ .a | .b }}"), HasSubstr("a pipeline stage after | must be a function"));
  EXPECT_THAT(ErrorOf("{{ \"unterminated }}"), HasSubstr("no closing double quote"));
  EXPECT_THAT(ErrorOf("{{ \"\\q\" }}"), HasSubstr("invalid escape"));
  EXPECT_THAT(ErrorOf("{{ 'ab' }}"), HasSubstr("malformed character constant"));
  EXPECT_THAT(ErrorOf("{{ 12abc }}"), HasSubstr("bad number syntax \"12abc\""));
  EXPECT_THAT(ErrorOf("{{ 0x }}"), HasSubstr("bad number syntax \"0x\""));
  EXPECT_THAT(ErrorOf("{{ 1e }}"), HasSubstr("bad number syntax"));
  EXPECT_THAT(ErrorOf("{{ nil }}"), HasSubstr("nil is not a command"));
  EXPECT_THAT(ErrorOf("{{ ToUpper nil }}"), HasSubstr("cannot give nil as argument 1 of ToUpper"));
  EXPECT_THAT(ErrorOf("{{ # }}"), HasSubstr("unexpected \"#\" in action"));
  EXPECT_THAT(ErrorOf("{{ ToUpper ToLower }}"),
              HasSubstr("function ToLower used as an argument without its arguments"));
}

TEST(GoTemplate, RefusedFunctionsNameTheReason) {
  EXPECT_THAT(ErrorOf("{{ env \"HOME\" }}"),
              AllOf(HasSubstr("function \"env\" is refused"), HasSubstr("secrets")));
  EXPECT_THAT(ErrorOf("{{ expandenv \"$HOME\" }}"),
              AllOf(HasSubstr("function \"expandenv\" is refused"), HasSubstr("environment")));
  EXPECT_THAT(ErrorOf("{{ genCA \"x\" 1 }}"), HasSubstr("certificates"));
  EXPECT_THAT(ErrorOf("{{ getHostByName \"x\" }}"), HasSubstr("DNS lookup"));
  EXPECT_THAT(ErrorOf("{{ call .f }}"), HasSubstr("no functions"));
}

// sprig's semver and semverCompare (their outputs against Go's are in go_template_parity_test.cc).
TEST(GoTemplate, SemverCompareChecksAConstraint) {
  const MapTemplateData d{{"version", "v1.4.2"}};
  EXPECT_EQ(Render("{{ semverCompare \">=1.2.0, <2\" .version }}", d), "true");
  EXPECT_EQ(Render("{{ if semverCompare \"~1.3\" .version }}old{{ else }}new{{ end }}", d), "new");
  EXPECT_EQ(Render("{{ .version | semverCompare \"1.2 - 1.4.5 || 3.x\" }}", d), "true");
  EXPECT_EQ(Render("{{ semverCompare \"<1.0.0\" \"1.0.0-rc.1\" }}"),
            "false");  // no prerelease asked
  EXPECT_THAT(Render("{{ semverCompare \">=1\" .nope }}"),
              HasSubstr("invalid value; expected string"));
}

TEST(GoTemplate, SemverCompareFailsWithGosMessage) {
  EXPECT_THAT(Render("{{ semverCompare \"foo\" \"1.2.3\" }}"),
              HasSubstr("error calling semverCompare: improper constraint: foo"));
  EXPECT_THAT(Render("{{ semverCompare \">=1\" \"1.2.3.4\" }}"),
              HasSubstr("error calling semverCompare: invalid semantic version"));
  EXPECT_THAT(Render("{{ semverCompare \"1.2.3-01\" \"1.2.3\" }}"),
              HasSubstr("error calling semverCompare: constraint parser error"));
}

TEST(GoTemplate, SemverReturnsAVersionWithMethods) {
  const MapTemplateData d{{"version", "v1.4.2-rc.1+build.7"}};
  EXPECT_EQ(Render("{{ semver .version }}", d), "1.4.2-rc.1+build.7");
  EXPECT_EQ(Render("{{ $v := semver .version }}{{ $v.Major }}.{{ $v.Minor }}.{{ $v.Patch }} "
                   "{{ $v.Prerelease }} {{ $v.Metadata }} {{ $v.Original }} {{ $v.String }}",
                   d),
            "1.4.2 rc.1 build.7 v1.4.2-rc.1+build.7 1.4.2-rc.1+build.7");
  EXPECT_EQ(Render("{{ with semver \"2\" }}{{ .Major }}{{ end }} {{ (semver \"1.2\").Minor }}"),
            "2 2");
  EXPECT_EQ(Render("{{ (semver \"1.2.3\").LessThan (semver \"1.10.0\") }}"), "true");
  EXPECT_EQ(Render("{{ typeOf (semver \"1\") }} {{ typeOf (semver \"1\").Major }}"),
            "*semver.Version uint64");
  EXPECT_EQ(Render("{{ toJson (semver \"v1.2\") }}"), "\"1.2.0\"");
}

// Go's methods that return a semver.Version (a type skald's values do not have), bytes, or change
// the version are not offered; the error says which are.
TEST(GoTemplate, SemverMethodsNotOfferedSayWhichAre) {
  EXPECT_THAT(Render("{{ (semver \"1.2.3\").IncMajor }}"),
              AllOf(HasSubstr("can't evaluate field IncMajor in type *semver.Version"),
                    HasSubstr("the methods skald offers: Major, Minor")));
  EXPECT_THAT(Render("{{ (semver \"1.2.3\").Nope }}"),
              AllOf(HasSubstr("can't evaluate field Nope in type *semver.Version"),
                    ::testing::Not(HasSubstr("skald offers"))));
}

TEST(GoTemplate, AssigningAVariableOfAnotherBranchFailsExecution) {
  // Go's parser accepts this too, and its execution fails the same way.
  EXPECT_EQ(Render("{{ if false }}{{ $z := 1 }}{{ else }}{{ $z = 2 }}{{ end }}"),
            "ERROR: undefined variable: $z");
  EXPECT_EQ(Render("{{ if true }}{{ $z := 1 }}{{ $z = 2 }}{{ $z }}{{ end }}"), "2");
  EXPECT_EQ(
      Render("{{ if false }}{{ $i := 1 }}{{ else }}{{ range $i = list 1 }}{{ end }}{{ end }}"),
      "ERROR: undefined variable: $i");
}

TEST(GoTemplate, StructureMistakesAreConfigErrors) {
  EXPECT_THAT(ErrorOf("{{ $x }}"), HasSubstr("undefined variable \"$x\""));
  EXPECT_THAT(ErrorOf("{{ $x = 1 }}"), HasSubstr("undefined variable \"$x\""));
  EXPECT_THAT(ErrorOf("{{ if true }}{{ $x := 1 }}{{ end }}{{ $x }}"),
              HasSubstr("undefined variable \"$x\""));
  EXPECT_THAT(ErrorOf("{{ template \"x\" }}"), HasSubstr("template \"x\" is not defined"));
  EXPECT_THAT(ErrorOf("{{ break }}"), HasSubstr("{{break}} outside {{range}}"));
  EXPECT_THAT(ErrorOf("{{ if 1 }}{{ continue }}{{ end }}"),
              HasSubstr("{{continue}} outside {{range}}"));
  EXPECT_THAT(ErrorOf("{{ if 1 }}{{ define \"x\" }}{{ end }}{{ end }}"),
              HasSubstr("unexpected {{define}}"));
  EXPECT_THAT(ErrorOf("{{ range .x }}"), HasSubstr("{{range}} has no matching {{end}}"));
  EXPECT_THAT(ErrorOf("{{ with .x }}{{ else }}{{ else }}{{ end }}"),
              HasSubstr("{{else}} after {{else}}"));
  EXPECT_THAT(ErrorOf("{{ $a, $b := .x }}"), HasSubstr("too many declarations"));
  EXPECT_THAT(ErrorOf("{{ define \"x\" }}"), HasSubstr("{{define}} has no matching {{end}}"));
}

TEST(GoTemplate, DeepNestingIsConfigErrorNotACrash) {
  std::string deep(5000, '(');
  deep = "{{ " + deep + "1" + std::string(5000, ')') + " }}";
  EXPECT_THAT(ErrorOf(deep), HasSubstr("too deeply nested"));
}

}  // namespace
}  // namespace skald::stages

namespace skald::stages {
namespace {

// Random token soup: parsing either succeeds or throws ConfigError, and a parsed template
// executes without crashing.
TEST(GoTemplate, RandomInputOnlyFailsCleanly) {
  const std::vector<std::string> tokens = {"{{",
                                           "}}",
                                           "{{- ",
                                           " -}}",
                                           " ",
                                           ".Value",
                                           ".x",
                                           ".",
                                           "$",
                                           "|",
                                           "(",
                                           ")",
                                           "\"a\"",
                                           "`b`",
                                           "1",
                                           "-2",
                                           "0x1",
                                           "1.5",
                                           "if",
                                           "else",
                                           "end",
                                           "eq",
                                           "ne",
                                           "and",
                                           "or",
                                           "not",
                                           "lt",
                                           "ToUpper",
                                           "Replace",
                                           "substr",
                                           "trunc",
                                           "repeat",
                                           "div",
                                           "mod",
                                           "default",
                                           "quote",
                                           "regexReplaceAll",
                                           "\"(\"",
                                           "\"a*\"",
                                           "b64dec",
                                           "title",
                                           "range",
                                           "with",
                                           "define",
                                           "template",
                                           "block",
                                           "break",
                                           "continue",
                                           "$x",
                                           "$x :=",
                                           "$x =",
                                           "$i, $v :=",
                                           "nil",
                                           "'a'",
                                           "\"t\"",
                                           "list",
                                           "dict",
                                           "until",
                                           "seq",
                                           "printf",
                                           "\"%v %5d %q\"",
                                           "index",
                                           "len",
                                           "toJson",
                                           "fromJson",
                                           "\"{\\\"a\\\":[1]}\"",
                                           "set",
                                           "keys",
                                           "now",
                                           ".Unix",
                                           "date",
                                           "split",
                                           "append",
                                           "/*",
                                           "*/",
                                           "\\",
                                           "\"",
                                           "x"};
  const MapTemplateData data{{"Value", "héllo wörld"}, {"x", ""}};
  uint64_t seed = 42;
  auto next = [&seed]() {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return seed >> 33;
  };
  int parsed = 0;
  for (int i = 0; i < 50000; ++i) {
    std::string text;
    const int n = 1 + next() % 16;
    for (int k = 0; k < n; ++k) text += tokens[next() % tokens.size()];
    try {
      const GoTemplate t = GoTemplate::Parse(text);
      std::string out;
      t.Execute(data, &out);
      ++parsed;
    } catch (const ConfigError&) {
    }
  }
  EXPECT_GT(parsed, 100);
}

// --- The data as a Go struct, and Docker's function set.

// A struct with a []string, a map[string]string and a time.Time field.
class StructData : public TemplateData {
 public:
  TemplateValue Lookup(std::string_view name) const override {
    if (name == "Args") return TemplateValue::StringList(args_);
    if (name == "Labels") return TemplateValue::StringMap(labels_);
    if (name == "Created") return TemplateValue::Time(1764953174, 500'000'000);
    if (name == "Name") return TemplateValue::String("web");
    return TemplateValue::Missing();
  }
  std::string_view StructType() const override { return "*main.Info"; }

 private:
  std::vector<std::string> args_{"-c", "echo hi"};
  std::map<std::string, std::string> labels_{{"team", "payments"}};
};

std::string RenderStruct(std::string_view text,
                         GoTemplate::Functions functions = GoTemplate::Functions::kPromtail) {
  const GoTemplate t = GoTemplate::Parse(text, functions);
  std::string out, error;
  if (t.Execute(StructData(), &out, &error) != GoTemplate::Result::kOk) return "ERROR: " + error;
  return out;
}

TEST(GoTemplate, StructDataHoldsListsMapsAndTimesAndRefusesFieldsItLacks) {
  EXPECT_EQ(RenderStruct("{{range .Args}}<{{.}}>{{end}} {{len .Args}} {{index .Args 1}}"),
            "<-c><echo hi> 2 echo hi");
  EXPECT_EQ(RenderStruct("{{.Labels.team}} {{index .Labels \"team\"}} {{.Labels}} {{.Args}}"),
            "payments payments map[team:payments] [-c echo hi]");
  EXPECT_EQ(RenderStruct("{{.Labels.nope}}|{{index .Labels \"nope\"}}|"), "<no value>||");
  EXPECT_EQ(RenderStruct("{{.Created}}"), "2025-12-05 16:46:14.5 +0000 UTC");
  EXPECT_EQ(RenderStruct("{{.Nope}}"), "ERROR: can't evaluate field Nope in type *main.Info");
}

TEST(GoTemplate, DockersFunctionSetHasDockersJoinAndNoSprig) {
  const auto docker = GoTemplate::Functions::kDockerTag;
  EXPECT_EQ(RenderStruct("{{join .Args \"+\"}}", docker), "-c+echo hi");
  // sprig's order: a literal is refused when parsed, a field when run.
  EXPECT_THAT(RenderStruct("{{join .Name \"+\"}}", docker),
              HasSubstr("wrong type for value; expected []string; got string"));
  try {
    GoTemplate::Parse("{{join \"+\" .Args}}", docker);
    ADD_FAILURE() << "a string literal taken for a list";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("argument 1 of join must be a list of strings"));
  }
  EXPECT_EQ(RenderStruct("{{json .Labels}}|{{truncate .Name 2}}|{{pad .Name 1 1}}", docker),
            "{\"team\":\"payments\"}|we| web ");
  EXPECT_THAT(ErrorOf("{{truncate .Name 2}}"), HasSubstr("function \"truncate\" is not supported"));
  try {
    GoTemplate::Parse("{{trunc 2 .Name}}", docker);
    ADD_FAILURE() << "sprig's trunc parsed with Docker's functions";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("function \"trunc\" is not supported"));
    EXPECT_THAT(e.what(), HasSubstr("truncate"));
  }
}

}  // namespace
}  // namespace skald::stages
