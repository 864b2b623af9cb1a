#include "plugin/cli/config_check.h"

#include "pipeline_stages/common/config_error.h"
#include "pipeline_stages/pipeline.h"
#include "pipeline_stages/pipeline_lint.h"
#include "plugin/driver/container_pipeline.h"
#include "plugin/loki/loki_client.h"

namespace skald {
namespace {

// A URL good enough to check one option without the others (the options that need a URL are
// checked with this one when the user gave none that parses).
constexpr const char* kStandInUrl = "http://127.0.0.1:3100/loki/api/v1/push";

// The options left once those whose own value is refused (and unknown ones) are removed, so
// that a bad batch size does not hide a broken stage.
std::map<std::string, std::string> UsableOptions(const std::map<std::string, std::string>& opts) {
  std::map<std::string, std::string> usable;
  for (const auto& [name, value] : opts) {
    std::map<std::string, std::string> alone = {{name, value}};
    if (name != "loki-url") alone["loki-url"] = kStandInUrl;
    try {
      ParseLogOptions(alone, {});
      usable[name] = value;
    } catch (const OptionError&) {
      // reported by the full parse
    } catch (const std::exception&) {
    }
  }
  return usable;
}

void MapPath(std::string& path, const ConfigCheckInput& in) {
  if (in.state_dir.empty() || in.host_state_dir.empty() || path.empty()) return;
  std::string prefix = in.state_dir;
  if (prefix.back() != '/') prefix += '/';
  if (path.rfind(prefix, 0) == 0) path = in.host_state_dir + "/" + path.substr(prefix.size());
}

void MapPaths(LogOptions& o, const ConfigCheckInput& in) {
  MapPath(o.pipeline_stage_file, in);
  MapPath(o.client.tls.ca_file, in);
  MapPath(o.client.tls.cert_file, in);
  MapPath(o.client.tls.key_file, in);
  MapPath(o.client.auth.bearer_token_file, in);
  MapPath(o.client.auth.basic_password_file, in);
}

void Append(std::vector<std::string>& to, const std::vector<std::string>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

ContainerInfo PlaceholderContainer(const std::map<std::string, std::string>& log_opts) {
  ContainerInfo info;
  info.config = log_opts;
  info.container_id = std::string(64, '0');
  info.container_name = "/skald-check";
  info.container_image_name = "skald-check:latest";
  info.container_image_id = "sha256:" + std::string(64, '0');
  info.container_created = "2026-01-01T00:00:00Z";
  info.daemon_name = "docker";
  return info;
}

ConfigCheckResult CheckLoggingConfig(const ConfigCheckInput& in) {
  ConfigCheckResult result;
  LogOptions options;
  try {
    options = ParseLogOptions(in.log_opts, in.env_defaults);
  } catch (const OptionError& e) {
    Append(result.errors, e.problems());
    try {
      options = ParseLogOptions(UsableOptions(in.log_opts), in.env_defaults);
    } catch (const OptionError&) {
      return result;  // nothing more can be checked without options that parse
    }
  }
  MapPaths(options, in);

  RecordingObserver observer;
  try {
    ContainerPipeline pipeline(options, PlaceholderContainer(in.log_opts), "skald-check-host",
                               &observer);
  } catch (const OptionError& e) {
    Append(result.errors, e.problems());
  }
  if (std::string err = CheckLokiClientFiles(options.client); !err.empty()) {
    result.errors.push_back(err);
  }

  // The lint reads what parses as YAML, even when a stage in it is broken.
  if (!options.pipeline_stages.empty() || !options.pipeline_stage_file.empty()) {
    const std::string option =
        options.pipeline_stages.empty() ? "loki-pipeline-stage-file" : "loki-pipeline-stages";
    try {
      YAML::Node stages = options.pipeline_stages.empty()
                              ? stages::Pipeline::StagesFromFile(options.pipeline_stage_file)
                              : stages::Pipeline::StagesFromYaml(options.pipeline_stages);
      for (const std::string& finding : stages::LintPipeline(stages)) {
        result.warnings.push_back("log-opt " + option + ": " + finding);
      }
    } catch (const stages::ConfigError&) {
      // not YAML: the build above said so
    }
  }
  if (result.errors.empty()) result.options = std::move(options);
  return result;
}

}  // namespace skald
