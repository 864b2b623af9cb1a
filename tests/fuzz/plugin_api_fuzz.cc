// Fuzz target: the JSON bodies dockerd sends to the plugin API (plugin_api_requests.h), and
// what the plugin builds from an accepted StartLogging.
//
// Input: line 1 names the call (StartLogging, StopLogging or ReadLogs), the rest is its body.
// Checks: a refusal is std::invalid_argument with a message starting "skald: " (BadRequest for
// a body that is not a JSON object); an accepted StartLogging has a File, its Info survives
// the round trip through info.json (ToJson, then FromJson), and its options are parsed and run
// as StartLogging would (container_run.h). What ReadLogs does with its Config: read_logs_fuzz.
#include <spdlog/spdlog.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "plugin/api/plugin_api_requests.h"
#include "tests/fuzz/container_run.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

void StartLogging(std::string_view body) {
  skald::StartLoggingRequest request = skald::ParseStartLoggingRequest(body);
  FUZZ_CHECK(!request.file.empty());
  const std::string saved = request.info.ToJson().dump();
  const skald::ContainerInfo replayed =
      skald::ContainerInfo::FromJson(nlohmann::json::parse(saved));
  FUZZ_CHECK(replayed.ToJson().dump() == saved);
  (void)request.info.ID();
  (void)request.info.Name();
  (void)request.info.ImageID();
  (void)request.info.Command();
  (void)request.info.EnvValue("APP_ENV");
  skald::LogOptions options;
  try {
    options = skald::ParseLogOptions(request.info.config, {});
    skald::fuzz::RunContainer(options, request.info);
  } catch (const skald::OptionError& e) {
    FUZZ_CHECK(std::string_view(e.what()).starts_with("skald: "));
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [call, body] = skald::fuzz::FirstLine(skald::fuzz::AsView(data, size));
  try {
    if (call == "StartLogging") {
      StartLogging(body);
    } else if (call == "StopLogging") {
      (void)skald::ParseStopLoggingRequest(body);
    } else if (call == "ReadLogs") {
      (void)skald::ParseReadLogsRequest(body);
    }
  } catch (const std::invalid_argument& e) {
    FUZZ_CHECK(std::string_view(e.what()).starts_with("skald: "));
  }
  return 0;
}
