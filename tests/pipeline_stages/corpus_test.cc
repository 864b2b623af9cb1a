// The compatibility corpus: tests/pipeline_stages/corpus/*.yaml (cases written here) and
// tests/pipeline_stages/peer_corpus/*.yaml (Promtail's own stage tests, imported: each file
// lists every Go test of its source with its fate), one case per item:
//
//   - name: what the case shows
//     source: TestName/row             # peer_corpus: the Go test the case comes from
//     stages: |            # the inline pipeline, as in loki-pipeline-stages
//       - json: ...
//     input: {line, labels, timestamp, now, extracted}   # or inputs: [ ... ];
//                                      # {flush: <now ns>} flushes; extracted: {k: v} seeds
//                                      # the map before the first stage
//     expect:              # every output entry after a final flush; [] = all dropped
//       - line: ...
//         labels: {...}                  # default: the input's labels
//         timestamp: <ns>                # default: the input's timestamp
//         structured_metadata: [[n, v]]  # default: none
//         tenant: ...                    # default: ""
//         extracted: {k: v}              # these keys, as typed values (3, '3', true, null)
//     dropped: [reason, ...]             # default: none
//     error: [substring, ...]            # the pipeline must fail to build with these
//     promtail: {expect, dropped, error} # where skald deliberately differs: what Promtail
//     differs: ...                       # does (tests/e2e/loki/check-corpus.sh checks it), and
//                                        # why, in words pipeline_stages/README.md carries
//
// In `stages`, @GEOIP_DIR@ is the directory of the geoip test databases.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/pipeline_stages/test_support.h"

