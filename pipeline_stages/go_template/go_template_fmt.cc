#include "pipeline_stages/go_template/go_template_fmt.h"

#include <iterator>

#include "pipeline_stages/go/go_string.h"

// A port of the parts of Go's fmt (print.go, format.go) that template values reach.

namespace skald::stages::go_template_internal {

namespace {

constexpr char kLowerDigits[] = "0123456789abcdefx";
constexpr char kUpperDigits[] = "0123456789ABCDEFX";

size_t RuneCount(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++n) {
    size_t w;
    DecodeRune(s, i, &w);
    i += w;
  }
  return n;
}

class Printer {
 public:
  Printer(std::string* out, size_t limit) : out_(out), limit_(limit) {}

  bool ok() const { return ok_ && out_->size() <= limit_; }

  void ClearFlags() {
    sharp_ = zero_ = plus_ = minus_ = space_ = false;
    sharp_v_ = plus_v_ = false;
    wid_present_ = prec_present_ = false;
    wid_ = prec_ = 0;
  }

  void PrintArg(const Value& arg, char32_t verb) {
    if (!ok()) return;
    if (arg.is_nil()) {
      if (verb == 'T' || verb == 'v') {
        PadString("<nil>");
      } else {
        BadVerb(arg, verb);
      }
      return;
    }
    if (verb == 'T') {
      Pad(Truncate(TypeName(arg)));
      return;
    }
    if (verb == 'p') {
      BadVerb(arg, verb);
      return;
    }
    PrintValue(arg, verb, 0);
  }

  void PrintValue(const Value& v, char32_t verb, int depth) {
    if (!ok()) return;
    if (depth > 100) {
      ok_ = false;
      return;
    }
    switch (v.type) {
      case GoType::kNil:
        // A nil inside a slice or map (an interface{} holding nothing).
        if (sharp_v_) {
          out_->append("interface {}(nil)");
        } else {
          out_->append("<nil>");
        }
        return;
      case GoType::kBool:
        if (verb == 't' || verb == 'v') {
          PadString(v.b ? "true" : "false");
        } else {
          BadVerb(v, verb);
        }
        return;
      case GoType::kInt:
      case GoType::kInt64:
      case GoType::kUint8:
      case GoType::kUint64:
        FmtIntegerVerb(static_cast<uint64_t>(v.i), !v.is_unsigned(), verb, v);
        return;
      case GoType::kVersion:
        PrintVersion(v, verb, depth);
        return;
      case GoType::kFloat64:
        FmtFloatVerb(v.d, verb, v);
        return;
      case GoType::kString:
        FmtStringVerb(v.s, verb, v);
        return;
      case GoType::kTime:
        if (verb == 'v' || verb == 's' || verb == 'x' || verb == 'X' || verb == 'q') {
          const bool sharp_v = sharp_v_;
          sharp_v_ = false;
          FmtStringVerb(FormatTimeString(v), verb, v);
          sharp_v_ = sharp_v;
        } else {
          BadVerb(v, verb);
        }
        return;
      case GoType::kListAny:
      case GoType::kListString:
      case GoType::kListInt:
      case GoType::kListList: {
        if (sharp_v_) {
          out_->append(TypeName(v)).push_back('{');
        } else {
          out_->push_back('[');
        }
        bool first = true;
        for (const Value& item : v.items()) {
          if (!first) out_->append(sharp_v_ ? ", " : " ");
          first = false;
          PrintValue(item, verb, depth + 1);
          if (!ok()) return;
        }
        out_->push_back(sharp_v_ ? '}' : ']');
        return;
      }
      case GoType::kMapAny:
      case GoType::kMapString:
      case GoType::kData: {
        const Map entries = v.type == GoType::kData ? MapEntries(v) : Map();
        static const Map kNone;
        const Map& m = v.type == GoType::kData ? entries : (v.map ? *v.map : kNone);
        if (sharp_v_) {
          out_->append(TypeName(v)).push_back('{');
        } else {
          out_->append("map[");
        }
        bool first = true;
        for (const auto& [key, item] : m) {
          if (!first) out_->append(sharp_v_ ? ", " : " ");
          first = false;
          FmtStringVerb(key, verb, Value::Borrow(key));
          out_->push_back(':');
          PrintValue(item, verb, depth + 1);
          if (!ok()) return;
        }
        out_->push_back(sharp_v_ ? '}' : ']');
        return;
      }
    }
  }

