#include "plugin/config/log_options.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <sstream>

#include "pipeline_stages/common/did_you_mean.h"
#include "pipeline_stages/entry.h"
#include "pipeline_stages/go/go_duration.h"
#include "plugin/config/docker_template.h"
#include "plugin/loki/loki_url.h"

namespace skald {
namespace {

using O = LogOptions;
using V = OptionValue;
using Kind = OptionKind;

constexpr std::string_view kDurationHint = "a duration such as 500ms, 10s, 1m30s";
constexpr std::string_view kBoolHint = "true or false";
constexpr std::string_view kSizeHint = "a size such as 512k, 20m, 1g or a byte count";
constexpr int64_t kNoMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMillisecond = 1'000'000;  // ns
constexpr int64_t kMaxLineSizeLimit = 64 * 1024 * 1024;

constexpr OptionSpec Option(std::string_view name, OptionKind kind, std::string_view default_value,
                            std::string_view description, OptionSpec::Store store = nullptr) {
  OptionSpec s;
  s.name = name;
  s.kind = kind;
  s.default_value = default_value;
  s.description = description;
  s.store = store;
  return s;
}

// The daemon's own options: accepted, unused.
constexpr std::string_view kDaemonCache = "The daemon's local cache (accepted, unused).";

const std::vector<OptionSpec> kSpecs = {
    Option("loki-url", Kind::kUrl, "",
           "Loki push URL, e.g. http://127.0.0.1:3100/loki/api/v1/push; user:password@ sets "
           "basic auth (user info ends at the last @, so the password may hold any character). "
           "Required here or plugin-wide.",
           [](O& o, const V& v) { o.client.url = v.text; })
        .Shown(OptionShown::kRedactedUrl),
    Option("loki-external-labels", Kind::kLabelList, "container_name={{.Name}}",
           "Extra labels, name=value pairs separated by commas; values are Docker templates.",
           [](O& o, const V& v) { o.external_labels = v.text; }),
    Option("loki-timeout", Kind::kDuration, "10s",
           "Deadline of one push request, from connecting to the end of Loki's answer.",
           [](O& o, const V& v) { o.client.timeout = v.ms(); })
        .Range(kMillisecond, kNoMax, "1ms or more"),
    Option("loki-batch-wait", Kind::kDuration, "1s",
           "Longest time a batch waits before it is sent (it leaves sooner when full, or when "
           "the input pauses for a few milliseconds).",
           [](O& o, const V& v) { o.client.batch_wait = v.ms(); }),
    Option("loki-batch-size", Kind::kInt, "1048576",
           "Largest batch, in bytes of lines and structured metadata.",
           [](O& o, const V& v) { o.client.batch_size_bytes = static_cast<std::size_t>(v.number); })
        .Range(1, kNoMax, "a positive byte count"),
    Option("loki-min-backoff", Kind::kDuration, "500ms", "First wait before a retry.",
           [](O& o, const V& v) { o.client.min_backoff = v.ms(); }),
    Option("loki-max-backoff", Kind::kDuration, "5m", "Longest wait between retries.",
           [](O& o, const V& v) { o.client.max_backoff = v.ms(); }),
    Option("loki-retries", Kind::kInt, "10",
           "With no-file=true only: retries of a batch (after 429, 5xx, a timeout, a redirect, "
           "401, 403 or 404) before it is dropped and counted; 0 retries forever, as in the Go "
           "driver. With the journal, failures are retried until delivered or evicted by the "
           "journal budget.",
           // The Go driver's backoff (dskit) reads 0 as no limit: retried until delivered.
           [](O& o, const V& v) {
             o.client.max_retries = v.number == 0 ? -1 : static_cast<int>(v.number);
           })
        .Range(0, kNoMax, "0 (retry forever) or more"),
    Option("loki-tenant-id", Kind::kString, "",
           "Tenant sent as X-Scope-OrgID: at most 150 bytes of a-z A-Z 0-9 ! - _ . * ' ( ).",
           [](O& o, const V& v) { o.client.tenant_id = v.text; }),
    Option("loki-bearer-token", Kind::kString, "",
           "Bearer token sent as Authorization (prefer loki-bearer-token-file, or set it "
           "plugin-wide: dockerd keeps every --log-opt in the container's config).",
           [](O& o, const V& v) { o.client.auth.bearer_token = v.text; })
        .Shown(OptionShown::kHidden),
    Option("loki-bearer-token-file", Kind::kPath, "",
           "File holding the bearer token; read again when Loki answers 401 or 403 (a rotated "
           "token works without a restart).",
           [](O& o, const V& v) { o.client.auth.bearer_token_file = v.text; }),
    Option("loki-basic-auth-username", Kind::kString, "",
           "User name for basic auth, with loki-basic-auth-password-file.",
           [](O& o, const V& v) { o.client.auth.basic_username = v.text; }),
    Option("loki-basic-auth-password-file", Kind::kPath, "",
           "File holding the basic-auth password; read again when Loki answers 401 or 403.",
           [](O& o, const V& v) { o.client.auth.basic_password_file = v.text; }),
    Option("loki-headers", Kind::kHeaderList, "",
           "Extra headers, Name=Value pairs separated by commas (not Host, Content-*, "
           "Authorization or X-Scope-OrgID, which other options set).",
           [](O& o, const V& v) { o.client.headers = v.pairs; })
        .Shown(OptionShown::kHidden),
    Option("loki-tls-ca-file", Kind::kPath, "", "CA certificate file to verify Loki.",
           [](O& o, const V& v) { o.client.tls.ca_file = v.text; }),
    Option("loki-tls-cert-file", Kind::kPath, "", "Client certificate file.",
           [](O& o, const V& v) { o.client.tls.cert_file = v.text; }),
    Option("loki-tls-key-file", Kind::kPath, "", "Client key file.",
           [](O& o, const V& v) { o.client.tls.key_file = v.text; }),
    Option("loki-tls-server-name", Kind::kString, "", "Server name to verify Loki's certificate.",
           [](O& o, const V& v) { o.client.tls.server_name = v.text; }),
    Option("loki-tls-insecure-skip-verify", Kind::kBool, "false",
           "Do not verify Loki's certificate (nor an https proxy's: its TLS uses the same "
           "settings, as in Go's client).",
           [](O& o, const V& v) { o.client.tls.insecure_skip_verify = v.flag; }),
    Option("loki-proxy-url", Kind::kProxyUrl, "",
           "Proxy to reach Loki through: http://, https:// (TLS to the proxy), or socks5:// (the "
           "proxy resolves Loki's name).",
           [](O& o, const V& v) { o.client.proxy_url = v.text; })
        .Shown(OptionShown::kRedactedUrl),
    Option("loki-pipeline-stages", Kind::kYaml, "",
           "Promtail pipeline stages, an inline YAML list.",
           [](O& o, const V& v) { o.pipeline_stages = v.text; }),
    Option("loki-pipeline-stage-file", Kind::kPath, "",
           "File whose top level `pipeline_stages:` holds the stages.",
           [](O& o, const V& v) { o.pipeline_stage_file = v.text; }),
    Option("loki-relabel-config", Kind::kYaml, "",
           "Prometheus relabel rules applied once to each container's labels.",
           [](O& o, const V& v) { o.relabel_config = v.text; }),
    // An unfinished line is held up to this size per source: bounded whatever is asked.
    Option("loki-max-line-size", Kind::kSize, "256000",
           "Longer lines are sent as consecutive pieces of at most this many bytes (counted).",
           [](O& o, const V& v) { o.max_line_size = static_cast<std::size_t>(v.number); })
        .Range(1, kMaxLineSizeLimit, "a size from 1 byte to 64m"),
    Option("no-file", Kind::kBool, "false", "Keep no journal on disk (no `docker logs`).",
           [](O& o, const V& v) {
             o.no_file = v.flag;
             o.client.durable = !v.flag;
           }),
    Option("keep-file", Kind::kBool, "false", "Keep the journal after the container stops.",
           [](O& o, const V& v) { o.keep_file = v.flag; }),
    Option("max-size", Kind::kSizeOrMinusOne, "20m",
           "Size of one journal segment; -1 is unbounded.",
           [](O& o, const V& v) { o.max_size = v.number; }),
    Option("max-file", Kind::kInt, "5", "Journal segments kept per container.",
           [](O& o, const V& v) { o.max_file = static_cast<int>(v.number); })
        .Range(1, kNoMax, "1 or more"),
    Option("loki-on-full", Kind::kChoice, "drop",
           "When the journal budget is full of undelivered lines: `drop` the oldest (counted as "
           "journal_full) or `block` the container until Loki takes them.",
           [](O& o, const V& v) { o.block_when_full = v.text == "block"; })
        .Choices("drop|block"),
    Option("tag", Kind::kTemplate, "", "Docker tag template; when given it becomes a `tag` label.",
           [](O& o, const V& v) { o.tag = v.text; }),
    Option("labels", Kind::kString, "", "Container label names to add as labels, comma-separated.",
           [](O& o, const V& v) { o.labels = v.text; }),
    Option("labels-regex", Kind::kRegex, "", "Regular expression of container label names to add.",
           [](O& o, const V& v) { o.labels_regex = v.text; }),
    Option("env", Kind::kString, "",
           "Environment variable names to add as labels, comma-separated.",
           [](O& o, const V& v) { o.env = v.text; }),
    Option("env-regex", Kind::kRegex, "",
           "Regular expression of environment variable names to add.",
           [](O& o, const V& v) { o.env_regex = v.text; }),
    Option("mode", Kind::kChoice, "", "Docker's delivery mode (the daemon's; accepted).")
        .Choices("blocking|non-blocking"),
    Option("max-buffer-size", Kind::kSize, "", "Docker's non-blocking buffer (the daemon's)."),
    Option("cache-disabled", Kind::kTolerated, "", kDaemonCache),
    Option("cache-max-size", Kind::kTolerated, "", kDaemonCache),
    Option("cache-max-file", Kind::kTolerated, "", kDaemonCache),
    Option("cache-compress", Kind::kTolerated, "", kDaemonCache),
};

[[noreturn]] void Bad(const OptionSpec& spec, std::string_view value, std::string_view expected) {
  std::string shown;
  switch (spec.shown) {
    case OptionShown::kAsIs:
      shown = value;
      break;
    case OptionShown::kRedactedUrl:
      shown = RedactUrl(value);
      break;
    case OptionShown::kHidden:
      shown = "(hidden)";
      break;
  }
  throw OptionError("skald: invalid value '" + shown + "' for log-opt " + std::string(spec.name) +
                    ": expected " + std::string(expected));
}

// Option names are long and alike (loki-...): a suggestion may be three edits away.
constexpr stages::DidYouMeanRule kOptionNameRule{.max_distance = 3, .prefixes = false};

// The row of option `name`, or null.
const OptionSpec* FindSpec(std::string_view name) {
  auto it = std::find_if(kSpecs.begin(), kSpecs.end(),
                         [name](const OptionSpec& s) { return s.name == name; });
  return it == kSpecs.end() ? nullptr : &*it;
}

std::vector<std::string_view> OptionNames() {
  std::vector<std::string_view> names;
  for (const OptionSpec& s : kSpecs) names.push_back(s.name);
  return names;
}

// loki-external-labels: name=template pairs, each name a label name, each value a template.
void CheckLabelList(const OptionSpec& spec, const std::string& v) {
  std::stringstream ss(v);
  std::string pair;
  while (std::getline(ss, pair, ',')) {
    auto eq = pair.find('=');
    if (eq == std::string::npos || pair.find('=', eq + 1) != std::string::npos) {
      Bad(spec, v, "name=value pairs separated by commas");
    }
    std::string name = pair.substr(0, eq);
    if (!stages::IsValidLabelName(name)) {
      Bad(spec, v,
          "label names of letters, digits and _ not starting with a digit ('" + name +
              "' is not one)");
    }
    try {
      DockerTemplate::Parse(pair.substr(eq + 1));
    } catch (const std::invalid_argument& e) {
      Bad(spec, v, std::string("valid Docker templates: ") + e.what());
    }
  }
}

// loki-headers: Name=Value pairs. Any part of it may be a key, whatever its shape ("X-Api-Key:
// s3cr3t" with a colon): a message names the pair by its place, never by its bytes.
std::vector<std::pair<std::string, std::string>> ParseHeaderList(const OptionSpec& spec,
                                                                 const std::string& v) {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::stringstream ss(v);
  std::string pair;
  int place = 0;
  while (std::getline(ss, pair, ',')) {
    ++place;
    const auto eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw OptionError("skald: invalid log-opt " + std::string(spec.name) +
                        ": expected Name=Value pairs separated by commas (pair " +
                        std::to_string(place) + (eq == 0 ? " has no name" : " has no '='") +
                        "; its text is not shown)");
    }
    pairs.emplace_back(pair.substr(0, eq), pair.substr(eq + 1));
  }
  return pairs;
}

// The number `v` gives for an option of a numeric kind (a duration in nanoseconds, a whole
// number, a size in bytes), before its range is checked; nullopt for the other kinds. Throws
// OptionError when `v` is not such a number.
std::optional<int64_t> ReadNumber(const OptionSpec& spec, const std::string& v) {
  switch (spec.kind) {
    case Kind::kDuration: {
      const auto d = stages::ParseGoDuration(v);
      if (!d || *d < 0) Bad(spec, v, kDurationHint);
      return *d;
    }
    case Kind::kInt: {
      char* end = nullptr;
      errno = 0;
      const long long n = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || errno != 0 || n < INT32_MIN || n > INT32_MAX) {
        Bad(spec, v, "a whole number");
      }
      return n;
    }
    case Kind::kSize:
    case Kind::kSizeOrMinusOne: {
      const auto n = ParseDockerSize(v);
      if (!n) Bad(spec, v, kSizeHint);
      return *n;
    }
    default:
      return std::nullopt;
  }
}

