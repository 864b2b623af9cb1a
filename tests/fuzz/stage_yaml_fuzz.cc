// Fuzz target: loki-pipeline-stages YAML through the stage builder (stage_registry's
// BuildStageList via Pipeline::FromYaml), and the pipeline it builds run on lines.
//
// Input: the YAML list of stages. The pipeline runs the sample lines and the input itself (as a
// line), on a fake clock that moves on between them, then flushes.
// Checks: a refusal is a ConfigError with a message (no other exception); a pipeline never
// holds an entry after the final flush, and every entry that comes out carries the origin of
// an entry that went in.
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline_stages/common/config_error.h"
#include "pipeline_stages/pipeline.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/pipeline_stages/test_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view yaml = skald::fuzz::AsView(data, size);
  skald::stages::testkit::FakeClock clock;
  skald::stages::testkit::RecordingObserver observer;
  skald::stages::PipelineOptions options;
  options.observer = &observer;
  options.clock = &clock;
  options.owner = "fuzz";
  options.max_line_size = 4096;
  std::unique_ptr<skald::stages::Pipeline> pipeline;
  try {
    pipeline = skald::stages::Pipeline::FromYaml(yaml, options);
  } catch (const skald::stages::ConfigError& e) {
    FUZZ_CHECK(e.what()[0] != '\0');
    return 0;
  }

  std::vector<skald::stages::Entry> out;
  uint64_t origin = 1;
  auto run = [&](std::string line) {
    skald::stages::Entry e = skald::stages::testkit::MakeEntry(
        std::move(line), {{"job", "fuzz"}, {"source", "stdout"}}, clock.NowNs());
    e.origin = origin++;
    pipeline->Process(std::move(e), out);
    clock.Advance(1'000'000'000);
    pipeline->Flush(clock.NowNs(), false, out);
  };
  for (const std::string& line : skald::fuzz::SampleLines()) run(line);
  run(std::string(yaml));
  pipeline->Flush(clock.NowNs(), true, out);
  FUZZ_CHECK(!pipeline->Holds());
  FUZZ_CHECK(pipeline->HeldBytes() == 0);
  FUZZ_CHECK(!pipeline->OldestHeldOrigin().has_value());
  for (const skald::stages::Entry& e : out) {
    FUZZ_CHECK(e.origin >= 1 && e.origin < origin);
    (void)e.labels.ToString();
  }
  return 0;
}
