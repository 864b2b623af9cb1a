// Fuzz target: a container's --log-opt map (and the plugin-wide defaults) through
// ParseLogOptions, and what StartLogging builds from the options it accepts.
//
// Input: lines `name=value` (the first '=' splits; a repeated name keeps its last value);
// lines `env:name=value` are plugin-wide defaults (`docker plugin set`). Values are one line:
// YAML options take flow style (`[{json: {expressions: {level: ""}}}]`).
// Checks: a refusal is an OptionError whose message starts "skald: " and lists at least one
// problem; accepted options give a valid Loki client configuration, and the container's labels,
// relabel rules and stages run the sample lines (container_run.h) without failing.
#include <spdlog/spdlog.h>

#include <cstdint>
#include <map>
#include <string>

#include "tests/fuzz/container_run.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

skald::ContainerInfo SampleInfo() {
  skald::ContainerInfo info;
  info.container_id = std::string(64, 'a');
  info.container_name = "/web-1";
  info.container_entrypoint = "/bin/server";
  info.container_args = {"--port", "8080"};
  info.container_image_id = "sha256:" + std::string(64, 'b');
  info.container_image_name = "example/web:1.2";
  info.container_created = "2024-05-01T10:00:00.000000000Z";
  info.container_env = {"APP_ENV=prod", "REGION=eu-west-1", "EMPTY=", "NOVALUE"};
  info.container_labels = {{"com.docker.compose.project", "shop"},
                           {"com.docker.compose.service", "web"},
                           {"team", "payments"},
                           {"version", "1.2"}};
  info.daemon_name = "docker";
  return info;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::map<std::string, std::string> config, env_defaults;
  for (std::string_view line : skald::fuzz::SplitLines(skald::fuzz::AsView(data, size))) {
    auto* target = &config;
    if (line.starts_with("env:")) {
      line.remove_prefix(4);
      target = &env_defaults;
    }
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    (*target)[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }

  skald::ContainerInfo info = SampleInfo();
  info.config = config;
  skald::LogOptions options;
  try {
    options = skald::ParseLogOptions(config, env_defaults);
  } catch (const skald::OptionError& e) {
    FUZZ_CHECK(std::string_view(e.what()).starts_with("skald: "));
    FUZZ_CHECK(!e.problems().empty());
    return 0;
  }
  try {
    skald::fuzz::RunContainer(options, info);
  } catch (const skald::OptionError& e) {
    FUZZ_CHECK(std::string_view(e.what()).starts_with("skald: "));
  }
  return 0;
}