// Checks `v` for an option whose value stays text (a URL, a choice, a regular expression, a
// Docker template, a label list). Throws OptionError.
void CheckText(const OptionSpec& spec, const std::string& v) {
  switch (spec.kind) {
    case Kind::kUrl: {
      // The Loki client's own parser, so that the option check and the client agree.
      ParsedUrl parsed;
      if (std::string why = ParseUrl(v, parsed); !why.empty()) {
        Bad(spec, v, "an http:// or https:// URL with a host (" + why + ")");
      }
      break;
    }
    case Kind::kProxyUrl: {
      ParsedUrl parsed;
      if (std::string why = ParseUrl(v, parsed, UrlRole::kProxy); !why.empty()) {
        Bad(spec, v, "an http://, https:// or socks5:// URL with a host (" + why + ")");
      }
      break;
    }
    case Kind::kChoice: {
      const std::string bar = "|" + std::string(spec.choices) + "|";
      if (bar.find("|" + v + "|") == std::string::npos) {
        Bad(spec, v, "one of " + std::string(spec.choices));
      }
      break;
    }
    case Kind::kRegex: {
      RE2 re(v, RE2::Quiet);
      if (!re.ok()) Bad(spec, v, "a valid regular expression (" + re.error() + ")");
      break;
    }
    case Kind::kTemplate:
      try {
        DockerTemplate::Parse(v);
      } catch (const std::invalid_argument& e) {
        Bad(spec, v, std::string("a valid Docker template: ") + e.what());
      }
      break;
    case Kind::kLabelList:
      CheckLabelList(spec, v);
      break;
    case Kind::kString:  // any text will do (YAML and paths are read where they are used)
    case Kind::kYaml:
    case Kind::kPath:
    case Kind::kTolerated:
    case Kind::kDuration:  // ReadValue reads these before it comes here
    case Kind::kInt:
    case Kind::kBool:
    case Kind::kSize:
    case Kind::kSizeOrMinusOne:
    case Kind::kHeaderList:
      break;
  }
}

