#include "pipeline_stages/rfc3339.h"
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

// Unix nanoseconds hold 1677-2262: a time outside (a hostile "time" or ContainerCreated, Go's
// zero time) is no timestamp, never an overflow (the fuzzer's plugin_api crash of 2026-12-05).
TEST(Rfc3339, TimesOutsideUnixNanosecondsAreRefusedNotWrapped) {
  EXPECT_EQ(ParseRfc3339("2262-04-11T23:47:15Z"), std::optional<int64_t>(9223372035000000000));
  EXPECT_EQ(ParseRfc3339("4009-05-01T10:00:00Z"), std::nullopt);
  EXPECT_EQ(ParseRfc3339("0001-01-01T00:00:00Z"), std::nullopt);
  EXPECT_EQ(ParseRfc3339("1970-01-01T00:00:01.5Z"), std::optional<int64_t>(1'500'000'000));
}

}  // namespace
}  // namespace skald::stages
