#include "plugin/api/plugin_api_server.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "plugin/driver/driver.h"
#include "plugin/metrics/metrics.h"

namespace skald {
namespace {

// Over HTTP: the server answers what the parsers refuse, and stays up.
class PluginApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("skald-api-server-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    driver_ = std::make_unique<Driver>(DriverConfig{}, metrics_);
    api_ = std::make_unique<PluginApiServer>(*driver_);
    socket_ = (dir_ / "api.sock").string();
    ASSERT_TRUE(api_->Bind(socket_));
    api_->Start();
  }
  void TearDown() override {
    api_.reset();
    driver_.reset();
    std::filesystem::remove_all(dir_);
  }

  httplib::Result Post(const std::string& method, const std::string& body) {
    httplib::Client cli(socket_);
    cli.set_address_family(AF_UNIX);
    cli.set_read_timeout(10);
    return cli.Post(("/LogDriver." + method).c_str(), body + "\n", "");
  }

  std::filesystem::path dir_;
  MetricsRegistry metrics_;
  std::unique_ptr<Driver> driver_;
  std::unique_ptr<PluginApiServer> api_;
  std::string socket_;
};

// Before, the type_error left the handler and httplib answered 500 with no body.
TEST_F(PluginApiServerTest, StopLoggingWithAFileThatIsNotAStringIsA400NamingIt) {
  auto res = Post("StopLogging", R"({"File":1})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(nlohmann::json::parse(res->body)["Err"],
            "skald: StopLogging: field File is number, expected a string");
  res = Post("StopLogging", R"({"File":"/nowhere"})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST_F(PluginApiServerTest, StartLoggingAnswersEachRefusalAsBefore) {
  auto res = Post("StartLogging", "not json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(nlohmann::json::parse(res->body)["Err"], "skald: request body is not a JSON object");
  res = Post("StartLogging", R"({"File":""})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(nlohmann::json::parse(res->body)["Err"], "skald: StartLogging without a File");
  res = Post("StartLogging", R"({"File":{}})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(nlohmann::json::parse(res->body)["Err"],
            "skald: StartLogging: field File is object, expected a string");
}

}  // namespace
}  // namespace skald
