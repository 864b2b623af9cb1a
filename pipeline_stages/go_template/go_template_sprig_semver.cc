// The Go template engine's functions: sprig's semantic versions (`semver`, `semverCompare`) over
// go/go_semver.h. Declared, with the other families, in go_template_library.h; the function table
// is go_template_functions.cc's.
#include "pipeline_stages/go/go_semver.h"
#include "pipeline_stages/go_template/go_template_library.h"

namespace skald::stages::go_template_internal {

bool FnSemver(Args a, CallContext& ctx, Value* r) {
  std::string error;
  if (!SemanticVersion::Parse(a[0].s, &error)) return ctx.Fail(error);
  if (!ctx.SpendString(a[0].s.size())) return false;
  *r = Value::Version(std::string(a[0].s));
  return true;
}

bool FnSemverCompare(Args a, CallContext& ctx, Value* r) {
  std::string error;
  const std::optional<VersionConstraints> constraints = VersionConstraints::Parse(a[0].s, &error);
  if (!constraints) return ctx.Fail(error);
  const std::optional<SemanticVersion> version = SemanticVersion::Parse(a[1].s, &error);
  if (!version) return ctx.Fail(error);
  *r = Value::Bool(constraints->Check(*version));
  return true;
}

}  // namespace skald::stages::go_template_internal
