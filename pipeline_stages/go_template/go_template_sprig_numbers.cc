// The Go template engine's functions: sprig's conversions and numbers. Declared, with the other
// families, in go_template_library.h; the function table is go_template_functions.cc's.
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

bool FnAtoi(Args a, CallContext&, Value* r) {
  std::string_view s = a[0].s;
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  uint64_t u = 0;
  bool ok = !s.empty(), overflow = false;
  for (char c : s) {
    if (c < '0' || c > '9') {
      ok = false;
      break;
    }
    if (u > (UINT64_MAX - 9) / 10) {
      overflow = true;
    } else {
      u = u * 10 + (c - '0');
    }
  }
  int64_t out = 0;
  if (ok) {
    const uint64_t limit = negative ? UINT64_C(1) << 63 : static_cast<uint64_t>(INT64_MAX);
    if (overflow || u > limit) u = limit;  // strconv clamps on ErrRange
    out = negative ? static_cast<int64_t>(0 - u) : static_cast<int64_t>(u);
  }
  *r = Value::Int(out);
  return true;
}

bool FnInt(Args a, CallContext&, Value* r) {
  *r = Value::Int(CastToInt64(a[0]));
  return true;
}
bool FnInt64(Args a, CallContext&, Value* r) {
  *r = Value::Int64(CastToInt64(a[0]));
  return true;
}
bool FnFloat64(Args a, CallContext&, Value* r) {
  *r = Value::Float(CastToFloat64(a[0]));
  return true;
}

bool FnToDecimal(Args a, CallContext&, Value* r) {
  std::string s = StrVal(a[0]);
  std::string_view body = s;
  bool negative = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  uint64_t u = 0;
  auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), u, 8);
  int64_t out = 0;
  if (!body.empty() && ec == std::errc() && ptr == body.data() + body.size() &&
      u <= (negative ? UINT64_C(1) << 63 : static_cast<uint64_t>(INT64_MAX))) {
    out = negative ? static_cast<int64_t>(0 - u) : static_cast<int64_t>(u);
  }
  *r = Value::Int64(out);
  return true;
}

namespace {

bool FnSplit(CallContext& ctx, Value* r, int64_t n, std::string_view sep, std::string_view orig) {
  const auto parts = SplitN(orig, sep, n);
  auto m = std::make_shared<Map>();
  for (size_t k = 0; k < parts.size(); ++k) {
    (*m)["_" + std::to_string(k)] = Value::Own(std::string(parts[k]));
  }
  return SetMap(ctx, GoType::kMapString, std::move(m), r);
}

}  // namespace

bool FnSplitMap(Args a, CallContext& ctx, Value* r) { return FnSplit(ctx, r, -1, a[0].s, a[1].s); }
bool FnSplitn(Args a, CallContext& ctx, Value* r) {
  return FnSplit(ctx, r, a[1].i, a[0].s, a[2].s);
}
bool FnSplitList(Args a, CallContext& ctx, Value* r) {
  return SetStringList(ctx, SplitN(a[1].s, a[0].s, -1), r);
}
bool FnToStrings(Args a, CallContext& ctx, Value* r) {
  return SetStringList(ctx, StrSlice(a[0]), r);
}

namespace {

// sprig's untilStep, with the element count checked before anything is built.
bool UntilStep(CallContext& ctx, int64_t start, int64_t stop, int64_t step, List* out) {
  uint64_t count = 0;
  if (stop < start) {
    if (step >= 0) return true;
    count = (static_cast<uint64_t>(start) - static_cast<uint64_t>(stop) - 1) /
                static_cast<uint64_t>(-(step + 1) + 1) +
            1;
  } else {
    if (step <= 0) return true;
    if (stop == start) return true;
    count = (static_cast<uint64_t>(stop) - static_cast<uint64_t>(start) - 1) /
                static_cast<uint64_t>(step) +
            1;
  }
  if (count > static_cast<uint64_t>(INT64_MAX / kElementBytes) ||
      !ctx.Spend(static_cast<int64_t>(count), static_cast<int64_t>(count) * kElementBytes)) {
    if (ctx.error().empty()) ctx.Spend(INT64_MAX / 2, 0);
    return false;
  }
  out->reserve(count);
  int64_t v = start;
  for (uint64_t k = 0; k < count; ++k) {
    out->push_back(Value::Int(v));
    v = static_cast<int64_t>(static_cast<uint64_t>(v) + static_cast<uint64_t>(step));
  }
  return true;
}

}  // namespace

