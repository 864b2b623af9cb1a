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

}  // namespace
}  // namespace skald::stages
