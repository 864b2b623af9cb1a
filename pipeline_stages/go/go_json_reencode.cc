#include "pipeline_stages/go/go_json_reencode.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <vector>

#include "pipeline_stages/go/go_string.h"

namespace skald::stages {
namespace {

// The deepest nesting read (simdjson's default, which the json stage's parser uses too).
constexpr int kMaxDepth = 1024;

bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

class Reencoder {
 public:
  Reencoder(std::string_view text, std::string* out) : s_(text), out_(out) {}

  bool Run() {
    out_->clear();
    SkipSpace();
    if (!Value(0)) return false;
    SkipSpace();
    return i_ == s_.size();
  }

 private:
  void SkipSpace() {
    while (i_ < s_.size() && IsJsonSpace(s_[i_])) ++i_;
  }

  bool Value(int depth) {
    if (i_ >= s_.size()) return false;
    switch (s_[i_]) {
      case '{':
        return depth < kMaxDepth && Object(depth + 1);
      case '[':
        return depth < kMaxDepth && Array(depth + 1);
      case '"': {
        std::string decoded;
        if (!String(&decoded)) return false;
        AppendGoJsonString(decoded, true, false, out_);  // json-iterator's default
        return true;
      }
      case 't':
        return Literal("true");
      case 'f':
        return Literal("false");
      case 'n':
        return Literal("null");
      default:
        return Number();
    }
  }

  bool Literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    out_->append(word);
    i_ += word.size();
    return true;
  }

  // Four hex digits at i_, as a number; -1 when they are not there.
  int32_t Hex4() const { return Hex4At(s_, i_); }

  // A JSON string at i_ (its opening quote), unescaped into *decoded as json-iterator reads
  // it: a \u escape of a lone surrogate is U+FFFD, and so is a second escape that was meant to
  // complete a pair but is a surrogate that cannot.
  bool String(std::string* decoded) {
    ++i_;
    for (;;) {
      if (i_ >= s_.size()) return false;
      const char c = s_[i_];
      if (c == '"') {
        ++i_;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        decoded->push_back(c);
        ++i_;
        continue;
      }
      if (++i_ >= s_.size()) return false;
      const char e = s_[i_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          decoded->push_back(e);
          break;
        case 'b':
          decoded->push_back('\b');
          break;
        case 'f':
          decoded->push_back('\f');
          break;
        case 'n':
          decoded->push_back('\n');
          break;
        case 'r':
          decoded->push_back('\r');
          break;
        case 't':
          decoded->push_back('\t');
          break;
        case 'u': {
          const int32_t r = Hex4();
          if (r < 0) return false;
          i_ += 4;
          if (r < 0xD800 || r > 0xDFFF) {
            AppendRune(static_cast<char32_t>(r), decoded);
            break;
          }
          if (r <= 0xDBFF && i_ + 1 < s_.size() && s_[i_] == '\\' && s_[i_ + 1] == 'u') {
            i_ += 2;
            const int32_t r2 = Hex4();
            if (r2 < 0) return false;
            i_ += 4;
            if (r2 >= 0xDC00 && r2 <= 0xDFFF) {
              AppendRune(0x10000 + ((static_cast<char32_t>(r) - 0xD800) << 10) +
                             (static_cast<char32_t>(r2) - 0xDC00),
                         decoded);
            } else {
              AppendRune(0xFFFD, decoded);
              AppendRune(r2 >= 0xD800 && r2 <= 0xDFFF ? 0xFFFD : static_cast<char32_t>(r2),
                         decoded);
            }
            break;
          }
          AppendRune(0xFFFD, decoded);
          break;
        }
        default:
          return false;
      }
    }
  }

  // A JSON number at i_, written as Go writes the float64 it decodes to.
  bool Number() {
    const size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    if (i_ >= s_.size() || !IsDigit(s_[i_])) return false;
    if (s_[i_] == '0') {
      ++i_;
    } else {
      while (i_ < s_.size() && IsDigit(s_[i_])) ++i_;
    }
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (i_ >= s_.size() || !IsDigit(s_[i_])) return false;
      while (i_ < s_.size() && IsDigit(s_[i_])) ++i_;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (i_ >= s_.size() || !IsDigit(s_[i_])) return false;
      while (i_ < s_.size() && IsDigit(s_[i_])) ++i_;
    }
    // strtod rounds as Go's ParseFloat does, gives 0 (or a subnormal) below float64's range and
    // infinity above it, which Go refuses.
    const std::string token(s_.substr(start, i_ - start));
    const double v = std::strtod(token.c_str(), nullptr);
    if (std::isinf(v)) return false;
    // json-iterator's float64 writer: Go's 'e' form below 1e-6 and from 1e21 on.
    const double abs = std::fabs(v);
    AppendGoFloat(v, abs != 0 && (abs < 1e-6 || abs >= 1e21) ? 'e' : 'f', out_);
    return true;
  }

  bool Array(int depth) {
    ++i_;
    out_->push_back('[');
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == ']') {
      ++i_;
      out_->push_back(']');
      return true;
    }
    for (;;) {
      SkipSpace();
      if (!Value(depth)) return false;
      SkipSpace();
      if (i_ >= s_.size()) return false;
      if (s_[i_] == ']') {
        ++i_;
        out_->push_back(']');
        return true;
      }
      if (s_[i_] != ',') return false;
      ++i_;
      out_->push_back(',');
    }
  }

  struct Member {
    size_t start, end;  // in *out_, with the key, without the separating comma
    std::string key;
  };

  bool Object(int depth) {
    ++i_;
    const size_t object_start = out_->size();
    out_->push_back('{');
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == '}') {
      ++i_;
      out_->push_back('}');
      return true;
    }
    std::vector<Member> members;
    std::unordered_map<std::string, size_t> last;  // key -> index of its last member
    bool duplicates = false;
    for (;;) {
      SkipSpace();
      if (i_ >= s_.size() || s_[i_] != '"') return false;
      Member m;
      if (!String(&m.key)) return false;
      m.start = out_->size();
      AppendGoJsonString(m.key, true, false, out_);
      SkipSpace();
      if (i_ >= s_.size() || s_[i_] != ':') return false;
      ++i_;
      out_->push_back(':');
      SkipSpace();
      if (!Value(depth)) return false;
      m.end = out_->size();
      auto [it, fresh] = last.try_emplace(m.key, members.size());
      if (!fresh) {
        it->second = members.size();
        duplicates = true;
        had_duplicates_ = true;
      }
      members.push_back(std::move(m));
      SkipSpace();
      if (i_ >= s_.size()) return false;
      if (s_[i_] == '}') {
        ++i_;
        break;
      }
      if (s_[i_] != ',') return false;
      ++i_;
      out_->push_back(',');
    }
    if (duplicates) {
      // As a Go map: a key once, with its last value.
      std::string kept = "{";
      for (size_t k = 0; k < members.size(); ++k) {
        if (last[members[k].key] != k) continue;
        if (kept.size() > 1) kept.push_back(',');
        kept.append(*out_, members[k].start, members[k].end - members[k].start);
      }
      out_->resize(object_start);
      out_->append(kept);
    }
    out_->push_back('}');
    return true;
  }

  std::string_view s_;
  size_t i_ = 0;
  std::string* out_;

 public:
  bool had_duplicates_ = false;  // some object held a key twice
};

}  // namespace

bool ReencodeAsGoJson(std::string_view json, std::string* out, bool* had_duplicates) {
  Reencoder r(json, out);
  const bool ok = r.Run();
  if (had_duplicates != nullptr) *had_duplicates = r.had_duplicates_;
  return ok;
}

}  // namespace skald::stages
