#include "pipeline_stages/geoip_stage.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <maxminddb.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <string_view>

namespace skald::stages {

class GeoIpStage::Database {
 public:
  ~Database() {
    if (open_) MMDB_close(&mmdb_);
  }
  // 0 on success, else libmaxminddb's status.
  int Open(const std::string& path) {
    const int status = MMDB_open(path.c_str(), MMDB_MODE_MMAP, &mmdb_);
    open_ = status == MMDB_SUCCESS;
    return status;
  }
  MMDB_s* get() { return &mmdb_; }
  std::string_view type() const {
    return mmdb_.metadata.database_type ? mmdb_.metadata.database_type : "";
  }

 private:
  MMDB_s mmdb_{};
  bool open_ = false;
};

namespace {

std::optional<GeoIpStage::DbType> ParseDbType(std::string_view s) {
  if (s == "city") return GeoIpStage::DbType::kCity;
  if (s == "asn") return GeoIpStage::DbType::kAsn;
  if (s == "country") return GeoIpStage::DbType::kCountry;
  return std::nullopt;
}

// Which records a database of MaxMind's (or DB-IP's, which names its types after them)
// `database_type` holds, as geoip2 readers tell them apart.
bool HoldsRecords(std::string_view database_type, GeoIpStage::DbType t) {
  auto has = [&](std::string_view s) { return database_type.find(s) != std::string_view::npos; };
  switch (t) {
    case GeoIpStage::DbType::kCity:
      return has("City") || has("Enterprise");
    case GeoIpStage::DbType::kCountry:
      return has("Country") || has("City") || has("Enterprise");
    case GeoIpStage::DbType::kAsn:
      return has("ASN") || has("ISP");
  }
  return false;
}

// The address in `text` (dotted IPv4 or IPv6 text, as Go's net.ParseIP takes them).
bool ParseIp(std::string_view text, sockaddr_storage& out) {
  char buf[INET6_ADDRSTRLEN + 1];
  if (text.empty() || text.size() >= sizeof buf) return false;
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  std::memset(&out, 0, sizeof out);
  auto* v4 = reinterpret_cast<sockaddr_in*>(&out);
  if (inet_pton(AF_INET, buf, &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    return true;
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out);
  if (inet_pton(AF_INET6, buf, &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    return true;
  }
  return false;
}

// The value at `path` under `entry`, when present.
std::optional<MMDB_entry_data_s> Get(MMDB_entry_s& entry, std::initializer_list<const char*> path) {
  const char* p[8];
  size_t n = 0;
  for (const char* s : path) p[n++] = s;
  p[n] = nullptr;
  MMDB_entry_data_s data{};
  if (MMDB_aget_value(&entry, &data, p) != MMDB_SUCCESS || !data.has_data) return std::nullopt;
  return data;
}

std::string_view String(MMDB_entry_s& entry, std::initializer_list<const char*> path) {
  auto d = Get(entry, path);
  if (!d || d->type != MMDB_DATA_TYPE_UTF8_STRING) return {};
  return std::string_view(d->utf8_string, d->data_size);
}

std::optional<double> Number(MMDB_entry_s& entry, std::initializer_list<const char*> path) {
  auto d = Get(entry, path);
  if (!d) return std::nullopt;
  switch (d->type) {
    case MMDB_DATA_TYPE_DOUBLE:
      return d->double_value;
    case MMDB_DATA_TYPE_FLOAT:
      return d->float_value;
    default:
      return std::nullopt;
  }
}

std::optional<uint64_t> Unsigned(MMDB_entry_s& entry, std::initializer_list<const char*> path) {
  auto d = Get(entry, path);
  if (!d) return std::nullopt;
  switch (d->type) {
    case MMDB_DATA_TYPE_UINT16:
      return d->uint16;
    case MMDB_DATA_TYPE_UINT32:
      return d->uint32;
    case MMDB_DATA_TYPE_UINT64:
      return d->uint64;
    case MMDB_DATA_TYPE_INT32:
      return d->int32 >= 0 ? std::optional<uint64_t>(static_cast<uint64_t>(d->int32))
                           : std::nullopt;
    default:
      return std::nullopt;
  }
}

// A float64 as Go's fmt.Sprint prints it (%v: %g with the shortest digits that read back the
// same, in e-notation when the decimal exponent is below -4 or at least 6: 1e-05, 1.5e+06).
std::string GoFloat(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(r.ptr - buf));
  const size_t e = sci.find('e');
  const int exp = std::atoi(std::string(sci.substr(e + 1)).c_str());
  if (d != 0 && (exp < -4 || exp >= 6)) {
    // Go writes at least two exponent digits, as to_chars does.
    return std::string(sci);
  }
  r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::fixed);
  return std::string(buf, r.ptr);
}

void SetLabel(Entry& entry, std::string_view name, std::string_view value) {
  if (value.empty() || !IsValidUtf8(value)) return;
  entry.labels.Set(name, value);
}

void SetCity(MMDB_entry_s& e, Entry& entry) {
  SetLabel(entry, "geoip_city_name", String(e, {"city", "names", "en"}));
  SetLabel(entry, "geoip_country_name", String(e, {"country", "names", "en"}));
  SetLabel(entry, "geoip_continent_name", String(e, {"continent", "names", "en"}));
  SetLabel(entry, "geoip_continent_code", String(e, {"continent", "code"}));
  const auto lat = Number(e, {"location", "latitude"});
  const auto lon = Number(e, {"location", "longitude"});
  if (lat && lon) {
    SetLabel(entry, "geoip_location_latitude", GoFloat(*lat));
    SetLabel(entry, "geoip_location_longitude", GoFloat(*lon));
  }
  SetLabel(entry, "geoip_postal_code", String(e, {"postal", "code"}));
  SetLabel(entry, "geoip_timezone", String(e, {"location", "time_zone"}));
  // The most specific subdivision is the last.
  if (auto subs = Get(e, {"subdivisions"}); subs && subs->type == MMDB_DATA_TYPE_ARRAY) {
    if (subs->data_size > 0) {
      const std::string last = std::to_string(subs->data_size - 1);
      SetLabel(entry, "geoip_subdivision_name",
               String(e, {"subdivisions", last.c_str(), "names", "en"}));
      SetLabel(entry, "geoip_subdivision_code",
               String(e, {"subdivisions", last.c_str(), "iso_code"}));
    }
  }
}

void SetCountry(MMDB_entry_s& e, Entry& entry) {
  SetLabel(entry, "geoip_country_name", String(e, {"country", "names", "en"}));
  SetLabel(entry, "geoip_country_code", String(e, {"country", "iso_code"}));
  SetLabel(entry, "geoip_continent_name", String(e, {"continent", "names", "en"}));
  SetLabel(entry, "geoip_continent_code", String(e, {"continent", "code"}));
}

void SetAsn(MMDB_entry_s& e, Entry& entry) {
  if (auto n = Unsigned(e, {"autonomous_system_number"}); n && *n != 0) {
    SetLabel(entry, "geoip_autonomous_system_number", std::to_string(*n));
  }
  SetLabel(entry, "geoip_autonomous_system_organization",
           String(e, {"autonomous_system_organization"}));
}

}  // namespace

GeoIpStage::GeoIpStage(const YAML::Node& config, const StageContext& ctx)
    : ctx_(ctx), source_hint_(Extracted::kNoHint) {
  StageConfig c(config, ctx, {"db", "source", "db_type"});
  const std::string path = c.RequiredString("db");
  if (path.empty()) c.Fail("db", "is empty; expected the path of a MaxMind database (.mmdb)");
  source_ = c.RequiredString("source");
  if (source_.empty()) c.Fail("source", "is empty; expected the extracted key of an IP address");
  const std::string type = c.RequiredString("db_type");
  const auto parsed = ParseDbType(type);
  if (!parsed)
    c.Fail("db_type", Quote(type) + " is not a database type; expected city, asn or country");
  type_ = *parsed;

  const std::string where =
      ctx.build && ctx.build->describe_path ? ctx.build->describe_path(path) : std::string();
  // Opened first (by the host's rule when it has one): its reason (no such file, permission
  // denied, outside where files lie) is clearer than libmaxminddb's, and libmaxminddb then opens
  // this very file through the descriptor's /proc path, so nothing can be swapped in between.
  std::string why;
  const int fd = ctx.build && ctx.build->open_file
                     ? ctx.build->open_file(path, kMaxGeoIpDatabaseBytes, &why)
                     : OpenRegularFile(path, &why);
  if (fd < 0) c.Fail("db", "cannot open " + Quote(path) + where + ": " + why);
  struct FdCloser {
    int fd;
    ~FdCloser() { close(fd); }
  } closer{fd};
  struct stat st {};
  const bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (!regular) c.Fail("db", Quote(path) + where + " is not a regular file");
  if (static_cast<uint64_t>(st.st_size) > kMaxGeoIpDatabaseBytes) {
    c.Fail("db", Quote(path) + where + " is larger than " + std::to_string(kMaxGeoIpDatabaseBytes) +
                     " bytes");
  }
  db_ = std::make_unique<Database>();
  if (const int status = db_->Open("/proc/self/fd/" + std::to_string(fd)); status != MMDB_SUCCESS) {
    c.Fail("db", Quote(path) + where + " is not a MaxMind database: " + MMDB_strerror(status));
  }
  if (!HoldsRecords(db_->type(), type_)) {
    std::string fits;
    for (const char* t : {"city", "asn", "country"}) {
      if (HoldsRecords(db_->type(), *ParseDbType(t)))
        fits += fits.empty() ? t : std::string(" or ") + t;
    }
    c.Fail("db_type",
           Quote(type) + " does not match the database: " + Quote(path) + " is a " +
               Quote(db_->type()) + " database" +
               (fits.empty() ? std::string(", which holds none of city, asn or country records")
                             : "; db_type " + fits + " reads it"));
  }
}

GeoIpStage::~GeoIpStage() = default;

Verdict GeoIpStage::Process(Entry& entry, Downstream&) {
  const Value* v = entry.extracted.FindHinted(source_, source_hint_);
  if (!v) return Verdict::kPass;
  const auto text = v->AsString();
  if (!text) return Verdict::kPass;
  sockaddr_storage address;
  if (!ParseIp(*text, address)) return Verdict::kPass;
  int error = MMDB_SUCCESS;
  MMDB_lookup_result_s result =
      MMDB_lookup_sockaddr(db_->get(), reinterpret_cast<const sockaddr*>(&address), &error);
  if (error != MMDB_SUCCESS) {
    // An IPv6 address in an IPv4 database, or a corrupt tree.
    ctx_.ReportFailure("lookup_failed");
    return Verdict::kPass;
  }
  if (!result.found_entry) return Verdict::kPass;
  switch (type_) {
    case DbType::kCity:
      SetCity(result.entry, entry);
      break;
    case DbType::kAsn:
      SetAsn(result.entry, entry);
      break;
    case DbType::kCountry:
      SetCountry(result.entry, entry);
      break;
  }
  return Verdict::kPass;
}

}  // namespace skald::stages
