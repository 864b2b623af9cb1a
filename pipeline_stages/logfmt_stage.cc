#include "pipeline_stages/logfmt_stage.h"

namespace skald::stages {
namespace {

bool IsKeyChar(unsigned char c) { return c > ' ' && c != '=' && c != '"' && c != 0x7f; }

void AppendUtf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Unquotes a Go string literal body (between the quotes). False on a bad escape.
bool Unquote(std::string_view in, std::string& out) {
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (++i >= in.size()) return false;
    switch (in[i]) {
      case 'n':
        out.push_back('\n');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case '"':
        out.push_back('"');
        break;
      case '\\':
        out.push_back('\\');
        break;
      case '/':
        out.push_back('/');
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'u': {
        if (i + 4 >= in.size()) return false;
        uint32_t cp = 0;
        for (int k = 1; k <= 4; ++k) {
          char h = in[i + k];
          cp <<= 4;
          if (h >= '0' && h <= '9') {
            cp |= h - '0';
          } else if (h >= 'a' && h <= 'f') {
            cp |= h - 'a' + 10;
          } else if (h >= 'A' && h <= 'F') {
            cp |= h - 'A' + 10;
          } else {
            return false;
          }
        }
        i += 4;
        AppendUtf8(cp, out);
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

// Calls f(key, value) for every pair of a logfmt text (go-logfmt rules: bare keys have an empty
// value; quoted values take Go escapes). Returns false when the text is malformed.
template <typename F>
bool ForEachLogfmtPair(std::string_view t, std::string& scratch, F&& f) {
  size_t i = 0;
  const size_t n = t.size();
  while (i < n) {
    while (i < n && static_cast<unsigned char>(t[i]) <= ' ') ++i;
    if (i >= n) break;
    size_t ks = i;
    while (i < n && IsKeyChar(static_cast<unsigned char>(t[i]))) ++i;
    if (i == ks) return false;  // '=' or '"' where a key should start
    std::string_view key = t.substr(ks, i - ks);
    if (i >= n || t[i] != '=') {
      if (i < n && t[i] == '"') return false;
      f(key, std::string_view());
      continue;
    }
    ++i;  // '='
    if (i < n && t[i] == '"') {
      size_t vs = ++i;
      bool escaped = false;
      while (i < n && (escaped || t[i] != '"')) {
        escaped = !escaped && t[i] == '\\';
        ++i;
      }
      if (i >= n) return false;  // unterminated quote
      if (!Unquote(t.substr(vs, i - vs), scratch)) return false;
      ++i;
      f(key, std::string_view(scratch));
      continue;
    }
    size_t vs = i;
    while (i<n&& static_cast<unsigned char>(t[i])> ' ') {
      if (t[i] == '"' || t[i] == '=') return false;
      ++i;
    }
    f(key, t.substr(vs, i - vs));
  }
  return true;
}

}  // namespace

LogfmtStage::LogfmtStage(const YAML::Node& config, const StageContext& ctx) {
  StageConfig c(config, ctx, {"mapping", "source"});
  YAML::Node m = c.Get("mapping");
  if (!m || !m.IsMap() || m.size() == 0) {
    c.Fail("mapping", "is required: a map of extracted key to logfmt key, got " + DescribeNode(m));
  }
  for (const auto& kv : m) {
    std::string key = KeyName(kv.first, ctx, "an extracted key");
    std::string from = key;
    if (kv.second && !kv.second.IsNull()) {
      if (!kv.second.IsScalar()) {
        c.Fail("mapping", "logfmt key for " + Quote(key) + " must be a string, got " +
                              DescribeNode(kv.second));
      }
      if (!kv.second.Scalar().empty()) from = kv.second.Scalar();
    }
    mapping_.emplace_back(key, from);
  }
  source_ = c.OptString("source");
  if (source_ && source_->empty()) c.Fail("source", "must not be empty when given");
}

Verdict LogfmtStage::Process(Entry& entry, Downstream&) {
  std::string_view text = entry.line;
  if (source_) {
    const Value* v = entry.extracted.Find(*source_);
    if (!v) return Verdict::kPass;
    auto s = v->AsString();
    if (!s) return Verdict::kPass;
    text_.assign(s->data(), s->size());  // extracted may change while we write into it
    text = text_;
  }
  ForEachLogfmtPair(text, scratch_, [&](std::string_view key, std::string_view value) {
    for (const auto& [to, from] : mapping_) {
      if (from == key) entry.extracted.SetString(to, value);
    }
  });
  return Verdict::kPass;
}

}  // namespace skald::stages
