// The Go template engine's functions: sprig's dicts. Declared, with the other families,
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

bool FnDict(Args a, CallContext& ctx, Value* r) {
  auto m = std::make_shared<Map>();
  for (size_t k = 0; k < a.size(); k += 2) {
    const std::string key = StrVal(a[k]);
    (*m)[key] = k + 1 < a.size() ? a[k + 1] : Value::Borrow("");
  }
  return SetMap(ctx, GoType::kMapAny, std::move(m), r);
}

bool FnGet(Args a, CallContext&, Value* r) {
  if (!a[0].is_nil()) {
    if (a[0].type == GoType::kData) {
      bool found = false;
      a[0].data->ForEach([&](std::string_view k, const TemplateValue&) { found |= k == a[1].s; });
      if (found) {
        *r = MapLookup(a[0], a[1].s);
        return true;
      }
    } else if (a[0].map) {
      auto it = a[0].map->find(a[1].s);
      if (it != a[0].map->end()) {
        *r = it->second;
        return true;
      }
    }
  }
  *r = Value::Borrow("");
  return true;
}

namespace {

bool HasKey(const Value& m, std::string_view key) {
  if (m.type == GoType::kData) {
    bool found = false;
    m.data->ForEach([&](std::string_view k, const TemplateValue&) { found |= k == key; });
    return found;
  }
  return m.map && m.map->count(key) > 0;
}

}  // namespace

bool FnSet(Args a, CallContext& ctx, Value* r) {
  if (!a[0].map) return ctx.Fail("assignment to entry in nil map");
  if (!ctx.Spend(1, kElementBytes)) return false;
  (*a[0].map)[std::string(a[1].s)] = a[2];
  *r = a[0];
  return true;
}
bool FnUnset(Args a, CallContext&, Value* r) {
  if (a[0].map) a[0].map->erase(std::string(a[1].s));
  *r = a[0];
  return true;
}
bool FnHasKey(Args a, CallContext&, Value* r) {
  *r = Value::Bool(HasKey(a[0], a[1].s));
  return true;
}
bool FnPluck(Args a, CallContext& ctx, Value* r) {
  List out;
  for (size_t k = 1; k < a.size(); ++k) {
    if (HasKey(a[k], a[0].s)) out.push_back(MapLookup(a[k], a[0].s));
  }
  return SetList(ctx, GoType::kListAny, std::move(out), r);
}
bool FnKeys(Args a, CallContext& ctx, Value* r) {
  // Go lists a map's keys in random order; here they come sorted, map by map.
  std::vector<std::string> keys;
  for (const Value& m : a) {
    for (const auto& [key, item] : MapEntries(m)) keys.push_back(key);
  }
  return SetStringList(ctx, keys, r);
}
bool FnPick(Args a, CallContext& ctx, Value* r) {
  auto m = std::make_shared<Map>();
  for (size_t k = 1; k < a.size(); ++k) {
    if (HasKey(a[0], a[k].s)) (*m)[std::string(a[k].s)] = MapLookup(a[0], a[k].s);
  }
  return SetMap(ctx, GoType::kMapAny, std::move(m), r);
}
bool FnOmit(Args a, CallContext& ctx, Value* r) {
  auto m = std::make_shared<Map>(MapEntries(a[0]));
  for (size_t k = 1; k < a.size(); ++k) m->erase(std::string(a[k].s));
  return SetMap(ctx, GoType::kMapAny, std::move(m), r);
}
bool FnValues(Args a, CallContext& ctx, Value* r) {
  // Go's order is random; here it is the keys' order.
  List out;
  for (const auto& [key, item] : MapEntries(a[0])) out.push_back(item);
  return SetList(ctx, GoType::kListAny, std::move(out), r);
}

namespace {

// mergo.Merge (overwrite = false) / MergeWithOverwrite into dst, recursing into maps.
bool MergeInto(CallContext& ctx, Map* dst, const Map& src, bool overwrite, int depth) {
  if (depth > 100) return ctx.Fail("too deeply nested");
  for (const auto& [key, value] : src) {
    if (!ctx.Spend(1, kElementBytes)) return false;
    auto it = dst->find(key);
    if (it == dst->end()) {
      (*dst)[key] = value;
      continue;
    }
    Value& existing = it->second;
    if (existing.type == GoType::kMapAny && existing.map && value.type == GoType::kMapAny &&
        value.map) {
      if (existing.map.get() == value.map.get()) continue;
      if (!MergeInto(ctx, existing.map.get(), *value.map, overwrite, depth + 1)) return false;
      continue;
    }
    if (overwrite ? !IsEmpty(value) : IsEmpty(existing)) existing = value;
  }
  return true;
}

bool Merge(Args a, CallContext& ctx, Value* r, bool overwrite) {
  if (!a[0].map) return ctx.Fail("src and dst must be of same type");
  for (size_t k = 1; k < a.size(); ++k) {
    if (a[k].is_nil()) continue;
    if (!MergeInto(ctx, a[0].map.get(), MapEntries(a[k]), overwrite, 0)) return false;
  }
  *r = a[0];
  return true;
}

}  // namespace

bool FnMerge(Args a, CallContext& ctx, Value* r) { return Merge(a, ctx, r, false); }
bool FnMergeOverwrite(Args a, CallContext& ctx, Value* r) { return Merge(a, ctx, r, true); }

bool FnDig(Args a, CallContext& ctx, Value* r) {
  if (a.size() < 3) return ctx.Fail("dig needs at least three arguments");
  const Value& dict = a[a.size() - 1];
  if (dict.type != GoType::kMapAny && dict.type != GoType::kData) {
    return ctx.Fail("interface conversion: interface {} is " + std::string(TypeName(dict)) +
                    ", not map[string]interface {}");
  }
  for (size_t k = 0; k + 2 < a.size(); ++k) {
    if (!a[k].is_string()) {
      return ctx.Fail("interface conversion: interface {} is " + std::string(TypeName(a[k])) +
                      ", not string");
    }
  }
  Value current = dict;
  for (size_t k = 0; k + 2 < a.size(); ++k) {
    if (!HasKey(current, a[k].s)) {
      *r = a[a.size() - 2];
      return true;
    }
    Value step = MapLookup(current, a[k].s);
    if (k + 3 == a.size()) {
      *r = step;
      return true;
    }
    if (step.type != GoType::kMapAny) {
      return ctx.Fail("interface conversion: interface {} is " + std::string(TypeName(step)) +
                      ", not map[string]interface {}");
    }
    current = step;
  }
  *r = current;
  return true;
}

}  // namespace skald::stages::go_template_internal
