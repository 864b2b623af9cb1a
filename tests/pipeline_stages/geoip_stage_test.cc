// The geoip stage against the tiny databases in tests/pipeline_stages/geoip (written by
// make-test-databases.pl there, from the documentation address ranges).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using ::testing::HasSubstr;
using testkit::MakeEntry;
using testkit::RecordingObserver;

std::string Db(const std::string& name) { return std::string(SKALD_GEOIP_TEST_DIR) + "/" + name; }

std::string Stages(const std::string& db, const std::string& type) {
  return "- regex: {expression: '^(?P<ip>\\S+) '}\n"
         "- geoip: {db: '" +
         db + "', source: ip, db_type: " + type + "}\n";
}

// The labels the stages give the line, as a map.
std::map<std::string, std::string> LabelsOf(const std::string& yaml, const std::string& line,
                                            RecordingObserver* observer = nullptr) {
  auto p = Pipeline::FromYaml(yaml, observer);
  std::vector<Entry> out;
  p->Process(MakeEntry(line, LabelSet{{"job", "web"}}), out);
  std::map<std::string, std::string> labels;
  if (out.size() == 1) {
    out[0].labels.ForEach([&](std::string_view n, std::string_view v) {
      labels.emplace(std::string(n), std::string(v));
    });
  }
  return labels;
}

std::string ConfigErrorOf(const std::string& yaml, const PipelineOptions& options = {}) {
  try {
    Pipeline::FromYaml(yaml, options);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(built)";
}

TEST(GeoIpStage, CitySetsPromtailsLabels) {
  EXPECT_EQ(LabelsOf(Stages(Db("city.mmdb"), "city"), "192.0.2.17 GET /"),
            (std::map<std::string, std::string>{
                {"job", "web"},
                {"geoip_city_name", "London"},
                {"geoip_country_name", "United Kingdom"},
                {"geoip_continent_name", "Europe"},
                {"geoip_continent_code", "EU"},
                {"geoip_location_latitude", "51.5142"},
                {"geoip_location_longitude", "-0.0931"},
                {"geoip_postal_code", "EC2V"},
                {"geoip_timezone", "Europe/London"},
                // the most specific subdivision: the last one
                {"geoip_subdivision_name", "Westminster"},
                {"geoip_subdivision_code", "WSM"},
            }));
}

TEST(GeoIpStage, CityLooksUpIpv6) {
  const auto labels = LabelsOf(Stages(Db("city.mmdb"), "city"), "2001:db8::1 GET /");
  EXPECT_EQ(labels.at("geoip_city_name"), "Tokyo");
  EXPECT_EQ(labels.at("geoip_location_longitude"), "139.6899");
  EXPECT_EQ(labels.count("geoip_postal_code"), 0u);
}

// Absent fields and names in other languages set no label; Go's %v prints tiny numbers in
// e-notation.
TEST(GeoIpStage, CitySkipsWhatTheRecordLacks) {
  EXPECT_EQ(LabelsOf(Stages(Db("city.mmdb"), "city"), "198.51.100.9 x"),
            (std::map<std::string, std::string>{{"job", "web"},
                                                {"geoip_country_name", "Sweden"},
                                                {"geoip_continent_name", "Europe"},
                                                {"geoip_continent_code", "EU"}}));
  const auto munich = LabelsOf(Stages(Db("city.mmdb"), "city"), "203.0.113.5 x");
  EXPECT_EQ(munich.count("geoip_city_name"), 0u);  // only a German name
  EXPECT_EQ(munich.at("geoip_location_latitude"), "5e-05");
  EXPECT_EQ(munich.at("geoip_location_longitude"), "11.5755");
}

TEST(GeoIpStage, AsnSetsNumberAndOrganization) {
  EXPECT_EQ(LabelsOf(Stages(Db("asn.mmdb"), "asn"), "192.0.2.1 x"),
            (std::map<std::string, std::string>{
                {"job", "web"},
                {"geoip_autonomous_system_number", "64496"},
                {"geoip_autonomous_system_organization", "Example Networks"}}));
}

TEST(GeoIpStage, CountrySetsCountryAndContinent) {
  EXPECT_EQ(LabelsOf(Stages(Db("country.mmdb"), "country"), "2001:db8:1::2 x"),
            (std::map<std::string, std::string>{{"job", "web"},
                                                {"geoip_country_name", "Japan"},
                                                {"geoip_country_code", "JP"},
                                                {"geoip_continent_name", "Asia"},
                                                {"geoip_continent_code", "AS"}}));
  // A city database holds country records too.
  EXPECT_EQ(LabelsOf(Stages(Db("city.mmdb"), "country"), "192.0.2.1 x").at("geoip_country_code"),
            "GB");
}

TEST(GeoIpStage, NoAddressOrAnUnknownOneLeavesTheEntry) {
  RecordingObserver observer;
  const std::map<std::string, std::string> unchanged{{"job", "web"}};
  const std::string stages = Stages(Db("city.mmdb"), "city");
  for (const char* line : {"10.1.2.3 not in the database", "999.1.1.1 not an address",
                           "192.0.2.010 leading zero", "fe80::1%eth0 zone", "-"}) {
    EXPECT_EQ(LabelsOf(stages, line, &observer), unchanged) << line;
  }
  // No source key at all.
  EXPECT_EQ(LabelsOf("- geoip: {db: '" + Db("city.mmdb") + "', source: ip, db_type: city}",
                     "192.0.2.1", &observer),
            unchanged);
  EXPECT_TRUE(observer.failures.empty());
}

TEST(GeoIpStage, AnIpv6AddressInAnIpv4DatabaseIsALookupFailure) {
  RecordingObserver observer;
  const std::string stages = Stages(Db("city-ipv4.mmdb"), "city");
  EXPECT_EQ(LabelsOf(stages, "192.0.2.1 x", &observer).at("geoip_city_name"), "London");
  EXPECT_EQ(LabelsOf(stages, "2001:db8::1 x", &observer),
            (std::map<std::string, std::string>{{"job", "web"}}));
  EXPECT_EQ(observer.failures, (std::vector<std::string>{"geoip: lookup_failed"}));
}

TEST(GeoIpStage, TheSourceMayBeALabel) {
  auto p = Pipeline::FromYaml("- geoip: {db: '" + Db("asn.mmdb") +
                              "', source: client_ip, db_type: asn}");
  std::vector<Entry> out;
  p->Process(MakeEntry("x", LabelSet{{"client_ip", "192.0.2.200"}}), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].labels.Get("geoip_autonomous_system_number"), "64496");
}

