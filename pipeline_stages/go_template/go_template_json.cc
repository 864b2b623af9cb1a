#include "pipeline_stages/go_template/go_template_json.h"

#include <cmath>
#include <cstdlib>

#include "pipeline_stages/go/go_string.h"
#include "pipeline_stages/go/go_time_layout.h"

namespace skald::stages::go_template_internal {

namespace {

constexpr int kMaxJsonDepth = 1000;

class Encoder {
 public:
  Encoder(const JsonStyle& style, size_t limit, std::string* out)
      : style_(style), limit_(limit), out_(out) {}

  bool Encode(const Value& v, int depth) {
    if (out_->size() > limit_) {
      too_long_ = true;
      return false;
    }
    if (depth > kMaxJsonDepth) {
      error_ = "json: unsupported value: encountered a cycle";
      return false;
    }
    switch (v.type) {
      case GoType::kNil:
        out_->append("null");
        return true;
      case GoType::kBool:
        out_->append(v.b ? "true" : "false");
        return true;
      case GoType::kInt:
      case GoType::kInt64:
      case GoType::kUint8:
        out_->append(std::to_string(v.i));
        return true;
      case GoType::kUint64:
        out_->append(std::to_string(static_cast<uint64_t>(v.i)));
        return true;
      case GoType::kVersion:  // its MarshalJSON: the String() text, quoted
        AppendGoJsonString(VersionOf(v).String(), style_.escape_html, true, out_);
        return true;
      case GoType::kFloat64: {
        if (std::isnan(v.d) || std::isinf(v.d)) {
          std::string text;
          AppendGoFloat(v.d, 'g', -1, &text);
          error_ = "json: unsupported value: " + text;
          return false;
        }
        const double abs = std::fabs(v.d);
        const bool exp = abs != 0 && (abs < 1e-6 || abs >= 1e21);
        std::string text;
        AppendGoFloat(v.d, exp ? 'e' : 'f', -1, &text);
        const size_t n = text.size();
        if (exp && n >= 4 && text[n - 4] == 'e' && text[n - 3] == '-' && text[n - 2] == '0') {
          text.erase(n - 2, 1);
        }
        out_->append(text);
        return true;
      }
      case GoType::kString:
        AppendGoJsonString(v.s, style_.escape_html, true, out_);
        return true;
      case GoType::kTime: {
        const std::string text =
            GoTimeLayout::Format("2006-01-02T15:04:05.999999999Z07:00", v.time, v.zone);
        out_->push_back('"');
        out_->append(text);
        out_->push_back('"');
        return true;
      }
      case GoType::kListAny:
      case GoType::kListString:
      case GoType::kListInt:
      case GoType::kListList: {
        if (!v.list) {
          out_->append("null");
          return true;
        }
        out_->push_back('[');
        bool first = true;
        for (const Value& item : *v.list) {
          if (!first) out_->push_back(',');
          first = false;
          NewLine(depth + 1);
          if (!Encode(item, depth + 1)) return false;
        }
        if (!v.list->empty()) NewLine(depth);
        out_->push_back(']');
        return true;
      }
      case GoType::kMapAny:
      case GoType::kMapString:
      case GoType::kData: {
        if (v.type != GoType::kData && !v.map) {
          out_->append("null");
          return true;
        }
        const Map entries = v.type == GoType::kData ? MapEntries(v) : Map();
        const Map& m = v.type == GoType::kData ? entries : *v.map;
        out_->push_back('{');
        bool first = true;
        for (const auto& [key, item] : m) {
          if (!first) out_->push_back(',');
          first = false;
          NewLine(depth + 1);
          AppendGoJsonString(key, style_.escape_html, true, out_);
          out_->push_back(':');
          if (style_.indent) out_->push_back(' ');
          if (!Encode(item, depth + 1)) return false;
        }
        if (!m.empty()) NewLine(depth);
        out_->push_back('}');
        return true;
      }
    }
    return true;
  }

  const std::string& error() const { return error_; }
  bool too_long() const { return too_long_; }

 private:
  void NewLine(int depth) {
    if (!style_.indent) return;
    out_->push_back('\n');
    out_->append(static_cast<size_t>(depth) * 2, ' ');
  }

