// The Go template engine's functions: sprig's lists. Declared, with the other families,
// in go_template_library.h; the function table is go_template_functions.cc's.
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

bool FnList(Args a, CallContext& ctx, Value* r) {
  return SetList(ctx, GoType::kListAny, List(a.begin(), a.end()), r);
}

namespace {

bool CopyList(CallContext& ctx, const Value& v, std::string_view what, List* out) {
  if (!v.is_list()) return NotAList(ctx, v, what);
  if (!ctx.Spend(static_cast<int64_t>(v.items().size()),
                 static_cast<int64_t>(v.items().size()) * kElementBytes)) {
    return false;
  }
  out->assign(v.items().begin(), v.items().end());
  return true;
}

}  // namespace

bool FnPush(Args a, CallContext& ctx, Value* r) {
  List items;
  if (!CopyList(ctx, a[0], "Cannot push on type ", &items)) return false;
  items.push_back(a[1]);
  return SetList(ctx, GoType::kListAny, std::move(items), r);
}
bool FnPrepend(Args a, CallContext& ctx, Value* r) {
  List items;
  if (!CopyList(ctx, a[0], "Cannot prepend on type ", &items)) return false;
  items.insert(items.begin(), a[1]);
  return SetList(ctx, GoType::kListAny, std::move(items), r);
}

bool FnChunk(Args a, CallContext& ctx, Value* r) {
  const int64_t size = a[0].i;
  const Value& v = a[1];
  if (!v.is_list()) return NotAList(ctx, v, "Cannot chunk type ");
  const auto& items = v.items();
  const auto l = static_cast<int64_t>(items.size());
  if (size <= 0) return ctx.Fail("runtime error: makeslice: len out of range");
  const int64_t chunks = (l - 1 + (l == 0 ? 0 : 0)) / size + 1 - (l == 0 ? 1 : 0);
  List out;
  if (!ctx.Spend(l + chunks, (l + chunks) * kElementBytes)) return false;
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t clen = size;
    if (c == chunks - 1) {
      clen = l % size;
      if (clen == 0) clen = size;
    }
    List chunk(items.begin() + c * size, items.begin() + c * size + clen);
    out.push_back(Value::MakeList(GoType::kListAny, std::move(chunk)));
  }
  *r = Value::MakeList(GoType::kListList, std::move(out));
  return true;
}

bool FnFirst(Args a, CallContext& ctx, Value* r) {
  if (!a[0].is_list()) return NotAList(ctx, a[0], "Cannot find first on type ");
  *r = a[0].items().empty() ? Value() : a[0].items().front();
  return true;
}
bool FnLast(Args a, CallContext& ctx, Value* r) {
  if (!a[0].is_list()) return NotAList(ctx, a[0], "Cannot find last on type ");
  *r = a[0].items().empty() ? Value() : a[0].items().back();
  return true;
}
bool FnRest(Args a, CallContext& ctx, Value* r) {
  if (!a[0].is_list()) return NotAList(ctx, a[0], "Cannot find rest on type ");
  const auto& items = a[0].items();
  if (items.empty()) {
    *r = Value::MakeList(GoType::kListAny, {});
    r->list = nullptr;
    return true;
  }
  return SetList(ctx, GoType::kListAny, List(items.begin() + 1, items.end()), r);
}
bool FnInitial(Args a, CallContext& ctx, Value* r) {
  if (!a[0].is_list()) return NotAList(ctx, a[0], "Cannot find initial on type ");
  const auto& items = a[0].items();
  if (items.empty()) {
    *r = Value::MakeList(GoType::kListAny, {});
    r->list = nullptr;
    return true;
  }
  return SetList(ctx, GoType::kListAny, List(items.begin(), items.end() - 1), r);
}
bool FnReverse(Args a, CallContext& ctx, Value* r) {
  List items;
  if (!CopyList(ctx, a[0], "Cannot find reverse on type ", &items)) return false;
  std::reverse(items.begin(), items.end());
  return SetList(ctx, GoType::kListAny, std::move(items), r);
}
bool FnJoin(Args a, CallContext& ctx, Value* r) {
  std::string out;
  bool first = true;
  for (const std::string& part : StrSlice(a[1])) {
    if (!first) out.append(a[0].s);
    first = false;
    out.append(part);
    if (out.size() > ctx.max_bytes()) return ctx.TooLong();
  }
  return SetString(ctx, std::move(out), r);
}

