// Timestamp formats of the timestamp stage: Go reference layouts and Promtail's named formats.
//
// A format is a named format (ANSIC UnixDate RubyDate RFC822 RFC822Z RFC850 RFC1123 RFC1123Z
// RFC3339 RFC3339Nano, which stand for Go's layouts; Unix, UnixMs, UnixUs, UnixNs for epoch
// numbers) or a Go layout written with the reference time `Mon Jan 2 15:04:05 MST 2006`
// (e.g. `2006-01-02T15:04:05.000Z07:00`). Text is accepted exactly as Go's time.Parse /
// time.ParseInLocation accepts it, with these deliberate choices:
//   - the zone used to resolve zone abbreviations (Go's time.Local) is `location`, or UTC;
//   - as in Promtail, `location` applies to layouts only: the named formats are read as Go's
//     time.Parse reads them (ANSIC text, which has no zone, is UTC whatever the location);
//   - Unix takes Loki 3's reading: seconds, and an optional fraction scaled to nanoseconds;
//   - a layout without a year element parses into the current year, moved to the previous or
//     next year across new year like Promtail does (Dec stamps read in Jan are last year's);
//   - a time that does not fit in int64 nanoseconds since the epoch fails to parse.
#pragma once

#include <absl/time/time.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skald::stages {

class GoTimeLayout {
 public:
  // Compiles `format`. `location` is an IANA zone name ("Europe/Berlin") that applies when the
  // text carries no zone; empty means UTC. Throws ConfigError naming the format when it is
  // neither a named format nor a layout with at least one reference element (e.g. "foo"), and
  // naming the location when the zone cannot be loaded.
  static GoTimeLayout Compile(std::string_view format, std::string_view location = "");

  // Parses `text` into nanoseconds since the Unix epoch; nullopt when it does not match.
  // `now_unix_ns` supplies the year for layouts without one. Never throws.
  std::optional<int64_t> Parse(std::string_view text, int64_t now_unix_ns) const;
  std::optional<int64_t> Parse(std::string_view text) const;
  // As Parse(text), and sets *text_offset to the zone offset (seconds east of UTC) when the text
  // names one (-0700, Z, a known abbreviation); leaves it alone otherwise.
  std::optional<int64_t> Parse(std::string_view text, std::optional<int>* text_offset) const;

  // Go's Time.Format(layout) of the instant `t` as seen in `zone` (the layout is taken as it is:
  // named formats are not expanded, as in Go).
  static std::string Format(std::string_view layout, absl::Time t, const absl::TimeZone& zone);

  // The Go layout the format stands for ("" for the Unix* formats).
  const std::string& layout() const { return layout_; }

 private:
  enum class Kind { kLayout, kUnix, kUnixMs, kUnixUs, kUnixNs };
  struct Chunk {
    std::string prefix;  // literal text before the element
    int element;         // 0: none (the final chunk holds only trailing text)
    int frac_digits;     // for fractional-second elements
  };
  struct ZoneAbbreviation {
    std::string abbr;
    int offset;  // seconds east of UTC
  };

  std::optional<int64_t> ParseLayout(std::string_view text, int64_t now_unix_ns,
                                     std::optional<int>* text_offset = nullptr) const;
  std::optional<int> LookupAbbreviation(std::string_view abbr, int64_t civil_as_utc) const;

  Kind kind_ = Kind::kLayout;
  std::string layout_;
  std::vector<Chunk> chunks_;
  bool has_year_ = false;
  std::optional<absl::TimeZone> zone_;
  std::vector<ZoneAbbreviation> abbreviations_;  // every abbreviation the zone has used
};

}  // namespace skald::stages
