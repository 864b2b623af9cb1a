#include "plugin/log_options.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "pipeline_stages/did_you_mean.h"
#include "pipeline_stages/entry.h"
#include "pipeline_stages/go_duration.h"
#include "plugin/docker_template.h"
#include "plugin/loki_url.h"

extern char** environ;

namespace skald {
namespace {

constexpr std::string_view kDurationHint = "a duration such as 500ms, 10s, 1m30s";
constexpr std::string_view kBoolHint = "true or false";
constexpr std::string_view kSizeHint = "a size such as 512k, 20m, 1g or a byte count";
constexpr std::size_t kMaxLineSizeLimit = 64 * 1024 * 1024;

const std::vector<OptionSpec> kSpecs = {
    {"loki-url", OptionKind::kUrl, "",
     "Loki push URL, e.g. http://127.0.0.1:3100/loki/api/v1/push; user:password@ sets basic auth "
     "(user info ends at the last @, so the password may hold any character). Required here or "
     "plugin-wide.",
     ""},
    {"loki-external-labels", OptionKind::kLabelList, "container_name={{.Name}}",
     "Extra labels, name=value pairs separated by commas; values are Docker templates.", ""},
    {"loki-timeout", OptionKind::kDuration, "10s",
     "Deadline of one push request, from connecting to the end of Loki's answer.", ""},
    {"loki-batch-wait", OptionKind::kDuration, "1s",
     "Longest time a batch waits before it is sent.", ""},
    {"loki-batch-size", OptionKind::kInt, "1048576",
     "Largest batch, in bytes of lines and structured metadata.", ""},
    {"loki-min-backoff", OptionKind::kDuration, "500ms", "First wait before a retry.", ""},
    {"loki-max-backoff", OptionKind::kDuration, "5m", "Longest wait between retries.", ""},
    {"loki-retries", OptionKind::kInt, "10",
     "With no-file=true only: retries of a batch (after 429, 5xx, a timeout, a redirect, 401, 403 "
     "or 404) before it is dropped and counted; 0 retries forever, as in the Go driver. With the "
     "journal, failures are retried until delivered or evicted by the journal budget.",
     ""},
    {"loki-tenant-id", OptionKind::kString, "",
     "Tenant sent as X-Scope-OrgID: at most 150 bytes of a-z A-Z 0-9 ! - _ . * ' ( ).", ""},
    {"loki-bearer-token", OptionKind::kString, "",
     "Bearer token sent as Authorization (prefer loki-bearer-token-file, or set it plugin-wide: "
     "dockerd keeps every --log-opt in the container's config).",
     ""},
    {"loki-bearer-token-file", OptionKind::kPath, "",
     "File holding the bearer token; read again when Loki answers 401 or 403 (a rotated token "
     "works without a restart).",
     ""},
    {"loki-basic-auth-username", OptionKind::kString, "",
     "User name for basic auth, with loki-basic-auth-password-file.", ""},
    {"loki-basic-auth-password-file", OptionKind::kPath, "",
     "File holding the basic-auth password; read again when Loki answers 401 or 403.", ""},
    {"loki-headers", OptionKind::kString, "",
     "Extra headers, Name=Value pairs separated by commas (not Host, Content-*, Authorization "
     "or X-Scope-OrgID, which other options set).",
     ""},
    {"loki-tls-ca-file", OptionKind::kPath, "", "CA certificate file to verify Loki.", ""},
    {"loki-tls-cert-file", OptionKind::kPath, "", "Client certificate file.", ""},
    {"loki-tls-key-file", OptionKind::kPath, "", "Client key file.", ""},
    {"loki-tls-server-name", OptionKind::kString, "", "Server name to verify Loki's certificate.",
     ""},
    {"loki-tls-insecure-skip-verify", OptionKind::kBool, "false",
     "Do not verify Loki's certificate.", ""},
    {"loki-proxy-url", OptionKind::kUrl, "", "HTTP proxy to reach Loki through.", ""},
    {"loki-pipeline-stages", OptionKind::kYaml, "",
     "Promtail pipeline stages, an inline YAML list.", ""},
    {"loki-pipeline-stage-file", OptionKind::kPath, "",
     "File whose top level `pipeline_stages:` holds the stages.", ""},
    {"loki-relabel-config", OptionKind::kYaml, "",
     "Prometheus relabel rules applied once to each container's labels.", ""},
    {"loki-max-line-size", OptionKind::kSize, "256000",
     "Longer lines are sent as consecutive pieces of at most this many bytes (counted).", ""},
    {"no-file", OptionKind::kBool, "false", "Keep no journal on disk (no `docker logs`).", ""},
    {"keep-file", OptionKind::kBool, "false", "Keep the journal after the container stops.", ""},
    {"max-size", OptionKind::kSize, "20m", "Size of one journal segment; -1 is unbounded.", ""},
    {"max-file", OptionKind::kInt, "5", "Journal segments kept per container.", ""},
    {"loki-on-full", OptionKind::kChoice, "drop",
     "When the journal budget is full of undelivered lines: `drop` the oldest (counted as "
     "journal_full) or `block` the container until Loki takes them.",
     "drop|block"},
    {"tag", OptionKind::kTemplate, "", "Docker tag template; when given it becomes a `tag` label.",
     ""},
    {"labels", OptionKind::kString, "", "Container label names to add as labels, comma-separated.",
     ""},
    {"labels-regex", OptionKind::kRegex, "", "Regular expression of container label names to add.",
     ""},
    {"env", OptionKind::kString, "",
     "Environment variable names to add as labels, comma-separated.", ""},
    {"env-regex", OptionKind::kRegex, "",
     "Regular expression of environment variable names to add.", ""},
    {"mode", OptionKind::kChoice, "", "Docker's delivery mode (the daemon's; accepted).",
     "blocking|non-blocking"},
    {"max-buffer-size", OptionKind::kSize, "", "Docker's non-blocking buffer (the daemon's).", ""},
    {"cache-disabled", OptionKind::kTolerated, "", "The daemon's local cache (accepted, unused).",
     ""},
    {"cache-max-size", OptionKind::kTolerated, "", "The daemon's local cache (accepted, unused).",
     ""},
    {"cache-max-file", OptionKind::kTolerated, "", "The daemon's local cache (accepted, unused).",
     ""},
    {"cache-compress", OptionKind::kTolerated, "", "The daemon's local cache (accepted, unused).",
     ""},
};

[[noreturn]] void Bad(std::string_view option, std::string_view value, std::string_view expected) {
  // Credentials never appear in a message (dockerd logs StartLogging's errors).
  std::string shown = option == "loki-url" || option == "loki-proxy-url" ? RedactUrl(value)
                      : option == "loki-bearer-token" || option == "loki-headers"
                          ? std::string("(hidden)")
                          : std::string(value);
  throw OptionError("skald: invalid value '" + shown + "' for log-opt " + std::string(option) +
                    ": expected " + std::string(expected));
}

// The Loki client's own parser, so that the option check and the client agree on every URL.
void CheckUrl(std::string_view option, std::string_view value) {
  ParsedUrl parsed;
  if (std::string why = ParseUrl(value, parsed); !why.empty()) {
    Bad(option, value, "an http:// or https:// URL with a host (" + why + ")");
  }
}

// Option names are long and alike (loki-...): a suggestion may be three edits away.
constexpr stages::DidYouMeanRule kOptionNameRule{.max_distance = 3, .prefixes = false};

std::vector<std::string_view> OptionNames() {
  std::vector<std::string_view> names;
  for (const OptionSpec& s : kSpecs) names.push_back(s.name);
  return names;
}

std::chrono::milliseconds ToMs(std::chrono::nanoseconds ns) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(ns);
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
  long double v = std::strtold(number.c_str(), nullptr);
  const std::string_view units = "kmgtp";
  if (!unit.empty()) {
    auto power = units.find(static_cast<char>(std::tolower(static_cast<unsigned char>(unit[0]))));
    for (std::size_t i = 0; i <= power; ++i) v *= 1024;
  }
  if (v > 9.2e18L) return std::nullopt;
  return static_cast<int64_t>(v);
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

namespace {

// Throws OptionError when `value` is not of the option's kind.
void CheckValue(const OptionSpec& spec, const std::string& v) {
  switch (spec.kind) {
    case OptionKind::kUrl:
      CheckUrl(spec.name, v);
      break;
    case OptionKind::kDuration: {
      auto d = stages::ParseGoDuration(v);
      if (!d || *d < 0) Bad(spec.name, v, kDurationHint);
      break;
    }
    case OptionKind::kInt: {
      char* end = nullptr;
      errno = 0;
      long long n = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || errno != 0 || n < INT32_MIN || n > INT32_MAX) {
        Bad(spec.name, v, "a whole number");
      }
      break;
    }
    case OptionKind::kBool:
      if (!ParseGoBool(v)) Bad(spec.name, v, kBoolHint);
      break;
    case OptionKind::kSize:
      if (!(spec.name == "max-size" && v == "-1") && !ParseDockerSize(v)) {
        Bad(spec.name, v, kSizeHint);
      }
      break;
    case OptionKind::kChoice: {
      std::string choices(spec.choices);
      std::string bar = "|" + choices + "|";
      if (bar.find("|" + v + "|") == std::string::npos) Bad(spec.name, v, "one of " + choices);
      break;
    }
    case OptionKind::kRegex: {
      RE2 re(v, RE2::Quiet);
      if (!re.ok()) Bad(spec.name, v, "a valid regular expression (" + re.error() + ")");
      break;
    }
    case OptionKind::kTemplate:
      try {
        DockerTemplate::Parse(v);
      } catch (const std::invalid_argument& e) {
        Bad(spec.name, v, std::string("a valid Docker template: ") + e.what());
      }
      break;
    case OptionKind::kLabelList:
    case OptionKind::kString:
    case OptionKind::kYaml:
    case OptionKind::kPath:
    case OptionKind::kTolerated:
      break;
  }
}

}  // namespace

LogOptions ParseLogOptions(const std::map<std::string, std::string>& config,
                           const std::map<std::string, std::string>& env_defaults) {
  // Every unknown option and every bad value is reported at once; the checks across options
  // below need good values and stop at the first problem.
  std::vector<std::string> problems;
  for (const auto& [name, value] : config) {
    // Captured under a name of its own: clang 14 cannot capture a structured binding.
    auto known = std::find_if(kSpecs.begin(), kSpecs.end(),
                              [&name = name](const OptionSpec& s) { return s.name == name; });
    if (known != kSpecs.end()) continue;
    std::string msg = "skald: unknown log-opt '" + name + "'";
    const std::string best = stages::DidYouMean(name, OptionNames(), kOptionNameRule);
    if (!best.empty()) msg += " (did you mean '" + best + "'?)";
    problems.push_back(msg + "; `skald options` lists the accepted options");
  }

  std::map<std::string, std::string> eff;
  for (const OptionSpec& spec : kSpecs) {
    std::string name(spec.name);
    if (auto it = config.find(name); it != config.end()) {
      eff[name] = it->second;
    } else if (auto env = env_defaults.find(name); env != env_defaults.end()) {
      eff[name] = env->second;
    } else if (!spec.default_value.empty()) {
      eff[name] = std::string(spec.default_value);
    }
  }

  // Type checks, table-driven.
  for (const OptionSpec& spec : kSpecs) {
    auto it = eff.find(std::string(spec.name));
    if (it == eff.end()) continue;
    const std::string& v = it->second;
    try {
      CheckValue(spec, v);
    } catch (const OptionError& e) {
      problems.push_back(e.what());
    }
  }
  if (!problems.empty()) throw OptionError(std::move(problems));

  auto get = [&](std::string_view name) -> const std::string* {
    auto it = eff.find(std::string(name));
    return it == eff.end() ? nullptr : &it->second;
  };
  auto duration = [&](std::string_view name) {
    return ToMs(std::chrono::nanoseconds(*stages::ParseGoDuration(*get(name))));
  };
  auto integer = [&](std::string_view name) { return std::stoi(*get(name)); };
  auto boolean = [&](std::string_view name) { return get(name) && *ParseGoBool(*get(name)); };

  LogOptions o;
  const std::string* url = get("loki-url");
  if (url == nullptr || url->empty()) {
    throw OptionError(
        "skald: log-opt loki-url is required: give --log-opt "
        "loki-url=http://HOST:3100/loki/api/v1/push, or set it for all containers with "
        "`docker plugin set skald LOKI_URL=...`");
  }
  o.client.url = *url;
  if (const auto* t = get("loki-tenant-id")) o.client.tenant_id = *t;
  o.client.timeout = duration("loki-timeout");
  o.client.batch_wait = duration("loki-batch-wait");
  o.client.min_backoff = duration("loki-min-backoff");
  o.client.max_backoff = duration("loki-max-backoff");
  int batch_size = integer("loki-batch-size");
  if (batch_size <= 0) Bad("loki-batch-size", *get("loki-batch-size"), "a positive byte count");
  o.client.batch_size_bytes = static_cast<std::size_t>(batch_size);
  o.client.max_retries = integer("loki-retries");
  if (o.client.max_retries < 0) {
    Bad("loki-retries", *get("loki-retries"), "0 (retry forever) or more");
  }
  // The Go driver's backoff (dskit) reads 0 as no limit: a batch is retried until delivered.
  if (o.client.max_retries == 0) o.client.max_retries = -1;
  if (o.client.timeout.count() <= 0) Bad("loki-timeout", *get("loki-timeout"), "more than 0");
  if (o.client.min_backoff > o.client.max_backoff) {
    throw OptionError("skald: log-opt loki-min-backoff (" + *get("loki-min-backoff") +
                      ") must not exceed loki-max-backoff (" + *get("loki-max-backoff") + ")");
  }
  if (const auto* v = get("loki-tls-ca-file")) o.client.tls.ca_file = *v;
  if (const auto* v = get("loki-tls-cert-file")) o.client.tls.cert_file = *v;
  if (const auto* v = get("loki-tls-key-file")) o.client.tls.key_file = *v;
  if (const auto* v = get("loki-tls-server-name")) o.client.tls.server_name = *v;
  o.client.tls.insecure_skip_verify = boolean("loki-tls-insecure-skip-verify");
  if (const auto* v = get("loki-proxy-url")) o.client.proxy_url = *v;
  if (const auto* v = get("loki-bearer-token")) o.client.auth.bearer_token = *v;
  if (const auto* v = get("loki-bearer-token-file")) o.client.auth.bearer_token_file = *v;
  if (const auto* v = get("loki-basic-auth-username")) o.client.auth.basic_username = *v;
  if (const auto* v = get("loki-basic-auth-password-file")) {
    o.client.auth.basic_password_file = *v;
  }
  if (const auto* v = get("loki-headers")) {
    std::stringstream ss(*v);
    std::string pair;
    while (std::getline(ss, pair, ',')) {
      const auto eq = pair.find('=');
      if (eq == std::string::npos || eq == 0) {
        // The value may be a key: show only what is before its '='.
        throw OptionError(
            "skald: invalid log-opt loki-headers: expected Name=Value pairs "
            "separated by commas ('" +
            RedactUrl(pair.substr(0, pair.find('='))) + "...' is not one)");
      }
      o.client.headers.emplace_back(pair.substr(0, eq), pair.substr(eq + 1));
    }
  }
  if (std::string err = ValidateLokiClientConfig(o.client); !err.empty()) {
    throw OptionError("skald: invalid log-opt " + err);
  }

  if (const auto* v = get("loki-external-labels")) {
    o.external_labels = *v;
    std::stringstream ss(*v);
    std::string pair;
    while (std::getline(ss, pair, ',')) {
      auto eq = pair.find('=');
      if (eq == std::string::npos || pair.find('=', eq + 1) != std::string::npos) {
        Bad("loki-external-labels", *v, "name=value pairs separated by commas");
      }
      std::string name = pair.substr(0, eq);
      if (!stages::IsValidLabelName(name)) {
        Bad("loki-external-labels", *v,
            "label names of letters, digits and _ not starting with a digit ('" + name +
                "' is not one)");
      }
      try {
        DockerTemplate::Parse(pair.substr(eq + 1));
      } catch (const std::invalid_argument& e) {
        Bad("loki-external-labels", *v, std::string("valid Docker templates: ") + e.what());
      }
    }
  }
  if (const auto* v = get("tag")) o.tag = *v;
  if (const auto* v = get("labels")) o.labels = *v;
  if (const auto* v = get("labels-regex")) o.labels_regex = *v;
  if (const auto* v = get("env")) o.env = *v;
  if (const auto* v = get("env-regex")) o.env_regex = *v;
  const std::string* stages = get("loki-pipeline-stages");
  const std::string* stage_file = get("loki-pipeline-stage-file");
  if (stages && stage_file) {
    throw OptionError(
        "skald: give only one of log-opts loki-pipeline-stages and loki-pipeline-stage-file");
  }
  if (stages) o.pipeline_stages = *stages;
  if (stage_file) o.pipeline_stage_file = *stage_file;
  if (const auto* v = get("loki-relabel-config")) o.relabel_config = *v;
  o.max_line_size = static_cast<std::size_t>(*ParseDockerSize(*get("loki-max-line-size")));
  if (o.max_line_size == 0 || o.max_line_size > kMaxLineSizeLimit) {
    // An unfinished line is held up to this size per source: bounded whatever is asked.
    Bad("loki-max-line-size", *get("loki-max-line-size"), "a size from 1 byte to 64m");
  }
  o.no_file = boolean("no-file");
  o.keep_file = boolean("keep-file");
  o.max_size = *get("max-size") == "-1" ? -1 : *ParseDockerSize(*get("max-size"));
  o.max_file = integer("max-file");
  if (o.max_file < 1) Bad("max-file", *get("max-file"), "1 or more");
  o.block_when_full = *get("loki-on-full") == "block";
  o.client.durable = !o.no_file;
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
