#include "plugin/cli/cli.h"

#include <cstdlib>
#include <iostream>
#include <map>
#include <stdexcept>

#include "plugin/cli/config_check.h"
#include "plugin/cli/dry_run.h"
#include "plugin/cli/installed_plugin.h"
#include "plugin/config/log_options.h"
#include "plugin/journal/replay_guard.h"

namespace skald {
namespace {

constexpr const char* kUsage =
    "usage: skald check   [--log-opt NAME=VALUE]... [--stages-file FILE] [--plugin NAME]\n"
    "       skald dry-run [--log-opt NAME=VALUE]... [--stages-file FILE] [--plugin NAME]\n"
    "                     [--stderr] < lines\n"
    "check: validates the options as `docker run --log-driver skald` would (every problem at\n"
    "  once) and warns of what is legal but useless; exit 1 on an error.\n"
    "dry-run: runs each input line through the labels, relabel rules and stages and prints the\n"
    "  entries that would be sent (or why none is); nothing is sent.\n"
    "--stages-file FILE: the same as --log-opt loki-pipeline-stage-file=FILE.\n"
    "--plugin NAME: also use the plugin-wide settings of the installed plugin NAME (docker\n"
    "  plugin set NAME LOKI_URL=...) and read its files where they are on the host.\n"
    "--stderr: the lines are the container's stderr (default: stdout).\n"
    "\n"
    "usage: skald quarantine list [--plugin NAME | --state-dir DIR]\n"
    "       skald quarantine release JOURNAL [--plugin NAME | --state-dir DIR]\n"
    "quarantine: journals set aside because the plugin died twice in a row replaying them;\n"
    "  release moves one back, to be replayed at the plugin's next start. --plugin NAME: the\n"
    "  state directory of the installed plugin NAME, on the host; --state-dir: that directory\n"
    "  (default: $STATE_DIR, else /var/lib/skald).\n";

// skald quarantine list|release: throws std::invalid_argument on bad arguments.
int RunQuarantine(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.size() < 2 || (args[1] != "list" && args[1] != "release")) {
    throw std::invalid_argument("expected list or release");
  }
  const bool release = args[1] == "release";
  std::string journal, plugin, state_dir;
  for (std::size_t i = 2; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if ((arg == "--plugin" || arg == "--state-dir") && i + 1 < args.size()) {
      (arg == "--plugin" ? plugin : state_dir) = args[++i];
    } else if (release && journal.empty() && arg.rfind("--", 0) != 0) {
      journal = arg;
    } else {
      throw std::invalid_argument("unknown argument '" + arg + "'");
    }
  }
  if (release && journal.empty()) throw std::invalid_argument("release needs a JOURNAL name");
  if (!plugin.empty()) {
    try {
      state_dir = InspectInstalledPlugin(plugin).host_propagated_mount;
    } catch (const std::runtime_error& e) {
      err << "skald quarantine: --plugin " << plugin << ": " << e.what() << "\n";
      return 2;
    }
  }
  if (state_dir.empty()) {
    const char* env = std::getenv("STATE_DIR");
    state_dir = env != nullptr && *env != '\0' ? env : "/var/lib/skald";
  }
  if (!release) {
    const auto list = ReplayGuard::List(state_dir);
    for (const ReplayGuard::Quarantined& q : list) out << q.name << "\t" << q.dir.string() << "\n";
    if (list.empty()) out << "no quarantined journals in " << state_dir << "\n";
    return 0;
  }
  std::string error;
  if (!ReplayGuard::Release(state_dir, journal, &error)) {
    err << "skald quarantine release: " << error << "\n";
    return 1;
  }
  out << "released " << journal << ": the plugin replays it at its next start\n";
  return 0;
}

struct Args {
  std::string command;
  std::map<std::string, std::string> log_opts;
  std::string plugin;
  std::string docker_socket = "/var/run/docker.sock";
  bool stderr_lines = false;
};

// Throws std::invalid_argument naming the bad argument.
Args Parse(const std::vector<std::string>& args) {
  Args a;
  a.command = args.at(0);
  for (std::size_t i = 1; i < args.size(); ++i) {
    std::string arg = args[i];
    std::string value;
    bool has_value = false;
    if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    auto next = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= args.size()) throw std::invalid_argument(arg + " needs a value");
      return args[++i];
    };
    if (arg == "--log-opt") {
      const std::string kv = next();
      const auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        throw std::invalid_argument("--log-opt '" + kv + "': expected NAME=VALUE");
      }
      a.log_opts[kv.substr(0, eq)] = kv.substr(eq + 1);
    } else if (arg == "--stages-file") {
      a.log_opts["loki-pipeline-stage-file"] = next();
    } else if (arg == "--plugin") {
      a.plugin = next();
    } else if (arg == "--docker-socket") {
      a.docker_socket = next();
    } else if (arg == "--stderr" && !has_value && a.command == "dry-run") {
      a.stderr_lines = true;
    } else {
      throw std::invalid_argument("unknown argument '" + args[i] + "'");
    }
  }
  return a;
}

