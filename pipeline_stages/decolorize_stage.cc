#include "pipeline_stages/decolorize_stage.h"

#include <cstring>

namespace skald::stages {

void StripAnsi(std::string& s) {
  if (std::memchr(s.data(), '\x1b', s.size()) == nullptr) return;
  size_t w = 0;
  const size_t n = s.size();
  for (size_t r = 0; r < n;) {
    if (s[r] != '\x1b' || r + 1 >= n) {
      s[w++] = s[r++];
      continue;
    }
    const char kind = s[r + 1];
    if (kind == '[') {  // CSI: parameters 0x30-0x3F, intermediates 0x20-0x2F, final 0x40-0x7E
      size_t i = r + 2;
      while (i < n && s[i] >= 0x30 && s[i] <= 0x3F) ++i;
      while (i < n && s[i] >= 0x20 && s[i] <= 0x2F) ++i;
      if (i < n && s[i] >= 0x40 && s[i] <= 0x7E) {
        r = i + 1;
        continue;
      }
      s[w++] = s[r++];  // not a complete sequence: keep it
      continue;
    }
    if (kind == ']') {  // OSC: ends with BEL or ESC '\'
      size_t i = r + 2;
      while (i < n && s[i] != '\x07' && !(s[i] == '\x1b' && i + 1 < n && s[i + 1] == '\\')) ++i;
      if (i < n) {
        r = i + (s[i] == '\x07' ? 1 : 2);
        continue;
      }
      s[w++] = s[r++];
      continue;
    }
    if (kind >= 0x40 && kind <= 0x5F) {  // two-byte Fe sequence
      r += 2;
      continue;
    }
    s[w++] = s[r++];
  }
  s.resize(w);
}

DecolorizeStage::DecolorizeStage(const YAML::Node& config, const StageContext& ctx) {
  StageConfig c(config, ctx, {});
}

Verdict DecolorizeStage::Process(Entry& entry, Downstream&) {
  StripAnsi(entry.line);
  return Verdict::kPass;
}

}  // namespace skald::stages
