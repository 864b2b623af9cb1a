#include "pipeline_stages/tenant_id.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skald::stages {
namespace {

using ::testing::HasSubstr;

TEST(TenantId, AcceptsLokisCharacters) {
  EXPECT_EQ(TenantIdError("tenant-a"), "");
  EXPECT_EQ(TenantIdError("ABCDEFGHIJKLMNOPQRSTUVWXYZ-abcdefghijklmnopqrstuvwxyz_0987654321!.*'()"),
            "");
  EXPECT_EQ(TenantIdError(std::string(150, 'a')), "");
  EXPECT_EQ(TenantIdError("..."), "");
  EXPECT_EQ(TenantIdError(""), "");  // no tenant: the caller sends no header
}

TEST(TenantId, RefusesOthersNamingTheCharacter) {
  EXPECT_THAT(TenantIdError("a|b"), HasSubstr("tenant 'a|b' holds '|'"));
  EXPECT_THAT(TenantIdError("a:b"), HasSubstr("holds ':'"));
  EXPECT_THAT(TenantIdError("a b"), HasSubstr("holds ' '"));
  EXPECT_THAT(TenantIdError("a/b"), HasSubstr("holds '/'"));
  EXPECT_THAT(TenantIdError("caf\xc3\xa9"), HasSubstr("holds '\\xc3'"));
  EXPECT_THAT(TenantIdError("acme\r\nX-Injected: yes"),
              HasSubstr("tenant 'acme\\r\\nX-Injected: yes' holds '\\r'"));
  EXPECT_THAT(TenantIdError("a|b"),
              HasSubstr("at most 150 bytes of a-z A-Z 0-9 ! - _ . * ' ( ), not . or .."));
}

TEST(TenantId, RefusesDotsAndLongNames) {
  EXPECT_THAT(TenantIdError("."), HasSubstr("tenant '.' is . or .."));
  EXPECT_THAT(TenantIdError(".."), HasSubstr("is . or .."));
  const std::string err = TenantIdError(std::string(151, 'a'));
  EXPECT_THAT(err, HasSubstr("151 bytes"));
  EXPECT_LT(err.size(), 300u);  // the value is shown shortened
}

}  // namespace
}  // namespace skald::stages