  // A *semver.Version: its String method for the verbs fmt gives a Stringer (%v %+v %s %q %x
  // %X), else the struct it points to as fmt prints a pointer to a struct ("&{1 2 3 ...}",
  // %#v "&semver.Version{major:0x1, ...}"). Inside a slice or map Go would print the pointer's
  // address for those verbs instead: an address no two runs share, so the struct stands in.
  void PrintVersion(const Value& v, char32_t verb, int depth) {
    const SemanticVersion version = VersionOf(v);
    if (!sharp_v_ && (verb == 'v' || verb == 's' || verb == 'x' || verb == 'X' || verb == 'q')) {
      FmtStringVerb(version.String(), verb, v);
      return;
    }
    static constexpr std::string_view kFields[] = {"major", "minor",    "patch",
                                                   "pre",   "metadata", "original"};
    const Value values[] = {Value::Uint64(version.major),    Value::Uint64(version.minor),
                            Value::Uint64(version.patch),    Value::Borrow(version.prerelease),
                            Value::Borrow(version.metadata), Value::Borrow(version.original)};
    out_->append(sharp_v_ ? "&semver.Version{" : "&{");
    for (size_t k = 0; k < std::size(values); ++k) {
      if (k > 0) out_->append(sharp_v_ ? ", " : " ");
      if (sharp_v_) out_->append(kFields[k]).push_back(':');
      PrintValue(values[k], verb, depth + 1);
      if (!ok()) return;
    }
    out_->push_back('}');
  }

  // State of the current verb, set by the Sprintf loop.
  bool sharp_ = false, zero_ = false, plus_ = false, minus_ = false, space_ = false;
  bool sharp_v_ = false, plus_v_ = false;
  bool wid_present_ = false, prec_present_ = false;
  int wid_ = 0, prec_ = 0;

  void BadVerb(const Value& arg, char32_t verb) {
    out_->append("%!");
    AppendRune(verb, out_);
    out_->push_back('(');
    if (arg.is_nil()) {
      out_->append("<nil>");
    } else {
      out_->append(TypeName(arg)).push_back('=');
      const bool sharp = sharp_, zero = zero_, plus = plus_, minus = minus_, space = space_;
      const bool sharp_v = sharp_v_, wid = wid_present_, prec = prec_present_;
      sharp_v_ = false;
      PrintArg(arg, 'v');
      sharp_ = sharp, zero_ = zero, plus_ = plus, minus_ = minus, space_ = space;
      sharp_v_ = sharp_v, wid_present_ = wid, prec_present_ = prec;
    }
    out_->push_back(')');
  }

  void WritePadding(int n) {
    if (n <= 0) return;
    if (out_->size() + static_cast<size_t>(n) > limit_) {
      ok_ = false;
      return;
    }
    out_->append(static_cast<size_t>(n), zero_ && !minus_ ? '0' : ' ');
  }

  void Pad(std::string_view s) {
    if (!wid_present_ || wid_ == 0) {
      out_->append(s);
      return;
    }
    const int width = wid_ - static_cast<int>(RuneCount(s));
    if (!minus_) {
      WritePadding(width);
      out_->append(s);
    } else {
      out_->append(s);
      WritePadding(width);
    }
  }
  void PadString(std::string_view s) { Pad(s); }

