// Fuzz target: ReadLogs requests (`docker logs` with --since, --until, --tail, --follow)
// answered from a journal.
//
// Input: the body of /LogDriver.ReadLogs. It is parsed (plugin_api_requests.h) and answered by
// ServeReadLogs from a fixed journal of several sealed segments: whole lines, blank ones, lines
// in partial chunks (one with the other source's line between its chunks, one spanning
// segments), one line per second.
// Checks: the answer is exactly the model's: the lines whose first chunk's time is within
// Since..Until, the last Tail of them (counted in the order they start in the journal), each
// source's in order, each line's time its first chunk's and its text plus "\n", however the
// long ones are cut into frames.
#include <spdlog/spdlog.h>

#include <cstdint>
#include <string>
#include <vector>

#include "plugin/api/plugin_api_requests.h"
#include "plugin/api/read_logs.h"
#include "plugin/ingest/frame_codec.h"
#include "plugin/journal/journal.h"
#include "plugin/journal/journal_writer.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

constexpr int64_t kBase = 1'714'557'600'000'000'000;  // 2024-05-01T10:00:00Z
constexpr int64_t kSecond = 1'000'000'000;

struct ModelLine {
  int source;  // 0 stdout, 1 stderr
  int64_t time;
  std::string text;
};

struct Fixture {
  skald::fuzz::ScratchDir dir;
  std::shared_ptr<skald::Journal> journal;
  std::vector<ModelLine> lines;  // in the order they start in the journal
};

void Put(skald::Journal::Writer& w, int source, int64_t time, std::string_view text,
         bool partial = false, std::string_view id = {}, int ordinal = 0, bool last = false) {
  skald::LogEntryView e;
  e.source = source == 1 ? "stderr" : "stdout";
  e.time_nano = time;
  e.line = text;
  e.partial = partial;
  if (partial) {
    e.has_partial_metadata = true;
    e.partial_id = id;
    e.partial_ordinal = ordinal;
    e.partial_last = last;
  }
  std::string frame;
  skald::EncodeFrame(e, frame);
  w.Append(frame);
}

Fixture* MakeFixture() {
  auto* f = new Fixture;
  // Small segments: the lines spread over many of them.
  f->journal = skald::Journal::Open(f->dir.path() / "c", {200, 1000, false});
  auto w = f->journal->StartWriter("/nonexistent/fifo");
  int64_t t = kBase;
  auto whole = [&](int source, std::string text) {
    t += kSecond;
    Put(*w, source, t, text);
    f->lines.push_back({source, t, std::move(text)});
  };
  whole(0, "first");
  whole(0, "");
  whole(1, "   ");
  // A partial line with the other source's line between its chunks.
  t += kSecond;
  const int64_t split = t;
  Put(*w, 0, split, "part-a ", true, "p1", 1);
  f->lines.push_back({0, split, "part-a part-b part-c"});
  whole(1, "between the chunks");
  Put(*w, 0, split, "part-b ", true, "p1", 2);
  Put(*w, 0, split, "part-c", true, "p1", 3, true);
  for (int i = 0; i < 12; ++i) whole(i % 3 == 2 ? 1 : 0, "line " + std::to_string(i));
  // A long line in chunks, crossing segments.
  t += kSecond;
  std::string long_line;
  for (int i = 0; i < 8; ++i) {
    std::string chunk(40, static_cast<char>('a' + i));
    Put(*w, 1, t, chunk, true, "p2", i + 1, i == 7);
    long_line += chunk;
  }
  f->lines.push_back({1, t, long_line});
  for (int i = 12; i < 20; ++i) whole(i % 2, "line " + std::to_string(i));
  w->Seal();
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture* fixture = MakeFixture();
  skald::ReadLogsRequest request;
  try {
    request = skald::ParseReadLogsRequest(skald::fuzz::AsView(data, size));
  } catch (const std::invalid_argument& e) {
    FUZZ_CHECK(std::string_view(e.what()).starts_with("skald: "));
    return 0;
  }
  const skald::ReadLogsConfig& config = request.config;

  // The model.
  std::vector<const ModelLine*> expected;
  for (const ModelLine& l : fixture->lines) {
    if (config.since_nano && l.time < *config.since_nano) continue;
    if (config.until_nano && l.time > *config.until_nano) continue;
    expected.push_back(&l);
  }
  if (config.tail >= 0 && expected.size() > static_cast<uint64_t>(config.tail)) {
    expected.erase(expected.begin(), expected.end() - config.tail);
  }

  std::string answer;
  skald::ReadLogsSink sink;
  sink.write = [&](std::string_view bytes) {
    answer.append(bytes);
    return true;
  };
  skald::ReadLogsOptions options;
  options.poll = std::chrono::milliseconds(1);
  options.heartbeat = std::chrono::milliseconds(1);
  options.max_frame_line_bytes = 1 + size % 64;  // long lines go out in pieces
  options.batch_bytes = 1 + size % 512;
  const skald::ReadLogsResult result =
      skald::ServeReadLogs(fixture->journal, config, sink, options);
  FUZZ_CHECK(result.end == skald::ReadLogsResult::End::kDone);
  FUZZ_CHECK(result.bytes == answer.size());
  FUZZ_CHECK(result.bad_frames == 0);

  // Each source's lines, joined from their frames.
  std::vector<ModelLine> got[2];
  std::string open[2];
  int64_t open_time[2] = {0, 0};
  bool is_open[2] = {false, false};
  std::string_view rest = answer;
  while (!rest.empty()) {
    std::string_view body;
    size_t used = 0;
    FUZZ_CHECK(skald::NextFrame(rest, &body, &used) == skald::FrameStatus::kOk);
    rest.remove_prefix(used);
    const auto entry = skald::DecodeLogEntry(body);
    FUZZ_CHECK(entry.has_value());
    if (entry->source.empty() && entry->line.empty()) continue;  // a heartbeat
    FUZZ_CHECK(entry->source == "stdout" || entry->source == "stderr");
    const int src = entry->source == "stderr" ? 1 : 0;
    if (is_open[src]) {
      FUZZ_CHECK(open_time[src] == entry->time_nano);
    } else {
      is_open[src] = true;
      open_time[src] = entry->time_nano;
      open[src].clear();
    }
    open[src].append(entry->line);
    if (entry->line.ends_with('\n')) {
      open[src].pop_back();
      got[src].push_back({src, entry->time_nano, open[src]});
      is_open[src] = false;
    }
  }
  FUZZ_CHECK(!is_open[0] && !is_open[1]);
  for (int src = 0; src < 2; ++src) {
    std::vector<const ModelLine*> want;
    for (const ModelLine* l : expected) {
      if (l->source == src) want.push_back(l);
    }
    if (got[src].size() != want.size()) {
      std::fprintf(stderr, "source %d: %zu lines, the model has %zu\n", src, got[src].size(),
                   want.size());
    }
    FUZZ_CHECK(got[src].size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      FUZZ_CHECK(got[src][i].time == want[i]->time && got[src][i].text == want[i]->text);
    }
  }
  FUZZ_CHECK(result.lines == expected.size());
  return 0;
}