namespace skald::stages {
namespace {

constexpr int64_t kDefaultTs = 1'700'000'000'000'000'000;

struct Case {
  std::string file;
  std::string name;
  YAML::Node node;
};

std::vector<std::filesystem::path> CorpusFiles(const char* dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    if (f.path().extension() == ".yaml") files.push_back(f.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<Case> LoadCases(const char* dir, const std::string& prefix) {
  std::vector<Case> cases;
  for (const auto& path : CorpusFiles(dir)) {
    YAML::Node root = YAML::LoadFile(path.string());
    for (const auto& c : root["cases"]) {
      cases.push_back(Case{prefix + path.filename().string(), c["name"].as<std::string>(), c});
    }
  }
  return cases;
}

std::vector<Case> LoadCorpus() { return LoadCases(SKALD_CORPUS_DIR, ""); }
std::vector<Case> LoadPeerCorpus() { return LoadCases(SKALD_PEER_CORPUS_DIR, "peer_"); }

// A plain YAML scalar as the typed value the reference's YAML would read (null, bool, number),
// a quoted one as a string.
Value TypedValue(const YAML::Node& n) {
  Value v;
  if (!n || n.IsNull()) return v;
  const std::string text = n.as<std::string>();
  if (n.Tag() == "?") {
    if (text == "true" || text == "false") {
      v.SetBool(text == "true");
      return v;
    }
    char* end = nullptr;
    errno = 0;
    const long long i = std::strtoll(text.c_str(), &end, 10);
    if (!text.empty() && *end == '\0' && errno == 0) {
      v.SetInt(i);
      return v;
    }
    const double d = std::strtod(text.c_str(), &end);
    if (!text.empty() && *end == '\0') {
      v.SetDouble(d);
      return v;
    }
  }
  v.SetString(text);
  return v;
}

std::string DescribeValue(const Value* v) {
  if (!v) return "(absent)";
  switch (v->kind()) {
    case Value::Kind::kNull:
      return "null";
    case Value::Kind::kString:
      return "string " + Quote(v->string());
    case Value::Kind::kNumber:
      return "number " + std::string(*v->AsString());
    case Value::Kind::kBool:
      return v->boolean() ? "true" : "false";
  }
  return "?";
}

bool SameValue(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kNull:
      return true;
    case Value::Kind::kString:
      return a.string() == b.string();
    case Value::Kind::kNumber:
      return a.is_int() && b.is_int() ? a.integer() == b.integer() : a.number() == b.number();
    case Value::Kind::kBool:
      return a.boolean() == b.boolean();
  }
  return false;
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

  if (n["promtail"]) {
    ASSERT_TRUE(n["differs"] && !n["differs"].as<std::string>().empty())
        << "a promtail: block needs differs: (why skald differs)";
  }
  PipelineOptions options;
  options.observer = &observer;
  options.clock = &clock;
  options.keep_extracted = true;
  if (n["error"]) {
    try {
      Pipeline::FromYaml(yaml, options);
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

  auto pipeline = Pipeline::FromYaml(yaml, options);
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
    std::vector<std::pair<std::string, Value>> seed;
    for (const auto& kv : in["extracted"]) {
      // A list or map has no equivalent in skald's map (stages keep JSON arrays and objects as
      // their text): the key is left out, as a value no stage can read as a string.
      if (kv.second && !kv.second.IsScalar() && !kv.second.IsNull()) continue;
      seed.emplace_back(kv.first.as<std::string>(), TypedValue(kv.second));
    }
    pipeline->Process(std::move(e), seed, out);
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
    for (const auto& kv : x["extracted"]) {
      const std::string key = kv.first.as<std::string>();
      const Value want = TypedValue(kv.second);
      const Value* got_value = e.extracted.Find(key);
      EXPECT_TRUE(got_value && SameValue(*got_value, want))
          << "output " << i << " extracted " << Quote(key) << ": " << DescribeValue(got_value)
          << ", expected " << DescribeValue(&want);
    }
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
INSTANTIATE_TEST_SUITE_P(PeerCorpus, CorpusTest, ::testing::ValuesIn(LoadPeerCorpus()), CaseName);

TEST(Corpus, HasAtLeast200Cases) { EXPECT_GE(LoadCorpus().size(), 200u); }

// A case where skald deliberately differs from Promtail says why in words the README's table
// of deliberate differences carries, so that every difference a user meets is written down.
TEST(Corpus, EveryDeliberateDifferenceIsInTheReadme) {
  std::ifstream in(SKALD_STAGES_README);
  // The README's words with each run of white space as one space (its lines are wrapped).
  std::string readme;
  for (std::string word; in >> word;) readme += word + " ";
  ASSERT_FALSE(readme.empty());
  std::vector<Case> all = LoadCorpus();
  for (auto& c : LoadPeerCorpus()) all.push_back(std::move(c));
  int deliberate = 0;
  for (const Case& c : all) {
    if (!c.node["differs"]) continue;
    ++deliberate;
    EXPECT_NE(readme.find(c.node["differs"].as<std::string>()), std::string::npos)
        << c.file << ": " << c.name << ": differs: " << c.node["differs"].as<std::string>();
  }
  std::printf("%d deliberate differences, each in the README\n", deliberate);
}

// Each imported file accounts for every Go test of its source (tests/e2e/loki/check-corpus.sh
// compares the list with the Go file): imported, or not importable with the reason.
TEST(Corpus, EachPeerTestHasAFate) {
  for (const auto& path : CorpusFiles(SKALD_PEER_CORPUS_DIR)) {
    const YAML::Node root = YAML::LoadFile(path.string());
    EXPECT_TRUE(root["source_file"]) << path;
    ASSERT_TRUE(root["tests"] && root["tests"].IsSequence()) << path;
    for (const auto& t : root["tests"]) {
      const std::string fate = t["fate"].as<std::string>("");
      EXPECT_TRUE(fate == "imported" || fate == "not importable")
          << path << ": " << t["test"].as<std::string>("?") << ": fate " << Quote(fate);
      if (fate == "not importable") {
        EXPECT_FALSE(t["why"].as<std::string>("").empty())
            << path << ": " << t["test"].as<std::string>("?") << " needs a why";
      }
    }
  }
}

}  // namespace
}  // namespace skald::stages
