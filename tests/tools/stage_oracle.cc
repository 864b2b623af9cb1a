// skald-stage-oracle: runs pipeline cases through skald's stages for a differential fuzzer
// (tests/e2e/loki/difffuzz, which runs the same cases through Promtail's stages).
//
// Reads one case per line on stdin and writes one JSON line per case on stdout:
//
//   in:  {"stages": "<yaml list>",
//         "inputs": [{"line": B64, "labels": {"name": B64}, "ts": <ns>}, ...]}
//   out: {"error": "<ConfigError message>"}
//     or {"outputs": [{"line": B64, "labels": {"name": B64}, "ts": <ns>, "tenant": B64,
//                      "sm": [[B64, B64], ...], "extracted": {"key": VALUE}}, ...],
//         "dropped": ["reason", ...]}
//     or {"crash": "<what was thrown>"}  (anything but a ConfigError, or a request it cannot
//                                         read)
//
// B64 is a string's bytes in standard base64, so that lines that are not UTF-8 survive. VALUE
// is null, true/false, a number (an integer when skald keeps it exact) or {"s": B64}. Every case
// is processed entry by entry and then flushed (final) with a fixed clock at
// 1700000000000000000 ns.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline_stages/common/config_error.h"
#include "pipeline_stages/entry.h"
#include "pipeline_stages/pipeline.h"
#include "pipeline_stages/pipeline_observer.h"

namespace skald::stages {
namespace {

using nlohmann::json;

constexpr int64_t kNowNs = 1'700'000'000'000'000'000;

// A clock that always reads kNowNs.
class FixedClock final : public Clock {
 public:
  int64_t NowNs() const override { return kNowNs; }
};

// An observer that keeps the drop reasons and ignores metrics.
class DropRecorder final : public PipelineObserver {
 public:
  void EntryDropped(std::string_view reason) override { drops.emplace_back(reason); }
  void CounterAdd(const MetricDesc&, const LabelSet&, double) override {}
  void GaugeSet(const MetricDesc&, const LabelSet&, double) override {}
  void GaugeAdd(const MetricDesc&, const LabelSet&, double) override {}
  void HistogramObserve(const MetricDesc&, const LabelSet&, double) override {}

