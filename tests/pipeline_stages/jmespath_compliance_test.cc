// Runs go-jmespath's compliance suite (jmespath_compliance/, see its README) through
// JmesExpression: every case's result, or its error (a config error when the expression is
// compiled, or a run-time error when it runs, as go-jmespath reports either).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "pipeline_stages/common/config_error.h"
#include "pipeline_stages/jmespath_expression.h"

namespace skald::stages {
namespace {

using json = nlohmann::json;

// Cases skipped, by file and expression, each with its reason in the README.
const std::set<std::pair<std::string, std::string>> kSkipped = {};

std::vector<std::filesystem::path> Files() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(SKALD_JMESPATH_COMPLIANCE_DIR)) {
    if (e.path().extension() == ".json") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(JmesPathCompliance, EveryCase) {
  int passed = 0;
  int skipped = 0;
  int failed = 0;
  const auto files = Files();
  ASSERT_EQ(files.size(), 16u);
  for (const auto& path : files) {
    std::ifstream in(path);
    const json suites = json::parse(in);
    const std::string file = path.filename().string();
    for (const json& suite : suites) {
      json given = suite["given"];
      JmesNumbersToDoubles(given);
      for (const json& c : suite["cases"]) {
        const std::string expr = c["expression"].get<std::string>();
        if (kSkipped.contains({file, expr})) {
          ++skipped;
          continue;
        }
        std::optional<json> got;
        std::string error;
        try {
          got = JmesExpression(expr).Search(given);
          if (!got) error = "run-time error";
        } catch (const ConfigError& e) {
          error = e.what();
        }
        bool ok;
        if (c.contains("error")) {
          ok = !error.empty();
        } else {
          json want = c["result"];
          JmesNumbersToDoubles(want);
          ok = got && *got == want;
        }
        if (ok) {
          ++passed;
        } else {
          ++failed;
          ADD_FAILURE() << file << ": " << expr << " on " << given.dump() << "\n  want "
                        << (c.contains("error") ? "error " + c["error"].dump() : c["result"].dump())
                        << "\n  got " << (got ? got->dump() : "error: " + error);
        }
      }
    }
  }
  std::cout << "JMESPath compliance: " << passed << " passed, " << failed << " failed, " << skipped
            << " skipped\n";
  EXPECT_EQ(skipped, static_cast<int>(kSkipped.size()));
}

}  // namespace
}  // namespace skald::stages