  void FmtIntegerVerb(uint64_t u, bool is_signed, char32_t verb, const Value& v) {
    switch (verb) {
      case 'v':
        if (sharp_v_ && !is_signed) {
          const bool sharp = sharp_;
          sharp_ = true;
          FmtInteger(u, 16, false, 'v', kLowerDigits);
          sharp_ = sharp;
        } else {
          FmtInteger(u, 10, is_signed, verb, kLowerDigits);
        }
        return;
      case 'd':
        FmtInteger(u, 10, is_signed, verb, kLowerDigits);
        return;
      case 'b':
        FmtInteger(u, 2, is_signed, verb, kLowerDigits);
        return;
      case 'o':
      case 'O':
        FmtInteger(u, 8, is_signed, verb, kLowerDigits);
        return;
      case 'x':
        FmtInteger(u, 16, is_signed, verb, kLowerDigits);
        return;
      case 'X':
        FmtInteger(u, 16, is_signed, verb, kUpperDigits);
        return;
      case 'c': {
        std::string s;
        AppendRune(u > 0x10FFFF ? 0xFFFD : static_cast<char32_t>(u), &s);
        Pad(s);
        return;
      }
      case 'q': {
        std::string r;
        AppendRune(u > 0x10FFFF ? 0xFFFD : static_cast<char32_t>(u), &r);
        std::string quoted;
        if (plus_) {
          AppendGoQuotedAscii(r, &quoted);
        } else {
          AppendGoQuoted(r, &quoted);
        }
        // A rune literal: 'x' rather than "x".
        if (quoted.size() >= 2) {
          std::string inner = quoted.substr(1, quoted.size() - 2);
          if (inner == "\\\"") inner = "\"";
          if (inner == "'") inner = "\\'";
          quoted = "'" + inner + "'";
        }
        Pad(quoted);
        return;
      }
      case 'U':
        FmtUnicode(u);
        return;
      default:
        BadVerb(v, verb);
    }
  }

  void FmtInteger(uint64_t u, int base, bool is_signed, char32_t verb, const char* digits) {
    const bool negative = is_signed && static_cast<int64_t>(u) < 0;
    if (negative) u = 0 - u;
    int prec = 0;
    if (prec_present_) {
      prec = prec_;
      if (prec == 0 && u == 0) {
        const bool zero = zero_;
        zero_ = false;
        WritePadding(wid_);
        zero_ = zero;
        return;
      }
    } else if (zero_ && !minus_ && wid_present_) {
      prec = wid_;
      if (negative || plus_ || space_) --prec;
    }
    if (prec > static_cast<int>(limit_)) {
      ok_ = false;
      return;
    }
    std::string buf;
    do {
      buf.push_back(digits[u % base]);
      u /= base;
    } while (u != 0);
    while (static_cast<int>(buf.size()) < prec) buf.push_back('0');
    if (sharp_) {
      switch (base) {
        case 2:
          buf.append("b0");
          break;
        case 8:
          if (buf.back() != '0') buf.push_back('0');
          break;
        case 16:
          buf.push_back(digits[16]);
          buf.push_back('0');
          break;
        default:
          break;
      }
    }
    if (verb == 'O') buf.append("o0");
    if (negative) {
      buf.push_back('-');
    } else if (plus_) {
      buf.push_back('+');
    } else if (space_) {
      buf.push_back(' ');
    }
    std::string text(buf.rbegin(), buf.rend());
    const bool zero = zero_;
    zero_ = false;
    Pad(text);
    zero_ = zero;
  }

  void FmtUnicode(uint64_t u) {
    int prec = 4;
    if (prec_present_ && prec_ > 4) prec = prec_;
    if (prec > static_cast<int>(limit_)) {
      ok_ = false;
      return;
    }
    std::string hex;
    do {
      hex.push_back(kUpperDigits[u & 15]);
      u >>= 4;
    } while (u != 0);
    while (static_cast<int>(hex.size()) < prec) hex.push_back('0');
    std::string text = "U+" + std::string(hex.rbegin(), hex.rend());
    const uint64_t r = std::stoull(text.substr(2), nullptr, 16);
    if (sharp_ && r <= 0x10FFFF) {
      std::string quoted;
      std::string rune;
      AppendRune(static_cast<char32_t>(r), &rune);
      AppendGoQuoted(rune, &quoted);
      if (quoted.size() == rune.size() + 2) text += " '" + rune + "'";
    }
    const bool zero = zero_;
    zero_ = false;
    Pad(text);
    zero_ = zero;
  }

