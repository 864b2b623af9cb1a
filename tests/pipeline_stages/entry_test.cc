#include "pipeline_stages/entry.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <string>

namespace skald::stages {
namespace {

TEST(LabelSet, IteratesInNameOrderAcrossBaseAndEdits) {
  LabelSet l{{"b", "2"}, {"d", "4"}};
  l.Set("c", "3");
  l.Set("a", "1");
  l.Set("e", "5");
  std::string seen;
  l.ForEach([&](std::string_view n, std::string_view v) {
    seen += std::string(n) + "=" + std::string(v) + " ";
  });
  EXPECT_EQ(seen, "a=1 b=2 c=3 d=4 e=5 ");
}

TEST(LabelSet, SetOverridesAndEraseHidesBaseLabels) {
  LabelSet base{{"a", "1"}, {"b", "2"}};
  LabelSet l = base;
  l.Set("a", "x");
  l.Erase("b");
  EXPECT_EQ(l.ToString(), "{a=\"x\"}");
  EXPECT_EQ(base.ToString(), "{a=\"1\", b=\"2\"}");  // the copy did not change the shared base
  l.Set("b", "again");
  EXPECT_EQ(l.Get("b"), "again");
  EXPECT_EQ(l.size(), 2u);
}

TEST(LabelSet, EraseOfAnAddedLabelRemovesIt) {
  LabelSet l;
  l.Set("a", "1");
  l.Erase("a");
  EXPECT_TRUE(l.empty());
  EXPECT_FALSE(l.Get("a"));
}

TEST(LabelSet, FromVectorKeepsLastOfRepeatedNames) {
  auto l = LabelSet::FromVector({{"a", "1"}, {"a", "2"}});
  EXPECT_EQ(l.Get("a"), "2");
}

TEST(LabelSet, CompactKeepsContent) {
  LabelSet l{{"a", "1"}};
  l.Set("b", "2");
  l.Compact();
  EXPECT_EQ(l.ToString(), "{a=\"1\", b=\"2\"}");
}

TEST(LabelSet, ToStringEscapesValues) {
  LabelSet l{{"a", "q\"\\\n"}};
  EXPECT_EQ(l.ToString(), "{a=\"q\\\"\\\\\\n\"}");
}

TEST(LabelSet, OverlayBeyondItsInlineBytesAndManyEdits) {
  // The overlay keeps its records inline up to 48 bytes, then on the heap; more than 16 edits
  // sort another way when visited.
  LabelSet base{{"m", "base"}};
  LabelSet l = base;
  std::map<std::string, std::string> want{{"m", "base"}};
  for (int i = 0; i < 40; ++i) {
    std::string name = "k";
    name += std::to_string((i * 17) % 40);
    const std::string value(static_cast<size_t>(i % 7) * 9, static_cast<char>('a' + i % 26));
    l.Set(name, value);
    if (!value.empty()) want[name] = value;
    if (value.empty()) want[name] = "";
    if (i % 5 == 0) {
      l.Erase(name);
      want.erase(name);
    }
  }
  l.Set("m", std::string(100, 'z'));
  want["m"] = std::string(100, 'z');
  l.Set("m", std::string(100, 'y'));  // same length: in place
  want["m"] = std::string(100, 'y');
  std::map<std::string, std::string> seen;
  std::string order;
  l.ForEach([&](std::string_view n, std::string_view v) {
    seen[std::string(n)] = std::string(v);
    order.append(n);
    order += ' ';
  });
  EXPECT_EQ(seen, want);
  std::string sorted;
  for (const auto& [n, v] : want) {
    sorted += n;
    sorted += ' ';
  }
  EXPECT_EQ(order, sorted);

  LabelSet copy = l;  // heap overlay copied
  LabelSet moved = std::move(l);
  EXPECT_EQ(copy, moved);
  EXPECT_EQ(moved.size(), want.size());
  LabelSet small{{"a", "1"}};
  small.Set("b", "2");
  LabelSet small_moved = std::move(small);  // inline overlay moved
  EXPECT_EQ(small_moved.ToString(), "{a=\"1\", b=\"2\"}");
  copy = small_moved;
  EXPECT_EQ(copy.ToString(), "{a=\"1\", b=\"2\"}");
  copy = std::move(moved);
  EXPECT_EQ(copy.size(), want.size());
}

TEST(LabelSet, SetFromAViewOfItself) {
  LabelSet l;
  l.Set("a", "first value");
  l.Set("b", "x");
  l.Set("b", *l.Get("a"));  // the value is a view of the overlay that Set rewrites
  EXPECT_EQ(l.Get("b"), "first value");
  l.Set("a", l.Get("a")->substr(6));
  EXPECT_EQ(l.Get("a"), "value");
  EXPECT_EQ(l.ToString(), "{a=\"value\", b=\"first value\"}");
}

TEST(Value, IntegersPrintExactly) {
  Value v;
  for (int64_t i :
       {int64_t{0}, int64_t{7}, int64_t{9}, int64_t{10}, int64_t{99}, int64_t{100}, int64_t{101},
        int64_t{-1}, int64_t{-10}, int64_t{1700000000000}, int64_t{1700000000123456789},
        std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}) {
    v.SetInt(i);
    EXPECT_EQ(v.AsString(), std::to_string(i));
  }
}

TEST(Value, NumbersPrintShortestWithoutExponent) {
  Value v;
  v.SetDouble(12.34);
  EXPECT_EQ(v.AsString(), "12.34");
  v.SetDouble(1e21);
  EXPECT_EQ(v.AsString(), "1000000000000000000000");
  v.SetDouble(1562723913000);
  EXPECT_EQ(v.AsString(), "1562723913000");
  v.SetInt(-5);
  EXPECT_EQ(v.AsString(), "-5");
  v.SetDouble(0.000001);
  EXPECT_EQ(v.AsString(), "0.000001");
}

TEST(Value, BoolsAndNull) {
  Value v;
  EXPECT_FALSE(v.AsString());
  v.SetBool(true);
  EXPECT_EQ(v.AsString(), "true");
  v.SetBool(false);
  EXPECT_EQ(v.AsString(), "false");
}

TEST(Extracted, InitialLabelsAreVisibleAsStrings) {
  Extracted x;
  LabelSet l{{"app", "web"}};
  x.Reset(l.SharedBase());
  ASSERT_NE(x.Find("app"), nullptr);
  EXPECT_EQ(x.Find("app")->AsString(), "web");
  EXPECT_EQ(x.Find("other"), nullptr);
}

TEST(Extracted, EraseHidesAnInitialLabel) {
  Extracted x;
  LabelSet l{{"app", "web"}};
  x.Reset(l.SharedBase());
  x.Erase("app");
  EXPECT_EQ(x.Find("app"), nullptr);
  x.SetString("app", "again");
  EXPECT_EQ(x.Find("app")->AsString(), "again");
}

TEST(Extracted, ResetForgetsPreviousKeys) {
  Extracted x;
  x.SetString("a", "1");
  x.Reset(nullptr);
  EXPECT_EQ(x.Find("a"), nullptr);
  x.SetString("b", "2");
  EXPECT_EQ(x.Find("b")->AsString(), "2");
}

TEST(Extracted, ManyKeysBeyondTheIndexStillFound) {
  Extracted x;
  for (int i = 0; i < 100; ++i) x.SetString("key" + std::to_string(i), std::to_string(i));
  for (int i = 0; i < 100; ++i) {
    const Value* v = x.Find("key" + std::to_string(i));
    ASSERT_NE(v, nullptr) << i;
    EXPECT_EQ(v->AsString(), std::to_string(i));
  }
}

TEST(Extracted, KeysWithSameHeadAreDistinct) {
  Extracted x;
  x.SetString("abXcd", "1");
  x.SetString("abYcd", "2");
  EXPECT_EQ(x.Find("abXcd")->AsString(), "1");
  EXPECT_EQ(x.Find("abYcd")->AsString(), "2");
}

TEST(Extracted, KeysDifferingOnlyInBytesTheHeadSkipsAreDistinct) {
  // Lengths 7, 12 and 20 take the 4-byte, 8-byte and memcmp comparisons.
  for (auto [a, b] : {std::pair<std::string, std::string>{"abXdefg", "abYdefg"},
                      {"abcdefghXjkl", "abcdefghYjkl"},
                      {"abcdefghijXlmnopqrst", "abcdefghijYlmnopqrst"}}) {
    Extracted x;
    x.SetString(a, "1");
    EXPECT_EQ(x.Find(b), nullptr) << b;
    x.SetString(b, "2");
    EXPECT_EQ(x.Find(a)->AsString(), "1");
    EXPECT_EQ(x.Find(b)->AsString(), "2");
  }
}

TEST(LabelNames, Validation) {
  EXPECT_TRUE(IsValidLabelName("_a1"));
  EXPECT_FALSE(IsValidLabelName("1a"));
  EXPECT_FALSE(IsValidLabelName("a-b"));
  EXPECT_FALSE(IsValidLabelName(""));
}

TEST(Utf8, EveryLengthAndPosition) {
  // Short strings take word loads first: every byte must still count.
  for (size_t n = 1; n <= 20; ++n) {
    for (size_t i = 0; i < n; ++i) {
      std::string s(n, 'a');
      s[i] = '\xff';
      EXPECT_FALSE(IsValidUtf8(s)) << n << " " << i;
      if (i + 1 < n) {
        s[i] = '\xc3';
        s[i + 1] = '\xa9';
        EXPECT_TRUE(IsValidUtf8(s)) << n << " " << i;
      }
    }
    EXPECT_TRUE(IsValidUtf8(std::string(n, 'a')));
  }
}

TEST(Utf8, Validation) {
  EXPECT_TRUE(IsValidUtf8("héllo ✓"));
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\xc3"));
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));  // surrogate
}

}  // namespace
}  // namespace skald::stages