  std::vector<std::string> drops;
};

// A request the oracle cannot read.
class BadRequest : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

constexpr char kBase64Alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string Base64Encode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t n = static_cast<uint8_t>(in[i]) << 16 | static_cast<uint8_t>(in[i + 1]) << 8 |
                       static_cast<uint8_t>(in[i + 2]);
    out += kBase64Alphabet[n >> 18];
    out += kBase64Alphabet[(n >> 12) & 63];
    out += kBase64Alphabet[(n >> 6) & 63];
    out += kBase64Alphabet[n & 63];
  }
  if (i + 1 == in.size()) {
    const uint32_t n = static_cast<uint8_t>(in[i]) << 16;
    out += kBase64Alphabet[n >> 18];
    out += kBase64Alphabet[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    const uint32_t n = static_cast<uint8_t>(in[i]) << 16 | static_cast<uint8_t>(in[i + 1]) << 8;
    out += kBase64Alphabet[n >> 18];
    out += kBase64Alphabet[(n >> 12) & 63];
    out += kBase64Alphabet[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

int Base64Digit(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

std::string Base64Decode(std::string_view in) {
  if (in.size() % 4 != 0) throw BadRequest("base64 length is not a multiple of 4");
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (size_t i = 0; i < in.size(); i += 4) {
    int d[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = in[i + k];
      if (c == '=' && i + 4 == in.size() && k >= 2) {
        d[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0 || (d[k] = Base64Digit(c)) < 0) throw BadRequest("invalid base64");
    }
    const uint32_t n = d[0] << 18 | d[1] << 12 | d[2] << 6 | d[3];
    out += static_cast<char>(n >> 16);
    if (pad < 2) out += static_cast<char>((n >> 8) & 0xFF);
    if (pad < 1) out += static_cast<char>(n & 0xFF);
  }
  return out;
}

std::string DecodedString(const json& j, const char* what) {
  if (!j.is_string()) throw BadRequest(std::string(what) + " must be a base64 string");
  return Base64Decode(j.get_ref<const std::string&>());
}

json ValueJson(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNull:
      return nullptr;
    case Value::Kind::kString:
      return json{{"s", Base64Encode(v.string())}};
    case Value::Kind::kNumber:
      if (v.is_int()) return v.integer();
      return v.number();
    case Value::Kind::kBool:
      return v.boolean();
  }
  return nullptr;
}

json EntryJson(const Entry& e) {
  json labels = json::object();
  e.labels.ForEach(
      [&](std::string_view n, std::string_view v) { labels[std::string(n)] = Base64Encode(v); });
  json sm = json::array();
  for (const MetadataPair& p : e.structured_metadata) {
    sm.push_back(json::array({Base64Encode(p.name), Base64Encode(p.value)}));
  }
  json extracted = json::object();
  e.extracted.ForEach(
      [&](std::string_view k, const Value& v) { extracted[std::string(k)] = ValueJson(v); });
  return json{{"line", Base64Encode(e.line)}, {"labels", std::move(labels)},
              {"ts", e.timestamp_ns},         {"tenant", Base64Encode(e.tenant)},
              {"sm", std::move(sm)},          {"extracted", std::move(extracted)}};
}

Entry InputEntry(const json& in) {
  if (!in.is_object()) throw BadRequest("an input must be an object");
  Entry e;
  e.timestamp_ns = kNowNs;
  if (auto it = in.find("line"); it != in.end()) e.line = DecodedString(*it, "line");
  if (auto it = in.find("ts"); it != in.end()) {
    if (!it->is_number_integer()) throw BadRequest("ts must be an integer");
    e.timestamp_ns = it->get<int64_t>();
  }
  if (auto it = in.find("labels"); it != in.end() && !it->is_null()) {
    if (!it->is_object()) throw BadRequest("labels must be an object");
    std::vector<Label> labels;
    for (const auto& [name, value] : it->items()) {
      labels.push_back(Label{name, DecodedString(value, "a label value")});
    }
    e.labels = LabelSet::FromVector(std::move(labels));
  }
  return e;
}

// Runs one case; the answer as one JSON value.
json RunCase(const std::string& request_line) {
  json request;
  try {
    request = json::parse(request_line);
  } catch (const json::exception& e) {
    return json{{"crash", std::string("bad request: ") + e.what()}};
  }
  try {
    if (!request.is_object()) throw BadRequest("a case must be an object");
    const auto stages = request.find("stages");
    if (stages == request.end() || !stages->is_string())
      throw BadRequest("stages must be a string");
    std::vector<Entry> inputs;
    if (auto it = request.find("inputs"); it != request.end()) {
      if (!it->is_array()) throw BadRequest("inputs must be an array");
      for (const json& in : *it) inputs.push_back(InputEntry(in));
    }

    FixedClock clock;
    DropRecorder observer;
    PipelineOptions options;
    options.observer = &observer;
    options.clock = &clock;
    options.owner = "skald-stage-oracle";
    options.keep_extracted = true;
    std::unique_ptr<Pipeline> pipeline;
    try {
      pipeline = Pipeline::FromYaml(stages->get_ref<const std::string&>(), options);
    } catch (const ConfigError& e) {
      return json{{"error", e.what()}};
    }
    std::vector<Entry> out;
    for (Entry& e : inputs) pipeline->Process(std::move(e), out);
    pipeline->Flush(clock.NowNs(), true, out);

    json outputs = json::array();
    for (const Entry& e : out) outputs.push_back(EntryJson(e));
    return json{{"outputs", std::move(outputs)}, {"dropped", observer.drops}};
  } catch (const BadRequest& e) {
    return json{{"crash", std::string("bad request: ") + e.what()}};
  } catch (const ConfigError& e) {
    return json{{"crash", std::string("ConfigError after the build: ") + e.what()}};
  } catch (const std::exception& e) {
    return json{{"crash", e.what()}};
  } catch (...) {
    return json{{"crash", "an exception that is no std::exception"}};
  }
}

}  // namespace
}  // namespace skald::stages

int main() {
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    const nlohmann::json answer = skald::stages::RunCase(line);
    // Invalid UTF-8 in an error message or a key becomes U+FFFD rather than throwing.
    std::cout << answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    std::cout.flush();
  }
  return 0;
}
