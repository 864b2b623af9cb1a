#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using testkit::MakeEntry;
using testkit::RunOne;

TEST(StructuredMetadataStage, TraceIdGoesToMetadataNotLabels) {
  auto out = RunOne(R"(
- json: {expressions: {traceID: traceID}}
- structured_metadata: {traceID: }
)",
                    MakeEntry(R"({"traceID":"abc"})"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].labels.Contains("traceID"));
  ASSERT_EQ(out[0].structured_metadata.size(), 1u);
  EXPECT_EQ(out[0].structured_metadata[0], (MetadataPair{"traceID", "abc"}));
}

}  // namespace
}  // namespace skald::stages
