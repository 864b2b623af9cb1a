#include "pipeline_stages/go_template/go_template_value.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "pipeline_stages/go/go_strconv.h"
#include "pipeline_stages/go/go_string.h"
#include "pipeline_stages/go/go_time_layout.h"
#include "pipeline_stages/go_template/go_template_fmt.h"

namespace skald::stages::go_template_internal {

namespace {

constexpr int kMaxPrintDepth = 100;

bool AppendValueAt(const Value& v, std::string* out, size_t limit, int depth);

bool AppendMapEntries(const Map& m, std::string* out, size_t limit, int depth) {
  out->append("map[");
  bool first = true;
  for (const auto& [key, item] : m) {
    if (!first) out->push_back(' ');
    first = false;
    out->append(key).push_back(':');
    if (!AppendValueAt(item, out, limit, depth + 1)) return false;
    if (out->size() > limit) return false;
  }
  out->push_back(']');
  return out->size() <= limit;
}

bool AppendValueAt(const Value& v, std::string* out, size_t limit, int depth) {
  if (depth > kMaxPrintDepth) return false;
  switch (v.type) {
    case GoType::kNil:
      out->append("<nil>");
      break;
    case GoType::kBool:
      out->append(v.b ? "true" : "false");
      break;
    case GoType::kInt:
    case GoType::kInt64:
    case GoType::kUint8:
      out->append(std::to_string(v.i));
      break;
    case GoType::kUint64:
      out->append(std::to_string(static_cast<uint64_t>(v.i)));
      break;
    case GoType::kFloat64:
      AppendGoFloat(v.d, 'g', -1, out);
      break;
    case GoType::kVersion:  // fmt calls its String method
      out->append(VersionOf(v).String());
      break;
    case GoType::kString:
      out->append(v.s);
      break;
    case GoType::kTime:
      out->append(FormatTimeString(v));
      break;
    case GoType::kListAny:
    case GoType::kListString:
    case GoType::kListInt:
    case GoType::kListList: {
      out->push_back('[');
      bool first = true;
      for (const Value& item : v.items()) {
        if (!first) out->push_back(' ');
        first = false;
        if (!AppendValueAt(item, out, limit, depth + 1)) return false;
        if (out->size() > limit) return false;
      }
      out->push_back(']');
      break;
    }
    case GoType::kMapAny:
    case GoType::kMapString:
      return AppendMapEntries(v.map ? *v.map : Map(), out, limit, depth);
    case GoType::kData:
      return AppendMapEntries(MapEntries(v), out, limit, depth);
  }
  return out->size() <= limit;
}

// The decimal digits of x (no sign, no leading or trailing zeros) and the position of the
// decimal point relative to them, as Go's decimalSlice. prec < 0: the shortest round trip;
// otherwise exactly `prec` significant digits, correctly rounded, then trailing zeros trimmed.
struct Digits {
  std::string d;
  int dp = 0;
};

// A double's exact decimal expansion has at most 767 significant digits and 1074 after the
// point: digits asked for beyond those are zeros.
constexpr int kMaxSignificant = 800;
constexpr int kMaxFraction = 1100;

Digits DecimalDigits(double x, int significant) {
  Digits out;
  if (x == 0) return out;
  char buf[kMaxSignificant + 32];
  std::to_chars_result r;
  if (significant < 0) {
    r = std::to_chars(buf, buf + sizeof(buf), std::fabs(x), std::chars_format::scientific);
  } else {
    r = std::to_chars(buf, buf + sizeof(buf), std::fabs(x), std::chars_format::scientific,
                      std::min(significant, kMaxSignificant) - 1);
  }
  if (r.ec != std::errc()) return out;
  const std::string_view text(buf, r.ptr - buf);
  const size_t e = text.find('e');
  for (char c : text.substr(0, e)) {
    if (c != '.') out.d.push_back(c);
  }
  int exp = 0;
  std::from_chars(text.data() + e + 1 + (text[e + 1] == '+'), text.data() + text.size(), exp);
  out.dp = exp + 1;
  while (!out.d.empty() && out.d.back() == '0') out.d.pop_back();
  return out;
}

void FmtE(bool negative, const Digits& digs, int prec, char fmt, std::string* out) {
  if (negative) out->push_back('-');
  out->push_back(digs.d.empty() ? '0' : digs.d[0]);
  if (prec > 0) {
    out->push_back('.');
    int i = 1;
    const int m = std::min(static_cast<int>(digs.d.size()), prec + 1);
    if (i < m) {
      out->append(digs.d, i, m - i);
      i = m;
    }
    for (; i <= prec; ++i) out->push_back('0');
  }
  out->push_back(fmt);
  int exp = digs.d.empty() ? 0 : digs.dp - 1;
  out->push_back(exp < 0 ? '-' : '+');
  exp = std::abs(exp);
  if (exp < 10) out->push_back('0');
  out->append(std::to_string(exp));
}

void FmtF(bool negative, const Digits& digs, int prec, std::string* out) {
  if (negative) out->push_back('-');
  const int nd = static_cast<int>(digs.d.size());
  if (digs.dp > 0) {
    int m = std::min(nd, digs.dp);
    out->append(digs.d, 0, m);
    for (; m < digs.dp; ++m) out->push_back('0');
  } else {
    out->push_back('0');
  }
  if (prec > 0) {
    out->push_back('.');
    for (int i = 0; i < prec; ++i) {
      const int j = digs.dp + i;
      out->push_back(0 <= j && j < nd ? digs.d[j] : '0');
    }
  }
}

enum BasicKind { kInvalidKind, kBoolKind, kIntKind, kFloatKind, kStringKind, kUintKind };

BasicKind BasicKindOf(const Value& v) {
  switch (v.type) {
    case GoType::kBool:
      return kBoolKind;
    case GoType::kInt:
    case GoType::kInt64:
      return kIntKind;
    case GoType::kUint8:
    case GoType::kUint64:
      return kUintKind;
    case GoType::kFloat64:
      return kFloatKind;
    case GoType::kString:
      return kStringKind;
    default:
      return kInvalidKind;
  }
}

// reflect.Kind of a non-basic value, for the nil checks of eq.
bool IsNilLike(const Value& v) { return v.type == GoType::kNil; }

// cast's trimDecimal: "12.50" -> "12", "-.5" -> "-0"; other text unchanged.
std::string TrimDecimal(std::string_view s) {
  const size_t dot = s.find('.');
  if (dot == std::string_view::npos) return std::string(s);
  const size_t sign = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
  for (size_t k = sign; k < dot; ++k) {
    if (s[k] < '0' || s[k] > '9') return std::string(s);
  }
  for (size_t k = dot + 1; k < s.size(); ++k) {
    if (s[k] < '0' || s[k] > '9') return std::string(s);
  }
  std::string head(s.substr(0, dot));
  if (head == "-" || head == "+") head += "0";
  if (head.empty()) head = "0";
  return head;
}

// Go's float64 -> int64 conversion on amd64: out of range (and NaN) gives the minimum.
int64_t FloatToInt64(double d) {
  if (std::isnan(d) || d >= 9223372036854775808.0 || d < -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(d);
}

}  // namespace

Value Value::FromData(const TemplateValue& t) {
  switch (t.kind) {
    case TemplateValue::Kind::kString:
      return Borrow(t.str);
    case TemplateValue::Kind::kInt:
      return Int64(t.i);
    case TemplateValue::Kind::kDouble:
      return Float(t.d);
    case TemplateValue::Kind::kBool:
      return Bool(t.b);
    case TemplateValue::Kind::kStringList: {
      List items;
      items.reserve(t.strings->size());
      for (const std::string& item : *t.strings) items.push_back(Borrow(item));
      return MakeList(GoType::kListString, std::move(items));
    }
    case TemplateValue::Kind::kStringMap: {
      auto m = std::make_shared<Map>();
      for (const auto& [k, v] : *t.string_map) m->emplace(k, Borrow(v));
      return MakeMap(GoType::kMapString, std::move(m));
    }
    case TemplateValue::Kind::kTime:
      return Time(absl::FromUnixSeconds(t.i) + absl::Nanoseconds(t.nanos), absl::UTCTimeZone());
    case TemplateValue::Kind::kMissing:
    case TemplateValue::Kind::kNull:
      break;
  }
  return Value();
}

std::string_view TypeName(const Value& v) {
  switch (v.type) {
    case GoType::kNil:
      return "<nil>";
    case GoType::kBool:
      return "bool";
    case GoType::kInt:
      return "int";
    case GoType::kInt64:
      return "int64";
    case GoType::kUint8:
      return "uint8";
    case GoType::kFloat64:
      return "float64";
    case GoType::kString:
      return "string";
    case GoType::kListAny:
      return "[]interface {}";
    case GoType::kListString:
      return "[]string";
    case GoType::kListInt:
      return "[]int";
    case GoType::kListList:
      return "[][]interface {}";
    case GoType::kData:
      if (v.data != nullptr && !v.data->StructType().empty()) return v.data->StructType();
      return "map[string]interface {}";
    case GoType::kMapAny:
      return "map[string]interface {}";
    case GoType::kMapString:
      return "map[string]string";
    case GoType::kTime:
      return "time.Time";
    case GoType::kUint64:
      return "uint64";
    case GoType::kVersion:
      return "*semver.Version";
  }
  return "?";
}

std::string_view KindName(const Value& v) {
  if (v.is_list()) return "slice";
  if (v.is_map()) return "map";
  switch (v.type) {
    case GoType::kNil:
      return "invalid";
    case GoType::kTime:
      return "struct";
    case GoType::kVersion:
      return "ptr";
    default:
      return TypeName(v);
  }
}

std::string_view IndirectTypeName(const Value& v) {
  return v.type == GoType::kVersion ? "semver.Version" : TypeName(v);
}

Map MapEntries(const Value& v) {
  if (v.type == GoType::kData) {
    Map m;
    v.data->ForEach([&](std::string_view name, const TemplateValue& value) {
      m.emplace(std::string(name), Value::FromData(value));
    });
    return m;
  }
  if (v.map) return *v.map;
  return {};
}

size_t Length(const Value& v) {
  if (v.is_string()) return v.s.size();
  if (v.is_list()) return v.items().size();
  if (v.type == GoType::kData) {
    size_t n = 0;
    v.data->ForEach([&](std::string_view, const TemplateValue&) { ++n; });
    return n;
  }
  if (v.map) return v.map->size();
  return 0;
}

Value MapLookup(const Value& v, std::string_view key) {
  if (v.type == GoType::kData) return Value::FromData(v.data->Lookup(key));
  if (!v.map) return Value();
  auto it = v.map->find(key);
  return it == v.map->end() ? Value() : it->second;
}

bool AppendValue(const Value& v, std::string* out, size_t limit) {
  return AppendValueAt(v, out, limit, 0);
}

bool AppendPrinted(const Value& v, std::string* out, size_t limit) {
  if (v.is_nil()) {
    out->append("<no value>");
    return out->size() <= limit;
  }
  return AppendValue(v, out, limit);
}

bool IsTrue(const Value& v) {
  switch (v.type) {
    case GoType::kNil:
      return false;
    case GoType::kBool:
      return v.b;
    case GoType::kInt:
    case GoType::kInt64:
    case GoType::kUint8:
    case GoType::kUint64:
      return v.i != 0;
    case GoType::kFloat64:
      return v.d != 0;
    case GoType::kTime:
    case GoType::kVersion:  // a pointer that is not nil
      return true;
    default:
      return Length(v) > 0;
  }
}

bool IsEmpty(const Value& v) {
  if (v.type == GoType::kTime) return false;
  return !IsTrue(v);
}

int64_t CastToInt64(const Value& v) {
  switch (v.type) {
    case GoType::kInt:
    case GoType::kInt64:
    case GoType::kUint8:
    case GoType::kUint64:  // Go's int64(u) wraps
      return v.i;
    case GoType::kFloat64:
      return FloatToInt64(v.d);
    case GoType::kBool:
      return v.b ? 1 : 0;
    case GoType::kString: {
      int64_t out = 0;
      if (v.s.empty() || !ParseGoInt(TrimDecimal(v.s), &out)) return 0;
      return out;
    }
    default:
      return 0;
  }
}

double CastToFloat64(const Value& v) {
  switch (v.type) {
    case GoType::kInt:
    case GoType::kInt64:
    case GoType::kUint8:
      return static_cast<double>(v.i);
    case GoType::kUint64:
      return static_cast<double>(static_cast<uint64_t>(v.i));
    case GoType::kFloat64:
      return v.d;
    case GoType::kBool:
      return v.b ? 1 : 0;
    case GoType::kString: {
      double out = 0;
      if (v.s.empty() || !ParseGoFloat(v.s, &out)) return 0;
      return out;
    }
    default:
      return 0;
  }
}

std::string StrVal(const Value& v) {
  if (v.is_string()) return std::string(v.s);
  std::string out;
  AppendValue(v, &out, SIZE_MAX);
  return out;
}

void AppendGoFloat(double x, char fmt, int prec, std::string* out) {
  if (std::isnan(x)) {
    out->append("NaN");
    return;
  }
  if (std::isinf(x)) {
    out->append(x > 0 ? "+Inf" : "-Inf");
    return;
  }
  const bool negative = std::signbit(x);
  if (fmt == 'f' && prec < 0) {  // the shortest digits, zeros after them (1e23: 1 and 23 zeros)
    stages::AppendGoFloat(x, 'f', out);
    return;
  }
  if (fmt == 'f') {
    char buf[320 + kMaxFraction + 16];
    const auto r = std::to_chars(buf, buf + sizeof(buf), x, std::chars_format::fixed,
                                 std::min(prec, kMaxFraction));
    if (r.ec != std::errc()) return;
    out->append(buf, r.ptr);
    for (int k = kMaxFraction; k < prec; ++k) out->push_back('0');
    return;
  }
  const bool shortest = prec < 0;
  if (fmt == 'e' || fmt == 'E') {
    const Digits digs = DecimalDigits(x, shortest ? -1 : prec + 1);
    if (shortest) prec = std::max(static_cast<int>(digs.d.size()) - 1, 0);
    FmtE(negative, digs, prec, fmt, out);
    return;
  }
  // 'g' / 'G'
  if (!shortest && prec == 0) prec = 1;
  const Digits digs = DecimalDigits(x, shortest ? -1 : prec);
  const int nd = static_cast<int>(digs.d.size());
  if (shortest) prec = nd;
  int eprec = prec;
  if (eprec > nd && nd >= digs.dp) eprec = nd;
  if (shortest) eprec = 6;
  const int exp = digs.dp - 1;
  if (nd != 0 && (exp < -4 || exp >= eprec)) {
    if (prec > nd) prec = nd;
    FmtE(negative, digs, prec - 1, fmt == 'g' ? 'e' : 'E', out);
    return;
  }
  if (nd == 0) {
    // Zero: Go's digits are empty with dp 0, which prints "0".
    FmtF(negative, digs, 0, out);
    return;
  }
  if (prec > digs.dp) prec = nd;
  FmtF(negative, digs, std::max(prec - digs.dp, 0), out);
}

bool TemplateEq(const Value& a, const Value& b, bool* equal, std::string* error) {
  const BasicKind k1 = BasicKindOf(a), k2 = BasicKindOf(b);
  *equal = false;
  if (k1 != k2) {
    if (k1 == kIntKind && k2 == kUintKind) {
      *equal = a.i >= 0 && a.i == b.i;
    } else if (k1 == kUintKind && k2 == kIntKind) {
      *equal = b.i >= 0 && a.i == b.i;
    } else if (!a.is_nil() && !b.is_nil()) {
      *error = "incompatible types for comparison: " + std::string(TypeName(a)) + " and " +
               std::string(TypeName(b));
      return false;
    }
    return true;
  }
  switch (k1) {
    case kBoolKind:
      *equal = a.b == b.b;
      return true;
    case kIntKind:
    case kUintKind:
      *equal = a.i == b.i;
      return true;
    case kFloatKind:
      *equal = a.d == b.d;
      return true;
    case kStringKind:
      *equal = a.s == b.s;
      return true;
    default:
      break;
  }
  // Neither is a basic kind: nil, time, slices, maps.
  const bool same_kind = KindName(a) == KindName(b);
  auto with_s = [](const Value& v) {  // fmt's %s of the value
    std::string out;
    GoSprintf("%s", std::span<const Value>(&v, 1), &out, 4096);
    return out;
  };
  if (!same_kind && !IsNilLike(a) && !IsNilLike(b)) {
    *error = "non-comparable types " + with_s(a) + ": " + std::string(TypeName(a)) + ", " +
             std::string(TypeName(b)) + ": " + StrVal(b);
    return false;
  }
  if (IsNilLike(a) || IsNilLike(b)) {
    *equal = IsNilLike(a) == IsNilLike(b);
    return true;
  }
  if (a.type == GoType::kVersion) {  // pointers: the same version, not an equal one
    *equal = b.type == GoType::kVersion && a.owned == b.owned;
    return true;
  }
  if (a.type != GoType::kTime) {
    *error = "non-comparable type " + with_s(b) + ": " + std::string(TypeName(b));
    return false;
  }
  *equal =
      b.type == GoType::kTime && a.time == b.time && a.zone == b.zone && a.monotonic == b.monotonic;
  return true;
}

bool TemplateLess(const Value& a, const Value& b, bool* less, std::string* error) {
  const BasicKind k1 = BasicKindOf(a), k2 = BasicKindOf(b);
  if (k1 == kInvalidKind || k2 == kInvalidKind) {
    *error = "invalid type for comparison";
    return false;
  }
  if (k1 != k2) {
    if (k1 == kIntKind && k2 == kUintKind) {
      *less = a.i < 0 || static_cast<uint64_t>(a.i) < static_cast<uint64_t>(b.i);
    } else if (k1 == kUintKind && k2 == kIntKind) {
      *less = b.i >= 0 && static_cast<uint64_t>(a.i) < static_cast<uint64_t>(b.i);
    } else {
      *error = "incompatible types for comparison: " + std::string(TypeName(a)) + " and " +
               std::string(TypeName(b));
      return false;
    }
    return true;
  }
  switch (k1) {
    case kBoolKind:
      *error = "invalid type for comparison";
      return false;
    case kFloatKind:
      *less = a.d < b.d;
      return true;
    case kStringKind:
      *less = a.s < b.s;
      return true;
    case kUintKind:
      *less = static_cast<uint64_t>(a.i) < static_cast<uint64_t>(b.i);
      return true;
    default:
      *less = a.i < b.i;
      return true;
  }
}

bool DeepEqual(const Value& a, const Value& b, int64_t* budget) {
  if (--*budget < 0) return false;
  if (TypeName(a) != TypeName(b)) return false;
  if (a.type == GoType::kData || b.type == GoType::kData) {
    if (a.type == GoType::kData && b.type == GoType::kData && a.data == b.data) return true;
    const Map ma = MapEntries(a), mb = MapEntries(b);
    if (ma.size() != mb.size()) return false;
    for (auto ia = ma.begin(), ib = mb.begin(); ia != ma.end(); ++ia, ++ib) {
      if (ia->first != ib->first || !DeepEqual(ia->second, ib->second, budget)) return false;
    }
    return true;
  }
  switch (a.type) {
    case GoType::kNil:
      return true;
    case GoType::kBool:
      return a.b == b.b;
    case GoType::kInt:
    case GoType::kInt64:
    case GoType::kUint8:
    case GoType::kUint64:
      return a.i == b.i;
    case GoType::kFloat64:
      return a.d == b.d;
    case GoType::kString:
      return a.s == b.s;
    case GoType::kVersion:  // the versions pointed to, field by field (the original decides)
      return a.s == b.s;
    case GoType::kTime:
      return a.time == b.time && a.zone == b.zone && a.monotonic == b.monotonic;
    case GoType::kMapAny:
    case GoType::kMapString: {
      if (a.map == b.map) return true;
      if (!a.map || !b.map) return false;
      if (a.map->size() != b.map->size()) return false;
      for (auto ia = a.map->begin(), ib = b.map->begin(); ia != a.map->end(); ++ia, ++ib) {
        if (ia->first != ib->first || !DeepEqual(ia->second, ib->second, budget)) return false;
      }
      return true;
    }
    default: {
      if (a.list == b.list) return true;
      if ((a.list == nullptr) != (b.list == nullptr)) return false;
      if (a.items().size() != b.items().size()) return false;
      for (size_t k = 0; k < a.items().size(); ++k) {
        if (!DeepEqual(a.items()[k], b.items()[k], budget)) return false;
      }
      return true;
    }
  }
}

std::string FormatTimeString(const Value& t) {
  std::string out = GoTimeLayout::Format("2006-01-02 15:04:05.999999999 -0700 MST", t.time, t.zone);
  if (t.monotonic != kNoMonotonic) {
    int64_t m = t.monotonic;
    out.append(" m=");
    out.push_back(m < 0 ? '-' : '+');
    const uint64_t u = m < 0 ? 0 - static_cast<uint64_t>(m) : static_cast<uint64_t>(m);
    out.append(std::to_string(u / 1000000000)).push_back('.');
    std::string frac = std::to_string(u % 1000000000);
    out.append(9 - frac.size(), '0').append(frac);
  }
  return out;
}

SemanticVersion VersionOf(const Value& v) {
  std::string ignored;
  std::optional<SemanticVersion> parsed = SemanticVersion::Parse(v.s, &ignored);
  return parsed ? std::move(*parsed) : SemanticVersion();
}

}  // namespace skald::stages::go_template_internal
