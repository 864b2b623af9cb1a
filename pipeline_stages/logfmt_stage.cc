#include "pipeline_stages/logfmt_stage.h"

#include "pipeline_stages/go/go_string.h"

namespace skald::stages {
namespace {

bool IsKeyChar(unsigned char c) { return c > ' ' && c != '=' && c != '"'; }

// go-logfmt refuses a key holding U+FFFD or a byte that is not UTF-8 (its decoding stops there).
bool HasReplacementOrStrayByte(std::string_view key) {
  for (size_t i = 0; i < key.size();) {
    if (static_cast<unsigned char>(key[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t width = 0;
    if (DecodeRune(key, i, &width) == 0xFFFD) return true;
    i += width;
  }
  return false;
}

// The four hex digits of a "\\u" escape whose backslash is in[i], or -1.
int32_t Hex4After(std::string_view in, size_t i) {
  if (i + 2 > in.size() || in[i] != '\\' || in[i + 1] != 'u') return -1;
  return Hex4At(in, i + 2);
}

// Unquotes the body of a quoted value that holds a backslash, as go-logfmt does (its copy of
// encoding/json's unquote): JSON escapes and \', a surrogate pair in two \u escapes, U+FFFD for
// a lone surrogate and for a byte that is not UTF-8; a control character or a bare quote makes
// the value invalid. False when it is.
bool Unquote(std::string_view in, std::string& out) {
  out.clear();
  for (size_t i = 0; i < in.size();) {
    const auto c = static_cast<unsigned char>(in[i]);
    if (c == '\\') {
      if (i + 1 >= in.size()) return false;
      const char e = in[i + 1];
      switch (e) {
        case '"':
        case '\\':
        case '/':
        case '\'':
          out.push_back(e);
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u': {
          int32_t r = Hex4After(in, i);
          if (r < 0) return false;
          i += 6;
          if (r >= 0xD800 && r <= 0xDFFF) {
            const int32_t r2 = Hex4After(in, i);
            if (r < 0xDC00 && r2 >= 0xDC00 && r2 <= 0xDFFF) {
              AppendRune(static_cast<char32_t>(0x10000 + ((r - 0xD800) << 10) + (r2 - 0xDC00)),
                         &out);
              i += 6;
              continue;
            }
            r = 0xFFFD;
          }
          AppendRune(static_cast<char32_t>(r), &out);
          continue;
        }
        default:
          return false;
      }
      i += 2;
      continue;
    }
    if (c == '"' || c < ' ') return false;
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    size_t width = 0;
    AppendRune(DecodeRune(in, i, &width), &out);  // a stray byte: U+FFFD
    i += width;
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
    if (HasReplacementOrStrayByte(key)) return false;
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
      const std::string_view body = t.substr(vs, i - vs);
      ++i;
      // Without a backslash the value is taken as it is (go-logfmt unquotes only escapes).
      if (body.find('\\') == std::string_view::npos) {
        f(key, body);
        continue;
      }
      if (!Unquote(body, scratch)) return false;
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
