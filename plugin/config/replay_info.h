// ReplayInfo: what a container's journal keeps of its StartLogging for a replay (info.json),
// and reading it back.
//
// Docker never sends StartLogging again after the plugin restarts, so a journal replayed then
// needs the container's Info from disk. info.json keeps of the environment and the labels only
// what becomes a label (KeepLabelSources: the rest may hold secrets and a replay needs none),
// and the options that hold credentials (loki-bearer-token, loki-headers, a loki-url or
// loki-proxy-url with user:password@) as references into the SecretStore.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

#include "plugin/config/container_info.h"
#include "plugin/config/log_options.h"
#include "plugin/config/secret_store.h"

namespace skald {

// The info.json of `info`, started with `options` on `hostname`; credentials go into `secrets`.
// Throws std::system_error when the secrets file cannot be written.
std::string ReplayInfoJson(const ContainerInfo& info, const LogOptions& options,
                           SecretStore& secrets, const std::string& hostname = "");

struct ReplayInfo {
  ContainerInfo info;  // its container_id is always the journal's
  // Why the options cannot be used (info.json missing or unreadable, a secret no longer
  // kept); empty when they can.
  std::string unusable;
  // info.json was there and parsed (its options may still be unusable: a secret gone).
  bool parsed = false;
  // The secret references info.json holds (kept even when a secret is gone).
  std::set<std::string> secret_references;
};

// Reads back the info.json `text` (nullopt: there is none) of container `id`, with its
// secrets resolved from `secrets`.
ReplayInfo ReadReplayInfo(const std::string& id, const std::optional<std::string>& text,
                          const SecretStore& secrets);

}  // namespace skald
