#include "plugin/loki/push_encoder.h"

#include <gtest/gtest.h>
#include <snappy.h>

#include "plugin/loki/loki_entry.h"
#include "push.pb.h"

namespace skald {
namespace {

LokiEntry MakeEntry(int64_t ts, std::string line,
                    std::vector<std::pair<std::string, std::string>> metadata = {}) {
  LokiEntry e;
  e.timestamp_ns = ts;
  e.line = std::move(line);
  e.structured_metadata = std::move(metadata);
  return e;
}

logproto::PushRequest Decode(std::string_view body) {
  std::string raw;
  EXPECT_TRUE(snappy::Uncompress(body.data(), body.size(), &raw));
  logproto::PushRequest req;
  EXPECT_TRUE(req.ParseFromString(raw));
  return req;
}

TEST(PushEncoder, RoundTripsThroughGeneratedProtobuf) {
  LokiEntry a = MakeEntry(1'700'000'000'123'456'789, "first line");
  LokiEntry b = MakeEntry(1'700'000'001'000'000'000, "second", {{"trace_id", "abc"}, {"k", "v"}});
  LokiEntry c = MakeEntry(5, "other stream");
  std::vector<const LokiEntry*> s1 = {&a, &b};
  std::vector<const LokiEntry*> s2 = {&c};
  std::vector<PushStream> streams = {{R"({job="a"})", s1}, {R"({job="b", x="y"})", s2}};

  PushEncoder enc;
  logproto::PushRequest req = Decode(enc.Encode(streams));
  ASSERT_EQ(req.streams_size(), 2);
  EXPECT_EQ(req.streams(0).labels(), R"({job="a"})");
  ASSERT_EQ(req.streams(0).entries_size(), 2);
  const auto& e0 = req.streams(0).entries(0);
  EXPECT_EQ(e0.timestamp().seconds(), 1'700'000'000);
  EXPECT_EQ(e0.timestamp().nanos(), 123'456'789);
  EXPECT_EQ(e0.line(), "first line");
  EXPECT_EQ(e0.structuredmetadata_size(), 0);
  const auto& e1 = req.streams(0).entries(1);
  EXPECT_EQ(e1.timestamp().seconds(), 1'700'000'001);
  EXPECT_EQ(e1.timestamp().nanos(), 0);
  ASSERT_EQ(e1.structuredmetadata_size(), 2);
  EXPECT_EQ(e1.structuredmetadata(0).name(), "trace_id");
  EXPECT_EQ(e1.structuredmetadata(0).value(), "abc");
  EXPECT_EQ(e1.structuredmetadata(1).name(), "k");
  EXPECT_EQ(e1.structuredmetadata(1).value(), "v");
  EXPECT_EQ(req.streams(1).labels(), R"({job="b", x="y"})");
  ASSERT_EQ(req.streams(1).entries_size(), 1);
  EXPECT_EQ(req.streams(1).entries(0).timestamp().seconds(), 0);
  EXPECT_EQ(req.streams(1).entries(0).timestamp().nanos(), 5);
}

TEST(PushEncoder, BytesEqualTheGeneratedSerializer) {
  LokiEntry a = MakeEntry(1'700'000'000'000'000'001, "x", {{"a", "b"}});
  LokiEntry b = MakeEntry(0, "");  // zero timestamp, empty line
  LokiEntry c = MakeEntry(42'000'000'000, std::string(300, 'z'), {{"", "v"}, {"n", ""}});
  std::vector<const LokiEntry*> s1 = {&a, &b, &c};
  std::vector<PushStream> streams = {{R"({a="1"})", s1}};
  PushEncoder enc;
  enc.Encode(streams);

  logproto::PushRequest expected;
  auto* s = expected.add_streams();
  s->set_labels(R"({a="1"})");
  for (const LokiEntry* e : s1) {
    auto* pe = s->add_entries();
    pe->mutable_timestamp()->set_seconds(e->timestamp_ns / 1'000'000'000);
    pe->mutable_timestamp()->set_nanos(static_cast<int32_t>(e->timestamp_ns % 1'000'000'000));
    pe->set_line(e->line);
    for (const auto& [n, v] : e->structured_metadata) {
      auto* m = pe->add_structuredmetadata();
      m->set_name(n);
      m->set_value(v);
    }
  }
  std::string want;
  ASSERT_TRUE(expected.SerializeToString(&want));
  EXPECT_EQ(std::string(enc.raw()), want);
  EXPECT_EQ(enc.raw_size(), want.size());
}

TEST(PushEncoder, TimestampsBefore1970HaveNonNegativeNanos) {
  LokiEntry a = MakeEntry(-1, "before epoch");  // 1969-12-31T23:59:59.999999999Z
  std::vector<const LokiEntry*> s1 = {&a};
  std::vector<PushStream> streams = {{R"({a="1"})", s1}};
  PushEncoder enc;
  logproto::PushRequest req = Decode(enc.Encode(streams));
  EXPECT_EQ(req.streams(0).entries(0).timestamp().seconds(), -1);
  EXPECT_EQ(req.streams(0).entries(0).timestamp().nanos(), 999'999'999);
}

TEST(PushEncoder, BodyIsSnappyBlockNotFramed) {
  LokiEntry a = MakeEntry(1, std::string(10'000, 'a'));
  std::vector<const LokiEntry*> s1 = {&a};
  std::vector<PushStream> streams = {{R"({a="1"})", s1}};
  PushEncoder enc;
  const std::string body(enc.Encode(streams));
  EXPECT_TRUE(snappy::IsValidCompressedBuffer(body.data(), body.size()));
  EXPECT_NE(body.substr(0, 4), std::string("\xff\x06\x00\x00", 4));  // framed stream magic
  EXPECT_LT(body.size(), 1'000u);                                    // repetitive line compresses
}

TEST(PushEncoder, ReuseGivesIndependentResults) {
  PushEncoder enc;
  for (int round = 0; round < 5; ++round) {
    std::vector<LokiEntry> entries;
    for (int i = 0; i < 100 - round * 20; ++i) {
      entries.push_back(
          MakeEntry(i, "round " + std::to_string(round) + " line " + std::to_string(i)));
    }
    std::vector<const LokiEntry*> ptrs;
    for (const auto& e : entries) ptrs.push_back(&e);
    std::vector<PushStream> streams = {{R"({r="x"})", ptrs}};
    logproto::PushRequest req = Decode(enc.Encode(streams));
    ASSERT_EQ(req.streams(0).entries_size(), static_cast<int>(entries.size()));
    EXPECT_EQ(req.streams(0).entries(0).line(), "round " + std::to_string(round) + " line 0");
  }
}

TEST(PushEncoder, EmptyRequestEncodesToEmptyMessage) {
  PushEncoder enc;
  logproto::PushRequest req = Decode(enc.Encode({}));
  EXPECT_EQ(req.streams_size(), 0);
}

}  // namespace
}  // namespace skald
