#include "plugin/loki/push_outcome.h"

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
  for (int status : {429, 408, 500, 503, 301, 401, 403, 404, 405, 407, 410, 411, 415}) {
    EXPECT_TRUE(IsRetriedAnswer(status, "")) << status;
  }
  EXPECT_FALSE(IsRetriedAnswer(413, ""));
  EXPECT_TRUE(IsRetriedAnswer(400, "400 No required SSL certificate was sent"));
}

// Loki's own refusals (its validation texts, v3.7) are verdicts on the entries: dropped and
// counted. A 400 or 422 from whatever else answers at loki-url (a proxy's page, an empty body,
// a text naming no stream) says the route is wrong: retried, the journal keeps the lines.
TEST(PushOutcome, OnlyLokisOwnVerdictsDropA400Or422) {
  for (const char* loki : {
           "error at least one valid stream is required for ingestion",
           "error at least one label pair is required per stream",
           "error parsing labels '{a=' with error: 1:4: parse error: unexpected end of input",
           "max entry size '256000' bytes exceeded for stream '{a=\"b\"}' while adding an entry "
           "with length '300000' bytes",
           "entry for stream '{a=\"b\"}' has timestamp too old: 2020-01-01T00:00:00Z, oldest "
           "acceptable timestamp is: 2024-01-01T00:00:00Z",
           "entry for stream '{a=\"b\"}' has timestamp too new: 2030-01-01T00:00:00Z",
           "entry for stream '{a=\"b\"}' has 16 label names; limit 15",
           "stream '{a=\"b\"}' has label name too long: 'aaaa'",
           "stream '{a=\"b\"}' has duplicate label name: 'a'",
           "stream '{a=\"b\"}' includes structured metadata, but this feature is disallowed",
           "ingestion blocked for user 'fake' until '2030-01-01' with status code '400'",
           "snappy: corrupt input",
       }) {
    for (int status : {400, 422}) {
      EXPECT_TRUE(IsLokiVerdict(loki)) << loki;
      EXPECT_FALSE(IsRetriedAnswer(status, loki)) << status << " " << loki;
      EXPECT_FALSE(IsRouteError(status, loki)) << loki;
    }
  }
  for (const char* route : {
           "", "  \n",
           "<html>\r\n<head><title>400 Bad Request</title></head>\r\n<body>\r\n<center><h1>400 "
           "Bad Request</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>",
           "<!DOCTYPE html><p>a stream of entries</p>",  // a page, whatever its words
           "Bad Request", "Invalid request: malformed header", "Unprocessable Entity",
           "upstream sent an invalid header",           // a proxy's words
           "unsupported protocol version in upstream",  // "proto" and "stream" inside others
       }) {
    for (int status : {400, 422}) {
      EXPECT_FALSE(IsLokiVerdict(route)) << route;
      EXPECT_TRUE(IsRouteError(status, route)) << status << " " << route;
      EXPECT_TRUE(IsRetriedAnswer(status, route)) << status << " " << route;
      EXPECT_EQ(DropReason(PushOutcome::kRetriesExhausted, status, route), "wrong_url");
    }
  }
  // Loki without a tenant where it needs one: the configuration, not the lines.
  EXPECT_TRUE(IsMissingTenant(401, "no org id\n"));
  EXPECT_TRUE(IsRetriedAnswer(400, "no org id"));
  EXPECT_EQ(DropReason(PushOutcome::kRetriesExhausted, 401, "no org id"), "unauthorized");
  EXPECT_EQ(DropReason(PushOutcome::kRetriesExhausted, 407, ""), "unauthorized");
  EXPECT_EQ(DropReason(PushOutcome::kRetriesExhausted, 405, ""), "wrong_url");
}

