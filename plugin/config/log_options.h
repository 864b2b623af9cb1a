// LogOptions: every --log-opt skald accepts, declared once.
//
// The option table drives everything: each row names an option once and says what it is
// (kind, default, accepted range, how a bad value is shown), what it means (the README's table,
// `skald options`) and where its value goes in LogOptions. ParseLogOptions walks the table and
// then checks what spans several options (a required URL, exclusive pairs, the Loki client's
// own validation), the way Fluent Bit's config_map does. Values come from the container's
// --log-opt, else from the plugin-wide default set with `docker plugin set skald LOKI_URL=...`
// (environment), else from the table. Errors are OptionError with a message that names the
// option, the bad value and what is accepted (and the closest known name for an unknown one).
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "plugin/loki/loki_client.h"

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

enum class OptionKind {
  kUrl,       // Loki's: http:// or https://
  kProxyUrl,  // http://, https://, socks5:// or socks5h://
  kString,
  kDuration,  // Go duration: 500ms, 1s, 1m30s; not negative
  kInt,
  kBool,            // Go strconv.ParseBool
  kSize,            // Docker size: 20m, 1g, 512k, plain bytes
  kSizeOrMinusOne,  // kSize, or -1 (unbounded)
  kLabelList,       // name=template,name=template
  kHeaderList,      // Name=Value,Name=Value
  kTemplate,        // Docker Go template
  kRegex,           // RE2
  kYaml,
  kPath,
  kChoice,     // one of `choices`
  kTolerated,  // daemon-internal; accepted and ignored
};

// An option's value once its kind has read it.
struct OptionValue {
  std::string text;    // as given
  int64_t number = 0;  // kInt; kSize: bytes (-1: unbounded); kDuration: nanoseconds
  bool flag = false;   // kBool
  std::vector<std::pair<std::string, std::string>> pairs;  // kHeaderList
  std::chrono::milliseconds ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::nanoseconds(number));
  }
};

// How a bad value appears in a message: dockerd logs StartLogging's errors.
enum class OptionShown {
  kAsIs,
  kRedactedUrl,  // without the URL's user info
  kHidden,       // a secret: "(hidden)"
};

// One row of the table. Built with Option(...) and the modifiers below.
struct OptionSpec {
  using Store = void (*)(LogOptions& options, const OptionValue& value);

  std::string_view name;
  OptionKind kind = OptionKind::kString;
  std::string_view default_value;  // empty = unset
  std::string_view description;
  // Where the checked value goes; null: accepted and unused (the daemon's own options).
  Store store = nullptr;
  std::string_view choices;  // kChoice: "a|b"
  // kInt, kSize, kDuration: the accepted values (nanoseconds for a duration), and what a
  // message says is expected outside them.
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
  std::string_view range_hint;
  OptionShown shown = OptionShown::kAsIs;

  constexpr OptionSpec Choices(std::string_view c) const {
    OptionSpec s = *this;
    s.choices = c;
    return s;
  }
  constexpr OptionSpec Range(int64_t lo, int64_t hi, std::string_view hint) const {
    OptionSpec s = *this;
    s.min = lo;
    s.max = hi;
    s.range_hint = hint;
    return s;
  }
  constexpr OptionSpec Shown(OptionShown how) const {
    OptionSpec s = *this;
    s.shown = how;
    return s;
  }
};

// The table, in the order the README lists it.
const std::vector<OptionSpec>& AllOptionSpecs();

// The value holds a credential, by the table's say: an option shown hidden (a token, headers),
// or a URL that carries user info. Such values are kept out of info.json (the secret store
// holds them) and out of messages.
bool OptionValueIsSecret(std::string_view option, std::string_view value);

// Plugin-wide default's environment variable for an option: loki-url -> LOKI_URL.
std::string OptionEnvName(std::string_view option);

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
