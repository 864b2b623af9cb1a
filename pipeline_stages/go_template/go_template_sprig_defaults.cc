// The Go template engine's functions: sprig's defaults, JSON and reflection functions. Declared,
// with the other families, in go_template_library.h; the function table is
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

bool FnDefault(Args a, CallContext&, Value* r) {
  *r = (a.size() < 2 || IsEmpty(a[1])) ? a[0] : a[1];
  return true;
}
bool FnEmpty(Args a, CallContext&, Value* r) {
  *r = Value::Bool(IsEmpty(a[0]));
  return true;
}
bool FnCoalesce(Args a, CallContext&, Value* r) {
  *r = Value();
  for (const Value& v : a) {
    if (!IsEmpty(v)) {
      *r = v;
      break;
    }
  }
  return true;
}
bool FnAll(Args a, CallContext&, Value* r) {
  *r = Value::Bool(std::all_of(a.begin(), a.end(), [](const Value& v) { return !IsEmpty(v); }));
  return true;
}
bool FnAny(Args a, CallContext&, Value* r) {
  *r = Value::Bool(std::any_of(a.begin(), a.end(), [](const Value& v) { return !IsEmpty(v); }));
  return true;
}
bool FnTernary(Args a, CallContext&, Value* r) {
  *r = a[2].b ? a[0] : a[1];
  return true;
}

namespace {

bool ToJson(Args a, CallContext& ctx, Value* r, JsonStyle style, bool must) {
  std::string out, error;
  bool too_long = false;
  if (!EncodeJson(a[0], style, ctx.max_bytes(), &out, &error, &too_long)) {
    if (too_long) return ctx.TooLong();
    if (must) return ctx.Fail(error);
    out.clear();
  }
  return SetString(ctx, std::move(out), r);
}

}  // namespace

bool FnToJson(Args a, CallContext& ctx, Value* r) { return ToJson(a, ctx, r, {}, false); }
bool FnMustToJson(Args a, CallContext& ctx, Value* r) { return ToJson(a, ctx, r, {}, true); }
bool FnToPrettyJson(Args a, CallContext& ctx, Value* r) {
  return ToJson(a, ctx, r, {true, true}, false);
}
bool FnMustToPrettyJson(Args a, CallContext& ctx, Value* r) {
  return ToJson(a, ctx, r, {true, true}, true);
}
bool FnToRawJson(Args a, CallContext& ctx, Value* r) {
  // sprig panics on an encoding error here, which fails the execution.
  return ToJson(a, ctx, r, {false, false}, true);
}
bool FnMustToRawJson(Args a, CallContext& ctx, Value* r) {
  return ToJson(a, ctx, r, {false, false}, true);
}

namespace {

bool FromJson(Args a, CallContext& ctx, Value* r, bool must) {
  std::string error;
  int64_t elements = 0;
  Value v;
  const bool ok = DecodeJson(a[0].s, &v, &error, &elements);
  if (!ctx.Spend(elements, elements * kElementBytes)) return false;
  if (!ok) {
    if (must) return ctx.Fail(error);
    *r = Value();
    return true;
  }
  *r = std::move(v);
  return true;
}

}  // namespace

bool FnFromJson(Args a, CallContext& ctx, Value* r) { return FromJson(a, ctx, r, false); }
bool FnMustFromJson(Args a, CallContext& ctx, Value* r) { return FromJson(a, ctx, r, true); }

bool FnTypeOf(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, std::string(TypeName(a[0])), r);
}
bool FnTypeIs(Args a, CallContext&, Value* r) {
  *r = Value::Bool(a[0].s == TypeName(a[1]));
  return true;
}
bool FnTypeIsLike(Args a, CallContext&, Value* r) {
  const std::string_view t = TypeName(a[1]);
  *r = Value::Bool(a[0].s == t || "*" + std::string(a[0].s) == t);
  return true;
}
bool FnKindOf(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, std::string(KindName(a[0])), r);
}
bool FnKindIs(Args a, CallContext&, Value* r) {
  *r = Value::Bool(a[0].s == KindName(a[1]));
  return true;
}
bool FnDeepEqual(Args a, CallContext& ctx, Value* r) {
  int64_t budget = 1000000;
  const bool equal = DeepEqual(a[0], a[1], &budget);
  if (!ctx.Spend(1000000 - std::max<int64_t>(budget, 0), 0)) return false;
  *r = Value::Bool(equal);
  return true;
}

namespace {

// A deep copy of v, spending one element per value copied.
bool DeepCopy(CallContext& ctx, const Value& v, Value* out, int depth) {
  if (depth > 100) return ctx.Fail("deepCopy error: too deeply nested");
  if (!ctx.Spend(1, kElementBytes)) return false;
  if (v.is_list()) {
    if (!v.list) {
      *out = v;
      return true;
    }
    List items(v.items().size());
    for (size_t k = 0; k < items.size(); ++k) {
      if (!DeepCopy(ctx, v.items()[k], &items[k], depth + 1)) return false;
    }
    *out = Value::MakeList(v.type, std::move(items));
    return true;
  }
  if (v.is_map()) {
    if (v.type != GoType::kData && !v.map) {
      *out = v;
      return true;
    }
    auto m = std::make_shared<Map>();
    for (const auto& [key, item] : MapEntries(v)) {
      if (!DeepCopy(ctx, item, &(*m)[key], depth + 1)) return false;
    }
    *out = Value::MakeMap(v.type == GoType::kData ? GoType::kMapAny : v.type, std::move(m));
    return true;
  }
  if (v.type == GoType::kVersion) {
    // copystructure copies a struct's exported fields only, and a Version has none: 0.0.0.
    *out = Value::Version("");
    return true;
  }
  *out = v;
  return true;
}

}  // namespace

bool FnDeepCopy(Args a, CallContext& ctx, Value* r) { return DeepCopy(ctx, a[0], r, 0); }

}  // namespace skald::stages::go_template_internal