bool FnUntil(Args a, CallContext& ctx, Value* r) {
  List items;
  if (!UntilStep(ctx, 0, a[0].i, a[0].i < 0 ? -1 : 1, &items)) return false;
  *r = Value::MakeList(GoType::kListInt, std::move(items));
  return true;
}

bool FnUntilStep(Args a, CallContext& ctx, Value* r) {
  List items;
  if (!UntilStep(ctx, a[0].i, a[1].i, a[2].i, &items)) return false;
  *r = Value::MakeList(GoType::kListInt, std::move(items));
  return true;
}

bool FnSeq(Args a, CallContext& ctx, Value* r) {
  List items;
  int64_t start = 1, end = 0, step = 1;
  switch (a.size()) {
    case 1:
      end = a[0].i;
      if (end < start) step = -1;
      if (!UntilStep(ctx, start, end + step, step, &items)) return false;
      break;
    case 2:
      start = a[0].i, end = a[1].i;
      if (end < start) step = -1;
      if (!UntilStep(ctx, start, end + step, step, &items)) return false;
      break;
    case 3: {
      start = a[0].i, end = a[2].i, step = a[1].i;
      int64_t increment = 1;
      if (end < start) {
        increment = -1;
        if (step > 0) return SetString(ctx, "", r);
      }
      if (!UntilStep(ctx, start, end + increment, step, &items)) return false;
      break;
    }
    default:
      return SetString(ctx, "", r);
  }
  std::string out;
  for (const Value& v : items) {
    if (!out.empty()) out.push_back(' ');
    out.append(std::to_string(v.i));
    if (out.size() > ctx.max_bytes()) return ctx.TooLong();
  }
  return SetString(ctx, std::move(out), r);
}

bool FnAdd1(Args a, CallContext&, Value* r) {
  *r = Value::Int64(static_cast<int64_t>(static_cast<uint64_t>(CastToInt64(a[0])) + 1));
  return true;
}
bool FnAdd(Args a, CallContext&, Value* r) {
  uint64_t acc = 0;
  for (const Value& v : a) acc += static_cast<uint64_t>(CastToInt64(v));
  *r = Value::Int64(static_cast<int64_t>(acc));
  return true;
}
bool FnSub(Args a, CallContext&, Value* r) {
  *r = Value::Int64(static_cast<int64_t>(static_cast<uint64_t>(CastToInt64(a[0])) -
                                         static_cast<uint64_t>(CastToInt64(a[1]))));
  return true;
}
bool FnMul(Args a, CallContext&, Value* r) {
  uint64_t acc = static_cast<uint64_t>(CastToInt64(a[0]));
  for (size_t k = 1; k < a.size(); ++k) acc *= static_cast<uint64_t>(CastToInt64(a[k]));
  *r = Value::Int64(static_cast<int64_t>(acc));
  return true;
}

namespace {

bool DivMod(Args a, CallContext& ctx, Value* r, bool div) {
  const int64_t x = CastToInt64(a[0]), y = CastToInt64(a[1]);
  if (y == 0) return ctx.Fail("runtime error: integer divide by zero");
  if (x == INT64_MIN && y == -1) {
    *r = Value::Int64(div ? x : 0);  // Go wraps
  } else {
    *r = Value::Int64(div ? x / y : x % y);
  }
  return true;
}

}  // namespace

bool FnDiv(Args a, CallContext& ctx, Value* r) { return DivMod(a, ctx, r, true); }
bool FnMod(Args a, CallContext& ctx, Value* r) { return DivMod(a, ctx, r, false); }

bool FnRandInt(Args a, CallContext& ctx, Value* r) {
  const int64_t lo = a[0].i, hi = a[1].i;
  if (hi - lo <= 0) return ctx.Fail("invalid argument to Intn");
  *r = Value::Int(lo + CryptoRandomBelow(hi - lo));
  return true;
}

