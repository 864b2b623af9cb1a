#include "plugin/config/container_labels.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "plugin/config/docker_template.h"

namespace skald {
namespace {

// Docker attribute names become label names: '.' and '-' turn into '_' (as the Go driver
// does); anything else Loki would refuse also becomes '_'.
std::string AttributeLabelName(std::string_view key) {
  std::string out;
  for (char c : key) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "_" + out;
  return out;
}

std::vector<std::string> SplitComma(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// Container labels that always become labels, under these names.
constexpr std::pair<const char*, const char*> kComposeAndSwarmLabels[] = {
    {"com.docker.swarm.service.name", "swarm_service"},
    {"com.docker.stack.namespace", "swarm_stack"},
    {"com.docker.compose.service", "compose_service"},
    {"com.docker.compose.project", "compose_project"},
};

// A Docker template of `option` rendered for the container; an execution that fails (as Go's
// would) or an output over the template's bound refuses the container, naming the option.
std::string RenderOption(const char* option, const std::string& text, const ContainerInfo& info,
                         const std::string& hostname) {
  // A replay: the output this template gave at StartLogging, when it read what is not kept.
  if (auto it = info.rendered_templates.find(text); it != info.rendered_templates.end()) {
    return it->second;
  }
  try {
    return DockerTemplate::Parse(text).Render(info, hostname);
  } catch (const std::logic_error& e) {  // invalid_argument, length_error
    throw OptionError(std::string("skald: invalid log-opt ") + option + ": " + e.what());
  }
}

// Calls f(name, template) for each name=template pair of loki-external-labels (validated by
// ParseLogOptions; a pair without '=' is skipped).
void ForEachExternalLabel(const LogOptions& options,
                          const std::function<void(std::string, std::string)>& f) {
  std::stringstream ss(options.external_labels);
  std::string pair;
  while (std::getline(ss, pair, ',')) {
    if (auto eq = pair.find('='); eq != std::string::npos) {
      f(pair.substr(0, eq), pair.substr(eq + 1));
    }
  }
}

}  // namespace

StreamLabelSet BuildContainerLabels(const ContainerInfo& info, const LogOptions& options,
                                    const std::string& hostname) {
  std::map<std::string, std::string> labels;
  ForEachExternalLabel(options, [&](std::string name, std::string text) {
    labels[std::move(name)] = RenderOption("loki-external-labels", text, info, hostname);
  });

  // Docker's ExtraAttributes: labels, labels-regex, env, env-regex (env wins on a clash).
  std::map<std::string, std::string> attrs;
  for (const std::string& name : SplitComma(options.labels)) {
    if (auto it = info.container_labels.find(name); it != info.container_labels.end()) {
      attrs[AttributeLabelName(name)] = it->second;
    }
  }
  if (!options.labels_regex.empty()) {
    RE2 re(options.labels_regex, RE2::Quiet);
    for (const auto& [k, v] : info.container_labels) {
      if (RE2::PartialMatch(k, re)) attrs[AttributeLabelName(k)] = v;
    }
  }
  for (const std::string& name : SplitComma(options.env)) {
    if (auto v = info.EnvValue(name)) attrs[AttributeLabelName(name)] = *v;
  }
  if (!options.env_regex.empty()) {
    RE2 re(options.env_regex, RE2::Quiet);
    for (const std::string& kv : info.container_env) {
      auto eq = kv.find('=');
      if (eq == std::string::npos) continue;
      std::string k = kv.substr(0, eq);
      if (RE2::PartialMatch(k, re)) attrs[AttributeLabelName(k)] = kv.substr(eq + 1);
    }
  }
  for (const auto& [docker_label, label] : kComposeAndSwarmLabels) {
    auto it = info.container_labels.find(docker_label);
    if (it != info.container_labels.end() && !it->second.empty()) attrs[label] = it->second;
  }
  for (auto& [k, v] : attrs) labels[k] = v;
  if (!hostname.empty()) labels["host"] = hostname;
  if (options.tag) labels["tag"] = RenderOption("tag", *options.tag, info, hostname);

  return StreamLabelSet(labels.begin(), labels.end());
}

bool TemplatesName(const LogOptions& options, std::string_view field) {
  return options.external_labels.find(field) != std::string::npos ||
         options.tag.value_or("").find(field) != std::string::npos;
}

ContainerInfo KeepLabelSources(const ContainerInfo& info, const LogOptions& options,
                               const std::string& hostname) {
  ContainerInfo kept = info;
  // The command line may carry secrets (a password as an argument): kept only when a template
  // of the options can show it; so are all container labels. A template that reads the whole
  // environment is kept as its output, never the environment.
  if (!TemplatesName(options, "Command") && !TemplatesName(options, "ContainerEntrypoint") &&
      !TemplatesName(options, "ContainerArgs")) {
    kept.container_entrypoint.clear();
    kept.container_args.clear();
  }
  kept.container_env.clear();
  const std::vector<std::string> env_names = SplitComma(options.env);
  std::optional<RE2> env_re;
  if (!options.env_regex.empty()) env_re.emplace(options.env_regex, RE2::Quiet);
  for (const std::string& kv : info.container_env) {
    const std::string name = kv.substr(0, kv.find('='));
    if (std::find(env_names.begin(), env_names.end(), name) != env_names.end() ||
        (env_re && RE2::PartialMatch(name, *env_re))) {
      kept.container_env.push_back(kv);
    }
  }
  if (TemplatesName(options, "ContainerEnv")) {
    const auto keep_output = [&](const std::string& text) {
      if (text.find("ContainerEnv") == std::string::npos) return;
      try {
        kept.rendered_templates[text] = DockerTemplate::Parse(text).Render(info, hostname);
      } catch (const std::logic_error&) {
        // It refused the container at StartLogging: there is nothing to replay.
      }
    };
    ForEachExternalLabel(options, [&](std::string, std::string text) { keep_output(text); });
    if (options.tag) keep_output(*options.tag);
  }
  if (!TemplatesName(options, "ContainerLabels")) {
    kept.container_labels.clear();
    const std::vector<std::string> label_names = SplitComma(options.labels);
    std::optional<RE2> label_re;
    if (!options.labels_regex.empty()) label_re.emplace(options.labels_regex, RE2::Quiet);
    for (const auto& [k, v] : info.container_labels) {
      // Captured under a name of its own: clang 14 cannot capture a structured binding.
      const bool compose_or_swarm =
          std::any_of(std::begin(kComposeAndSwarmLabels), std::end(kComposeAndSwarmLabels),
                      [&name = k](const auto& known) { return name == known.first; });
      if (std::find(label_names.begin(), label_names.end(), k) != label_names.end() ||
          (label_re && RE2::PartialMatch(k, *label_re)) || compose_or_swarm) {
        kept.container_labels[k] = v;
      }
    }
  }
  return kept;
}

}  // namespace skald