// Loki stores the valid entries of a request it answers 400 and names each refusal (one error
// per entry, or per stream for its labels), joined as "N errors: a; b".
TEST(PushOutcome, RefusedEntriesAreCountedFromLokisErrors) {
  const std::string too_old =
      "entry for stream '{job=\"a\"}' has timestamp too old: 2020-01-01T00:00:00Z, oldest "
      "acceptable timestamp is: 2024-01-01T00:00:00Z";
  const std::string too_long =
      "max entry size '100' bytes exceeded for stream '{job=\"a\"}' while adding an entry "
      "with length '300' bytes";
  EXPECT_EQ(RefusedEntries(too_old, 10), 1u);
  EXPECT_EQ(RefusedEntries("3 errors: " + too_old + "; " + too_long + "; " + too_long, 10), 3u);
  EXPECT_EQ(RefusedEntries("12 errors: " + too_old, 10), 10u);  // never more than sent
  // A stream's labels refused: every entry of that stream, which the text does not count.
  EXPECT_EQ(
      RefusedEntries("2 errors: stream '{a=\"b\"}' has label value too long: 'x'; " + too_old, 10),
      10u);
  EXPECT_EQ(RefusedEntries("error at least one label pair is required per stream", 10), 10u);
  EXPECT_EQ(RefusedEntries("something else", 10), 10u);
  EXPECT_EQ(RefusedEntries("x errors: " + too_old, 10), 10u);
}

// Loki 3's distributor groups equal errors (its GroupedErrors): entries refused with the same
// message are counted before it, and a text with one error of each kind lists each as "1
// errors like". A 40-day-old line written 10 times in one second is one message, 10 times.
TEST(PushOutcome, RefusedEntriesAreCountedFromLokisGroupedErrors) {
  const std::string too_old =
      "entry for stream '{job=\"a\"}' has timestamp too old: 2026-10-26T07:32:32Z, oldest "
      "acceptable timestamp is: 2026-11-05T07:32:32Z";
  const std::string too_long =
      "max entry size '100' bytes exceeded for stream '{job=\"a\"}' while adding an entry "
      "with length '300' bytes";
  EXPECT_EQ(RefusedEntries("10 errors like: " + too_old, 30), 10u);
  EXPECT_EQ(RefusedEntries("2 errors like: " + too_old + "; 1 errors like: " + too_long, 30), 3u);
  EXPECT_EQ(RefusedEntries("1 errors like: " + too_old + "; 1 errors like: " + too_old, 30), 2u);
  EXPECT_EQ(RefusedEntries("40 errors like: " + too_old, 30), 30u);  // never more than sent
  // A stream's labels among them: the whole batch.
  EXPECT_EQ(RefusedEntries("2 errors like: stream '{a=\"b\"}' has label value too long: 'x'; "
                           "1 errors like: " +
                               too_old,
                           30),
            30u);
  EXPECT_EQ(RefusedEntries("x errors like: " + too_old, 30), 30u);  // not Loki's text
}

// An ingester refuses entries of a stream behind its others (entry too far behind) and counts
// them per stream; the rest of the stream is stored.
TEST(PushOutcome, RefusedEntriesAreCountedFromAnIngestersTotal) {
  const std::string one =
      "entry with timestamp 2026-12-05 05:32:32 +0000 UTC ignored, reason: 'entry too far "
      "behind, entry timestamp is: 2026-12-05T05:32:32Z, oldest acceptable timestamp is: "
      "2026-12-05T06:32:32Z',\nuser 'fake', total ignored: 1 out of 2 for stream: {job=\"a\"}";
  EXPECT_EQ(RefusedEntries(one, 2), 1u);
  EXPECT_EQ(RefusedEntries("user 'fake', total ignored: 7 out of 9 for stream: {job=\"a\"} "
                           "(entry too far behind)",
                           20),
            7u);
  EXPECT_EQ(RefusedEntries("entry too far behind; total ignored: many", 20), 20u);
}

TEST(PushOutcome, AnswersAreLoggedShortAndWithoutControlBytes) {
  EXPECT_EQ(AnswerForLog("bad\r\nX-Forged: 1\n"), "bad\\x0d\\x0aX-Forged: 1");
  const std::string long_answer(5000, 'a');
  EXPECT_EQ(AnswerForLog(long_answer), std::string(1024, 'a') + "...");
}

}  // namespace
}  // namespace skald
