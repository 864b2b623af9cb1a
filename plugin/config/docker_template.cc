#include "plugin/config/docker_template.h"

#include <absl/time/time.h>

#include <stdexcept>

namespace skald {

namespace {

// Go's zero time.Time (January 1 of year 1, UTC), in Unix seconds: ContainerCreated when dockerd
// sent none, or one that does not parse.
constexpr int64_t kGoZeroTimeSeconds = -62135596800;

// Docker's logger.Info as a template reads it: its fields, and its methods' results computed
// once. Views point into `info` and into this object, both alive while a template executes.
class LoggerInfoData : public stages::TemplateData {
 public:
  LoggerInfoData(const ContainerInfo& info, const std::string& hostname)
      : info_(info),
        hostname_(hostname),
        id_(info.ID()),
        name_(info.Name()),
        image_id_(info.ImageID()),
        command_(info.Command()) {
    // RFC 3339 as dockerd's JSON writes a time, any year (Go's zero time is year 1).
    absl::Time created;
    std::string error;
    if (absl::ParseTime(absl::RFC3339_full, info.container_created, &created, &error) &&
        created != absl::InfiniteFuture() && created != absl::InfinitePast()) {
      created_seconds_ = absl::ToUnixSeconds(created);
      created_nanos_ = static_cast<int32_t>((created - absl::FromUnixSeconds(created_seconds_)) /
                                            absl::Nanoseconds(1));
    }
  }

  std::string_view StructType() const override { return "*logger.Info"; }

  stages::TemplateValue Lookup(std::string_view name) const override {
    using V = stages::TemplateValue;
    if (name == "Config") return V::StringMap(info_.config);
    if (name == "ContainerID" || name == "FullID") return V::String(info_.container_id);
    if (name == "ContainerName") return V::String(info_.container_name);
    if (name == "ContainerEntrypoint") return V::String(info_.container_entrypoint);
    if (name == "ContainerArgs") return V::StringList(info_.container_args);
    if (name == "ContainerImageID" || name == "ImageFullID") {
      return V::String(info_.container_image_id);
    }
    if (name == "ContainerImageName" || name == "ImageName") {
      return V::String(info_.container_image_name);
    }
    if (name == "ContainerCreated") return V::Time(created_seconds_, created_nanos_);
    if (name == "ContainerEnv") return V::StringList(info_.container_env);
    if (name == "ContainerLabels") return V::StringMap(info_.container_labels);
    if (name == "LogPath") return V::String(info_.log_path);
    if (name == "DaemonName") return V::String(info_.daemon_name);
    if (name == "ID") return V::String(id_);
    if (name == "Name") return V::String(name_);
    if (name == "ImageID") return V::String(image_id_);
    if (name == "Command") return V::String(command_);
    if (name == "Hostname") return V::String(hostname_);
    return V::Missing();
  }

 private:
  const ContainerInfo& info_;
  const std::string& hostname_;
  std::string id_, name_, image_id_, command_;
  int64_t created_seconds_ = kGoZeroTimeSeconds;
  int32_t created_nanos_ = 0;
};

std::string Quoted(std::string_view text) { return "template \"" + std::string(text) + "\""; }

}  // namespace

DockerTemplate DockerTemplate::Parse(std::string_view text) {
  std::optional<stages::GoTemplate> parsed;
  try {
    parsed = stages::GoTemplate::Parse(text, stages::GoTemplate::Functions::kDockerTag);
  } catch (const std::exception& e) {
    throw std::invalid_argument(Quoted(text) + ": " + e.what());
  }
  // Go names a field logger.Info lacks only when the container starts; a trial run over an
  // empty container finds it now, when the option is checked. Other failures depend on the
  // container and wait for it.
  const ContainerInfo empty;
  std::string out, error;
  if (parsed->Execute(LoggerInfoData(empty, ""), &out, &error) ==
          stages::GoTemplate::Result::kFailed &&
      error.find("can't evaluate field") != std::string::npos) {
    throw std::invalid_argument(Quoted(text) + ": " + error);
  }
  return DockerTemplate(std::move(*parsed));
}

std::string DockerTemplate::Render(const ContainerInfo& info, const std::string& hostname) const {
  std::string out, error;
  switch (parsed_.Execute(LoggerInfoData(info, hostname), &out, &error)) {
    case stages::GoTemplate::Result::kOk:
      return out;
    case stages::GoTemplate::Result::kTooLong:
      throw std::length_error(Quoted(parsed_.source()) + ": " + error);
    case stages::GoTemplate::Result::kFailed:
      break;
  }
  throw std::invalid_argument(Quoted(parsed_.source()) + ": " + error);
}

}  // namespace skald
