// The Go template engine's functions: sprig's URLs (`urlParse`, `urlJoin`) over go/go_url.h.
// Declared, with the other families, in go_template_library.h; the function table is
// go_template_functions.cc's.
#include "pipeline_stages/go/go_url.h"
#include "pipeline_stages/go_template/go_template_library.h"

namespace skald::stages::go_template_internal {

bool FnUrlParse(Args a, CallContext& ctx, Value* r) {
  std::string error;
  const std::optional<GoUrl> url = GoUrl::Parse(a[0].s, &error);
  if (!url) return ctx.Fail("unable to parse url: " + error);
  if (!ctx.SpendString(a[0].s.size() * 2)) return false;
  auto m = std::make_shared<Map>();
  (*m)["scheme"] = Value::Own(url->scheme);
  (*m)["host"] = Value::Own(url->host);
  (*m)["hostname"] = Value::Own(url->Hostname());
  (*m)["path"] = Value::Own(url->path);
  (*m)["query"] = Value::Own(url->raw_query);
  (*m)["opaque"] = Value::Own(url->opaque);
  (*m)["fragment"] = Value::Own(url->fragment);
  (*m)["userinfo"] = Value::Own(url->user ? url->user->String() : std::string());
  return SetMap(ctx, GoType::kMapAny, std::move(m), r);
}

namespace {

// sprig's dictGetOrEmpty: the string at `key`, "" when there is none; any other type fails.
bool DictString(const Map& m, std::string_view key, CallContext& ctx, std::string* out) {
  const auto it = m.find(key);
  if (it == m.end()) {
    out->clear();
    return true;
  }
  if (it->second.is_nil()) {
    return ctx.Fail("runtime error: invalid memory address or nil pointer dereference");
  }
  if (!it->second.is_string()) {
    return ctx.Fail("unable to parse " + std::string(key) + " key, must be of type string, but " +
                    std::string(KindName(it->second)) + " found");
  }
  out->assign(it->second.s);
  return true;
}

}  // namespace

bool FnUrlJoin(Args a, CallContext& ctx, Value* r) {
  const Map m = MapEntries(a[0]);
  GoUrl url;
  std::string userinfo;
  if (!DictString(m, "scheme", ctx, &url.scheme) || !DictString(m, "host", ctx, &url.host) ||
      !DictString(m, "path", ctx, &url.path) || !DictString(m, "query", ctx, &url.raw_query) ||
      !DictString(m, "opaque", ctx, &url.opaque) ||
      !DictString(m, "fragment", ctx, &url.fragment) ||
      !DictString(m, "userinfo", ctx, &userinfo)) {
    return false;
  }
  if (!userinfo.empty()) {
    // As sprig: the userinfo is read back from a URL made around it.
    std::string error;
    const std::optional<GoUrl> holder = GoUrl::Parse("proto://" + userinfo + "@host", &error);
    if (!holder) return ctx.Fail("unable to parse userinfo in dict: " + error);
    url.user = holder->user;
  }
  return SetString(ctx, url.String(), r);
}

}  // namespace skald::stages::go_template_internal
