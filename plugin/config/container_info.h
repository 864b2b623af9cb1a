// ContainerInfo: what dockerd tells a logging plugin about a container at StartLogging
// (the `Info` object of the request; moby daemon/logger.Info).
#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace skald {

struct ContainerInfo {
  std::map<std::string, std::string> config;  // every --log-opt, daemon-internal ones included
  std::string container_id;                   // 64 hex
  std::string container_name;                 // with the leading '/'
  std::string container_entrypoint;
  std::vector<std::string> container_args;
  std::string container_image_id;  // sha256:<hex>
  std::string container_image_name;
  std::string container_created;
  std::vector<std::string> container_env;  // KEY=VALUE
  std::map<std::string, std::string> container_labels;
  std::string log_path;
  std::string daemon_name;
  // Replay only (info.json, never dockerd's): the outputs of the templates that read the whole
  // environment, by template text, as they rendered at StartLogging; the environment itself is
  // not kept.
  std::map<std::string, std::string> rendered_templates;

  // Parses the `Info` object; null maps and lists are empty. Throws std::invalid_argument
  // naming the field when a field has the wrong type. rendered_templates is not read (dockerd
  // never sends it; ReadReplayInfo reads it from info.json).
  static ContainerInfo FromJson(const nlohmann::json& info);
  nlohmann::json ToJson() const;
  static constexpr const char* kRenderedTemplatesKey = "SkaldRenderedTemplates";

  // Docker's template helpers (logger.Info methods), as Docker computes them.
  std::string ID() const;       // first 12 characters of the container id
  std::string Name() const;     // container name without the leading '/'
  std::string ImageID() const;  // first 12 characters of the image id: "sha256:" and 5 hex
  std::string Command() const;  // the entrypoint, then each argument, after a space each

  // Value of environment variable `name` from ContainerEnv, if set.
  std::optional<std::string> EnvValue(const std::string& name) const;
};

}  // namespace skald
