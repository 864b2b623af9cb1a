#include "plugin/api/plugin_api_requests.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace skald {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The message of what `parse` throws, or "" when it throws nothing.
template <typename Parse>
std::string Refusal(Parse parse) {
  try {
    parse();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(PluginApiRequests, StartLoggingTakesFileAndInfoWithATrailingNewline) {
  StartLoggingRequest r = ParseStartLoggingRequest(
      R"({"File":"/run/docker/logging/abc","Info":{"ContainerID":"c1","ContainerName":"/web",)"
      R"("Config":{"loki-url":"http://l"}}})"
      "\n");
  EXPECT_EQ(r.file, "/run/docker/logging/abc");
  EXPECT_EQ(r.info.container_id, "c1");
  EXPECT_EQ(r.info.Name(), "web");
  EXPECT_EQ(r.info.config.at("loki-url"), "http://l");
}

TEST(PluginApiRequests, StartLoggingWithoutAFileIsRefused) {
  EXPECT_EQ(Refusal([] { ParseStartLoggingRequest(R"({"Info":{}})"); }),
            "skald: StartLogging without a File");
  EXPECT_EQ(Refusal([] { ParseStartLoggingRequest(R"({"File":null})"); }),
            "skald: StartLogging without a File");
}

// A File that is not a string used to escape as nlohmann's type_error ("[json.exception.
// type_error.302] type must be string, but is number"; for StopLogging, a 500 with no body).
TEST(PluginApiRequests, AFileThatIsNotAStringIsNamedInTheRefusal) {
  EXPECT_EQ(Refusal([] { ParseStartLoggingRequest(R"({"File":7})"); }),
            "skald: StartLogging: field File is number, expected a string");
  EXPECT_EQ(Refusal([] { ParseStopLoggingRequest(R"({"File":["a"]})"); }),
            "skald: StopLogging: field File is array, expected a string");
}

TEST(PluginApiRequests, InfoOfTheWrongTypeNamesTheCallAndTheField) {
  EXPECT_EQ(Refusal([] { ParseStartLoggingRequest(R"({"File":"/f","Info":null})"); }),
            "skald: StartLogging: Info is not an object");
  EXPECT_EQ(Refusal([] { ParseReadLogsRequest(R"({"Info":{"ContainerArgs":"x"}})"); }),
            "skald: ReadLogs: Info.ContainerArgs is not a list");
}

TEST(PluginApiRequests, ABodyThatIsNotAJsonObjectIsABadRequest) {
  for (const char* body : {"", "[1]", "{", "\"File\"", "null"}) {
    EXPECT_THROW(ParseStartLoggingRequest(body), BadRequest) << body;
    EXPECT_THROW(ParseStopLoggingRequest(body), BadRequest) << body;
    EXPECT_THROW(ParseReadLogsRequest(body), BadRequest) << body;
  }
}

TEST(PluginApiRequests, StopLoggingWithoutAFileNamesNoStream) {
  EXPECT_EQ(ParseStopLoggingRequest("{}").file, "");
  EXPECT_EQ(ParseStopLoggingRequest(R"({"File":"/f"})").file, "/f");
}

TEST(PluginApiRequests, ReadLogsTakesInfoAndConfig) {
  ReadLogsRequest r =
      ParseReadLogsRequest(R"({"Info":{"ContainerID":"c1"},"Config":{"Tail":5,"Follow":true}})");
  EXPECT_EQ(r.info.container_id, "c1");
  EXPECT_EQ(r.config.tail, 5);
  EXPECT_TRUE(r.config.follow);
  EXPECT_THAT(Refusal([] { ParseReadLogsRequest(R"({"Config":{"Tail":"many"}})"); }),
              AllOf(StartsWith("skald: "), HasSubstr("Tail")));
}

}  // namespace
}  // namespace skald
