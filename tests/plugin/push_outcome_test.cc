#include "plugin/push_outcome.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace skald {
namespace {

TEST(PushOutcome, FateOfABatch) {
  EXPECT_EQ(FateOf(PushOutcome::kDelivered, 3, false), BatchFate::kSent);
  EXPECT_EQ(FateOf(PushOutcome::kTooLarge, 2, false), BatchFate::kSplit);
  EXPECT_EQ(FateOf(PushOutcome::kTooLarge, 1, true), BatchFate::kDropped);
  EXPECT_EQ(FateOf(PushOutcome::kRejected, 5, true), BatchFate::kDropped);
  EXPECT_EQ(FateOf(PushOutcome::kRetriesExhausted, 5, false), BatchFate::kDropped);
  EXPECT_EQ(FateOf(PushOutcome::kShutdown, 5, true), BatchFate::kKept);
  EXPECT_EQ(FateOf(PushOutcome::kShutdown, 5, false), BatchFate::kDropped);
}

TEST(PushOutcome, DropReasonFollowsTheOutcomeAndTheLastAnswer) {
  EXPECT_EQ(DropReason(PushOutcome::kTooLarge, 413, ""), "too_large");
  EXPECT_EQ(DropReason(PushOutcome::kRejected, 400, "entry too old"), "too_old");
  EXPECT_EQ(DropReason(PushOutcome::kRejected, 400, "something else"), "bad_request");
  EXPECT_EQ(DropReason(PushOutcome::kRejected, 422, "entry too old"), "bad_request");
  EXPECT_EQ(DropReason(PushOutcome::kRetriesExhausted, 401, ""), "unauthorized");
  EXPECT_EQ(DropReason(PushOutcome::kRetriesExhausted, 403, ""), "unauthorized");
  EXPECT_EQ(DropReason(PushOutcome::kRetriesExhausted, 400, "No required SSL certificate was sent"),
            "unauthorized");
  EXPECT_EQ(DropReason(PushOutcome::kRetriesExhausted, 404, ""), "wrong_url");
  EXPECT_EQ(DropReason(PushOutcome::kRetriesExhausted, 301, ""), "wrong_url");
  EXPECT_EQ(DropReason(PushOutcome::kRetriesExhausted, 503, ""), "retries_exhausted");
  EXPECT_EQ(DropReason(PushOutcome::kRetriesExhausted, 0, "transport error"), "retries_exhausted");
  EXPECT_EQ(DropReason(PushOutcome::kShutdown, 0, ""), "shutdown");
  // Every reason the table gives is one the client counts under.
  const auto& all = AllDropReasons();
  for (const std::string reason :
       {"too_large", "too_old", "bad_request", "unauthorized", "wrong_url", "retries_exhausted",
        "shutdown", "line_too_long", "too_far_in_future", "stream_limit",
        "structured_metadata_not_allowed"}) {
    EXPECT_NE(std::find(all.begin(), all.end(), reason), all.end()) << reason;
  }
}

TEST(PushOutcome, LokisBadRequestTexts) {
  EXPECT_EQ(ClassifyBadRequest("stream '{a=\"b\"}' includes structured metadata, but this feature "
                               "is disallowed"),
            "structured_metadata_not_allowed");
  EXPECT_EQ(ClassifyBadRequest("Max entry size '256' bytes exceeded"), "line_too_long");
  EXPECT_EQ(ClassifyBadRequest("entry with timestamp ... ignored, reason: 'entry too old'"),
            "too_old");
  EXPECT_EQ(ClassifyBadRequest("entry has timestamp too new"), "too_far_in_future");
  EXPECT_EQ(ClassifyBadRequest("Maximum active stream limit exceeded"), "stream_limit");
  EXPECT_EQ(ClassifyBadRequest("structured metadata"), "bad_request");
  EXPECT_EQ(ClassifyBadRequest(""), "bad_request");
}

TEST(PushOutcome, RetriedAnswers) {
  for (int status : {429, 408, 500, 503, 301, 401, 403, 404}) {
    EXPECT_TRUE(IsRetriedAnswer(status, "")) << status;
  }
  for (int status : {400, 422, 413}) EXPECT_FALSE(IsRetriedAnswer(status, "")) << status;
  EXPECT_TRUE(IsRetriedAnswer(400, "400 No required SSL certificate was sent"));
}

TEST(PushOutcome, AnswersAreLoggedShortAndWithoutControlBytes) {
  EXPECT_EQ(AnswerForLog("bad\r\nX-Forged: 1\n"), "bad\\x0d\\x0aX-Forged: 1");
  const std::string long_answer(5000, 'a');
  EXPECT_EQ(AnswerForLog(long_answer), std::string(1024, 'a') + "...");
}

}  // namespace
}  // namespace skald
