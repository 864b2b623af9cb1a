#include "pipeline_stages/stage_registry.h"

#include <algorithm>
#include <array>

#include "pipeline_stages/common/did_you_mean.h"
#include "pipeline_stages/cri_stage.h"
#include "pipeline_stages/decolorize_stage.h"
#include "pipeline_stages/docker_stage.h"
#include "pipeline_stages/drop_stage.h"
#include "pipeline_stages/geoip_stage.h"
#include "pipeline_stages/json_stage.h"
#include "pipeline_stages/label_filter_stage.h"
#include "pipeline_stages/labels_stage.h"
#include "pipeline_stages/limit_stage.h"
#include "pipeline_stages/logfmt_stage.h"
#include "pipeline_stages/match_stage.h"
#include "pipeline_stages/metrics_stage.h"
#include "pipeline_stages/multiline_stage.h"
#include "pipeline_stages/output_stage.h"
#include "pipeline_stages/pack_stage.h"
#include "pipeline_stages/regex_stage.h"
#include "pipeline_stages/replace_stage.h"
#include "pipeline_stages/sampling_stage.h"
#include "pipeline_stages/static_labels_stage.h"
#include "pipeline_stages/structured_metadata_stage.h"
#include "pipeline_stages/template_stage.h"
#include "pipeline_stages/tenant_stage.h"
#include "pipeline_stages/timestamp_stage.h"