std::string Plural(std::size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

int RunCliCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                  std::ostream& err) {
  if (args.empty() || (args[0] != "check" && args[0] != "dry-run" && args[0] != "quarantine")) {
    return -1;
  }
  if (args.size() > 1 && (args[1] == "--help" || args[1] == "-h")) {
    out << kUsage;
    return 0;
  }
  if (args[0] == "quarantine") {
    try {
      return RunQuarantine(args, out, err);
    } catch (const std::invalid_argument& e) {
      err << "skald quarantine: " << e.what() << "\n" << kUsage;
      return 2;
    }
  }
  Args a;
  try {
    a = Parse(args);
  } catch (const std::invalid_argument& e) {
    err << "skald " << args[0] << ": " << e.what() << "\n" << kUsage;
    return 2;
  }
  ConfigCheckInput input;
  input.log_opts = a.log_opts;
  if (!a.plugin.empty()) {
    InstalledPlugin plugin;
    try {
      plugin = InspectInstalledPlugin(a.plugin, a.docker_socket);
    } catch (const std::runtime_error& e) {
      err << "skald " << a.command << ": --plugin " << a.plugin << ": " << e.what() << "\n";
      return 2;
    }
    input.env_defaults = EnvDefaultsFrom(plugin.env);
    input.state_dir = plugin.propagated_mount;
    input.host_state_dir = plugin.host_propagated_mount;
    // Names only: values may be secrets.
    std::string names;
    for (const auto& [option, value] : input.env_defaults) {
      names += (names.empty() ? "" : ", ") + OptionEnvName(option);
    }
    (a.command == "check" ? out : err)
        << "plugin " << plugin.name << " (" << (plugin.enabled ? "enabled" : "disabled")
        << "): plugin-wide settings used: " << (names.empty() ? "none" : names) << "\n";
  } else {
    input.env_defaults = EnvDefaultsFromEnvironment();  // LOKI_URL=... skald check ...
  }

  ConfigCheckResult result = CheckLoggingConfig(input);
  std::ostream& report = a.command == "check" ? out : err;
  for (const std::string& e : result.errors) report << "error: " << e << "\n";
  for (const std::string& w : result.warnings) report << "warning: " << w << "\n";
  if (a.command == "check") {
    if (result.errors.empty() && result.warnings.empty()) {
      out << "ok: the options are valid for skald\n";
    } else {
      out << "skald check: " << Plural(result.errors.size(), "error") << ", "
          << Plural(result.warnings.size(), "warning") << "\n";
    }
    return result.errors.empty() ? 0 : 1;
  }
  if (!result.options) {
    err << "skald dry-run: the options are not valid (" << Plural(result.errors.size(), "error")
        << "); nothing was run\n";
    return 1;
  }
  DryRunInput run;
  run.options = std::move(*result.options);
  run.log_opts = a.log_opts;
  run.source = a.stderr_lines ? LogSource::kStderr : LogSource::kStdout;
  DryRun(run, in, out);
  return 0;
}

}  // namespace skald
