#include "plugin/common/sha256_hex.h"

#include <gtest/gtest.h>

namespace skald {
namespace {

// FIPS 180-2 test vectors.
TEST(Sha256HexTest, KnownVectors) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256HexTest, CutToAPrefixOfWholeBytes) {
  EXPECT_EQ(Sha256Hex("abc", 16), "ba7816bf8f01cfea");
  EXPECT_EQ(Sha256Hex("abc", 32), "ba7816bf8f01cfea414140de5dae2223");
  EXPECT_EQ(Sha256Hex("abc", 0), "");
  EXPECT_EQ(Sha256Hex("abc", 1000).size(), 64u);
}

TEST(Sha256HexTest, BytesAfterANulCount) {
  EXPECT_NE(Sha256Hex(std::string_view("a\0b", 3)), Sha256Hex("a"));
}

}  // namespace
}  // namespace skald
