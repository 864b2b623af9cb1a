// Fuzz target: the json stage's input, its fast scanner against simdjson.
//
// The json stage reads lines with a validating scanner when every path is a single identifier,
// and hands anything it is not sure of to simdjson; both must give the same result. Each
// configuration is built twice, with and without the scanner, and every line goes through
// both; their verdicts, lines and extracted values (types included) must be equal.
//
// Input: one byte choosing the configuration, then lines (split at '\n'); the lines run in
// order through the same stages, reusing the extracted storage as a pipeline does (the
// scanner's per-layout hints carry over from line to line).
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pipeline_stages/json_stage.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/pipeline_stages/test_support.h"

namespace {

using skald::stages::Entry;
using skald::stages::Extracted;
using skald::stages::JsonStage;
using skald::stages::Value;

// Single identifiers (the scanner's case), a missing key, an empty path, a source field and
// drop_malformed; the last ones have deeper paths, which only simdjson serves.
constexpr const char* kConfigs[] = {
    "{expressions: {level: level, msg: msg, n: n, user: user, nope: nope, ts: ''}}",
    "{expressions: {a: a, b: b, c: c, d: d, e: e, f: f, g: g, h: h, i: i, j: j, k: k, l: l, "
    "m: m, n: n, o: o, p: p, q: q, r: r, s: s, t: t, u: u, v: v, w: w, x: x, y: y, z: z, "
    "long_key_name_over_16: long_key_name_over_16, blank: '\"\"'}}",
    "{expressions: {level: level, msg: msg}, drop_malformed: true}",
    "{expressions: {level: level, msg: msg}, source: payload}",
    "{expressions: {id: user.id, first_tag: 'user.tags[0]', tags: user.tags, q: '\"a.b\"'}}",
};

class NullDownstream final : public skald::stages::Downstream {
 public:
  void Emit(Entry&&) override {}
};

struct Side {
  std::unique_ptr<JsonStage> stage;
  Extracted spare;
};

struct Built {
  skald::stages::testkit::FakeClock clock;
  skald::stages::BuildContext build;
  skald::stages::StageContext ctx;
  Side fast, slow;
};

std::vector<std::unique_ptr<Built>> BuildAll() {
  std::vector<std::unique_ptr<Built>> all;
  for (const char* config : kConfigs) {
    auto b = std::make_unique<Built>();
    b->build.clock = &b->clock;
    b->ctx = {"pipeline stage 1 (json)", "json", &b->build};
    const YAML::Node node = YAML::Load(config);
    JsonStage::SetFastPathForTesting(true);
    b->fast.stage = std::make_unique<JsonStage>(node, b->ctx);
    JsonStage::SetFastPathForTesting(false);
    b->slow.stage = std::make_unique<JsonStage>(node, b->ctx);
    JsonStage::SetFastPathForTesting(true);
    all.push_back(std::move(b));
  }
  return all;
}

std::string Describe(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNull:
      return "null";
    case Value::Kind::kString:
      return "s:" + v.string();
    case Value::Kind::kBool:
      return v.boolean() ? "b:true" : "b:false";
    case Value::Kind::kNumber:
      return (v.is_int() ? "i:" : "d:") + std::string(v.AsString().value_or("?"));
  }
  return "?";
}

struct Outcome {
  skald::stages::Verdict verdict;
  std::string line;
  std::map<std::string, std::string> extracted;
  bool operator==(const Outcome&) const = default;
};

Outcome Run(Side& side, std::string_view line, const Value* payload) {
  Entry e;
  e.line = std::string(line);
  e.labels = {{"job", "fuzz"}};
  if (side.spare.has_storage()) e.extracted = std::move(side.spare);
  e.extracted.Reset(e.labels.SharedBase());
  if (payload != nullptr) e.extracted.Upsert("payload") = *payload;
  NullDownstream next;
  Outcome o{side.stage->Process(e, next), e.line, {}};
  e.extracted.ForEach(
      [&](std::string_view k, const Value& v) { o.extracted[std::string(k)] = Describe(v); });
  side.spare = std::move(e.extracted);
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<std::unique_ptr<Built>> configs = BuildAll();
  if (size < 1) return 0;
  Built& b = *configs[data[0] % configs.size()];
  for (std::string_view line : skald::fuzz::SplitLines(skald::fuzz::AsView(data + 1, size - 1))) {
    // The source field holds the line as a string (what an earlier stage would extract).
    Value payload;
    payload.SetString(line);
    const Outcome fast = Run(b.fast, line, &payload);
    const Outcome slow = Run(b.slow, line, &payload);
    if (!(fast == slow)) {
      std::fprintf(stderr, "fast and simdjson paths differ on: %.*s\n",
                   static_cast<int>(line.size()), line.data());
      for (const auto& [k, v] : fast.extracted)
        std::fprintf(stderr, "  fast %s = %s\n", k.c_str(), v.c_str());
      for (const auto& [k, v] : slow.extracted)
        std::fprintf(stderr, "  slow %s = %s\n", k.c_str(), v.c_str());
      FUZZ_CHECK(fast == slow);
    }
  }
  return 0;
}
