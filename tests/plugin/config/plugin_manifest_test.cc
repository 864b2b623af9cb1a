// config.json (the managed-plugin manifest) must offer every option as a settable plugin-wide
// default, under the environment name the plugin reads.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "plugin/config/log_options.h"

namespace skald {
namespace {

nlohmann::json Manifest() {
  std::ifstream in(std::string(SKALD_SOURCE_DIR) + "/config.json");
  return nlohmann::json::parse(in);
}

TEST(PluginManifest, EveryOptionIsASettablePluginWideDefault) {
  nlohmann::json manifest = Manifest();
  std::map<std::string, nlohmann::json> env;
  for (const auto& e : manifest["env"]) env[e["name"].get<std::string>()] = e;
  for (const OptionSpec& spec : AllOptionSpecs()) {
    std::string name = OptionEnvName(spec.name);
    ASSERT_TRUE(env.count(name)) << name << " missing from config.json";
    EXPECT_EQ(env[name]["value"], "") << name << ": an unset default must be empty";
    EXPECT_EQ(env[name]["settable"], nlohmann::json::array({"value"})) << name;
  }
}

TEST(PluginManifest, DeclaresALogDriverOnTheSocketMainListensOn) {
  nlohmann::json manifest = Manifest();
  EXPECT_EQ(manifest["interface"]["types"], nlohmann::json::array({"docker.logdriver/1.0"}));
  EXPECT_EQ(manifest["interface"]["socket"], "skald.sock");
  EXPECT_EQ(manifest["network"]["type"], "host");
  EXPECT_EQ(manifest["entrypoint"], nlohmann::json::array({"/usr/bin/skald"}));
}

}  // namespace
}  // namespace skald
