#include "pipeline_stages/decolorize_stage.h"

#include <re2/re2.h>

#include <cstring>

namespace skald::stages {

namespace {

// Promtail's expression (Loki's logql decolorizer, from github.com/acarl005/stripansi), so that
// the same bytes go: CSI and OSC sequences, and ESC or U+009B followed by one of ( ) # ; ?
// and a final character (e.g. ESC(B, which `tput sgr0` prints, and ESC c).
const RE2& AnsiSequence() {
  static const RE2 re(R"([\x{1B}\x{9B}][[\]()#;?]*(?:(?:(?:[a-zA-Z\d]*(?:;[a-zA-Z\d]*)*)?\x{07})|)"
                      R"((?:(?:\d{1,4}(?:;\d{0,4})*)?[\dA-PRZcf-ntqry=><~])))");
  return re;
}

}  // namespace

void StripAnsi(std::string& s) {
  // Most lines hold neither ESC nor U+009B (C2 9B): they are left without running the regex.
  if (std::memchr(s.data(), '\x1b', s.size()) == nullptr &&
      s.find("\xc2\x9b") == std::string::npos) {
    return;
  }
  RE2::GlobalReplace(&s, AnsiSequence(), "");
}

DecolorizeStage::DecolorizeStage(const YAML::Node& config, const StageContext& ctx) {
  StageConfig c(config, ctx, {});
}

Verdict DecolorizeStage::Process(Entry& entry, Downstream&) {
  StripAnsi(entry.line);
  return Verdict::kPass;
}

}  // namespace skald::stages
