// Micro benchmarks of the plugin's per-line steps, on pino-style JSON lines (~230 bytes):
// frame decode, partial reassembly, stream label rendering, batch encoding (protobuf + snappy).
// The pipeline has its own binary (pipeline_bench). items_per_second counts lines (or label
// sets for the rendering case); `make bench` turns the JSON output into a table.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "plugin/config/stream_labels.h"
#include "plugin/ingest/frame_codec.h"
#include "plugin/ingest/line_assembler.h"
#include "plugin/loki/loki_client.h"
#include "plugin/loki/push_encoder.h"
#include "tests/bench/bench_lines.h"

namespace skald {
namespace {

constexpr int kLinesPerIteration = 1024;
constexpr int64_t kBaseNs = 1'700'000'000'000'000'000;

// kLinesPerIteration frames back to back, as they sit in the reader's read buffer.
std::string EncodedFrames() {
  std::string frames;
  for (int i = 0; i < kLinesPerIteration; ++i) {
    const std::string line = bench::PinoLine(static_cast<uint64_t>(i));
    LogEntryView e;
    e.source = i % 10 == 0 ? "stderr" : "stdout";
    e.time_nano = kBaseNs + i;
    e.line = line;
    EncodeFrame(e, frames);
  }
  return frames;
}

void BM_FrameDecode(benchmark::State& state) {
  const std::string frames = EncodedFrames();
  for (auto _ : state) {
    std::string_view rest = frames;
    std::string_view body;
    std::size_t consumed = 0;
    int64_t sum = 0;
    while (NextFrame(rest, &body, &consumed) == FrameStatus::kOk) {
      auto e = DecodeLogEntry(body);
      sum += e->time_nano + static_cast<int64_t>(e->line.size());
      rest.remove_prefix(consumed);
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * kLinesPerIteration);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(frames.size()));
}
BENCHMARK(BM_FrameDecode);

// Whole lines (the common case): every frame becomes one LogLine.
void BM_LineAssembler_Whole(benchmark::State& state) {
  const std::string frames = EncodedFrames();
  std::vector<LogEntryView> views;
  std::string_view rest = frames;
  std::string_view body;
  std::size_t consumed = 0;
  while (NextFrame(rest, &body, &consumed) == FrameStatus::kOk) {
    views.push_back(*DecodeLogEntry(body));
    rest.remove_prefix(consumed);
  }
  LineAssembler assembler(256000);
  std::vector<LogLine> out;
  out.reserve(kLinesPerIteration);
  for (auto _ : state) {
    out.clear();
    for (const auto& v : views) assembler.Add(v, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * kLinesPerIteration);
}
BENCHMARK(BM_LineAssembler_Whole);

// A 64 KiB line as dockerd cuts it: four 16 KiB partial chunks, the last one marked last.
void BM_LineAssembler_Partial64K(benchmark::State& state) {
  const std::string line(64 * 1024, 'x');
  const std::string id = "0123456789abcdef";
  std::vector<LogEntryView> chunks;
  for (std::size_t off = 0; off < line.size(); off += 16 * 1024) {
    LogEntryView e;
    e.source = "stdout";
    e.time_nano = kBaseNs;
    e.line = std::string_view(line).substr(off, 16 * 1024);
    e.partial = true;
    e.has_partial_metadata = true;
    e.partial_id = id;
    e.partial_ordinal = static_cast<int32_t>(off / (16 * 1024) + 1);
    e.partial_last = off + 16 * 1024 >= line.size();
    chunks.push_back(e);
  }
  LineAssembler assembler(256000);
  std::vector<LogLine> out;
  for (auto _ : state) {
    out.clear();
    for (const auto& c : chunks) assembler.Add(c, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(line.size()));
}
BENCHMARK(BM_LineAssembler_Partial64K);

// The label set of a compose service after the seed pipeline (8 labels).
void BM_RenderStreamLabels(benchmark::State& state) {
  const StreamLabelSet labels = {
      {"container_name", "shop-web-1"}, {"host", "docker-host-1"}, {"compose_project", "shop"},
      {"compose_service", "web"},       {"source", "stdout"},      {"level", "info"},
      {"context", "HttpService"}};
  std::string out;
  for (auto _ : state) {
    benchmark::DoNotOptimize(RenderStreamLabels(labels, out));
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RenderStreamLabels);

// One batch as the client builds it: about 1 MiB of lines in 8 streams (level x source), with
// the line as the seed pipeline leaves it (the msg) or the whole JSON line.
void BM_PushEncode(benchmark::State& state, bool msg_only) {
  const int entries_per_batch = static_cast<int>(state.range(0));
  std::vector<std::string> labels;
  for (const char* level : {"info", "debug", "warn", "error"}) {
    for (const char* source : {"stdout", "stderr"}) {
      labels.push_back(std::string("{container_name=\"shop-web-1\", context=\"HttpService\", ") +
                       "host=\"docker-host-1\", level=\"" + level + "\", source=\"" + source +
                       "\"}");
    }
  }
  std::vector<LokiEntry> entries(static_cast<std::size_t>(entries_per_batch));
  std::vector<std::vector<const LokiEntry*>> by_stream(labels.size());
  int64_t bytes = 0;
  for (int i = 0; i < entries_per_batch; ++i) {
    LokiEntry& e = entries[static_cast<std::size_t>(i)];
    e.line = bench::PinoLine(static_cast<uint64_t>(i));
    if (msg_only) {
      const auto from = e.line.find("\"msg\":\"") + 7;
      e.line = e.line.substr(from, e.line.find('"', from) - from);
    }
    e.timestamp_ns = kBaseNs + i * 1000;
    e.labels = labels[static_cast<std::size_t>(i) % labels.size()];
    by_stream[static_cast<std::size_t>(i) % labels.size()].push_back(&e);
    bytes += static_cast<int64_t>(e.line.size());
  }
  std::vector<PushStream> streams;
  for (std::size_t s = 0; s < labels.size(); ++s) {
    streams.push_back(PushStream{labels[s], by_stream[s]});
  }
  PushEncoder encoder;
  std::size_t compressed = 0;
  for (auto _ : state) {
    compressed = encoder.Encode(streams).size();
    benchmark::DoNotOptimize(compressed);
  }
  state.SetItemsProcessed(state.iterations() * entries_per_batch);
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["ratio"] =
      static_cast<double>(encoder.raw_size()) / static_cast<double>(compressed ? compressed : 1);
}
BENCHMARK_CAPTURE(BM_PushEncode, json_line, false)->Arg(4500);
BENCHMARK_CAPTURE(BM_PushEncode, msg_line, true)->Arg(4500);

}  // namespace
}  // namespace skald

BENCHMARK_MAIN();
