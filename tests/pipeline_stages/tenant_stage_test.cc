#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using ::testing::HasSubstr;
using testkit::BuildError;
using testkit::MakeEntry;
using testkit::RunOne;

TEST(TenantStage, FromValue) {
  auto out = RunOne("- tenant: {value: t1}", MakeEntry("x"));
  EXPECT_EQ(out[0].tenant, "t1");
}

TEST(TenantStage, InvalidValueIsAConfigError) {
  EXPECT_THAT(BuildError("- tenant: {value: 'a|b'}"),
              HasSubstr("pipeline stage 1 (tenant): field \"value\": tenant 'a|b' holds '|'"));
}

}  // namespace
}  // namespace skald::stages
