// The Go template engine's functions: Go's builtins: comparisons, index, len, print, printf, html,
// js, urlquery. Declared, with the other families, in go_template_library.h; the function table is
// go_template_functions.cc's.
#include <absl/time/clock.h>
#include <openssl/rand.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>

#include "pipeline_stages/go/go_duration.h"
#include "pipeline_stages/go/go_regexp.h"
#include "pipeline_stages/go/go_string.h"
#include "pipeline_stages/go/go_time_layout.h"
#include "pipeline_stages/go_template/go_template_decimal.h"
#include "pipeline_stages/go_template/go_template_fmt.h"
#include "pipeline_stages/go_template/go_template_json.h"
#include "pipeline_stages/go_template/go_template_library.h"
#include "pipeline_stages/go_template/go_template_strings.h"

namespace skald::stages::go_template_internal {

bool FnNot(Args a, CallContext&, Value* r) {
  *r = Value::Bool(!IsTrue(a[0]));
  return true;
}

bool FnEq(Args a, CallContext& ctx, Value* r) {
  for (size_t k = 1; k < a.size(); ++k) {
    bool equal;
    std::string error;
    if (!TemplateEq(a[0], a[k], &equal, &error)) return ctx.Fail(error);
    if (equal) {
      *r = Value::Bool(true);
      return true;
    }
  }
  *r = Value::Bool(false);
  return true;
}

bool FnNe(Args a, CallContext& ctx, Value* r) {
  if (!FnEq(a, ctx, r)) return false;
  r->b = !r->b;
  return true;
}

bool FnLt(Args a, CallContext& ctx, Value* r) {
  bool less;
  std::string error;
  if (!TemplateLess(a[0], a[1], &less, &error)) return ctx.Fail(error);
  *r = Value::Bool(less);
  return true;
}

bool FnLe(Args a, CallContext& ctx, Value* r) {
  bool less, equal;
  std::string error;
  if (!TemplateLess(a[0], a[1], &less, &error)) return ctx.Fail(error);
  if (!less && !TemplateEq(a[0], a[1], &equal, &error)) return ctx.Fail(error);
  *r = Value::Bool(less || equal);
  return true;
}

bool FnGt(Args a, CallContext& ctx, Value* r) {
  if (!FnLe(a, ctx, r)) return false;
  r->b = !r->b;
  return true;
}

bool FnGe(Args a, CallContext& ctx, Value* r) {
  if (!FnLt(a, ctx, r)) return false;
  r->b = !r->b;
  return true;
}

namespace {

// Go's indexArg.
bool IndexArg(CallContext& ctx, const Value& index, size_t cap, size_t* out) {
  if (index.is_nil()) return ctx.Fail("cannot index slice/array with nil");
  if (!index.is_integer()) {
    return ctx.Fail("cannot index slice/array with type " + std::string(TypeName(index)));
  }
  if (index.i < 0 || static_cast<uint64_t>(index.i) > cap) {
    return ctx.Fail("index out of range: " + std::to_string(index.i));
  }
  *out = static_cast<size_t>(index.i);
  return true;
}

}  // namespace

bool FnIndex(Args a, CallContext& ctx, Value* r) {
  Value item = a[0];
  if (item.is_nil()) return ctx.Fail("index of untyped nil");
  for (size_t k = 1; k < a.size(); ++k) {
    const Value& index = a[k];
    if (IsStructData(item))
      return ctx.Fail("can't index item of type " + std::string(TypeName(item)));
    if (item.is_string() || item.is_list()) {
      const size_t len = Length(item);
      size_t x = 0;
      if (!IndexArg(ctx, index, len, &x)) return false;
      if (x == len) return ctx.Fail("reflect: slice index out of range");
      if (item.is_string()) {
        item = Value::Uint8(static_cast<uint8_t>(item.s[x]));
      } else {
        item = Value(item.items()[x]);
      }
    } else if (item.is_map()) {
      if (!index.is_string()) {
        if (index.is_nil()) {
          // Go: a nil key becomes the zero string.
          item = MapLookup(item, "");
        } else {
          return ctx.Fail("value has type " + std::string(TypeName(index)) + "; should be string");
        }
      } else {
        const Value found = MapLookup(item, index.s);
        if (found.is_nil() && item.type == GoType::kMapString) {
          item = Value::Borrow("");
        } else {
          item = found;
        }
      }
    } else if (item.is_nil()) {
      return ctx.Fail("index of nil pointer");
    } else {
      return ctx.Fail("can't index item of type " + std::string(IndirectTypeName(item)));
    }
  }
  *r = item;
  return true;
}

bool FnLen(Args a, CallContext& ctx, Value* r) {
  const Value& v = a[0];
  if (v.is_nil()) return ctx.Fail("reflect: call of reflect.Value.Type on zero Value");
  if (!v.is_string() && !v.is_list() && (!v.is_map() || IsStructData(v))) {
    return ctx.Fail("len of type " + std::string(IndirectTypeName(v)));
  }
  *r = Value::Int(static_cast<int64_t>(Length(v)));
  return true;
}

bool FnPrint(Args a, CallContext& ctx, Value* r) {
  std::string out;
  if (!GoSprint(a, &out, ctx.max_bytes())) return ctx.TooLong();
  return SetString(ctx, std::move(out), r);
}

bool FnPrintln(Args a, CallContext& ctx, Value* r) {
  std::string out;
  if (!GoSprintln(a, &out, ctx.max_bytes())) return ctx.TooLong();
  return SetString(ctx, std::move(out), r);
}

bool FnPrintf(Args a, CallContext& ctx, Value* r) {
  std::string out;
  if (!GoSprintf(a[0].s, a.subspan(1), &out, ctx.max_bytes())) return ctx.TooLong();
  return SetString(ctx, std::move(out), r);
}

namespace {

// text/template's evalArgs: the one string argument as it is, else fmt.Sprint of them all.
bool EvalArgs(Args a, CallContext& ctx, std::string* out) {
  if (a.size() == 1 && a[0].is_string()) {
    out->assign(a[0].s);
    return true;
  }
  if (!GoSprint(a, out, ctx.max_bytes())) return ctx.TooLong();
  return true;
}

}  // namespace

bool FnHtml(Args a, CallContext& ctx, Value* r) {
  std::string s;
  if (!EvalArgs(a, ctx, &s)) return false;
  std::string out;
  for (char c : s) {
    switch (c) {
      case '\0':
        out.append("\xef\xbf\xbd");
        break;
      case '"':
        out.append("&#34;");
        break;
      case '\'':
        out.append("&#39;");
        break;
      case '&':
        out.append("&amp;");
        break;
      case '<':
        out.append("&lt;");
        break;
      case '>':
        out.append("&gt;");
        break;
      default:
        out.push_back(c);
    }
  }
  return SetString(ctx, std::move(out), r);
}

bool FnJs(Args a, CallContext& ctx, Value* r) {
  std::string s;
  if (!EvalArgs(a, ctx, &s)) return false;
  static constexpr char kUpperHex[] = "0123456789ABCDEF";
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '\\':
          out.append("\\\\");
          break;
        case '\'':
          out.append("\\'");
          break;
        case '"':
          out.append("\\\"");
          break;
        case '<':
          out.append("\\u003C");
          break;
        case '>':
          out.append("\\u003E");
          break;
        case '&':
          out.append("\\u0026");
          break;
        case '=':
          out.append("\\u003D");
          break;
        default:
          if (c < ' ') {
            out.append("\\u00").push_back(kUpperHex[c >> 4]);
            out.push_back(kUpperHex[c & 15]);
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    size_t w;
    const char32_t rune = DecodeRune(s, i, &w);
    std::string quoted;
    AppendGoQuoted(s.substr(i, w), &quoted);
    const bool printable = !(rune == 0xFFFD && w == 1) && quoted.size() == w + 2;
    if (printable) {
      out.append(s.substr(i, w));
    } else {
      char buf[16];
      snprintf(buf, sizeof(buf), "\\u%04X", static_cast<unsigned>(rune));
      out.append(buf);
    }
    i += w;
  }
  return SetString(ctx, std::move(out), r);
}

bool FnUrlquery(Args a, CallContext& ctx, Value* r) {
  std::string s;
  if (!EvalArgs(a, ctx, &s)) return false;
  static constexpr char kUpperHex[] = "0123456789ABCDEF";
  std::string out;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out.push_back(ch);
    } else if (c == ' ') {
      out.push_back('+');
    } else {
      out.push_back('%');
      out.push_back(kUpperHex[c >> 4]);
      out.push_back(kUpperHex[c & 15]);
    }
  }
  return SetString(ctx, std::move(out), r);
}

}  // namespace skald::stages::go_template_internal
