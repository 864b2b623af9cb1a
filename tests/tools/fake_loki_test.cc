#include "tests/tools/fake_loki.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <snappy.h>

#include <nlohmann/json.hpp>

#include "push.pb.h"
#include "tests/tools/scripted_http_peer.h"

namespace skald::testkit {
namespace {

std::string Body(const std::string& labels,
                 const std::vector<std::pair<int64_t, std::string>>& entries,
                 bool with_metadata = false) {
  logproto::PushRequest req;
  auto* s = req.add_streams();
  s->set_labels(labels);
  for (const auto& [ts, line] : entries) {
    auto* e = s->add_entries();
    e->mutable_timestamp()->set_seconds(ts / 1'000'000'000);
    e->mutable_timestamp()->set_nanos(static_cast<int32_t>(ts % 1'000'000'000));
    e->set_line(line);
    if (with_metadata) {
      auto* m = e->add_structuredmetadata();
      m->set_name("trace_id");
      m->set_value("abc");
    }
  }
  std::string raw, compressed;
  req.SerializeToString(&raw);
  snappy::Compress(raw.data(), raw.size(), &compressed);
  return compressed;
}

class FakeLokiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(loki_.Start());
    http_ = std::make_unique<httplib::Client>("127.0.0.1", loki_.port());
  }
  int Post(const std::string& body, const std::string& tenant = "") {
    httplib::Headers headers;
    if (!tenant.empty()) headers.emplace("X-Scope-OrgID", tenant);
    auto res = http_->Post("/loki/api/v1/push", headers, body, "application/x-protobuf");
    return res ? res->status : -1;
  }
  FakeLoki loki_;
  std::unique_ptr<httplib::Client> http_;
};

TEST_F(FakeLokiTest, StoresEntriesPerTenantAndStreamInOrder) {
  EXPECT_EQ(Post(Body(R"({a="1"})", {{1, "x"}, {2, "y"}}), "t1"), 204);
  EXPECT_EQ(Post(Body(R"({a="1"})", {{3, "z"}})), 204);
  const auto t1 = loki_.EntriesOf(R"({a="1"})", "t1");
  ASSERT_EQ(t1.size(), 2u);
  EXPECT_EQ(t1[0].line, "x");
  EXPECT_EQ(t1[1].line, "y");
  EXPECT_EQ(loki_.EntriesOf(R"({a="1"})").size(), 1u);
  EXPECT_EQ(loki_.TotalEntries(), 3u);
  EXPECT_THAT(loki_.Tenants(), ::testing::ElementsAre("t1", ""));
}

TEST_F(FakeLokiTest, DropsAndCountsDuplicates) {
  EXPECT_EQ(Post(Body(R"({a="1"})", {{1, "x"}})), 204);
  EXPECT_EQ(Post(Body(R"({a="1"})", {{1, "x"}, {1, "other line"}})), 204);
  EXPECT_EQ(loki_.TotalEntries(), 2u);
  EXPECT_EQ(loki_.Duplicates(), 1u);
}

TEST_F(FakeLokiTest, CountsOutOfOrderEntries) {
  EXPECT_EQ(Post(Body(R"({a="1"})", {{5, "x"}, {3, "y"}})), 204);
  EXPECT_EQ(loki_.OutOfOrder(), 1u);
}

TEST_F(FakeLokiTest, FailsTheNextRequestsThenRecovers) {
  loki_.FailNext(503, 2, "ingester unavailable");
  EXPECT_EQ(Post(Body(R"({a="1"})", {{1, "x"}})), 503);
  EXPECT_EQ(Post(Body(R"({a="1"})", {{1, "x"}})), 503);
  EXPECT_EQ(Post(Body(R"({a="1"})", {{1, "x"}})), 204);
  EXPECT_EQ(loki_.TotalEntries(), 1u);
  EXPECT_EQ(loki_.StatusCounts()[503], 2u);
}

TEST_F(FakeLokiTest, FailsAllUntilCleared) {
  loki_.FailAll(500);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Post(Body(R"({a="1"})", {{1, "x"}})), 500);
  loki_.ClearFailures();
  EXPECT_EQ(Post(Body(R"({a="1"})", {{1, "x"}})), 204);
}

TEST_F(FakeLokiTest, InjectedAnswersCarryHeadersAndHugeOrDrippedBodies) {
  FakeLoki::Answer redirect;
  redirect.status = 307;
  redirect.headers = {{"Location", "http://elsewhere/loki/api/v1/push"}};
  loki_.AnswerNext(redirect, 1);
  auto res = http_->Post("/loki/api/v1/push", Body(R"({a="1"})", {{1, "x"}}), "");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 307);
  EXPECT_EQ(res->get_header_value("Location"), "http://elsewhere/loki/api/v1/push");
  EXPECT_EQ(loki_.TotalEntries(), 0u);  // an injected answer stores nothing

  FakeLoki::Answer huge;
  huge.body = "big:";
  huge.filler_bytes = 3 * 1024 * 1024;
  loki_.AnswerNext(huge, 1);
  res = http_->Post("/loki/api/v1/push", Body(R"({a="1"})", {{1, "x"}}), "");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 500);
  EXPECT_EQ(res->body.size(), 4u + 3 * 1024 * 1024);
  EXPECT_EQ(res->body.substr(0, 5), "big:x");

