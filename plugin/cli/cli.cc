#include "plugin/cli/cli.h"

#include <cstdlib>
#include <iostream>
#include <map>
#include <stdexcept>

#include "plugin/cli/config_check.h"
#include "plugin/cli/dry_run.h"
#include "plugin/cli/installed_plugin.h"
#include "plugin/config/log_options.h"
#include "plugin/config/plugin_settings.h"
#include "plugin/journal/replay_guard.h"

namespace skald {
namespace {

// The one usage text: the commands, then the plugin-wide settings from their table.
std::string Usage() {
  std::string text =
      "usage: skald [--socket PATH]   serve the Docker logging-plugin API\n"
      "       skald options           print every --log-opt and plugin setting as markdown\n"
      "       skald --version         print the version and the commit it was built from\n"
      "       skald check   [--log-opt NAME=VALUE]... [--stages-file FILE] [--plugin NAME]\n"
      "       skald dry-run [--log-opt NAME=VALUE]... [--stages-file FILE] [--plugin NAME]\n"
      "                     [--stderr] < lines\n"
      "       skald quarantine list [--plugin NAME | --state-dir DIR]\n"
      "       skald quarantine release JOURNAL [--plugin NAME | --state-dir DIR]\n"
      "check: validates the options as `docker run --log-driver skald` would (every problem at\n"
      "  once) and warns of what is legal but useless; exit 1 on an error.\n"
      "dry-run: runs each input line through the labels, relabel rules and stages and prints the\n"
      "  entries that would be sent (or why none is); nothing is sent.\n"
      "--stages-file FILE: the same as --log-opt loki-pipeline-stage-file=FILE.\n"
      "--plugin NAME: also use the plugin-wide settings of the installed plugin NAME (docker\n"
      "  plugin set NAME LOKI_URL=...) and read its files where they are on the host.\n"
      "--stderr: the lines are the container's stderr (default: stdout).\n"
      "quarantine: journals set aside because the plugin died twice in a row replaying them;\n"
      "  release moves one back, to be replayed at the plugin's next start. --plugin NAME: the\n"
      "  state directory of the installed plugin NAME, on the host; --state-dir: that directory\n"
      "  (default: $STATE_DIR, else /var/lib/skald).\n"
      "environment (plugin settings, `skald options` says what each means):";
  std::size_t column = 200;
  for (const SettingSpec& spec : AllSettingSpecs()) {
    std::string item = std::string(spec.name) + " (" + std::string(spec.default_value) + ")";
    if (column + item.size() + 2 > 92) {
      text += "\n ";
      column = 1;
    }
    text += " " + item + ",";
    column += item.size() + 2;
  }
  text += "\n  and the plugin-wide default of each --log-opt, such as LOKI_URL.\n";
  return text;
}

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
    state_dir = ReadPluginSettings(std::getenv, nullptr).state_dir;
    if (state_dir.empty()) state_dir = PluginSettings{}.state_dir;  // STATE_DIR= (no journals)
  }
  if (!release) {
    const auto list = ReplayGuard::List(state_dir);
    for (const ReplayGuard::Quarantined& q : list) out << q.name << "\t" << q.dir.string() << "\n";
    if (list.empty()) out << "no quarantined journals in " << state_dir << "\n";
    return 0;
  }
  if (std::string error = ReplayGuard::Release(state_dir, journal); !error.empty()) {
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

// check and dry-run.
int RunConfigCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                     std::ostream& err) {
  Args a;
  try {
    a = Parse(args);
  } catch (const std::invalid_argument& e) {
    err << "skald " << args[0] << ": " << e.what() << "\n" << Usage();
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

}  // namespace

CommandLine RunCommandLine(const std::vector<std::string>& args, std::string_view version,
                           std::istream& in, std::ostream& out, std::ostream& err) {
  CommandLine line;
  const std::string command = args.empty() ? "" : args[0];
  const bool help = args.size() > 1 && (args[1] == "--help" || args[1] == "-h");
  if (command == "check" || command == "dry-run" || command == "quarantine") {
    if (help) {
      out << Usage();
    } else if (command == "quarantine") {
      try {
        line.status = RunQuarantine(args, out, err);
      } catch (const std::invalid_argument& e) {
        err << "skald quarantine: " << e.what() << "\n" << Usage();
        line.status = 2;
      }
    } else {
      line.status = RunConfigCommand(args, in, out, err);
    }
    return line;
  }
  if (command == "options" && args.size() == 1) {
    out << "## Options\n\n"
        << OptionsMarkdownTable() << "\n## Plugin settings\n\n"
        << SettingsMarkdownTable();
    return line;
  }
  if ((command == "--version" || command == "version") && args.size() == 1) {
    out << version << "\n";
    return line;
  }
  if (command == "-h" || command == "--help" || command == "help") {
    out << Usage();
    return line;
  }
  if (args.empty() || (command == "--socket" && args.size() == 2)) {
    line.serve = true;
    if (!args.empty()) line.socket_path = args[1];
    return line;
  }
  err << "skald: unknown command or argument '" << command << "'\n" << Usage();
  line.status = 2;
  return line;
}

}  // namespace skald
