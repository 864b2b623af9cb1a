#include "plugin/config/container_info.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace skald {
namespace {

std::string GetString(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return {};
  if (!it->is_string())
    throw std::invalid_argument(std::string("Info.") + key + " is not a string");
  return it->get<std::string>();
}

std::vector<std::string> GetStringList(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array()) throw std::invalid_argument(std::string("Info.") + key + " is not a list");
  for (const auto& v : *it) {
    if (!v.is_string()) {
      throw std::invalid_argument(std::string("Info.") + key + " holds a non-string");
    }
    out.push_back(v.get<std::string>());
  }
  return out;
}

std::map<std::string, std::string> GetStringMap(const nlohmann::json& j, const char* key) {
  std::map<std::string, std::string> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_object()) throw std::invalid_argument(std::string("Info.") + key + " is not a map");
  for (const auto& [k, v] : it->items()) {
    if (!v.is_string()) {
      throw std::invalid_argument(std::string("Info.") + key + "." + k + " is not a string");
    }
    out[k] = v.get<std::string>();
  }
  return out;
}

}  // namespace

ContainerInfo ContainerInfo::FromJson(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("Info is not an object");
  ContainerInfo info;
  info.config = GetStringMap(j, "Config");
  info.container_id = GetString(j, "ContainerID");
  info.container_name = GetString(j, "ContainerName");
  info.container_entrypoint = GetString(j, "ContainerEntrypoint");
  info.container_args = GetStringList(j, "ContainerArgs");
  info.container_image_id = GetString(j, "ContainerImageID");
  info.container_image_name = GetString(j, "ContainerImageName");
  info.container_created = GetString(j, "ContainerCreated");
  info.container_env = GetStringList(j, "ContainerEnv");
  info.container_labels = GetStringMap(j, "ContainerLabels");
  info.log_path = GetString(j, "LogPath");
  info.daemon_name = GetString(j, "DaemonName");
  return info;
}

nlohmann::json ContainerInfo::ToJson() const {
  nlohmann::json j{{"Config", config},
                   {"ContainerID", container_id},
                   {"ContainerName", container_name},
                   {"ContainerEntrypoint", container_entrypoint},
                   {"ContainerArgs", container_args},
                   {"ContainerImageID", container_image_id},
                   {"ContainerImageName", container_image_name},
                   {"ContainerCreated", container_created},
                   {"ContainerEnv", container_env},
                   {"ContainerLabels", container_labels},
                   {"LogPath", log_path},
                   {"DaemonName", daemon_name}};
  if (!rendered_templates.empty()) j[kRenderedTemplatesKey] = rendered_templates;
  return j;
}

std::string ContainerInfo::ID() const { return container_id.substr(0, 12); }

std::string ContainerInfo::Name() const {
  return !container_name.empty() && container_name[0] == '/' ? container_name.substr(1)
                                                             : container_name;
}

std::string ContainerInfo::ImageID() const { return container_image_id.substr(0, 12); }

std::string ContainerInfo::Command() const {
  std::string cmd = container_entrypoint;
  for (const auto& a : container_args) cmd += ' ' + a;
  return cmd;
}

std::optional<std::string> ContainerInfo::EnvValue(const std::string& name) const {
  std::optional<std::string> value;
  for (const auto& kv : container_env) {  // the last definition wins, as in the daemon
    if (kv.size() > name.size() && kv[name.size()] == '=' &&
        kv.compare(0, name.size(), name) == 0) {
      value = kv.substr(name.size() + 1);
    }
  }
  return value;
}

}  // namespace skald
