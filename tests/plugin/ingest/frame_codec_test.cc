#include "plugin/ingest/frame_codec.h"

#include <gtest/gtest.h>

#include "entry.pb.h"

namespace skald {
namespace {

std::string Frame(const LogEntry& e) {
  std::string body = e.SerializeAsString();
  std::string out(4, '\0');
  uint32_t n = static_cast<uint32_t>(body.size());
  out[0] = static_cast<char>(n >> 24);
  out[1] = static_cast<char>(n >> 16);
  out[2] = static_cast<char>(n >> 8);
  out[3] = static_cast<char>(n);
  return out + body;
}

TEST(FrameCodec, DecodesWhatProtobufEncodes) {
  LogEntry e;
  e.set_source("stderr");
  e.set_time_nano(1700000000123456789);
  e.set_line("hello world");
  e.set_partial(true);
  e.mutable_partial_log_metadata()->set_id("abc");
  e.mutable_partial_log_metadata()->set_ordinal(3);
  e.mutable_partial_log_metadata()->set_last(true);
  std::string frame = Frame(e);

  std::string_view body;
  std::size_t used = 0;
  ASSERT_EQ(NextFrame(frame, &body, &used), FrameStatus::kOk);
  EXPECT_EQ(used, frame.size());
  auto v = DecodeLogEntry(body);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->source, "stderr");
  EXPECT_EQ(v->time_nano, 1700000000123456789);
  EXPECT_EQ(v->line, "hello world");
  EXPECT_TRUE(v->partial);
  EXPECT_TRUE(v->has_partial_metadata);
  EXPECT_TRUE(v->partial_last);
  EXPECT_EQ(v->partial_id, "abc");
  EXPECT_EQ(v->partial_ordinal, 3);
}

TEST(FrameCodec, SkipsUnknownFieldsAndAttrs) {
  LogEntry e;
  e.set_source("stdout");
  e.set_line("x");
  auto* a = e.add_attrs();
  a->set_key("k");
  a->set_value("v");
  std::string body = e.SerializeAsString();
  body += std::string("\x78\x05", 2);  // field 15, varint 5: unknown to us
  auto v = DecodeLogEntry(body);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->line, "x");
  EXPECT_EQ(v->source, "stdout");
}

TEST(FrameCodec, EmptyLineHasNoLineField) {
  LogEntry e;
  e.set_source("stdout");
  e.set_time_nano(5);
  auto v = DecodeLogEntry(e.SerializeAsString());
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->line.empty());
}

TEST(FrameCodec, TruncatedInputNeedsMore) {
  LogEntry e;
  e.set_line(std::string(100, 'a'));
  std::string frame = Frame(e);
  std::string_view body;
  std::size_t used;
  for (std::size_t cut : {std::size_t{0}, std::size_t{3}, std::size_t{4}, frame.size() - 1}) {
    EXPECT_EQ(NextFrame(std::string_view(frame).substr(0, cut), &body, &used),
              FrameStatus::kNeedMore)
        << cut;
  }
}

TEST(FrameCodec, OversizedLengthIsRejected) {
  std::string frame("\x00\x20\x00\x00", 4);  // 2 MiB
  std::string_view body;
  std::size_t used;
  EXPECT_EQ(NextFrame(frame, &body, &used), FrameStatus::kTooLarge);
}

TEST(FrameCodec, GarbageBodyDoesNotDecode) {
  EXPECT_FALSE(DecodeLogEntry(std::string("\x1a\xff\xff\xff\x0f", 5)));  // line longer than body
  EXPECT_FALSE(DecodeLogEntry(std::string("\x0b", 1)));                  // group wire type
}

TEST(FrameCodec, EncodeFrameRoundTripsThroughProtobuf) {
  LogEntryView in;
  in.source = "stdout";
  in.time_nano = 42;
  in.line = "line";
  in.partial = true;
  in.has_partial_metadata = true;
  in.partial_id = "id1";
  in.partial_ordinal = 2;
  std::string frame;
  EncodeFrame(in, frame);
  std::string_view body;
  std::size_t used;
  ASSERT_EQ(NextFrame(frame, &body, &used), FrameStatus::kOk);
  LogEntry out;
  ASSERT_TRUE(out.ParseFromArray(body.data(), static_cast<int>(body.size())));
  EXPECT_EQ(out.source(), "stdout");
  EXPECT_EQ(out.time_nano(), 42);
  EXPECT_EQ(out.line(), "line");
  EXPECT_TRUE(out.partial());
  EXPECT_EQ(out.partial_log_metadata().id(), "id1");
  EXPECT_EQ(out.partial_log_metadata().ordinal(), 2);
  EXPECT_FALSE(out.partial_log_metadata().last());
}

}  // namespace
}  // namespace skald
