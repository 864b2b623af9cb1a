// geoip: looks the IP address in extracted[`source`] up in a MaxMind database (`db`, read with
// libmaxminddb) and sets labels from the record, as Promtail does.
//
// `db_type` says which records the database holds:
//   city     geoip_city_name, geoip_country_name, geoip_continent_name, geoip_continent_code,
//            geoip_location_latitude, geoip_location_longitude, geoip_postal_code,
//            geoip_timezone, geoip_subdivision_name, geoip_subdivision_code (the most specific
//            subdivision)
//   asn      geoip_autonomous_system_number, geoip_autonomous_system_organization
//   country  geoip_country_name, geoip_country_code, geoip_continent_name, geoip_continent_code
//            (Promtail has no country type; the fields are Grafana Alloy's)
// Names are the English ones; an empty or absent field sets no label. A missing source, a value
// that is not an IPv4/IPv6 address, or an address the database does not hold leave the entry
// unchanged; a lookup the database fails is reported as StageFailed(geoip, "lookup_failed").
//
// The database is opened (memory-mapped) when the pipeline is built: a path that cannot be
// opened, a file that is no MaxMind database, or one whose type has no records of `db_type`
// is a ConfigError naming the stage, the field and the value. PipelineOptions::describe_path
// tells where a path is for the host (the plugin: its files directory on the host).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

class GeoIpStage final : public Stage {
 public:
  enum class DbType { kCity, kAsn, kCountry };

  GeoIpStage(const YAML::Node& config, const StageContext& ctx);
  ~GeoIpStage() override;
  Verdict Process(Entry& entry, Downstream& next) override;

 private:
  class Database;

  StageContext ctx_;
  std::string source_;
  size_t source_hint_;
  DbType type_;
  std::unique_ptr<Database> db_;
};

}  // namespace skald::stages
