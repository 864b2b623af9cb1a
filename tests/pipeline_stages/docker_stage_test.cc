#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

TEST(DockerStage, ParsesJsonFileRecord) {
  auto out = testkit::RunOne(
      "- docker: {}",
      testkit::MakeEntry(R"({"log":"hi\n","stream":"stdout","time":"2020-01-01T00:00:00Z"})"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line, "hi\n");
  EXPECT_EQ(out[0].labels.Get("stream"), "stdout");
  EXPECT_EQ(out[0].timestamp_ns, 1577836800000000000);
}

}  // namespace
}  // namespace skald::stages
