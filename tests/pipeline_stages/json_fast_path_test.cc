// The json stage's fast scanner against simdjson: on every input, both must leave the same
// extracted map (or both call it malformed). Hand-written edge cases plus random mutations of
// well-formed lines.
#include <random>

#include "pipeline_stages/json_stage.h"
#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

class NullDownstream final : public Downstream {
 public:
  void Emit(Entry&&) override {}
};

struct Outcome {
  Verdict verdict;
  std::vector<std::string> extracted;  // "key kind is_int text"
  friend bool operator==(const Outcome&, const Outcome&) = default;
};

std::string Describe(const Outcome& o) {
  std::string s = "verdict " + std::to_string(static_cast<int>(o.verdict)) + ":";
  for (const auto& e : o.extracted) s += " [" + e + "]";
  return s;
}

class Pair {
 public:
  explicit Pair(const std::string& yaml) {
    const YAML::Node node = YAML::Load(yaml);
    ctx_.where = "test";
    ctx_.name = "json";
    ctx_.build = &build_;
    build_.clock = &clock_;
    JsonStage::SetFastPathForTesting(false);
    slow_ = std::make_unique<JsonStage>(node, ctx_);
    JsonStage::SetFastPathForTesting(true);
    fast_ = std::make_unique<JsonStage>(node, ctx_);
  }

  Outcome Run(JsonStage& stage, const std::string& line) {
    Entry e = testkit::MakeEntry(line, LabelSet{{"level", "from-label"}, {"job", "j"}});
    e.extracted.Reset(e.labels.SharedBase());
    e.extracted.SetString("pre", "existing");
    NullDownstream next;
    Outcome o;
    o.verdict = stage.Process(e, next);
    e.extracted.ForEach([&](std::string_view k, const Value& v) {
      auto s = v.AsString();
      o.extracted.push_back(std::string(k) + " " + std::to_string(static_cast<int>(v.kind())) +
                            " " + (v.is_int() ? "int " : "") + (s ? std::string(*s) : "-"));
    });
    std::sort(o.extracted.begin(), o.extracted.end());
    return o;
  }

  void Check(const std::string& line) {
    const Outcome a = Run(*slow_, line);
    const Outcome b = Run(*fast_, line);
    EXPECT_EQ(a, b) << "line: " << line << "\nsimdjson: " << Describe(a)
                    << "\nfast:     " << Describe(b);
  }

 private:
  testkit::FakeClock clock_;
  BuildContext build_;
  StageContext ctx_;
  std::unique_ptr<JsonStage> slow_;
  std::unique_ptr<JsonStage> fast_;
};

const char* const kExpressions = R"(
expressions:
  output: msg
  level: level
  timestamp: time
  pid: pid
  context: context
  o: obj
  a: arr
  n: n
  s: s
  t: t
  same: msg
)";

