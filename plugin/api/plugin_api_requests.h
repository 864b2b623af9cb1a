// The JSON bodies of dockerd's LogDriver calls, parsed (../shared/docs/DOCKER_PROTOCOL.md has
// the protocol; plugin_api_server.h serves it).
//
// A body is one JSON object, possibly followed by a newline. Each parser throws BadRequest when
// the body is not a JSON object (the server answers 400), and std::invalid_argument naming the
// field, what it holds and what is expected when a field is of the wrong type or missing.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "plugin/api/read_logs.h"
#include "plugin/config/container_info.h"

namespace skald {

// The body is not a JSON object.
class BadRequest : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// /LogDriver.StartLogging: {"File": "/run/docker/logging/<id>", "Info": {...}}. File is
// required.
struct StartLoggingRequest {
  std::string file;
  ContainerInfo info;
};
StartLoggingRequest ParseStartLoggingRequest(std::string_view body);

// /LogDriver.StopLogging: {"File": "..."}; a missing File is "" (no stream has it).
struct StopLoggingRequest {
  std::string file;
};
StopLoggingRequest ParseStopLoggingRequest(std::string_view body);

// /LogDriver.ReadLogs: {"Info": {...}, "Config": {"Since", "Until", "Tail", "Follow"}}.
struct ReadLogsRequest {
  ContainerInfo info;
  ReadLogsConfig config;
};
ReadLogsRequest ParseReadLogsRequest(std::string_view body);

}  // namespace skald
