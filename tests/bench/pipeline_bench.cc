// Pipeline throughput on pino-style JSON lines (~230 bytes), in lines per second.
//
//   pipeline_bench                      Google Benchmark (items_per_second = lines/s)
//   pipeline_bench --lines=N --case=C   runs N lines of case C and exits, for
//                                       valgrind --tool=callgrind (instructions per line =
//                                       (Ir at N) - (Ir at 0), divided by N)
// Cases: none, most_used, json_timestamp_metadata, match_regex. Also BM_ReplaceLongLine (a
// replace stage over one 64 KiB line).
//
// The loop recycles the line buffer of each output entry for the next input, as a host that
// reuses its buffers would; the entry's labels are a copy of one shared base set.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "pipeline_stages/pipeline.h"
#include "tests/bench/bench_lines.h"

namespace skald::stages {
namespace {

constexpr const char* kLines[] = {
    R"({"level":30,"time":1700000000000,"pid":7,"hostname":"web-1","context":"HttpService","traceID":"4bf92f3577b34da6a3ce929d0e0e4736","msg":"request completed GET /api/users 200 12ms","reqId":"req-1a2b"})",
    R"({"level":40,"time":1700000000007,"pid":7,"hostname":"web-1","context":"AuthGuard","traceID":"0af7651916cd43dd8448eb211c80319c","msg":"token expired for user 4711, refreshing session","reqId":"req-1a2c"})",
    R"({"level":30,"time":1700000000013,"pid":7,"hostname":"web-1","context":"HttpService","traceID":"b7ad6b7169203331b7ad6b7169203331","msg":"request completed POST /api/orders 201 48ms","reqId":"req-1a2d"})",
    R"({"level":50,"time":1700000000020,"pid":7,"hostname":"web-1","context":"OrdersRepository","traceID":"5b8aa5a2d2c872e8321cf37308d69df2","msg":"query timeout after 5000ms","reqId":"req-1a2e"})",
};

const char* StagesFor(std::string_view name) {
  if (name == "none") return "[]";
  if (name == "most_used") return bench::kSeedPipeline;
  if (name == "json_timestamp_metadata") {
    return R"(
- json:
    expressions:
      level: level
      time: time
      traceID: traceID
      msg: msg
- timestamp:
    source: time
    format: UnixMs
- labels:
    level:
- structured_metadata:
    traceID:
- output:
    source: msg
)";
  }
  if (name == "match_regex") {
    return R"yaml(
- match:
    selector: '{container_name="web"} |~ "request completed (GET|POST)"'
    stages:
      - regex:
          expression: '"msg":"request completed (?P<method>[A-Z]+) (?P<path>\S+) (?P<status>\d{3})'
      - labels:
          method:
          status:
)yaml";
  }
  return nullptr;
}

LabelSet BaseLabels() {
  return LabelSet{{"container_name", "web"},
                  {"host", "docker-host-1"},
                  {"compose_project", "shop"},
                  {"compose_service", "web"}};
}

// Runs `lines` lines through the pipeline; returns a checksum so the work is not optimized away.
size_t RunLines(Pipeline& pipeline, const LabelSet& base, size_t lines, std::vector<Entry>& out,
                std::string& buffer) {
  size_t sum = 0;
  for (size_t i = 0; i < lines; ++i) {
    Entry e;
    e.labels = base;
    e.timestamp_ns = 1'700'000'000'000'000'000 + static_cast<int64_t>(i);
    e.line.swap(buffer);
    e.line.assign(kLines[i & 3]);
    out.clear();
    pipeline.Process(std::move(e), out);
    if (!out.empty()) {
      sum += out[0].line.size();
      buffer.swap(out[0].line);
    }
  }
  return sum;
}

void BM_Pipeline(benchmark::State& state, const char* name) {
  auto pipeline = Pipeline::FromYaml(StagesFor(name));
  const LabelSet base = BaseLabels();
  std::vector<Entry> out;
  std::string buffer;
  size_t bytes = 0;
  for (size_t i = 0; i < 4; ++i) bytes += std::strlen(kLines[i]);
  for (auto _ : state) {
    benchmark::DoNotOptimize(RunLines(*pipeline, base, 1024, out, buffer));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * 1024);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 256 * bytes);
}

// A replace stage over one long line with a match every byte: the stage searches the line again
// after each match, so any work per search that is not per match (reading the whole line
// again) makes it quadratic. `stray`: the line holds one byte that is not UTF-8, which Go's
// regexp (and skald's) reads as U+FFFD.
void BM_ReplaceLongLine(benchmark::State& state, bool stray) {
  auto pipeline = Pipeline::FromYaml("- replace: {expression: '(\\d)', replace: 'x'}");
  std::string line(64 * 1024, '7');
  if (stray) line[10] = '\xff';
  std::vector<Entry> out;
  for (auto _ : state) {
    Entry e;
    e.line = line;
    out.clear();
    pipeline->Process(std::move(e), out);
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * line.size()));
}
BENCHMARK_CAPTURE(BM_ReplaceLongLine, valid_utf8, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ReplaceLongLine, one_stray_byte, true)->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(BM_Pipeline, none, "none");
BENCHMARK_CAPTURE(BM_Pipeline, most_used, "most_used");
BENCHMARK_CAPTURE(BM_Pipeline, json_timestamp_metadata, "json_timestamp_metadata");
BENCHMARK_CAPTURE(BM_Pipeline, match_regex, "match_regex");

int RunFixed(long lines, const char* name) {
  const char* yaml = StagesFor(name);
  if (!yaml) {
    std::fprintf(stderr, "unknown case %s\n", name);
    return 2;
  }
  auto pipeline = Pipeline::FromYaml(yaml);
  const LabelSet base = BaseLabels();
  std::vector<Entry> out;
  std::string buffer;
  // Warm-up outside the measured difference: N=0 runs this too.
  size_t sum = RunLines(*pipeline, base, 64, out, buffer);
  sum += RunLines(*pipeline, base, static_cast<size_t>(lines), out, buffer);
  std::printf("%s: %ld lines, checksum %zu\n", name, lines, sum);
  return 0;
}

}  // namespace
}  // namespace skald::stages

int main(int argc, char** argv) {
  long lines = -1;
  const char* name = "most_used";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--lines=", 8) == 0) lines = std::atol(argv[i] + 8);
    if (std::strncmp(argv[i], "--case=", 7) == 0) name = argv[i] + 7;
  }
  if (lines >= 0) return skald::stages::RunFixed(lines, name);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
