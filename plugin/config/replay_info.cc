#include "plugin/config/replay_info.h"

#include <algorithm>
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
  // A template that reads the whole environment needs it after a restart: it is kept with the
  // credentials, and info.json names it.
  if (!kept.container_env.empty() && TemplatesName(options, "ContainerEnv")) {
    kept.container_env = {secrets.Put(nlohmann::json(kept.container_env).dump())};
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
  if (info.container_env.size() == 1 && SecretStore::IsReference(info.container_env[0])) {
    auto secret = secrets.Get(info.container_env[0]);
    if (!secret) return "the environment its templates read is no longer kept";
    const nlohmann::json env = nlohmann::json::parse(*secret, nullptr, false);
    if (!env.is_array() || !std::all_of(env.begin(), env.end(),
                                        [](const nlohmann::json& v) { return v.is_string(); })) {
      return "the environment its templates read is damaged";
    }
    info.container_env = env.get<std::vector<std::string>>();
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
      for (const std::string& kv : out.info.container_env) {
        if (SecretStore::IsReference(kv)) out.secret_references.insert(kv);
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