  FakeLoki::Answer drip;
  drip.status = 503;
  drip.body = "slow";
  drip.drip = std::chrono::milliseconds(50);
  loki_.AnswerNext(drip, 1);
  const auto start = std::chrono::steady_clock::now();
  res = http_->Post("/loki/api/v1/push", Body(R"({a="1"})", {{1, "x"}}), "");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body, "slow");
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(150));
  EXPECT_EQ(Post(Body(R"({a="1"})", {{1, "x"}})), 204);  // the injected answers are used up
}

TEST(ScriptedHttpPeer, AnswersEachRequestWithItsScript) {
  ScriptedHttpPeer peer;
  ASSERT_TRUE(peer.Start({"HTTP/1.1 418 Teapot\r\nContent-Length: 2\r\n\r\nhi", {}, false}));
  httplib::Client cli("127.0.0.1", peer.port());
  for (int i = 0; i < 2; ++i) {
    auto res = cli.Post("/loki/api/v1/push", std::string(100'000, 'b'), "text/plain");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 418);
    EXPECT_EQ(res->body, "hi");
  }
  EXPECT_EQ(peer.Requests(), 2u);
  ScriptedHttpPeer garbage;
  ASSERT_TRUE(garbage.Start({"garbage\r\n\r\n", {}, true}));
  httplib::Client cli2("127.0.0.1", garbage.port());
  EXPECT_FALSE(cli2.Post("/x", "body", "text/plain"));
  ScriptedHttpPeer slow;
  ASSERT_TRUE(slow.Start({"HTTP/1.1 204 No Content\r\n\r\n", std::chrono::milliseconds(10), true}));
  httplib::Client cli3("127.0.0.1", slow.port());
  const auto start = std::chrono::steady_clock::now();
  auto res = cli3.Post("/x", "body", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 204);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
}

TEST_F(FakeLokiTest, AnswersTooLargeAboveMaxBodyBytes) {
  loki_.SetMaxBodyBytes(10);
  EXPECT_EQ(Post(Body(R"({a="1"})", {{1, std::string(100, 'x')}})), 413);
  EXPECT_EQ(loki_.TotalEntries(), 0u);
}

TEST_F(FakeLokiTest, RefusesStructuredMetadataLikeLoki) {
  loki_.SetRejectStructuredMetadata(true);
  auto res = http_->Post("/loki/api/v1/push", Body(R"({a="1"})", {{1, "x"}}, true),
                         "application/x-protobuf");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_THAT(res->body, ::testing::HasSubstr("allow_structured_metadata"));
}

TEST_F(FakeLokiTest, LongLinesAreRefusedOthersStored) {
  loki_.SetMaxLineBytes(5);
  auto res = http_->Post("/loki/api/v1/push", Body(R"({a="1"})", {{1, "short"}, {2, "too long"}}),
                         "application/x-protobuf");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_THAT(res->body,
              ::testing::HasSubstr("max entry size '5' bytes exceeded"));  // Loki 3.7's words
  EXPECT_EQ(loki_.TotalEntries(), 1u);
}

TEST_F(FakeLokiTest, RejectsCorruptBodies) {
  EXPECT_EQ(Post("not snappy"), 400);
  EXPECT_EQ(loki_.StatusCounts()[400], 1u);
}

TEST_F(FakeLokiTest, RecordsBasicAuth) {
  http_->set_basic_auth("user", "p:w");
  EXPECT_EQ(Post(Body(R"({a="1"})", {{1, "x"}})), 204);
  EXPECT_THAT(loki_.Authorizations(), ::testing::ElementsAre("user:p:w"));
}

TEST_F(FakeLokiTest, StatsAndRuntimeControl) {
  EXPECT_EQ(Post(Body(R"({a="1"})", {{1, "x"}})), 204);
  auto res = http_->Post("/control/fail?status=429&count=1");
  ASSERT_TRUE(res);
  EXPECT_EQ(Post(Body(R"({a="1"})", {{2, "y"}})), 429);
  auto stats = http_->Get("/stats");
  ASSERT_TRUE(stats);
  const auto j = nlohmann::json::parse(stats->body);
  EXPECT_EQ(j["requests"], 2);
  EXPECT_EQ(j["entries"], 1);
  EXPECT_EQ(j["status_counts"]["429"], 1);
  EXPECT_EQ(j["streams"][0]["labels"], R"({a="1"})");
  ASSERT_TRUE(http_->Post("/control/reset"));
  EXPECT_EQ(loki_.Requests(), 0u);
}

TEST_F(FakeLokiTest, WaitForEntriesTimesOut) {
  EXPECT_FALSE(loki_.WaitForEntries(1, std::chrono::milliseconds(10)));
  EXPECT_EQ(Post(Body(R"({a="1"})", {{1, "x"}})), 204);
  EXPECT_TRUE(loki_.WaitForEntries(1, std::chrono::milliseconds(10)));
}

TEST(FakeLokiLifecycle, StopRightAfterStartReturns) {
  FakeLoki loki;
  ASSERT_TRUE(loki.Start());
  loki.Stop();
}

}  // namespace
}  // namespace skald::testkit