const std::vector<std::string> kCases = {
    R"({"level":30,"time":1700000000000,"pid":7,"hostname":"web-1","context":"HttpService","traceID":"4bf92f3577b34da6a3ce929d0e0e4736","msg":"request completed GET /api/users 200 12ms","reqId":"req-1a2b"})",
    R"({})",
    R"(  { }  )",
    "\t{\"msg\" :\r\n \"x\" }\n",
    R"({"msg":""})",
    R"({"msg":"a\"b\\c\/d\be\ff\ng\rh\ti"})",
    R"({"msg":"\u00e9"})",
    R"({"msg":"\ud800"})",
    R"({"msg":"\ud83d\ude00"})",
    R"({"other":"\uZZZZ","msg":"x"})",
    R"({"other":"\ud800","msg":"x"})",
    R"({"m\u0073g":"k"})",
    R"({"x\"y":1,"msg":"k"})",
    R"({"msg":"héllo wörld ✓ 😀"})",
    "{\"msg\":\"bad \xff utf8\"}",
    "{\"other\":\"bad \xc3\x28\",\"msg\":\"x\"}",
    "{\"msg\":\"surrogate \xed\xa0\x80\"}",
    "{\"msg\":\"overlong \xc0\xaf\"}",
    "{\"msg\":\"ctl \x01 char\"}",
    "{\"msg\":\"tab \t char\"}",
    "{\"other\":\"ctl \x1f\",\"msg\":\"x\"}",
    R"({"n":0})",
    R"({"n":-0})",
    R"({"n":-7})",
    R"({"n":01})",
    R"({"n":1.5})",
    R"({"n":1e3})",
    R"({"n":1E+3})",
    R"({"n":1.})",
    R"({"n":.5})",
    R"({"n":-})",
    R"({"n":+1})",
    R"({"n":123456789012345678})",
    R"({"n":-123456789012345678})",
    R"({"n":1234567890123456789})",
    R"({"n":9223372036854775807})",
    R"({"n":9223372036854775808})",
    R"({"n":-9223372036854775808})",
    R"({"n":99999999999999999999999})",
    R"({"n":1e400})",
    R"({"x":01,"n":1})",
    R"({"x":1.,"n":1})",
    R"({"x":tru,"n":1})",
    R"({"x":nul,"n":1})",
    R"({"n":truex})",
    R"({"n":true,"t":false,"s":null})",
    R"({"t":True})",
    R"({"obj":{"a": 1, "b": [1, 2, {"c" : "d e"}]}})",
    R"({"obj":{ }, "arr":[ ]})",
    R"({"arr":[ "x", "y" , "a \" ] b" ]})",
    R"({"arr":[1,2,]})",
    R"({"arr":[1 2]})",
    R"({"obj":{"a" 1}})",
    R"({"obj":{"a":1,}})",
    R"({"obj":{"a":1})",
    R"({"x":{"a":[1,{"b":tru}]},"msg":"m"})",
    R"({"x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],"msg":"deep"})",
    R"({"msg":"a","msg":"b"})",
    R"({"msg":"a","msg":1})",
    R"({"msg":"x"} trailing)",
    R"({"msg":"x"}})",
    R"({"msg":"x"},)",
    R"({"msg":"x")",
    R"({"msg":"x)",
    R"({"msg":)",
    R"({"msg")",
    R"({"msg")",
    R"({)",
    R"()",
    R"(   )",
    R"([1,2])",
    R"("str")",
    R"(42)",
    R"(null)",
    R"({"msg":"x",})",
    R"({,"msg":"x"})",
    R"({"msg" "x"})",
    R"({msg:"x"})",
    R"({'msg':'x'})",
    "\xef\xbb\xbf{\"msg\":\"bom\"}",
    "{\"msg\":\"x\"}\x00",
    "{\"msg\":\"nul\x00inside\"}",
    R"({"level":"info","pre":"over"})",
    R"({"s":"a long string value that is longer than sixteen bytes, to use the vector loop"})",
    R"({"s":"escape at the end of a block \n and more text after it \\ and \" quote"})",
};

TEST(JsonFastPath, AgreesWithSimdjsonOnEdgeCases) {
  Pair pair(kExpressions);
  for (const auto& line : kCases) pair.Check(line);
}

TEST(JsonFastPath, AgreesWithSimdjsonOnMutations) {
  Pair pair(kExpressions);
  const std::vector<std::string> seeds = {
      kCases[0],
      R"({"msg":"a \"q\" b","n":-12,"obj":{"k":[1,2.5,"x"]},"arr":[true,false,null],"s":"é"})",
      R"( {"level" : "warn" , "t" : true , "context" : "Svc" , "n" : 1e2 } )",
  };
  const std::string alphabet = "{}[]\":,\\ \t\n0123456789-+.eEtrufalsn\x01\x80\xc3\xa9\xff\"u";
  std::mt19937 rng(12345);
  for (int i = 0; i < 30000; ++i) {
    std::string line = seeds[static_cast<size_t>(i) % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < edits; ++k) {
      const size_t pos = rng() % (line.size() + 1);
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          line.insert(line.begin() + static_cast<ptrdiff_t>(pos), c);
          break;
        case 1:
          if (pos < line.size()) line.erase(pos, 1);
          break;
        default:
          if (pos < line.size()) line[pos] = c;
          break;
      }
    }
    pair.Check(line);
    if (HasFailure()) break;
  }
}

