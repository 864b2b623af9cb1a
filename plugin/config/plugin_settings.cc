#include "plugin/config/plugin_settings.h"

#include <algorithm>
#include <charconv>

#include "pipeline_stages/go/go_duration.h"
#include "plugin/config/log_options.h"

namespace skald {

namespace {

using S = PluginSettings;
using Accepted = std::optional<std::string>;

constexpr std::string_view kLogLevels[] = {"trace", "debug",    "info", "warn",
                                           "error", "critical", "off"};

// A port of HOST:PORT: 1 to 65535, digits only.
bool ValidPort(std::string_view port) {
  if (port.empty() || port.size() > 5) return false;
  int n = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), n);
  return ec == std::errc() && end == port.data() + port.size() && n >= 1 && n <= 65535;
}

const std::vector<SettingSpec> kSettings = {
    {"METRICS_ADDR", "127.0.0.1:9555",
     "Prometheus metrics endpoint HOST:PORT; empty turns it off. Two copies of the plugin need "
     "two ports.",
     [](S& s, std::string_view v) -> Accepted {
       const auto colon = v.rfind(':');
       if (!v.empty() && (colon == std::string_view::npos || !ValidPort(v.substr(colon + 1)))) {
         return "HOST:PORT with a port from 1 to 65535 (127.0.0.1:9555), or empty for none";
       }
       s.metrics_addr = v;
       return std::nullopt;
     },
     /*empty_turns_off=*/true},
    {"LOG_LEVEL", "info", "Plugin log level: trace, debug, info, warn, error, critical or off.",
     [](S& s, std::string_view v) -> Accepted {
       if (std::find(std::begin(kLogLevels), std::end(kLogLevels), v) == std::end(kLogLevels)) {
         return "trace, debug, info, warn, error, critical or off";
       }
       s.log_level = v;
       return std::nullopt;
     }},
    {"SHUTDOWN_FLUSH_SECONDS", "5",
     "On SIGTERM, how many seconds to keep sending before exiting (0 to 600); what is left "
     "stays in the journals.",
     [](S& s, std::string_view v) -> Accepted {
       int n = -1;
       auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
       if (ec != std::errc() || end != v.data() + v.size() || n < 0 || n > 600) {
         return "whole seconds from 0 to 600";
       }
       s.shutdown_flush = std::chrono::seconds(n);
       return std::nullopt;
     }},
    {"STATE_DIR", "/var/lib/skald",
     "Where the journals live inside the plugin: /var/lib/skald is a directory Docker keeps for "
     "this plugin (under its data root, plugins/ID/propagated-mount), kept across upgrades and "
     "removed with the plugin. Empty keeps none.",
     [](S& s, std::string_view v) -> Accepted {
       if (!v.empty() && v.front() != '/') return "an absolute path, or empty for no journals";
       s.state_dir = std::string(v);
       return std::nullopt;
     },
     /*empty_turns_off=*/true},
    {"JOURNAL_MAX_BYTES", "2g",
     "Budget of all journals together (e.g. 2g); the oldest data goes first.",
     [](S& s, std::string_view v) -> Accepted {
       const auto bytes = ParseDockerSize(v);
       if (!bytes || *bytes <= 0) return "a size such as 512m or 2g";
       s.journal_max_bytes = static_cast<uint64_t>(*bytes);
       return std::nullopt;
     }},
    {"JOURNAL_MAX_AGE", "168h",
     "Journals of stopped containers are removed this long after their last line "
     "(keep-file=true exempts).",
     [](S& s, std::string_view v) -> Accepted {
       const auto ns = stages::ParseGoDuration(v);
       if (!ns || *ns < 1'000'000'000) return "a duration of a second or more, such as 72h";
       s.journal_max_age =
           std::chrono::duration_cast<std::chrono::seconds>(std::chrono::nanoseconds(*ns));
       return std::nullopt;
     }},
};

}  // namespace

const std::vector<SettingSpec>& AllSettingSpecs() { return kSettings; }

PluginSettings ReadPluginSettings(const std::function<const char*(const char*)>& env,
                                  std::vector<std::string>* problems) {
  PluginSettings settings;
  for (const SettingSpec& spec : kSettings) {
    const std::string name(spec.name);
    const char* value = env ? env(name.c_str()) : nullptr;
    if (value == nullptr) continue;
    std::string_view v(value);
    if (v.empty() && !spec.empty_turns_off) continue;
    if (Accepted accepted = spec.store(settings, v)) {
      if (problems) {
        problems->push_back(name + "='" + std::string(v) + "' is not valid: expected " + *accepted +
                            "; using " + std::string(spec.default_value));
      }
    }
  }
  return settings;
}

std::string SettingsMarkdownTable() {
  std::string out = "| setting | default | meaning |\n|---|---|---|\n";
  for (const SettingSpec& s : kSettings) {
    out += "| `" + std::string(s.name) + "` | `" + std::string(s.default_value) + "` | " +
           std::string(s.description) + " |\n";
  }
  return out;
}

}  // namespace skald
