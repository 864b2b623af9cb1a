// The compatibility corpus: tests/pipeline_stages/corpus/*.yaml, one case per item:
//
//   - name: what the case shows
//     stages: |            # the inline pipeline, as in loki-pipeline-stages
//       - json: ...
//     input: {line, labels, timestamp, now}   # or inputs: [ ... ]; {flush: <now ns>} flushes
//     expect:              # every output entry after a final flush; [] = all dropped
//       - line: ...
//         labels: {...}                  # default: the input's labels
//         timestamp: <ns>                # default: the input's timestamp
//         structured_metadata: [[n, v]]  # default: none
//         tenant: ...                    # default: ""
//     dropped: [reason, ...]             # default: none
//     error: [substring, ...]            # the pipeline must fail to build with these
//
// In `stages`, @GEOIP_DIR@ is the directory of the geoip test databases.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "tests/pipeline_stages/test_support.h"

namespace skald::stages {
namespace {

constexpr int64_t kDefaultTs = 1'700'000'000'000'000'000;

struct Case {
  std::string file;
  std::string name;
  YAML::Node node;
};

std::vector<Case> LoadCorpus() {
  std::vector<Case> cases;
  std::vector<std::filesystem::path> files;
  for (const auto& f : std::filesystem::directory_iterator(SKALD_CORPUS_DIR)) {
    if (f.path().extension() == ".yaml") files.push_back(f.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    YAML::Node root = YAML::LoadFile(path.string());
    for (const auto& c : root["cases"]) {
      cases.push_back(Case{path.filename().string(), c["name"].as<std::string>(), c});
    }
  }
  return cases;
}

LabelSet ReadLabels(const YAML::Node& n) {
  std::vector<Label> v;
  if (n) {
    for (const auto& kv : n) {
      v.push_back(Label{kv.first.as<std::string>(), kv.second ? kv.second.as<std::string>() : ""});
    }
  }
  return LabelSet::FromVector(std::move(v));
}

std::string Describe(const Entry& e) {
  std::string s = "line=" + Quote(e.line) + " labels=" + e.labels.ToString() +
                  " ts=" + std::to_string(e.timestamp_ns) + " tenant=" + Quote(e.tenant) + " sm=[";
  for (const auto& m : e.structured_metadata) s += m.name + "=" + Quote(m.value) + " ";
  return s + "]";
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.file << ": " << c.name; }

class CorpusTest : public ::testing::TestWithParam<Case> {};

TEST_P(CorpusTest, MatchesExpectation) {
  const Case& c = GetParam();
  const YAML::Node& n = c.node;
  testkit::FakeClock clock(kDefaultTs);
  testkit::RecordingObserver observer;
  Pipeline::SetSamplingSeedForTesting(42);
  std::string yaml = n["stages"].as<std::string>();
  for (size_t at; (at = yaml.find("@GEOIP_DIR@")) != std::string::npos;) {
    yaml.replace(at, std::string_view("@GEOIP_DIR@").size(), SKALD_GEOIP_TEST_DIR);
  }

  if (n["error"]) {
    try {
      Pipeline::FromYaml(yaml, &observer, &clock);
      FAIL() << "expected a config error";
    } catch (const ConfigError& e) {
      const std::string msg = e.what();
      for (const auto& sub : n["error"]) {
        EXPECT_NE(msg.find(sub.as<std::string>()), std::string::npos)
            << "message: " << msg << "\nmissing: " << sub.as<std::string>();
      }
    }
    return;
  }

  auto pipeline = Pipeline::FromYaml(yaml, &observer, &clock);
  std::vector<YAML::Node> inputs;
  if (n["input"]) inputs.push_back(n["input"]);
  for (const auto& i : n["inputs"]) inputs.push_back(i);
  ASSERT_FALSE(inputs.empty());

  std::vector<Entry> out;
  LabelSet first_labels;
  int64_t first_ts = kDefaultTs;
  bool first = true;
  for (const auto& in : inputs) {
    if (in["now"]) clock.Set(in["now"].as<int64_t>());
    if (in["flush"]) {
      pipeline->Flush(clock.NowNs(), in["flush"].as<std::string>() == "final", out);
      continue;
    }
    Entry e;
    e.line = in["line"].as<std::string>();
    e.labels = ReadLabels(in["labels"]);
    e.timestamp_ns = in["timestamp"] ? in["timestamp"].as<int64_t>() : kDefaultTs;
    if (first) {
      first_labels = e.labels;
      first_ts = e.timestamp_ns;
      first = false;
    }
    pipeline->Process(std::move(e), out);
  }
  if (!n["no_final_flush"] || !n["no_final_flush"].as<bool>()) {
    pipeline->Flush(clock.NowNs(), true, out);
  }

  const YAML::Node expect = n["expect"];
  ASSERT_TRUE(expect && expect.IsSequence()) << "case needs expect: [...]";
  std::string got;
  for (const auto& e : out) got += "\n  " + Describe(e);
  ASSERT_EQ(out.size(), expect.size()) << "outputs:" << got;
  for (size_t i = 0; i < out.size(); ++i) {
    const YAML::Node x = expect[i];
    const Entry& e = out[i];
    if (x["line"]) {
      EXPECT_EQ(e.line, x["line"].as<std::string>()) << "output " << i;
    }
    EXPECT_EQ(e.labels.ToString(),
              (x["labels"] ? ReadLabels(x["labels"]) : first_labels).ToString())
        << "output " << i;
    EXPECT_EQ(e.timestamp_ns, x["timestamp"] ? x["timestamp"].as<int64_t>() : first_ts)
        << "output " << i;
    EXPECT_EQ(e.tenant, x["tenant"] ? x["tenant"].as<std::string>() : "") << "output " << i;
    std::vector<MetadataPair> sm;
    for (const auto& p : x["structured_metadata"]) {
      sm.push_back(MetadataPair{p[0].as<std::string>(), p[1].as<std::string>()});
    }
    EXPECT_EQ(e.structured_metadata, sm) << "output " << i << ": " << Describe(e);
  }
  std::vector<std::string> drops;
  for (const auto& d : n["dropped"]) drops.push_back(d.as<std::string>());
  EXPECT_EQ(observer.drops, drops);
  Pipeline::SetSamplingSeedForTesting(0);
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string s = info.param.file.substr(0, info.param.file.find('.')) + "_" + info.param.name;
  for (char& ch : s) {
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return s + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusTest, ::testing::ValuesIn(LoadCorpus()), CaseName);

TEST(Corpus, HasAtLeast200Cases) { EXPECT_GE(LoadCorpus().size(), 200u); }

}  // namespace
}  // namespace skald::stages
