// Small helpers for the per-stage unit tests.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/pipeline_stages/test_support.h"

namespace skald::stages::testkit {

// Runs lines through one pipeline (same stream) and flushes at the end.
inline std::vector<Entry> RunLines(std::string_view yaml, const std::vector<std::string>& lines,
                                   LabelSet labels = {}, PipelineObserver* observer = nullptr) {
  FakeClock clock;
  auto p = Pipeline::FromYaml(yaml, observer, &clock);
  std::vector<Entry> out;
  for (const auto& l : lines) p->Process(MakeEntry(l, labels), out);
  p->Flush(clock.NowNs(), true, out);
  return out;
}

inline std::string OnlyLine(std::string_view yaml, std::string line, LabelSet labels = {}) {
  auto out = RunOne(yaml, MakeEntry(std::move(line), std::move(labels)));
  if (out.size() == 1) return out[0].line;
  // Built piecewise: GCC 12 at -O3 warns (-Wrestrict) on "<" + std::to_string(...).
  std::string r = "<";
  r += std::to_string(out.size());
  r += " entries>";
  return r;
}

}  // namespace skald::stages::testkit
