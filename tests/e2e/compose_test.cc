// A docker-compose service logging with `driver: skald` gets compose labels in Loki.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/e2e/e2e_support.h"

namespace skald::e2e {
namespace {

class Compose : public SkaldTest {
 protected:
  void TearDown() override {
    if (!file_.empty()) {
      RunCommand({"docker-compose", "-f", file_, "-p", project_, "down", "-v"}, 120s);
    }
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // Writes a compose file with one service `app` running `command` (YAML flow list).
  void WriteComposeFile(const std::string& version, const std::string& command) {
    char dir[] = "/tmp/skald-e2e-compose.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    file_ = dir_ + "/docker-compose.yml";
    std::ofstream f(file_);
    f << "version: \"" << version << "\"\n"
      << "services:\n"
      << "  app:\n"
      << "    image: " << image() << "\n"
      << "    network_mode: none\n"
      << "    command: " << command << "\n"
      << "    logging:\n"
      << "      driver: " << driver_ << "\n"
      << "      options:\n"
      << "        loki-url: \"" << loki().PushUrl() << "\"\n";
  }

  std::string project_ = UniqueName("e2e-compose");
  std::string dir_;
  std::string file_;
};

TEST_F(Compose, ServiceLinesCarryComposeServiceAndProjectLabels) {
  WriteComposeFile("2.4", "[\"loggen\", \"--lines\", \"300\", \"--prefix\", \"" + project_ + "\"]");
  auto up = RunCommand({"docker-compose", "-f", file_, "-p", project_, "up", "--no-color"}, 180s);
  ASSERT_TRUE(up.ok()) << up.Describe();

  const std::string sel = "{compose_project=" + LogqlQuote(project_) + ", compose_service=\"app\"}";
  EXPECT_EQ(loki().WaitForCount(sel, 300, 60s), 300u);
  auto series = loki().Series(sel);
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0]["source"], "stdout");
  EXPECT_FALSE(series[0]["container_name"].empty());

  auto down = RunCommand({"docker-compose", "-f", file_, "-p", project_, "down", "-v"}, 120s);
  EXPECT_TRUE(down.ok()) << down.Describe();
  file_.clear();
}

TEST_F(Compose, FileFormatThreeWorksToo) {
  WriteComposeFile("3", "[\"loggen\", \"--lines\", \"50\"]");
  auto up = RunCommand({"docker-compose", "-f", file_, "-p", project_, "up", "--no-color"}, 180s);
  ASSERT_TRUE(up.ok()) << up.Describe();
  const std::string sel = "{compose_project=" + LogqlQuote(project_) + ", compose_service=\"app\"}";
  EXPECT_EQ(loki().WaitForCount(sel, 50, 60s), 50u);
}

}  // namespace
}  // namespace skald::e2e