// Reads `v` as the option's kind, within its range. Throws OptionError.
OptionValue ReadValue(const OptionSpec& spec, const std::string& v) {
  OptionValue out;
  out.text = v;
  if (spec.kind == Kind::kBool) {
    const auto b = ParseGoBool(v);
    if (!b) Bad(spec, v, kBoolHint);
    out.flag = *b;
  } else if (spec.kind == Kind::kHeaderList) {
    out.pairs = ParseHeaderList(spec, v);
  } else if (spec.kind == Kind::kSizeOrMinusOne && v == "-1") {
    out.number = -1;  // unbounded
  } else if (const std::optional<int64_t> n = ReadNumber(spec, v)) {
    if (*n < spec.min || *n > spec.max) Bad(spec, v, spec.range_hint);
    out.number = *n;
  } else {
    CheckText(spec, v);
  }
  return out;
}

// What spans several options, once each has its value.
void CheckAcrossOptions(const LogOptions& o, const std::map<std::string, std::string>& eff) {
  const auto given = [&](std::string_view name) { return eff.count(std::string(name)) > 0; };
  if (o.client.url.empty()) {
    throw OptionError(
        "skald: log-opt loki-url is required: give --log-opt "
        "loki-url=http://HOST:3100/loki/api/v1/push, or set it for all containers with "
        "`docker plugin set skald LOKI_URL=...`");
  }
  if (o.client.min_backoff > o.client.max_backoff) {
    throw OptionError("skald: log-opt loki-min-backoff (" + eff.at("loki-min-backoff") +
                      ") must not exceed loki-max-backoff (" + eff.at("loki-max-backoff") + ")");
  }
  // The client's own check: authentication, headers, proxy, TLS files in pairs, the tenant.
  if (std::string err = ValidateLokiClientConfig(o.client); !err.empty()) {
    throw OptionError("skald: invalid log-opt " + err);
  }
  if (given("loki-pipeline-stages") && given("loki-pipeline-stage-file")) {
    throw OptionError(
        "skald: give only one of log-opts loki-pipeline-stages and loki-pipeline-stage-file");
  }
}

}  // namespace

