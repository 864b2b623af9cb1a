// Fuzz target: relabel configs (loki-relabel-config) built and applied to a container's labels.
//
// Input: the YAML list of rules.
// Checks: a refusal is a ConfigError with a message; applying the rules to label sets never
// fails, and a stream they keep has no label with an empty value.
#include <cstdint>
#include <string>

#include "pipeline_stages/common/config_error.h"
#include "pipeline_stages/relabel.h"
#include "tests/fuzz/fuzz_support.h"

using skald::stages::LabelSet;
using skald::stages::RelabelConfig;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  RelabelConfig config;
  try {
    config = RelabelConfig::FromYaml(skald::fuzz::AsView(data, size));
  } catch (const skald::stages::ConfigError& e) {
    FUZZ_CHECK(e.what()[0] != '\0');
    return 0;
  }
  const LabelSet sets[] = {
      {{"container_name", "web-1"},
       {"compose_project", "shop"},
       {"compose_service", "web"},
       {"host", "fuzz-host"},
       {"__meta_docker_label_team", "payments"},
       {"source", "stdout"}},
      {},
      {{"a", "1"}, {"b", "1"}, {"c", "\xc3\xa9\xff"}},
  };
  for (const LabelSet& in : sets) {
    LabelSet labels = in;
    if (!config.Apply(labels)) continue;
    labels.ForEach([](std::string_view, std::string_view value) { FUZZ_CHECK(!value.empty()); });
    (void)labels.ToString();
  }
  return 0;
}
