// Pipeline lint: what a pipeline may legally say but almost surely does not mean.
//
// Run on a list of stages that builds (see Pipeline::StagesFromYaml). Each finding is one
// message naming the stage (as build errors do: "pipeline stage 2 (json)") and the field:
//  - a field a json, regex or logfmt stage extracts that no later stage reads (labels,
//    structured_metadata, output, timestamp, tenant, metrics, drop, template, pack, geoip,
//    replace, or a later parser's source): the work is thrown away; a parser none of whose
//    fields is read does nothing at all;
//  - a label fed from a field named like an id (trace, span, request, uuid, ...): every value
//    makes a new stream, which Loki limits; such a field belongs in structured metadata.
// Stages inside match stages count at their place in the order.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace skald::stages {

std::vector<std::string> LintPipeline(const YAML::Node& stages);

// True for a field or label name that names one event or request rather than a class of them
// (trace_id, spanId, request-id, uuid, id, ...).
bool LooksLikeAnId(std::string_view name);

}  // namespace skald::stages
