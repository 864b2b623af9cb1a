// LogOptions: every --log-opt skald accepts, declared once.
//
// The option table (name, kind, default, plugin-wide environment variable, description) drives
// parsing, validation, the error messages and the README's table (`skald options`). Values
// come from the container's --log-opt, else from the plugin-wide default set with
// `docker plugin set skald LOKI_URL=...` (environment), else from the table. Errors are
// OptionError with a message that names the option, the bad value and what is accepted.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/loki_client.h"

namespace skald {

// A container's options cannot be used. what() is one message for dockerd ("skald: " and
// every problem, separated by "; "); problems() lists them one by one, without the prefix.
class OptionError : public std::invalid_argument {
 public:
  explicit OptionError(const std::string& message);
  explicit OptionError(std::vector<std::string> problems);
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  std::vector<std::string> problems_;
};

enum class OptionKind {
  kUrl,
  kString,
  kDuration,  // Go duration: 500ms, 1s, 1m30s
  kInt,
  kBool,       // Go strconv.ParseBool
  kSize,       // Docker size: 20m, 1g, 512k, plain bytes; -1 where noted
  kLabelList,  // name=template,name=template
  kTemplate,   // Docker Go template
  kRegex,      // RE2
  kYaml,
  kPath,
  kChoice,     // one of `choices`
  kTolerated,  // daemon-internal; accepted and ignored
};

struct OptionSpec {
  std::string_view name;
  OptionKind kind;
  std::string_view default_value;  // empty = unset
  std::string_view description;
  std::string_view choices;  // kChoice: "a|b"
};

// The table, in the order the README lists it.
const std::vector<OptionSpec>& AllOptionSpecs();

// Plugin-wide default's environment variable for an option: loki-url -> LOKI_URL.
std::string OptionEnvName(std::string_view option);

// Parsed, validated options of one container.
struct LogOptions {
  LokiClientConfig client;
  std::string external_labels = "container_name={{.Name}}";
  std::optional<std::string> tag;
  std::string labels, labels_regex, env, env_regex;
  std::string pipeline_stages;      // inline YAML list
  std::string pipeline_stage_file;  // path
  std::string relabel_config;       // YAML
  std::size_t max_line_size = 256000;
  bool no_file = false;
  bool keep_file = false;
  int64_t max_size = 20 * 1024 * 1024;  // -1 = unbounded
  int max_file = 5;
  bool block_when_full = false;  // loki-on-full=block
};

// Effective values: container options over plugin-wide defaults (`env_defaults`, keyed by
// option name) over the table's defaults. Throws OptionError.
LogOptions ParseLogOptions(const std::map<std::string, std::string>& config,
                           const std::map<std::string, std::string>& env_defaults);

// Reads the plugin-wide defaults from the process environment (non-empty variables only).
std::map<std::string, std::string> EnvDefaultsFromEnvironment();
// The same from an environment given as NAME -> value (an installed plugin's settings).
std::map<std::string, std::string> EnvDefaultsFrom(const std::map<std::string, std::string>& env);

// Markdown table of every option, for the README and `skald options`.
std::string OptionsMarkdownTable();

// Parsers shared with tests.
std::optional<bool> ParseGoBool(std::string_view text);
std::optional<int64_t> ParseDockerSize(std::string_view text);

}  // namespace skald