  void FmtFloatVerb(double x, char32_t verb, const Value& v) {
    switch (verb) {
      case 'v':
        FmtFloat(x, 'g', -1);
        return;
      case 'g':
      case 'G':
        FmtFloat(x, static_cast<char>(verb), -1);
        return;
      case 'f':
      case 'e':
      case 'E':
        FmtFloat(x, static_cast<char>(verb), 6);
        return;
      case 'F':
        FmtFloat(x, 'f', 6);
        return;
      default:
        BadVerb(v, verb);
    }
  }

  void FmtFloat(double x, char verb, int prec) {
    if (prec_present_) prec = prec_;
    if (prec > static_cast<int>(limit_)) {
      ok_ = false;
      return;
    }
    std::string num = "+";
    AppendGoFloat(x, verb, prec, &num);
    if (num[1] == '-' || num[1] == '+') {
      num.erase(0, 1);
    }
    if (space_ && num[0] == '+' && !plus_) num[0] = ' ';
    if (num[1] == 'I' || num[1] == 'N') {
      const bool zero = zero_;
      zero_ = false;
      if (num[1] == 'N' && !space_ && !plus_) num.erase(0, 1);
      Pad(num);
      zero_ = zero;
      return;
    }
    if (sharp_) {
      int digits = 0;
      if (verb == 'g' || verb == 'G') digits = prec < 0 ? 6 : prec;
      std::string tail;
      bool has_point = false, saw_nonzero = false;
      for (size_t i = 1; i < num.size(); ++i) {
        const char c = num[i];
        if (c == '.') {
          has_point = true;
        } else if (c == 'e' || c == 'E') {
          tail = num.substr(i);
          num.resize(i);
          break;
        } else {
          if (c != '0') saw_nonzero = true;
          if (saw_nonzero) --digits;
        }
      }
      if (!has_point) {
        if (num.size() == 2 && num[1] == '0') --digits;
        num.push_back('.');
      }
      while (digits-- > 0) num.push_back('0');
      num += tail;
    }
    if (plus_ || num[0] != '+') {
      if (zero_ && !minus_ && wid_present_ && wid_ > static_cast<int>(num.size())) {
        out_->push_back(num[0]);
        WritePadding(wid_ - static_cast<int>(num.size()));
        out_->append(num, 1);
        return;
      }
      Pad(num);
      return;
    }
    Pad(std::string_view(num).substr(1));
  }

  std::string_view Truncate(std::string_view s) const {
    if (!prec_present_) return s;
    int n = prec_;
    for (size_t i = 0; i < s.size();) {
      if (--n < 0) return s.substr(0, i);
      size_t w;
      DecodeRune(s, i, &w);
      i += w;
    }
    return s;
  }

  void FmtStringVerb(std::string_view s, char32_t verb, const Value& v) {
    switch (verb) {
      case 'v':
        if (sharp_v_) {
          FmtQ(s);
        } else {
          Pad(Truncate(s));
        }
        return;
      case 's':
        Pad(Truncate(s));
        return;
      case 'x':
        FmtSx(s, kLowerDigits);
        return;
      case 'X':
        FmtSx(s, kUpperDigits);
        return;
      case 'q':
        FmtQ(s);
        return;
      default:
        BadVerb(v, verb);
    }
  }

  void FmtSx(std::string_view s, const char* digits) {
    int length = static_cast<int>(s.size());
    if (prec_present_ && prec_ < length) length = prec_;
    int width = 2 * length;
    if (width > 0) {
      if (space_) {
        if (sharp_) width *= 2;
        width += length - 1;
      } else if (sharp_) {
        width += 2;
      }
    } else {
      if (wid_present_) WritePadding(wid_);
      return;
    }
    if (wid_present_ && wid_ > width && !minus_) WritePadding(wid_ - width);
    if (sharp_) out_->push_back('0'), out_->push_back(digits[16]);
    for (int i = 0; i < length; ++i) {
      if (space_ && i > 0) {
        out_->push_back(' ');
        if (sharp_) out_->push_back('0'), out_->push_back(digits[16]);
      }
      const auto c = static_cast<unsigned char>(s[i]);
      out_->push_back(digits[c >> 4]);
      out_->push_back(digits[c & 15]);
    }
    if (wid_present_ && wid_ > width && minus_) WritePadding(wid_ - width);
  }

