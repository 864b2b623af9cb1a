// The functions of Docker's log-tag templates (moby daemon/logger/templates) that differ from
// sprig's of the same name: json, split, join, pad and truncate. title, lower and upper are Go's
// strings.Title, ToLower and ToUpper, shared with Promtail's table.
#include <string>
#include <string_view>

#include "pipeline_stages/go_template/go_template_json.h"
#include "pipeline_stages/go_template/go_template_library.h"
#include "pipeline_stages/go_template/go_template_strings.h"

namespace skald::stages::go_template_internal {

// encoding/json's Encoder without HTML escapes; an encoding error gives "" (Docker ignores it).
bool FnDockerJson(Args a, CallContext& ctx, Value* r) {
  std::string out, error;
  bool too_long = false;
  if (!EncodeJson(a[0], JsonStyle{false, false}, ctx.max_bytes(), &out, &error, &too_long)) {
    if (too_long) return ctx.TooLong();
    out.clear();
  }
  return SetString(ctx, std::move(out), r);
}

// strings.Split(s, sep). The most pieces it can make are paid for before they are cut.
bool FnDockerSplit(Args a, CallContext& ctx, Value* r) {
  const size_t most = a[1].s.empty() ? a[0].s.size() : a[0].s.size() / a[1].s.size() + 1;
  if (!ctx.Spend(0, static_cast<int64_t>(most * sizeof(std::string_view)))) return false;
  return SetStringList(ctx, SplitN(a[0].s, a[1].s, -1), r);
}

// strings.Join(elems, sep).
bool FnDockerJoin(Args a, CallContext& ctx, Value* r) {
  const List& items = a[0].items();
  size_t size = 0;
  for (const Value& item : items) size += item.s.size() + a[1].s.size();
  if (!ctx.SpendString(size)) return false;
  std::string out;
  out.reserve(size);
  for (size_t k = 0; k < items.size(); ++k) {
    if (k > 0) out.append(a[1].s);
    out.append(items[k].s);
  }
  return SetString(ctx, std::move(out), r);
}

// padWithSpace: `before` spaces, the string, `after` spaces; an empty string stays empty. Go's
// strings.Repeat panics on a negative count, which fails the call.
bool FnDockerPad(Args a, CallContext& ctx, Value* r) {
  if (a[0].s.empty()) return SetString(ctx, std::string(), r);
  const int64_t before = a[1].i, after = a[2].i;
  if (before < 0 || after < 0) return ctx.Fail("strings: negative Repeat count");
  if (static_cast<uint64_t>(before) > ctx.max_bytes() ||
      static_cast<uint64_t>(after) > ctx.max_bytes()) {
    return ctx.TooLong();
  }
  const size_t size = static_cast<size_t>(before) + a[0].s.size() + static_cast<size_t>(after);
  if (!ctx.SpendString(size)) return false;
  std::string out(static_cast<size_t>(before), ' ');
  out.append(a[0].s);
  out.append(static_cast<size_t>(after), ' ');
  return SetString(ctx, std::move(out), r);
}

// truncateWithLength: the first `length` bytes (a string shorter than that as it is). A negative
// length slices out of range in Go, which fails the call.
bool FnDockerTruncate(Args a, CallContext& ctx, Value* r) {
  const int64_t length = a[1].i;
  if (static_cast<int64_t>(a[0].s.size()) < length) return SetString(ctx, std::string(a[0].s), r);
  if (length < 0) {
    return ctx.Fail("runtime error: slice bounds out of range [:" + std::to_string(length) + "]");
  }
  return SetString(ctx, std::string(a[0].s.substr(0, static_cast<size_t>(length))), r);
}

}  // namespace skald::stages::go_template_internal
