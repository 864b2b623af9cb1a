#include "plugin/config/plugin_settings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace skald {
namespace {

using ::testing::HasSubstr;

// An environment given as a map (unset: absent).
std::function<const char*(const char*)> Env(const std::map<std::string, std::string>& vars) {
  return [&vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(PluginSettings, UnsetMeansTheTablesDefaultsAndTheyAreTheStructs) {
  std::vector<std::string> problems;
  const PluginSettings unset = ReadPluginSettings(nullptr, &problems);
  // The defaults written in the table read back to what the struct starts with.
  std::map<std::string, std::string> defaults;
  for (const SettingSpec& s : AllSettingSpecs()) {
    defaults[std::string(s.name)] = std::string(s.default_value);
  }
  const PluginSettings from_table = ReadPluginSettings(Env(defaults), &problems);
  EXPECT_TRUE(problems.empty()) << problems.front();
  for (const PluginSettings* s : {&unset, &from_table}) {
    EXPECT_EQ(s->metrics_addr, "127.0.0.1:9555");
    EXPECT_EQ(s->log_level, "info");
    EXPECT_EQ(s->shutdown_flush, std::chrono::seconds(5));
    EXPECT_EQ(s->state_dir, "/var/lib/skald");
    EXPECT_EQ(s->journal_max_bytes, 2ull << 30);
    EXPECT_EQ(s->journal_max_age, std::chrono::hours(168));
  }
}

TEST(PluginSettings, GoodValuesAreRead) {
  std::vector<std::string> problems;
  const std::map<std::string, std::string> env = {
      {"METRICS_ADDR", "0.0.0.0:9600"}, {"LOG_LEVEL", "debug"},
      {"SHUTDOWN_FLUSH_SECONDS", "0"},  {"STATE_DIR", "/srv/skald"},
      {"JOURNAL_MAX_BYTES", "512m"},    {"JOURNAL_MAX_AGE", "1h30m"},
  };
  const PluginSettings s = ReadPluginSettings(Env(env), &problems);
  EXPECT_TRUE(problems.empty()) << problems.front();
  EXPECT_EQ(s.metrics_addr, "0.0.0.0:9600");
  EXPECT_EQ(s.log_level, "debug");
  EXPECT_EQ(s.shutdown_flush, std::chrono::seconds(0));
  EXPECT_EQ(s.state_dir, "/srv/skald");
  EXPECT_EQ(s.journal_max_bytes, 512ull << 20);
  EXPECT_EQ(s.journal_max_age, std::chrono::minutes(90));
}

// Empty turns the metrics endpoint and the journals off, as `docker plugin set skald
// METRICS_ADDR=` always did; elsewhere an empty value is the default.
TEST(PluginSettings, EmptyTurnsOffWhereTheTableSaysSo) {
  std::vector<std::string> problems;
  std::map<std::string, std::string> env;
  for (const SettingSpec& s : AllSettingSpecs()) env[std::string(s.name)] = "";
  const PluginSettings s = ReadPluginSettings(Env(env), &problems);
  EXPECT_TRUE(problems.empty()) << problems.front();
  EXPECT_EQ(s.metrics_addr, "");
  EXPECT_EQ(s.state_dir, "");
  EXPECT_EQ(s.log_level, "info");
  EXPECT_EQ(s.shutdown_flush, std::chrono::seconds(5));
}

// Each bad value keeps the default and is reported with its name, the value and what is
// accepted. Before the table, SHUTDOWN_FLUSH_SECONDS=abc read as 0 (atoi) and LOG_LEVEL=inf as
// off (spdlog's from_str): a typo silenced the plugin.
TEST(PluginSettings, ABadValueKeepsTheDefaultAndIsNamed) {
  const std::map<std::string, std::string> bad = {
      {"METRICS_ADDR", "9555"},          {"LOG_LEVEL", "inf"},
      {"SHUTDOWN_FLUSH_SECONDS", "abc"}, {"STATE_DIR", "var/lib/skald"},
      {"JOURNAL_MAX_BYTES", "lots"},     {"JOURNAL_MAX_AGE", "100ms"},
  };
  std::vector<std::string> problems;
  const PluginSettings s = ReadPluginSettings(Env(bad), &problems);
  ASSERT_EQ(problems.size(), bad.size());
  for (const auto& [name, value] : bad) {
    bool named = false;
    for (const std::string& p : problems) {
      if (p.rfind(name + "='" + value + "' is not valid: expected ", 0) == 0) named = true;
    }
    EXPECT_TRUE(named) << name << "=" << value << " not reported as such";
  }
  EXPECT_EQ(s.metrics_addr, PluginSettings{}.metrics_addr);
  EXPECT_EQ(s.log_level, "info");
  EXPECT_EQ(s.shutdown_flush, std::chrono::seconds(5));
  EXPECT_EQ(s.state_dir, "/var/lib/skald");
  EXPECT_EQ(s.journal_max_bytes, 2ull << 30);
  EXPECT_EQ(s.journal_max_age, std::chrono::hours(168));
  for (const char* port : {"h:0", "h:65536", "h:", "h:12a"}) {
    std::vector<std::string> p;
    ReadPluginSettings(Env({{"METRICS_ADDR", port}}), &p);
    EXPECT_EQ(p.size(), 1u) << port;
  }
}

// config.json offers each setting with the table's default and meaning, and the README's
// table is the one `skald options` prints.
TEST(PluginSettings, ConfigJsonAndTheReadmeSayWhatTheTableSays) {
  std::ifstream manifest_file(std::string(SKALD_SOURCE_DIR) + "/config.json");
  const nlohmann::json manifest = nlohmann::json::parse(manifest_file);
  std::map<std::string, nlohmann::json> env;
  for (const auto& e : manifest["env"]) env[e["name"].get<std::string>()] = e;
  for (const SettingSpec& s : AllSettingSpecs()) {
    const std::string name(s.name);
    ASSERT_TRUE(env.count(name)) << name << " missing from config.json";
    EXPECT_EQ(env[name]["value"], std::string(s.default_value)) << name;
    EXPECT_EQ(env[name]["description"], std::string(s.description)) << name;
    EXPECT_EQ(env[name]["settable"], nlohmann::json::array({"value"})) << name;
  }
  std::ifstream readme_file(std::string(SKALD_SOURCE_DIR) + "/README.md");
  std::stringstream readme;
  readme << readme_file.rdbuf();
  EXPECT_THAT(readme.str(), HasSubstr(SettingsMarkdownTable()))
      << "README.md's plugin settings table differs from `skald options`";
}

}  // namespace
}  // namespace skald
