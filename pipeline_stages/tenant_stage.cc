#include "pipeline_stages/tenant_stage.h"

#include "pipeline_stages/tenant_id.h"

namespace skald::stages {

TenantStage::TenantStage(const YAML::Node& config, const StageContext& ctx) {
  StageConfig c(config, ctx, {"label", "source", "value"});
  const int n = c.Has("label") + c.Has("source") + c.Has("value");
  if (n != 1) {
    ctx.Fail("needs exactly one of label, source or value (got " + std::to_string(n) + ")");
  }
  if (c.Has("label")) {
    from_ = From::kLabel;
    arg_ = c.RequiredString("label");
  } else if (c.Has("source")) {
    from_ = From::kSource;
    arg_ = c.RequiredString("source");
  } else {
    from_ = From::kValue;
    arg_ = c.RequiredString("value");
    // A fixed tenant Loki would refuse would drop every line: refuse it here instead.
    if (std::string why = TenantIdError(arg_); !why.empty()) c.Fail("value", why);
  }
}

Verdict TenantStage::Process(Entry& entry, Downstream&) {
  std::optional<std::string_view> t;
  switch (from_) {
    case From::kLabel:
      t = entry.labels.Get(arg_);
      break;
    case From::kSource:
      if (const Value* v = entry.extracted.Find(arg_)) t = v->AsString();
      break;
    case From::kValue:
      t = arg_;
      break;
  }
  // As in Promtail, the stage sets the tenant label (a later stage may still change or drop
  // it); the pipeline's output turns it into the entry's tenant.
  if (t && !t->empty()) {
    const std::string tenant(*t);  // a view into the labels the next call changes
    entry.labels.Set(kTenantLabel, tenant);
  }
  return Verdict::kPass;
}

}  // namespace skald::stages
