// Stages remember where their keys are in the extracted map (hints) and, while the map's
// layout() is the one they saw, skip checking the key. These tests hand the stages entries
// whose maps alternate between objects with different slot layouts, through the json fast
// path and the simdjson path, and check every result.
#include <random>

#include "pipeline_stages/json_stage.h"
#include "pipeline_stages/labels_stage.h"
#include "pipeline_stages/output_stage.h"
#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

class NullDownstream final : public Downstream {
 public:
  void Emit(Entry&&) override {}
};

TEST(ExtractedLayout, CopiesGetTheirOwnLayout) {
  Extracted a;
  EXPECT_EQ(a.layout(), 0u);
  a.SetString("k", "v");
  const uint64_t layout = a.layout();
  EXPECT_NE(layout, 0u);
  Extracted b = a;
  EXPECT_NE(b.layout(), layout);
  Extracted c = std::move(a);
  EXPECT_EQ(c.layout(), layout);
  size_t hint = Extracted::kNoHint;
  c.Reset(nullptr);
  EXPECT_EQ(c.FindHinted("k", hint), nullptr);  // a slot, but not set on this entry
  EXPECT_NE(hint, Extracted::kNoHint);
  EXPECT_EQ(c.FindAt(hint), nullptr);
  c.UpsertAt(hint).SetString("again");
  EXPECT_EQ(c.Find("k")->AsString(), "again");
  EXPECT_EQ(c.FindHinted("absent", hint), nullptr);
  EXPECT_EQ(hint, Extracted::kNoHint);
}

TEST(ExtractedLayout, AtCallsSeeLabelsAndErasures) {
  LabelSet labels{{"app", "web"}};
  Extracted x;
  x.Reset(labels.SharedBase());
  size_t app = Extracted::kNoHint, other = Extracted::kNoHint;
  ASSERT_NE(x.FindHinted("app", app), nullptr);
  x.UpsertHinted("other", other).SetString("o");
  x.Reset(labels.SharedBase());
  EXPECT_EQ(x.FindAt(other), nullptr);
  ASSERT_NE(x.FindAt(app), nullptr);
  EXPECT_EQ(x.FindAt(app)->AsString(), "web");
  x.Erase("app");
  EXPECT_EQ(x.FindAt(app), nullptr);
  EXPECT_TRUE(x.UpsertAt(app).is_null());
  x.Reset(labels.SharedBase());
  EXPECT_EQ(x.UpsertAt(app).AsString(), "web");  // the label's value, as Upsert keeps it
}

TEST(ExtractedLayout, StagesFollowMapsOfDifferentLayouts) {
  testkit::FakeClock clock;
  BuildContext build;
  build.clock = &clock;
  StageContext ctx{"test", "json", &build};
  JsonStage json(YAML::Load("expressions: {msg: msg, level: level, ctx: context}"), ctx);
  LabelsStage labels(YAML::Load("{level: , context: ctx, app: }"), ctx);
  OutputStage output(YAML::Load("{source: msg}"), ctx);
  NullDownstream next;

  // Three maps whose slots were filled in different orders (and one with extra keys).
  std::vector<Extracted> maps(3);
  const std::vector<std::vector<std::string>> orders = {
      {"msg", "level", "ctx"}, {"ctx", "x", "level", "msg"}, {"y", "msg", "z", "ctx", "level"}};
  for (size_t m = 0; m < maps.size(); ++m) {
    for (const auto& k : orders[m]) maps[m].SetString(k, "old");
  }
  const LabelSet base{{"app", "shop"}};
  std::mt19937 rng(7);
  for (int i = 0; i < 400; ++i) {
    const std::string n = std::to_string(i);
    // A third of the lines take the simdjson path (a \u escape in an extracted value); every
    // fifth lacks a field. The maps come in random order, sometimes several times in a row.
    const bool slow = rng() % 3 == 0;
    std::string line = R"({"msg":"m)" + n + (slow ? R"(\u00e9")" : R"(")");
    if (i % 5 != 0) line += R"(,"level":"l)" + n + R"(")";
    line += R"(,"context":"c)" + n + R"("})";
    Entry e = testkit::MakeEntry(line, base);
    const size_t m = rng() % 2 == 0 ? static_cast<size_t>(i) % 3 : rng() % 3;
    e.extracted = std::move(maps[m]);
    e.extracted.Reset(e.labels.SharedBase());
    ASSERT_EQ(json.Process(e, next), Verdict::kPass);
    ASSERT_EQ(labels.Process(e, next), Verdict::kPass);
    ASSERT_EQ(output.Process(e, next), Verdict::kPass);
    EXPECT_EQ(e.line, "m" + n + (slow ? "\xc3\xa9" : "")) << i;
    EXPECT_EQ(e.labels.Get("level"),
              i % 5 != 0 ? std::optional<std::string_view>("l" + n) : std::nullopt)
        << i;
    EXPECT_EQ(e.labels.Get("context"), "c" + n) << i;
    EXPECT_EQ(e.labels.Get("app"), "shop") << i;
    maps[m] = std::move(e.extracted);
  }
}

}  // namespace
}  // namespace skald::stages