  void FmtQ(std::string_view s) {
    s = Truncate(s);
    const bool can_backquote = [&] {
      for (size_t i = 0; i < s.size();) {
        size_t w;
        const char32_t r = DecodeRune(s, i, &w);
        if (r == 0xFFFD && w == 1) return false;
        if (r == '`' || r == 0xFEFF) return false;
        if (r < ' ' && r != '\t') return false;
        if (r == 0x7F) return false;
        i += w;
      }
      return true;
    }();
    if (sharp_ && can_backquote) {
      Pad("`" + std::string(s) + "`");
      return;
    }
    std::string quoted;
    if (plus_) {
      AppendGoQuotedAscii(s, &quoted);
    } else {
      AppendGoQuoted(s, &quoted);
    }
    Pad(quoted);
  }

  std::string* out_;
  size_t limit_;
  bool ok_ = true;
};

bool TooLarge(int64_t x) { return x > 1000000 || x < -1000000; }

// Go's parsenum: a decimal number at format[start, end).
bool ParseNum(std::string_view format, size_t* i, int* num) {
  const size_t start = *i;
  int64_t n = 0;
  while (*i < format.size() && format[*i] >= '0' && format[*i] <= '9') {
    if (TooLarge(n)) {  // Go gives up on the rest of the format ("%!(NOVERB)")
      *i = format.size();
      *num = 0;
      return false;
    }
    n = n * 10 + (format[*i] - '0');
    ++*i;
  }
  *num = static_cast<int>(n);
  return *i > start;
}

}  // namespace

void AppendGoQuotedAscii(std::string_view s, std::string* out) {
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    size_t n;
    const char32_t r = DecodeRune(s, i, &n);
    if (r < 0x80 || (r == 0xFFFD && n == 1)) {
      // ASCII and invalid bytes: as strconv.Quote writes them.
      std::string quoted;
      AppendGoQuoted(s.substr(i, n), &quoted);
      out->append(quoted, 1, quoted.size() - 2);
    } else {
      if (r < 0x10000) {
        AppendHexEscape("\\u", r, 4, out);
      } else {
        AppendHexEscape("\\U", r, 8, out);
      }
    }
    i += n;
  }
  out->push_back('"');
}

bool GoSprint(std::span<const Value> args, std::string* out, size_t limit) {
  Printer p(out, limit);
  bool prev_string = false;
  for (size_t k = 0; k < args.size(); ++k) {
    const bool is_string = args[k].is_string();
    if (k > 0 && !is_string && !prev_string) out->push_back(' ');
    p.ClearFlags();
    p.PrintArg(args[k], 'v');
    if (!p.ok()) return false;
    prev_string = is_string;
  }
  return p.ok();
}

bool GoSprintln(std::span<const Value> args, std::string* out, size_t limit) {
  Printer p(out, limit);
  for (size_t k = 0; k < args.size(); ++k) {
    if (k > 0) out->push_back(' ');
    p.ClearFlags();
    p.PrintArg(args[k], 'v');
    if (!p.ok()) return false;
  }
  out->push_back('\n');
  return p.ok();
}