bool FnSortAlpha(Args a, CallContext& ctx, Value* r) {
  std::vector<std::string> items = a[0].is_list() ? StrSlice(a[0]) : std::vector{StrVal(a[0])};
  std::sort(items.begin(), items.end());
  return SetStringList(ctx, items, r);
}
bool FnCompact(Args a, CallContext& ctx, Value* r) {
  List items;
  if (!CopyList(ctx, a[0], "Cannot compact on type ", &items)) return false;
  std::erase_if(items, [](const Value& v) { return IsEmpty(v); });
  return SetList(ctx, GoType::kListAny, std::move(items), r);
}

namespace {

bool InList(CallContext& ctx, std::span<const Value> haystack, const Value& needle, bool* found) {
  for (const Value& h : haystack) {
    int64_t budget = 100000;
    const bool equal = DeepEqual(needle, h, &budget);
    if (!ctx.Spend(100000 - std::max<int64_t>(budget, 0), 0)) return false;
    if (equal) {
      *found = true;
      return true;
    }
  }
  *found = false;
  return true;
}

}  // namespace

bool FnUniq(Args a, CallContext& ctx, Value* r) {
  if (!a[0].is_list()) return NotAList(ctx, a[0], "Cannot find uniq on type ");
  List out;
  for (const Value& item : a[0].items()) {
    bool found;
    if (!InList(ctx, out, item, &found)) return false;
    if (!found) out.push_back(item);
  }
  return SetList(ctx, GoType::kListAny, std::move(out), r);
}
bool FnWithout(Args a, CallContext& ctx, Value* r) {
  if (!a[0].is_list()) return NotAList(ctx, a[0], "Cannot find without on type ");
  List out;
  for (const Value& item : a[0].items()) {
    bool found;
    if (!InList(ctx, a.subspan(1), item, &found)) return false;
    if (!found) out.push_back(item);
  }
  return SetList(ctx, GoType::kListAny, std::move(out), r);
}
bool FnHas(Args a, CallContext& ctx, Value* r) {
  if (a[1].is_nil()) {
    *r = Value::Bool(false);
    return true;
  }
  if (!a[1].is_list()) return NotAList(ctx, a[1], "Cannot find has on type ");
  bool found;
  if (!InList(ctx, a[1].items(), a[0], &found)) return false;
  *r = Value::Bool(found);
  return true;
}

bool FnSlice(Args a, CallContext& ctx, Value* r) {
  const Value& v = a[0];
  if (!v.is_list()) {
    if (v.is_nil()) return NotAList(ctx, v, "");
    return ctx.Fail("list should be type of slice or array but " + std::string(KindName(v)));
  }
  const auto& items = v.items();
  const auto l = static_cast<int64_t>(items.size());
  if (l == 0) {
    *r = Value();
    return true;
  }
  const int64_t start = a.size() > 1 ? CastToInt64(a[1]) : 0;
  const int64_t end = a.size() > 2 ? CastToInt64(a[2]) : l;
  if (start < 0 || end < start || end > l) {
    return ctx.Fail("reflect.Value.Slice: slice index out of bounds");
  }
  return SetList(ctx, v.type, List(items.begin() + start, items.begin() + end), r);
}

bool FnConcat(Args a, CallContext& ctx, Value* r) {
  List out;
  for (const Value& v : a) {
    if (!v.is_list()) {
      if (v.is_nil()) return NotAList(ctx, v, "");
      return ctx.Fail("Cannot concat type " + std::string(KindName(v)) + " as list");
    }
    if (!ctx.Spend(static_cast<int64_t>(v.items().size()),
                   static_cast<int64_t>(v.items().size()) * kElementBytes)) {
      return false;
    }
    out.insert(out.end(), v.items().begin(), v.items().end());
  }
  *r = Value::MakeList(GoType::kListAny, std::move(out));
  if (r->items().empty()) r->list = nullptr;  // Go's nil slice: no list was appended to
  return true;
}

}  // namespace skald::stages::go_template_internal