namespace skald::stages {
namespace {

template <typename T>
std::unique_ptr<Stage> Make(const YAML::Node& config, const StageContext& ctx) {
  return std::make_unique<T>(config, ctx);
}

struct Registration {
  std::string_view name;
  StageFactory factory;
};

// One line per stage.
constexpr Registration kStages[] = {
    {"cri", &Make<CriStage>},
    {"decolorize", &Make<DecolorizeStage>},
    {"docker", &Make<DockerStage>},
    {"drop", &Make<DropStage>},
    {"geoip", &Make<GeoIpStage>},
    {"json", &Make<JsonStage>},
    {"labelallow", &Make<LabelAllowStage>},
    {"labeldrop", &Make<LabelDropStage>},
    {"labels", &Make<LabelsStage>},
    {"limit", &Make<LimitStage>},
    {"logfmt", &Make<LogfmtStage>},
    {"match", &Make<MatchStage>},
    {"metrics", &Make<MetricsStage>},
    {"multiline", &Make<MultilineStage>},
    {"non_indexed_labels", &Make<StructuredMetadataStage>},  // the old name
    {"output", &Make<OutputStage>},
    {"pack", &Make<PackStage>},
    {"regex", &Make<RegexStage>},
    {"replace", &Make<ReplaceStage>},
    {"sampling", &Make<SamplingStage>},
    {"static_labels", &Make<StaticLabelsStage>},
    {"structured_metadata", &Make<StructuredMetadataStage>},
    {"template", &Make<TemplateStage>},
    {"tenant", &Make<TenantStage>},
    {"timestamp", &Make<TimestampStage>},
};

// Stages of the reference that skald refuses, and why.
constexpr std::pair<std::string_view, std::string_view> kRefused[] = {
    {"eventlogmessage", "parses Windows event logs, which a Docker driver never receives"},
};

}  // namespace

StageFactory FindStageFactory(std::string_view name) {
  for (const auto& r : kStages) {
    if (r.name == name) return r.factory;
  }
  return nullptr;
}

std::vector<std::string_view> StageNames() {
  std::vector<std::string_view> names;
  for (const auto& r : kStages) names.push_back(r.name);
  return names;
}

namespace {

// A bound of the build (nesting, number of stages) was passed: the build stops at once, since
// going on could take as long as the input was made to (an alias bomb).
class BuildLimitError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

// Builds each stage of the list; a stage that cannot be built is recorded in build.problems
// and the next one is still checked. Bounds (nesting, count) stop the build at once.
void BuildStageItems(const YAML::Node& stages, const BuildContext& build,
                     std::string_view where_prefix, StageChain& chain) {
  const std::string prefix(where_prefix);
  if (!stages || stages.IsNull()) return;
  const int depth = build.lists_open;  // match stages around this list
  if (depth > kMaxNesting) {
    throw BuildLimitError(prefix + "s: match stages nest " + std::to_string(depth) +
                          " deep here; at most " + std::to_string(kMaxNesting) + " are accepted");
  }
  ++build.lists_open;
  struct CloseList {
    const BuildContext& build;
    ~CloseList() { --build.lists_open; }
  } close_list{build};
  if (!stages.IsSequence()) {
    throw ConfigError(prefix +
                      "s: expected a YAML list of stages (each item \"- name: {...}\"), got " +
                      DescribeNode(stages));
  }
  size_t position = 0;
  for (const auto& item : stages) {
    ++position;
    const std::string at = prefix + " " + std::to_string(position);
    if (++build.stages_begun > kMaxStages) {
      throw BuildLimitError(at + ": the pipeline has more than " + std::to_string(kMaxStages) +
                            " stages (those inside match stages count, and a YAML alias counts at "
                            "every use); at most " +
                            std::to_string(kMaxStages) + " are accepted");
    }
    try {
      if (item.IsScalar()) {
        const std::string& s = item.Scalar();
        std::string msg = at + ": " + Quote(s) +
                          " is a plain string; a stage is a map with one key, the stage name";
        if (FindStageFactory(s)) msg += " (did you mean \"- " + s + ":\" with a colon?)";
        throw ConfigError(msg);
      }
      if (!item.IsMap()) {
        throw ConfigError(at + ": expected a map with one key (the stage name), got " +
                          DescribeNode(item));
      }
      if (item.size() != 1) {
        std::string keys;
        for (const auto& kv : item) keys += (keys.empty() ? "" : ", ") + KeyText(kv.first);
        throw ConfigError(at + ": has " + std::to_string(item.size()) + " keys (" + keys +
                          "); each stage is a map with exactly one key, the stage name; check the "
                          "indentation: a stage's fields go under its name");
      }
      const auto kv = *item.begin();
      const std::string name = KeyText(kv.first);
      for (const auto& [refused, why] : kRefused) {
        if (name == refused) {
          throw ConfigError(at + " (" + name + "): the " + name +
                            " stage is not supported by skald (" + std::string(why) + ")");
        }
      }
      StageFactory factory = FindStageFactory(name);
      if (!factory) {
        std::string msg = at + ": unknown stage " + Quote(name);
        std::string guess = DidYouMean(name, StageNames());
        if (!guess.empty()) msg += " (did you mean " + guess + "?)";
        msg += "; known stages: ";
        auto names = StageNames();
        for (size_t i = 0; i < names.size(); ++i) msg += (i ? ", " : "") + std::string(names[i]);
        throw ConfigError(msg);
      }
      StageContext ctx;
      ctx.where = at + " (" + name + ")";
      ctx.name = name;
      ctx.build = &build;
      chain.Add(factory(kv.second, ctx));
    } catch (const BuildLimitError&) {
      throw;
    } catch (const ConfigError& e) {
      for (const std::string& p : e.problems()) build.problems.push_back(p);
    }
  }
}

}  // namespace

void BuildStageList(const YAML::Node& stages, const BuildContext& build,
                    std::string_view where_prefix, StageChain& chain) {
  const bool outermost = build.lists_open == 0;
  if (!outermost) {
    BuildStageItems(stages, build, where_prefix, chain);
    return;
  }
  try {
    BuildStageItems(stages, build, where_prefix, chain);
  } catch (const BuildLimitError& e) {
    build.problems.push_back(e.what());
  }
  if (outermost && !build.problems.empty()) {
    std::vector<std::string> problems = std::move(build.problems);
    build.problems.clear();
    throw ConfigError(std::move(problems));
  }
}

}  // namespace skald::stages