bool GoSprintf(std::string_view format, std::span<const Value> args, std::string* out,
               size_t limit) {
  Printer p(out, limit);
  const size_t end = format.size();
  size_t arg_num = 0;
  bool after_index = false;
  bool reordered = false;
  const size_t num_args = args.size();

  // Go's argNumber: an optional [n] at format[i].
  auto arg_number = [&](size_t i, bool* good_arg_num) -> size_t {
    if (i >= end || format[i] != '[') return i;
    reordered = true;
    size_t k = i + 1;
    int index = 0;
    size_t close = format.find(']', i);
    if (close == std::string_view::npos) {
      *good_arg_num = false;
      return i + 1;
    }
    if (!ParseNum(format, &k, &index) || k != close) {
      *good_arg_num = false;
      return close + 1;
    }
    index -= 1;
    if (index >= 0 && static_cast<size_t>(index) < num_args) {
      arg_num = static_cast<size_t>(index);
      after_index = true;
    } else {
      *good_arg_num = false;
    }
    return close + 1;
  };
  // Go's intFromArg.
  auto int_from_arg = [&](int* num) -> bool {
    bool is_int = false;
    *num = 0;
    if (arg_num < num_args) {
      const Value& a = args[arg_num];
      if (a.is_integer()) {
        *num = static_cast<int>(a.i);
        is_int = true;
        if (TooLarge(a.i)) {
          *num = 0;
          is_int = false;
        }
      }
      ++arg_num;
    }
    return is_int;
  };

  for (size_t i = 0; i < end;) {
    bool good_arg_num = true;
    const size_t lasti = i;
    while (i < end && format[i] != '%') ++i;
    if (i > lasti) out->append(format.substr(lasti, i - lasti));
    if (out->size() > limit) return false;
    if (i >= end) break;
    ++i;  // past '%'
    p.ClearFlags();
    for (; i < end; ++i) {
      const char c = format[i];
      if (c == '#') {
        p.sharp_ = true;
      } else if (c == '0') {
        p.zero_ = true;
      } else if (c == '+') {
        p.plus_ = true;
      } else if (c == '-') {
        p.minus_ = true;
      } else if (c == ' ') {
        p.space_ = true;
      } else {
        break;
      }
    }
    after_index = false;
    i = arg_number(i, &good_arg_num);
    // Width.
    if (i < end && format[i] == '*') {
      ++i;
      p.wid_present_ = int_from_arg(&p.wid_);
      if (!p.wid_present_) out->append("%!(BADWIDTH)");
      if (p.wid_ < 0) {
        p.wid_ = -p.wid_;
        p.minus_ = true;
        p.zero_ = false;
      }
      after_index = false;
    } else {
      p.wid_present_ = ParseNum(format, &i, &p.wid_);
      if (after_index && p.wid_present_) good_arg_num = false;
    }
    // Precision.
    if (i + 1 < end && format[i] == '.') {
      ++i;
      if (after_index) good_arg_num = false;
      after_index = false;
      i = arg_number(i, &good_arg_num);
      if (i < end && format[i] == '*') {
        ++i;
        p.prec_present_ = int_from_arg(&p.prec_);
        if (p.prec_ < 0) {
          p.prec_ = 0;
          p.prec_present_ = false;
        }
        if (!p.prec_present_) out->append("%!(BADPREC)");
        after_index = false;
      } else {
        p.prec_present_ = ParseNum(format, &i, &p.prec_);
        if (!p.prec_present_) {
          p.prec_ = 0;
          p.prec_present_ = true;
        }
      }
    }
    if (!after_index) i = arg_number(i, &good_arg_num);
    if (i >= end) {
      out->append("%!(NOVERB)");
      break;
    }
    size_t size;
    const char32_t verb = DecodeRune(format, i, &size);
    i += size;
    if (p.wid_ > static_cast<int>(limit) || p.prec_ > static_cast<int>(limit)) return false;
    if (verb == '%') {
      out->push_back('%');
    } else if (!good_arg_num) {
      out->append("%!");
      AppendRune(verb, out);
      out->append("(BADINDEX)");
    } else if (arg_num >= num_args) {
      out->append("%!");
      AppendRune(verb, out);
      out->append("(MISSING)");
    } else {
      if (verb == 'v') {
        p.sharp_v_ = p.sharp_;
        p.sharp_ = false;
        p.plus_v_ = p.plus_;
        p.plus_ = false;
      }
      p.PrintArg(args[arg_num], verb);
      ++arg_num;
    }
    if (!p.ok()) return false;
  }
  if (!reordered && arg_num < num_args) {
    p.ClearFlags();
    out->append("%!(EXTRA ");
    for (size_t k = arg_num; k < num_args; ++k) {
      if (k > arg_num) out->append(", ");
      if (args[k].is_nil()) {
        out->append("<nil>");
      } else {
        out->append(TypeName(args[k])).push_back('=');
        p.PrintArg(args[k], 'v');
      }
    }
    out->push_back(')');
  }
  return p.ok();
}

}  // namespace skald::stages::go_template_internal