const std::vector<OptionSpec>& AllOptionSpecs() { return kSpecs; }

OptionError::OptionError(const std::string& message)
    : OptionError(std::vector<std::string>{message}) {}

OptionError::OptionError(std::vector<std::string> problems)
    : std::invalid_argument([&] {
        std::string joined = "skald: ";
        for (std::size_t i = 0; i < problems.size(); ++i) {
          std::string_view p = problems[i];
          if (p.rfind("skald: ", 0) == 0) p.remove_prefix(7);
          joined += (i ? "; " : "") + std::string(p);
        }
        return joined;
      }()),
      problems_(std::move(problems)) {
  for (std::string& p : problems_) {
    if (p.rfind("skald: ", 0) == 0) p.erase(0, 7);
  }
}

std::string OptionEnvName(std::string_view option) {
  std::string out(option);
  for (char& c : out)
    c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::optional<bool> ParseGoBool(std::string_view s) {
  if (s == "1" || s == "t" || s == "T" || s == "true" || s == "TRUE" || s == "True") return true;
  if (s == "0" || s == "f" || s == "F" || s == "false" || s == "FALSE" || s == "False") {
    return false;
  }
  return std::nullopt;
}

std::optional<int64_t> ParseDockerSize(std::string_view s) {
  // docker/go-units RAMInBytes: a number, optional space, optional k/m/g/t/p, optional i, b.
  static const RE2 kSize(R"(^(\d+(?:\.\d+)?) ?([kKmMgGtTpP])?[iI]?[bB]?$)");
  std::string number, unit;
  if (!RE2::FullMatch(s, kSize, &number, &unit)) return std::nullopt;
  // As go-units: a float64 (strtod rounds as Go's ParseFloat does), scaled, truncated.
  double v = std::strtod(number.c_str(), nullptr);
  const std::string_view units = "kmgtp";
  if (!unit.empty()) {
    auto power = units.find(static_cast<char>(std::tolower(static_cast<unsigned char>(unit[0]))));
    for (std::size_t i = 0; i <= power; ++i) v *= 1024;
  }
  if (v > 9.2e18) return std::nullopt;
  return static_cast<int64_t>(v);
}

bool OptionValueIsSecret(std::string_view option, std::string_view value) {
  const OptionSpec* spec = FindSpec(option);
  if (spec == nullptr || value.empty()) return false;
  switch (spec->shown) {
    case OptionShown::kAsIs:
      return false;
    case OptionShown::kRedactedUrl:
      return RedactUrl(value) != value;
    case OptionShown::kHidden:
      return true;
  }
  return true;
}

std::map<std::string, std::string> EnvDefaultsFromEnvironment() {
  std::map<std::string, std::string> out;
  for (const OptionSpec& spec : kSpecs) {
    const char* v = std::getenv(OptionEnvName(spec.name).c_str());
    if (v != nullptr && *v != '\0') out[std::string(spec.name)] = v;
  }
  return out;
}

std::map<std::string, std::string> EnvDefaultsFrom(const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> out;
  for (const OptionSpec& spec : kSpecs) {
    auto it = env.find(OptionEnvName(spec.name));
    if (it != env.end() && !it->second.empty()) out[std::string(spec.name)] = it->second;
  }
  return out;
}

LogOptions ParseLogOptions(const std::map<std::string, std::string>& config,
                           const std::map<std::string, std::string>& env_defaults) {
  // Every unknown option and every bad value is reported at once; the checks across options
  // need good values and stop at the first problem.
  std::vector<std::string> problems;
  for (const auto& [name, value] : config) {
    if (FindSpec(name) != nullptr) continue;
    std::string msg = "skald: unknown log-opt '" + name + "'";
    const std::string best = stages::DidYouMean(name, OptionNames(), kOptionNameRule);
    if (!best.empty()) msg += " (did you mean '" + best + "'?)";
    problems.push_back(msg + "; `skald options` lists the accepted options");
  }

  // Effective values, then each read by its row.
  std::map<std::string, std::string> eff;
  std::vector<std::pair<const OptionSpec*, OptionValue>> values;
  for (const OptionSpec& spec : kSpecs) {
    std::string name(spec.name);
    std::string v;
    if (auto it = config.find(name); it != config.end()) {
      v = it->second;
    } else if (auto env = env_defaults.find(name); env != env_defaults.end()) {
      v = env->second;
    } else if (!spec.default_value.empty()) {
      v = spec.default_value;
    } else {
      continue;
    }
    try {
      values.emplace_back(&spec, ReadValue(spec, v));
      eff.emplace(std::move(name), std::move(v));
    } catch (const OptionError& e) {
      problems.push_back(e.what());
    }
  }
  if (!problems.empty()) throw OptionError(std::move(problems));

  LogOptions o;
  for (const auto& [spec, value] : values) {
    if (spec->store != nullptr) spec->store(o, value);
  }
  CheckAcrossOptions(o, eff);
  return o;
}

std::string OptionsMarkdownTable() {
  std::string out = "| option | default | plugin-wide variable | meaning |\n|---|---|---|---|\n";
  for (const OptionSpec& s : kSpecs) {
    std::string def = s.default_value.empty() ? "" : "`" + std::string(s.default_value) + "`";
    out += "| `" + std::string(s.name) + "` | " + def + " | `" + OptionEnvName(s.name) + "` | " +
           std::string(s.description) + " |\n";
  }
  return out;
}

}  // namespace skald