  const JsonStyle& style_;
  size_t limit_;
  std::string* out_;
  std::string error_;
  bool too_long_ = false;
};

// Go's quoteChar, for error messages.
std::string QuoteChar(char c) {
  if (c == '\'') return "'\\''";
  if (c == '"') return "'\"'";
  std::string quoted;
  AppendGoQuoted(std::string_view(&c, 1), &quoted);
  return "'" + quoted.substr(1, quoted.size() - 2) + "'";
}

class Decoder {
 public:
  explicit Decoder(std::string_view text) : text_(text) {}

  bool DecodeTop(Value* out) {
    SkipSpace();
    if (!DecodeValue(out, 0)) return false;
    SkipSpace();
    if (pos_ < text_.size()) {
      return Invalid("after top-level value");
    }
    return true;
  }

  const std::string& error() const { return error_; }
  int64_t elements() const { return elements_; }

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  void SkipSpace() {
    while (!AtEnd() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
                        text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Invalid(std::string_view context) {
    // Go's scanner feeds a blank at the end of the input: inside a literal or a number that
    // is the character it complains about.
    const bool in_token = context.find("literal") != std::string_view::npos;
    if (AtEnd() && in_token) {
      error_ = "invalid character ' ' " + std::string(context);
      return false;
    }
    if (AtEnd()) {
      error_ = "unexpected end of JSON input";
    } else {
      error_ = "invalid character " + QuoteChar(text_[pos_]) + " " + std::string(context);
    }
    return false;
  }

  bool DecodeValue(Value* out, int depth) {
    if (depth > kMaxJsonDepth) {
      error_ = "exceeded max depth";
      return false;
    }
    ++elements_;
    if (AtEnd()) return Invalid("looking for beginning of value");
    const char c = text_[pos_];
    switch (c) {
      case '{':
        return DecodeObject(out, depth);
      case '[':
        return DecodeArray(out, depth);
      case '"': {
        std::string s;
        if (!DecodeString(&s)) return false;
        *out = Value::Own(std::move(s));
        return true;
      }
      case 't':
        return Literal("true", Value::Bool(true), out);
      case 'f':
        return Literal("false", Value::Bool(false), out);
      case 'n':
        return Literal("null", Value(), out);
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return DecodeNumber(out);
        return Invalid("looking for beginning of value");
    }
  }

  bool Literal(std::string_view word, Value v, Value* out) {
    for (size_t k = 0; k < word.size(); ++k) {
      if (AtEnd() || text_[pos_] != word[k]) {
        if (k == 0) return Invalid("looking for beginning of value");
        return Invalid("in literal " + std::string(word) + " (expecting " + QuoteChar(word[k]) +
                       ")");
      }
      ++pos_;
    }
    *out = std::move(v);
    return true;
  }

  bool DecodeNumber(Value* out) {
    const size_t start = pos_;
    auto digit = [&]() { return !AtEnd() && text_[pos_] >= '0' && text_[pos_] <= '9'; };
    if (text_[pos_] == '-') {
      ++pos_;
      if (!digit()) return Invalid("in numeric literal");
    }
    if (text_[pos_] == '0') {
      ++pos_;
    } else {
      while (digit()) ++pos_;
    }
    if (!AtEnd() && text_[pos_] == '.') {
      ++pos_;
      if (!digit()) return Invalid("after decimal point in numeric literal");
      while (digit()) ++pos_;
    }
    if (!AtEnd() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (!AtEnd() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (!digit()) return Invalid("in exponent of numeric literal");
      while (digit()) ++pos_;
    }
    const std::string number(text_.substr(start, pos_ - start));
    const double d = std::strtod(number.c_str(), nullptr);
    if (std::isinf(d)) {
      error_ = "json: cannot unmarshal number " + number + " into Go value of type float64";
      return false;
    }
    *out = Value::Float(d);
    return true;
  }

  bool Hex4(char32_t* r) {
    *r = 0;
    for (int k = 0; k < 4; ++k) {
      if (AtEnd()) return Invalid("");
      const char c = text_[pos_];
      int v;
      if (c >= '0' && c <= '9') {
        v = c - '0';
      } else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') {
        v = (c | 0x20) - 'a' + 10;
      } else {
        return Invalid("in \\u hexadecimal character escape");
      }
      *r = *r * 16 + v;
      ++pos_;
    }
    return true;
  }

  bool DecodeString(std::string* s) {
    ++pos_;  // opening quote
    while (true) {
      if (AtEnd()) return Invalid("");
      const char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) return Invalid("in string literal");
      if (c == '\\') {
        ++pos_;
        if (AtEnd()) return Invalid("");
        const char e = text_[pos_++];
        switch (e) {
          case '"':
          case '\\':
          case '/':
            s->push_back(e);
            break;
          case 'b':
            s->push_back('\b');
            break;
          case 'f':
            s->push_back('\f');
            break;
          case 'n':
            s->push_back('\n');
            break;
          case 'r':
            s->push_back('\r');
            break;
          case 't':
            s->push_back('\t');
            break;
          case 'u': {
            char32_t r;
            if (!Hex4(&r)) return false;
            if (r >= 0xD800 && r < 0xDC00) {
              // A high surrogate: a low one must follow, else it is U+FFFD.
              const size_t save = pos_;
              char32_t low;
              if (pos_ + 1 < text_.size() && text_[pos_] == '\\' && text_[pos_ + 1] == 'u') {
                pos_ += 2;
                if (!Hex4(&low)) return false;
                if (low >= 0xDC00 && low < 0xE000) {
                  r = 0x10000 + ((r - 0xD800) << 10) + (low - 0xDC00);
                } else {
                  pos_ = save;
                  r = 0xFFFD;
                }
              } else {
                r = 0xFFFD;
              }
            } else if (r >= 0xDC00 && r < 0xE000) {
              r = 0xFFFD;
            }
            AppendRune(r, s);
            break;
          }
          default:
            --pos_;
            return Invalid("in string escape code");
        }
        continue;
      }
      size_t n;
      const char32_t r = DecodeRune(text_, pos_, &n);
      if (r == 0xFFFD && n == 1) {
        AppendRune(0xFFFD, s);
      } else {
        s->append(text_.substr(pos_, n));
      }
      pos_ += n;
    }
  }

  bool DecodeArray(Value* out, int depth) {
    ++pos_;
    List items;
    SkipSpace();
    if (!AtEnd() && text_[pos_] == ']') {
      ++pos_;
      *out = Value::MakeList(GoType::kListAny, std::move(items));
      return true;
    }
    while (true) {
      SkipSpace();
      Value item;
      if (!DecodeValue(&item, depth + 1)) return false;
      items.push_back(std::move(item));
      SkipSpace();
      if (AtEnd()) return Invalid("");
      if (text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (text_[pos_] == ']') {
        ++pos_;
        *out = Value::MakeList(GoType::kListAny, std::move(items));
        return true;
      }
      return Invalid("after array element");
    }
  }

  bool DecodeObject(Value* out, int depth) {
    ++pos_;
    auto m = std::make_shared<Map>();
    SkipSpace();
    if (!AtEnd() && text_[pos_] == '}') {
      ++pos_;
      *out = Value::MakeMap(GoType::kMapAny, std::move(m));
      return true;
    }
    while (true) {
      SkipSpace();
      if (AtEnd() || text_[pos_] != '"') {
        return Invalid("looking for beginning of object key string");
      }
      std::string key;
      if (!DecodeString(&key)) return false;
      SkipSpace();
      if (AtEnd() || text_[pos_] != ':') return Invalid("after object key");
      ++pos_;
      SkipSpace();
      Value item;
      if (!DecodeValue(&item, depth + 1)) return false;
      (*m)[std::move(key)] = std::move(item);
      SkipSpace();
      if (AtEnd()) return Invalid("");
      if (text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (text_[pos_] == '}') {
        ++pos_;
        *out = Value::MakeMap(GoType::kMapAny, std::move(m));
        return true;
      }
      return Invalid("after object key:value pair");
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
  int64_t elements_ = 0;
};

}  // namespace

bool EncodeJson(const Value& v, const JsonStyle& style, size_t limit, std::string* out,
                std::string* error, bool* too_long) {
  Encoder encoder(style, limit, out);
  const bool ok = encoder.Encode(v, 0) && out->size() <= limit;
  *too_long = encoder.too_long() || out->size() > limit;
  if (!ok && !*too_long) *error = encoder.error();
  return ok;
}

bool DecodeJson(std::string_view text, Value* out, std::string* error, int64_t* elements) {
  Decoder decoder(text);
  const bool ok = decoder.DecodeTop(out);
  *elements = decoder.elements();
  if (!ok) *error = decoder.error();
  return ok;
}

}  // namespace skald::stages::go_template_internal