TEST(GeoIpStage, ConfigErrorsNameTheStageFieldAndValue) {
  const std::string city = Db("city.mmdb");
  EXPECT_THAT(ConfigErrorOf("- geoip: {db: /nonexistent/GeoLite2-City.mmdb, source: ip, "
                            "db_type: city}"),
              AllOf(HasSubstr("pipeline stage 1 (geoip)"), HasSubstr("field \"db\""),
                    HasSubstr("\"/nonexistent/GeoLite2-City.mmdb\""),
                    HasSubstr("No such file or directory")));
  EXPECT_THAT(ConfigErrorOf("- geoip: {db: '" + city + "', source: ip, db_type: town}"),
              AllOf(HasSubstr("field \"db_type\""), HasSubstr("\"town\" is not a database type"),
                    HasSubstr("city, asn or country")));
  EXPECT_THAT(ConfigErrorOf("- geoip: {db: '" + city + "', source: ip}"),
              AllOf(HasSubstr("field \"db_type\""), HasSubstr("required")));
  EXPECT_THAT(ConfigErrorOf("- geoip: {db: '" + city + "', db_type: city}"),
              AllOf(HasSubstr("field \"source\""), HasSubstr("required")));
  EXPECT_THAT(ConfigErrorOf("- geoip: {db: '', source: ip, db_type: city}"),
              AllOf(HasSubstr("field \"db\""), HasSubstr("empty")));
  EXPECT_THAT(ConfigErrorOf("- geoip: {db: '" + city + "', source: ip, db_type: city, lang: de}"),
              HasSubstr("lang"));
  // A database of other records.
  EXPECT_THAT(ConfigErrorOf("- geoip: {db: '" + Db("asn.mmdb") + "', source: ip, db_type: city}"),
              AllOf(HasSubstr("field \"db_type\""), HasSubstr("\"city\" does not match"),
                    HasSubstr("\"GeoLite2-ASN\""), HasSubstr("db_type asn reads it")));
  // Not a database: a directory, and a file of something else.
  EXPECT_THAT(ConfigErrorOf("- geoip: {db: '" + std::string(SKALD_GEOIP_TEST_DIR) +
                            "', source: ip, db_type: city}"),
              AllOf(HasSubstr("field \"db\""), HasSubstr("is not a regular file")));
  const std::string script = Db("make-test-databases.pl");
  EXPECT_THAT(
      ConfigErrorOf("- geoip: {db: '" + script + "', source: ip, db_type: city}"),
      AllOf(HasSubstr("field \"db\""), HasSubstr(script), HasSubstr("is not a MaxMind database")));
}

// The host says where a path is (the plugin: its files directory on the host).
TEST(GeoIpStage, ErrorsSayWhereTheHostPutsThePath) {
  PipelineOptions options;
  options.describe_path = [](const std::string& path) {
    return " (inside the plugin; on the host: /host" + path + ")";
  };
  EXPECT_THAT(ConfigErrorOf("- geoip: {db: /var/lib/skald/files/GeoLite2-City.mmdb, source: ip, "
                            "db_type: city}",
                            options),
              HasSubstr("cannot open \"/var/lib/skald/files/GeoLite2-City.mmdb\" (inside the "
                        "plugin; on the host: /host/var/lib/skald/files/GeoLite2-City.mmdb): No "
                        "such file or directory"));
}

}  // namespace
}  // namespace skald::stages
