#include "plugin/api/plugin_api_requests.h"

#include <nlohmann/json.hpp>

namespace skald {
namespace {

nlohmann::json ParseObject(std::string_view body) {
  auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    throw BadRequest("skald: request body is not a JSON object");
  }
  return json;
}

// The string field `name` of `call`'s body; "" when it is absent or null.
std::string StringField(const nlohmann::json& body, const char* call, const char* name) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return "";
  if (!it->is_string()) {
    throw std::invalid_argument(std::string("skald: ") + call + ": field " + name + " is " +
                                it->type_name() + ", expected a string");
  }
  return it->get<std::string>();
}

ContainerInfo InfoField(const nlohmann::json& body, const char* call) {
  auto it = body.find("Info");
  if (it == body.end()) return ContainerInfo::FromJson(nlohmann::json::object());
  try {
    return ContainerInfo::FromJson(*it);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("skald: ") + call + ": " + e.what());
  }
}

}  // namespace

StartLoggingRequest ParseStartLoggingRequest(std::string_view body) {
  const nlohmann::json json = ParseObject(body);
  StartLoggingRequest request;
  request.file = StringField(json, "StartLogging", "File");
  if (request.file.empty()) throw std::invalid_argument("skald: StartLogging without a File");
  request.info = InfoField(json, "StartLogging");
  return request;
}

StopLoggingRequest ParseStopLoggingRequest(std::string_view body) {
  return StopLoggingRequest{StringField(ParseObject(body), "StopLogging", "File")};
}

ReadLogsRequest ParseReadLogsRequest(std::string_view body) {
  const nlohmann::json json = ParseObject(body);
  ReadLogsRequest request;
  request.info = InfoField(json, "ReadLogs");
  auto config = json.find("Config");
  request.config = ParseReadLogsConfig(config == json.end() ? nlohmann::json() : *config);
  return request;
}

}  // namespace skald