bool FnMax(Args a, CallContext&, Value* r) {
  int64_t acc = CastToInt64(a[0]);
  for (size_t k = 1; k < a.size(); ++k) acc = std::max(acc, CastToInt64(a[k]));
  *r = Value::Int64(acc);
  return true;
}
bool FnMin(Args a, CallContext&, Value* r) {
  int64_t acc = CastToInt64(a[0]);
  for (size_t k = 1; k < a.size(); ++k) acc = std::min(acc, CastToInt64(a[k]));
  *r = Value::Int64(acc);
  return true;
}

namespace {

// Go's math.Max / math.Min: NaN wins, and +0 beats -0 for Max (the reverse for Min).
double GoMax(double x, double y) {
  if (std::isinf(x) && x > 0) return x;
  if (std::isinf(y) && y > 0) return y;
  if (std::isnan(x) || std::isnan(y)) return std::nan("");
  if (x == 0 && x == y) return std::signbit(x) ? y : x;
  return x > y ? x : y;
}

}  // namespace

namespace {

double GoMin(double x, double y) {
  if (std::isinf(x) && x < 0) return x;
  if (std::isinf(y) && y < 0) return y;
  if (std::isnan(x) || std::isnan(y)) return std::nan("");
  if (x == 0 && x == y) return std::signbit(x) ? x : y;
  return x < y ? x : y;
}

}  // namespace

bool FnMaxf(Args a, CallContext&, Value* r) {
  double acc = CastToFloat64(a[0]);
  for (size_t k = 1; k < a.size(); ++k) acc = GoMax(acc, CastToFloat64(a[k]));
  *r = Value::Float(acc);
  return true;
}
bool FnMinf(Args a, CallContext&, Value* r) {
  double acc = CastToFloat64(a[0]);
  for (size_t k = 1; k < a.size(); ++k) acc = GoMin(acc, CastToFloat64(a[k]));
  *r = Value::Float(acc);
  return true;
}
bool FnCeil(Args a, CallContext&, Value* r) {
  *r = Value::Float(std::ceil(CastToFloat64(a[0])));
  return true;
}
bool FnFloor(Args a, CallContext&, Value* r) {
  *r = Value::Float(std::floor(CastToFloat64(a[0])));
  return true;
}
bool FnRound(Args a, CallContext&, Value* r) {
  const double round_on = a.size() > 2 ? a[2].d : 0.5;
  const double val = CastToFloat64(a[0]);
  const double pow = std::pow(10.0, static_cast<double>(a[1].i));
  const double digit = pow * val;
  double integral;
  const double frac = std::modf(digit, &integral);
  const double rounded = frac >= round_on ? std::ceil(digit) : std::floor(digit);
  *r = Value::Float(rounded / pow);
  return true;
}

namespace {

// addf, subf, mulf, divf: shopspring/decimal arithmetic on the shortest decimal form of each
// operand, as sprig does.
bool DecimalOp(Args a, CallContext& ctx, Value* r, char op, bool start_from_zero) {
  std::string error;
  Decimal acc;
  size_t first = 0;
  if (start_from_zero) {
    acc = Decimal::FromDouble(0, &error);
  } else {
    acc = Decimal::FromDouble(CastToFloat64(a[0]), &error);
    first = 1;
  }
  if (!error.empty()) return ctx.Fail(error);
  for (size_t k = first; k < a.size(); ++k) {
    const Decimal x = Decimal::FromDouble(CastToFloat64(a[k]), &error);
    if (!error.empty()) return ctx.Fail(error);
    if (!acc.Apply(op, x, &error)) return ctx.Fail(error);
    if (!ctx.Spend(static_cast<int64_t>(acc.digits()), 0)) return false;
  }
  *r = Value::Float(acc.ToDouble());
  return true;
}

}  // namespace

bool FnAddf(Args a, CallContext& ctx, Value* r) { return DecimalOp(a, ctx, r, '+', true); }
bool FnAdd1f(Args a, CallContext& ctx, Value* r) {
  Value args[2] = {a[0], Value::Int(1)};
  return DecimalOp(std::span<Value>(args, 2), ctx, r, '+', false);
}
bool FnSubf(Args a, CallContext& ctx, Value* r) { return DecimalOp(a, ctx, r, '-', false); }
bool FnMulf(Args a, CallContext& ctx, Value* r) { return DecimalOp(a, ctx, r, '*', false); }
bool FnDivf(Args a, CallContext& ctx, Value* r) { return DecimalOp(a, ctx, r, '/', false); }

}  // namespace skald::stages::go_template_internal
