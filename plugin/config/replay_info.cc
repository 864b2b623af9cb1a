#include "plugin/config/replay_info.h"

#include <nlohmann/json.hpp>

#include "plugin/config/container_labels.h"

namespace skald {

std::string ReplayInfoJson(const ContainerInfo& info, const LogOptions& options,
                           SecretStore& secrets, const std::string& hostname) {
  // Of the environment and the labels, only what becomes a label: the rest may hold secrets and
  // a replay needs none.
  ContainerInfo kept = KeepLabelSources(info, options, hostname);
  // Options that hold credentials (the option table says which) are kept once, in the secrets
  // file; info.json names them.
  for (auto& [option, value] : kept.config) {
    if (OptionValueIsSecret(option, value)) value = secrets.Put(value);  // throws system_error
  }
  return kept.ToJson().dump();
}

namespace {

// Puts the secrets back into an info.json's options; returns why it cannot, or "".
std::string ResolveSecrets(ContainerInfo& info, const SecretStore& secrets) {
  for (auto& [option, value] : info.config) {
    if (!SecretStore::IsReference(value)) continue;
    auto secret = secrets.Get(value);
    if (!secret) return "the secret of its log-opt " + option + " is no longer kept";
    value = *secret;
  }
  return "";
}

// The outputs of the templates kept at StartLogging (ContainerInfo::rendered_templates);
// anything but a map of strings reads as none.
std::map<std::string, std::string> RenderedTemplates(const nlohmann::json& info) {
  std::map<std::string, std::string> out;
  const auto it = info.find(ContainerInfo::kRenderedTemplatesKey);
  if (it == info.end() || !it->is_object()) return out;
  for (const auto& [text, output] : it->items()) {
    if (output.is_string()) out[text] = output.get<std::string>();
  }
  return out;
}

}  // namespace

ReplayInfo ReadReplayInfo(const std::string& id, const std::optional<std::string>& text,
                          const SecretStore& secrets) {
  ReplayInfo out;
  out.info.container_id = id;
  try {
    if (text) {
      const nlohmann::json parsed = nlohmann::json::parse(*text);
      out.info = ContainerInfo::FromJson(parsed);
      out.info.container_id = id;
      out.parsed = true;
      for (const auto& [option, value] : out.info.config) {
        if (SecretStore::IsReference(value)) out.secret_references.insert(value);
      }
      out.info.rendered_templates = RenderedTemplates(parsed);
      out.unusable = ResolveSecrets(out.info, secrets);
    } else {
      out.unusable = "its info.json is missing or unreadable";
    }
  } catch (const std::exception& e) {
    out.unusable = std::string("its info.json is unreadable: ") + e.what();
  }
  return out;
}

}  // namespace skald