TEST(JsonFastPath, NumbersOfEveryLength) {
  Pair pair(kExpressions);
  std::string digits;
  for (int n = 1; n <= 22; ++n) {
    digits += static_cast<char>('0' + (n * 7) % 10);
    for (const std::string& num :
         {digits, "-" + digits, "1" + digits, digits + ".5", digits + "e2", "0" + digits}) {
      pair.Check(R"({"n":)" + num + R"(,"pid":)" + num + "}");
      pair.Check(R"({"x":)" + num + R"(,"n":1})");
    }
  }
}

// The string scanner looks at 16 bytes at a time (SSE2 on x86-64, NEON on arm64): each byte it
// must stop at, and the bytes either side of its ranges (0x1f/0x20, 0x7f/0x80: a signed or an
// unsigned compare tells them apart), at every position of the first three blocks.
TEST(JsonFastPath, SpecialBytesAtEveryOffsetOfAVectorBlock) {
  Pair pair(kExpressions);
  const std::vector<std::string> specials = {
      "\"",   "\\\"", "\\n",      "\\u00e9", "\x01", "\x1f",         " ",
      "\x7f", "\x80", "\xc3\xa9", "\xff",    "~",    "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
  for (const std::string& special : specials) {
    for (size_t at = 0; at <= 48; ++at) {
      const std::string before(at, 'a');
      const std::string after(48 - at, 'b');
      pair.Check(R"({"msg":")" + before + special + after + R"(","n":1})");
      pair.Check(R"({")" + before + special + after + R"(":"k","msg":"x"})");
    }
  }
}

TEST(JsonFastPath, KeysOfEveryLength) {
  // Names of up to 16 bytes are matched as words, longer ones byte by byte.
  std::string yaml = "expressions:\n";
  std::vector<std::string> names;
  for (int n = 1; n <= 20; ++n) {
    std::string name;
    for (int i = 0; i < n; ++i) name += static_cast<char>('a' + (i * 5 + n) % 26);
    names.push_back(name);
    yaml += "  k" + std::to_string(n) + ": " + name + "\n";
  }
  Pair pair(yaml);
  std::string line = "{";
  for (const auto& name : names) {
    // The name, the name with its last byte changed, and the name one byte longer.
    std::string other = name;
    other.back() = other.back() == 'z' ? 'y' : 'z';
    line += "\"" + name + "\":\"v" + name + "\",\"" + other + "\":1,\"" + name + "q\":2,";
  }
  line.back() = '}';
  pair.Check(line);
}

TEST(JsonFastPath, LayoutChangesBetweenLines) {
  // The scanner first tries the key seen at the same position on the previous line.
  Pair pair(R"(
expressions:
  e: '""'
  l: averyveryverylongkeyname
  m: msg
  lv: level
)");
  const std::vector<std::string> lines = {
      R"({"averyveryverylongkeyname":1,"":"empty","msg":"a"})",
      R"({"averyveryverylongkeyname":2,"":"empty2","msg":"b"})",
      R"({"x":1,"":"e","msg":"c"})",
      R"({"":"first","x":1,"msg":"d"})",
      R"({"msg":"e","level":"l"})",
      R"({"msh":"e","levem":"l"})",
      R"({"msg":"e","levelx":"l"})",
      R"({"msg":"e","leve":"l"})",
      R"({"ms"":"e","level":"l"})",
      R"({"msg":"e","lével":"l"})",
      R"({"msg":"e","lével":"l"})",
      R"({"msg":"e","level":"l"})",
      R"({"msg" : "f" , "level" : "m"})",
      R"({"msg":"e","level":"l","x":1,"y":2,"z":3})",
      R"({"msg":"e"})",
      R"({"msg":"e","level":"l","x":1,"y":2,"z":3})",
  };
  for (int round = 0; round < 3; ++round) {
    for (const auto& line : lines) pair.Check(line);
  }
}

TEST(JsonFastPath, DuplicateExpressionsAndEmptyPath) {
  Pair pair(R"(
expressions:
  msg:
  copy: msg
  level: level
)");
  pair.Check(R"({"msg":"x","level":"y"})");
  pair.Check(R"({"level":"y"})");
}

}  // namespace
}  // namespace skald::stages
