#include "plugin/config/replay_info.h"

#include <nlohmann/json.hpp>

#include "plugin/config/container_labels.h"

namespace skald {

std::string ReplayInfoJson(const ContainerInfo& info, const LogOptions& options,
                           SecretStore& secrets) {
  // Of the environment and the labels, only what becomes a label: the rest may hold secrets and
  // a replay needs none.
  ContainerInfo kept = KeepLabelSources(info, options);
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

}  // namespace

ReplayInfo ReadReplayInfo(const std::string& id, const std::optional<std::string>& text,
                          const SecretStore& secrets) {
  ReplayInfo out;
  out.info.container_id = id;
  try {
    if (text) {
      out.info = ContainerInfo::FromJson(nlohmann::json::parse(*text));
      out.info.container_id = id;
      out.parsed = true;
      for (const auto& [option, value] : out.info.config) {
        if (SecretStore::IsReference(value)) out.secret_references.insert(value);
      }
      out.unusable = ResolveSecrets(out.info, secrets);
    } else {
      out.unusable = "its info.json is missing";
    }
  } catch (const std::exception& e) {
    out.unusable = std::string("its info.json is unreadable: ") + e.what();
  }
  return out;
}

}  // namespace skald
