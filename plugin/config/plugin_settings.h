// PluginSettings: what the plugin as a whole is told at start, declared once.
//
// The counterpart of the option table (plugin/config/log_options.h) for the settings that are
// not a container's options: the metrics address, the log level, the state directory, the
// journals' budget and age limit, the shutdown flush. Each row names its environment variable
// (`docker plugin set skald NAME=value`), its default, what it means (`skald options`, the
// README, config.json's descriptions) and how its value is read and checked. A bad value keeps
// the default and is reported by name, with the value and what is accepted: a setting never
// stops the plugin from starting.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skald {

struct PluginSettings {
  std::string metrics_addr = "127.0.0.1:9555";  // empty: no metrics endpoint
  std::string log_level = "info";               // spdlog's level names
  std::chrono::seconds shutdown_flush{5};
  std::filesystem::path state_dir = "/var/lib/skald";  // empty: no journals
  uint64_t journal_max_bytes = 2ull << 30;
  std::chrono::seconds journal_max_age = std::chrono::hours(168);
};

// One row of the settings table.
struct SettingSpec {
  // Reads `value` into `settings`; returns what is accepted when it cannot (nullopt: read).
  using Store = std::optional<std::string> (*)(PluginSettings& settings, std::string_view value);
  std::string_view name;           // the environment variable
  std::string_view default_value;  // as config.json offers it
  std::string_view description;
  Store store;
  // An empty value means "none" (off) rather than the default.
  bool empty_turns_off = false;
};

// The table, in the order `skald options` and config.json list it.
const std::vector<SettingSpec>& AllSettingSpecs();

// Reads every setting through `env` (null or unset: the default; an empty value means what the
// row says: off for METRICS_ADDR and STATE_DIR, the default otherwise). Each bad value keeps
// the default and adds one message to `problems`.
PluginSettings ReadPluginSettings(const std::function<const char*(const char*)>& env,
                                  std::vector<std::string>* problems);

// Markdown table of every setting, for the README and `skald options`.
std::string SettingsMarkdownTable();

}  // namespace skald
