#include "pipeline_stages/go/go_time_layout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pipeline_stages/common/config_error.h"

namespace skald::stages {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Optional;

constexpr int64_t kSec = 1000000000;
// 2010-02-04 21:00:57 PST (Go's format_test reference instant).
constexpr int64_t kGoTest = 1265346057 * kSec;
constexpr int64_t kGoTestUtc = 1265317257 * kSec;  // the same wall clock read as UTC
// 2019-07-10 12:00:00 UTC: "now" for layouts without a year.
constexpr int64_t kNow = 1562760000 * kSec;

std::optional<int64_t> Parse(std::string_view format, std::string_view text,
                             std::string_view location = "") {
  return GoTimeLayout::Compile(format, location).Parse(text, kNow);
}

std::string ErrorOf(std::string_view format, std::string_view location = "") {
  try {
    GoTimeLayout::Compile(format, location);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(GoTimeLayout, NamedFormatsMapToGoLayouts) {
  EXPECT_EQ(GoTimeLayout::Compile("ANSIC").layout(), "Mon Jan _2 15:04:05 2006");
  EXPECT_EQ(GoTimeLayout::Compile("UnixDate").layout(), "Mon Jan _2 15:04:05 MST 2006");
  EXPECT_EQ(GoTimeLayout::Compile("RubyDate").layout(), "Mon Jan 02 15:04:05 -0700 2006");
  EXPECT_EQ(GoTimeLayout::Compile("RFC822").layout(), "02 Jan 06 15:04 MST");
  EXPECT_EQ(GoTimeLayout::Compile("RFC822Z").layout(), "02 Jan 06 15:04 -0700");
  EXPECT_EQ(GoTimeLayout::Compile("RFC850").layout(), "Monday, 02-Jan-06 15:04:05 MST");
  EXPECT_EQ(GoTimeLayout::Compile("RFC1123").layout(), "Mon, 02 Jan 2006 15:04:05 MST");
  EXPECT_EQ(GoTimeLayout::Compile("RFC1123Z").layout(), "Mon, 02 Jan 2006 15:04:05 -0700");
  EXPECT_EQ(GoTimeLayout::Compile("RFC3339").layout(), "2006-01-02T15:04:05Z07:00");
  EXPECT_EQ(GoTimeLayout::Compile("RFC3339Nano").layout(), "2006-01-02T15:04:05.999999999Z07:00");
}

// Go's format_test.go parseTests, with Local = America/Los_Angeles as the location.
TEST(GoTimeLayout, GoParseTestsWithZone) {
  const std::string_view la = "America/Los_Angeles";
  EXPECT_THAT(Parse("Mon Jan _2 15:04:05 2006", "Thu Feb  4 21:00:57 2010", la), Optional(kGoTest));
  EXPECT_THAT(Parse("Mon Jan _2 15:04:05 MST 2006", "Thu Feb  4 21:00:57 PST 2010", la),
              Optional(kGoTest));
  EXPECT_THAT(Parse("Mon Jan 02 15:04:05 -0700 2006", "Thu Feb 04 21:00:57 -0800 2010", la),
              Optional(kGoTest));
  EXPECT_THAT(Parse("Monday, 02-Jan-06 15:04:05 MST", "Thursday, 04-Feb-10 21:00:57 PST", la),
              Optional(kGoTest));
  EXPECT_THAT(Parse("Mon, 02 Jan 2006 15:04:05 MST", "Thu, 04 Feb 2010 21:00:57 PST", la),
              Optional(kGoTest));
  EXPECT_THAT(Parse("Mon, 02 Jan 2006 15:04:05 MST", "Thu, 04 Feb 2010 22:00:57 PDT", la),
              Optional(kGoTest));
  EXPECT_THAT(Parse("Mon, 02 Jan 2006 15:04:05 -0700", "Thu, 04 Feb 2010 21:00:57 -0800", la),
              Optional(kGoTest));
  EXPECT_THAT(Parse("2006-01-02T15:04:05Z07:00", "2010-02-04T21:00:57-08:00", la),
              Optional(kGoTest));
  EXPECT_THAT(Parse("2006-01-02 15:04:05-07", "2010-02-04 21:00:57-08"), Optional(kGoTest));
  EXPECT_THAT(Parse("UnixDate", "Fri Feb  5 05:00:57 GMT-8 2010"),
              Optional(kGoTest + 8 * 3600 * kSec));
}

// Promtail reads its named formats with time.Parse, never in `location` (its convertDateLayout):
// zone-less text is UTC and a zone abbreviation other than UTC's has offset 0; a layout
// written out is read in the location. An unknown location is refused either way.
TEST(GoTimeLayout, NamedFormatsIgnoreTheLocationAsInPromtail) {
  const std::string_view la = "America/Los_Angeles";
  EXPECT_THAT(Parse("ANSIC", "Thu Feb  4 21:00:57 2010", la), Optional(kGoTestUtc));
  EXPECT_THAT(Parse("RFC1123", "Thu, 04 Feb 2010 21:00:57 PST", la), Optional(kGoTestUtc));
  EXPECT_THAT(Parse("Mon Jan _2 15:04:05 2006", "Thu Feb  4 21:00:57 2010", la), Optional(kGoTest));
  EXPECT_THAT(ErrorOf("ANSIC", "Mars/Olympus"), HasSubstr("Mars/Olympus"));
}

TEST(GoTimeLayout, OptionalFractionalSecondsAfterSeconds) {
  const std::string_view la = "America/Los_Angeles";
  EXPECT_THAT(Parse("Mon Jan _2 15:04:05 2006", "Thu Feb  4 21:00:57.0 2010", la),
              Optional(kGoTest));
  EXPECT_THAT(Parse("Mon Jan _2 15:04:05 MST 2006", "Thu Feb  4 21:00:57.01 PST 2010", la),
              Optional(kGoTest + 10000000));
  EXPECT_THAT(Parse("RubyDate", "Thu Feb 04 21:00:57.012 -0800 2010"),
              Optional(kGoTest + 12000000));
  EXPECT_THAT(Parse("Monday, 02-Jan-06 15:04:05 MST", "Thursday, 04-Feb-10 21:00:57.0123 PST", la),
              Optional(kGoTest + 12300000));
  EXPECT_THAT(Parse("RFC1123Z", "Thu, 04 Feb 2010 21:00:57.01234 -0800"),
              Optional(kGoTest + 12340000));
  EXPECT_THAT(Parse("RFC3339", "2010-02-04T21:00:57.012345678-08:00"),
              Optional(kGoTest + 12345678));
  EXPECT_THAT(Parse("2006-01-02 15:04:05", "2010-02-04 21:00:57.0"), Optional(kGoTestUtc));
  EXPECT_THAT(Parse("2006-01-02 15:04:05", "2010-02-04 21:00:57,5"),
              Optional(kGoTestUtc + kSec / 2));
  // Digits beyond nanoseconds are dropped.
  EXPECT_THAT(Parse("RFC3339", "2010-02-04T21:00:57.0123456789-08:00"),
              Optional(kGoTest + 12345678));
}

TEST(GoTimeLayout, WhitespaceRunsAndCaseDoNotMatter) {
  EXPECT_THAT(Parse("ANSIC", "Thu Feb 4 21:00:57 2010"), Optional(kGoTestUtc));
  EXPECT_THAT(Parse("ANSIC", "Thu      Feb     4     21:00:57     2010"), Optional(kGoTestUtc));
  EXPECT_THAT(Parse("ANSIC", "THU FEB 4 21:00:57 2010"), Optional(kGoTestUtc));
  EXPECT_THAT(Parse("ANSIC", "thu feb 4 21:00:57 2010"), Optional(kGoTestUtc));
}

TEST(GoTimeLayout, FractionalSecondLayouts) {
  EXPECT_THAT(Parse("Mon Jan _2 15:04:05.000 2006", "Thu Feb  4 21:00:57.012 2010"),
              Optional(kGoTestUtc + 12000000));
  EXPECT_THAT(Parse("Mon Jan _2 15:04:05.000000 2006", "Thu Feb  4 21:00:57.012345 2010"),
              Optional(kGoTestUtc + 12345000));
  EXPECT_THAT(Parse("Mon Jan _2 15:04:05.000000000 2006", "Thu Feb  4 21:00:57.012345678 2010"),
              Optional(kGoTestUtc + 12345678));
  EXPECT_THAT(Parse("Mon Jan _2 15:04:05,000 2006", "Thu Feb  4 21:00:57,012 2010"),
              Optional(kGoTestUtc + 12000000));
  // .999 takes any number of digits, including none.
  EXPECT_THAT(Parse("2006-01-02 15:04:05.9999 -0700 MST", "2010-02-04 21:00:57 -0800 PST"),
              Optional(kGoTest));
  EXPECT_THAT(
      Parse("2006-01-02 15:04:05.999999999 -0700 MST", "2010-02-04 21:00:57.0123 -0800 PST"),
      Optional(kGoTest + 12300000));
  // .000 needs exactly its digits.
  EXPECT_EQ(Parse("Mon Jan _2 15:04:05.000 2006", "Thu Feb  4 21:00:57.01 2010"), std::nullopt);
  EXPECT_EQ(Parse("Mon Jan _2 15:04:05.000 2006", "Thu Feb  4 21:00:57.0123 2010"), std::nullopt);
  EXPECT_EQ(Parse("Mon Jan _2 15:04:05.000 2006", "Thu Feb  4 23:00:59x01 2010"), std::nullopt);
  EXPECT_EQ(Parse("Mon Jan _2 15:04:05.000 2006", "Thu Feb  4 23:00:59.xxx 2010"), std::nullopt);
}

TEST(GoTimeLayout, LeadingZerosElsewhereAreNotFractions) {
  EXPECT_THAT(Parse("2006.01.02.15.04.05.0", "2010.02.04.21.00.57.0"), Optional(kGoTestUtc));
  EXPECT_THAT(Parse("2006.01.02.15.04.05.00", "2010.02.04.21.00.57.01"),
              Optional(kGoTestUtc + 10000000));
}

TEST(GoTimeLayout, NamesMatchOnlyWhenNotFollowedByLowercase) {
  EXPECT_THAT(Parse("Hi Janet, the Month is January: Jan _2 15:04:05 2006",
                    "Hi Janet, the Month is February: Feb  4 21:00:57 2010"),
              Optional(kGoTestUtc));
}

TEST(GoTimeLayout, DayOfYear) {
  EXPECT_THAT(Parse("2006-01-02 002 15:04:05", "2010-02-04 035 21:00:57"), Optional(kGoTestUtc));
  EXPECT_THAT(Parse("2006-01 002 15:04:05", "2010-02 035 21:00:57"), Optional(kGoTestUtc));
  EXPECT_THAT(Parse("2006-002 15:04:05", "2010-035 21:00:57"), Optional(kGoTestUtc));
  EXPECT_THAT(Parse("200600201 15:04:05", "201003502 21:00:57"), Optional(kGoTestUtc));
  EXPECT_THAT(Parse("2006 __2", "2012  60"), Optional(1330473600 * kSec));  // Feb 29 2012
  EXPECT_THAT(Parse("2006 002", "2012 366"), Optional(1356912000 * kSec));  // Dec 31 2012
  EXPECT_EQ(Parse("2006 002", "2011 366"), std::nullopt);
  EXPECT_EQ(Parse("Jan _2 002 2006", "Feb  4 034 2006"), std::nullopt);  // does not match day
  EXPECT_EQ(Parse("Jan _2 002 2006", "Feb  4 004 2006"), std::nullopt);  // does not match month
}

TEST(GoTimeLayout, GoDocExamples) {
  // time.Parse: an unknown zone abbreviation gets offset 0.
  EXPECT_THAT(Parse("Jan 2, 2006 at 3:04pm (MST)", "Feb 3, 2013 at 7:54pm (PST)"),
              Optional(1359921240 * kSec));
  EXPECT_THAT(Parse("2006-Jan-02", "2013-Feb-03"), Optional(1359849600 * kSec));
  EXPECT_THAT(Parse("RFC3339", "2006-01-02T15:04:05Z"), Optional(1136214245 * kSec));
  EXPECT_THAT(Parse("RFC3339", "2006-01-02T15:04:05+07:00"), Optional(1136189045 * kSec));
  EXPECT_EQ(Parse("RFC3339", "2006-01-02T15:04:05Z07:00"), std::nullopt);  // extra text
  // time.ParseInLocation: the zone's abbreviations are known, and it applies without a zone.
  EXPECT_THAT(Parse("Jan 2, 2006 at 3:04pm (MST)", "Jul 9, 2012 at 5:02am (CEST)", "Europe/Berlin"),
              Optional(1341802920 * kSec));
  EXPECT_THAT(Parse("2006-Jan-02", "2012-Jul-09", "Europe/Berlin"), Optional(1341784800 * kSec));
}

TEST(GoTimeLayout, UtcAndZAreAlwaysUtc) {
  const std::string_view ny = "America/New_York";
  EXPECT_THAT(Parse("2006-01-02 15:04:05 MST", "2010-02-04 21:00:57 UTC", ny),
              Optional(kGoTestUtc));
  EXPECT_THAT(Parse("2006-01-02T15:04:05Z07:00", "2010-02-04T21:00:57Z", ny), Optional(kGoTestUtc));
  EXPECT_EQ(Parse("2006-01-02T15:04:05-07:00", "2010-02-04T21:00:57Z"), std::nullopt);
}

TEST(GoTimeLayout, NumericZoneForms) {
  EXPECT_THAT(Parse("2006-01-02 15:04:05 -0700", "2010-02-04 21:00:57 -0800"), Optional(kGoTest));
  EXPECT_THAT(Parse("2006-01-02 15:04:05 -07:00", "2010-02-04 21:00:57 -08:00"), Optional(kGoTest));
  EXPECT_THAT(Parse("2006-01-02 15:04:05 -07", "2010-02-04 21:00:57 -08"), Optional(kGoTest));
  EXPECT_THAT(Parse("2006-01-02 15:04:05 -070000", "2010-02-04 21:00:57 -080000"),
              Optional(kGoTest));
  EXPECT_THAT(Parse("2006-01-02 15:04:05 -07:00:00", "2010-02-04 21:00:57 -08:00:00"),
              Optional(kGoTest));
  EXPECT_THAT(Parse("2006-01-02 15:04:05 Z0700", "2010-02-04 21:00:57 -0800"), Optional(kGoTest));
  EXPECT_THAT(Parse("2006-01-02 15:04:05 Z0700", "2010-02-04 21:00:57 Z"), Optional(kGoTestUtc));
  EXPECT_THAT(Parse("2006-01-02 15:04:05 Z07", "2010-02-04 21:00:57 +01"),
              Optional(kGoTestUtc - 3600 * kSec));
  EXPECT_THAT(Parse("2006-01-02 15:04:05 Z07:00:00", "2010-02-04 21:00:57 +01:30:15"),
              Optional(kGoTestUtc - 5415 * kSec));
  EXPECT_EQ(Parse("2006-01-02 15:04:05 -0700", "2010-02-04 21:00:57 *0800"), std::nullopt);
  EXPECT_EQ(Parse("2006-01-02 15:04:05 -07:00", "2010-02-04 21:00:57 -0800"), std::nullopt);
}

TEST(GoTimeLayout, TwelveHourClock) {
  EXPECT_THAT(Parse("2006-01-02 3:04PM", "2010-02-04 12:00AM"), Optional(1265241600 * kSec));
  EXPECT_THAT(Parse("2006-01-02 3:04PM", "2010-02-04 12:30PM"), Optional(1265286600 * kSec));
  EXPECT_THAT(Parse("2006-01-02 03:04pm", "2010-02-04 09:00pm"), Optional(kGoTestUtc - 57 * kSec));
  EXPECT_EQ(Parse("2006-01-02 3:04PM", "2010-02-04 9:00pm"), std::nullopt);  // PM is upper case
  EXPECT_EQ(Parse("2006-01-02 3:04PM", "2010-02-04 13:00PM"), std::nullopt);
}

TEST(GoTimeLayout, TwoDigitYearPivotsAt69) {
  EXPECT_THAT(Parse("06-01-02", "69-01-01"), Optional(-365 * 86400 * kSec));
  EXPECT_THAT(Parse("06-01-02", "68-01-01"), Optional(3092601600 * kSec));
  EXPECT_THAT(Parse("RFC822Z", "04 Feb 10 21:00 -0800"), Optional(kGoTest - 57 * kSec));
}

// Go reads two-digit years and fractions with atoi, which takes a sign; found by comparing
// against Go's time.Parse on generated input.
TEST(GoTimeLayout, SignedNumberQuirksMatchGo) {
  EXPECT_THAT(Parse("06-01-02", "+3-01-01"), Optional(1041379200 * kSec));  // 2003
  EXPECT_THAT(Parse("06-01-02", "-5-01-01"), Optional(788918400 * kSec));   // 1995
  EXPECT_THAT(Parse("2006-01-02 15:04:05.000", "2010-02-04 21:00:57.+12"),
              Optional(kGoTestUtc + 12000000));
  EXPECT_THAT(Parse("2006-01-02 15:04:05.000", "2010-02-04 21:00:57.-00"), Optional(kGoTestUtc));
  EXPECT_EQ(Parse("2006-01-02 15:04:05.000", "2010-02-04 21:00:57.-12"), std::nullopt);
}

TEST(GoTimeLayout, RangeChecks) {
  EXPECT_EQ(Parse("ANSIC", "Thu Feb  4 21:00:60 2010"), std::nullopt);
  EXPECT_EQ(Parse("ANSIC", "Thu Feb  4 21:61:57 2010"), std::nullopt);
  EXPECT_EQ(Parse("ANSIC", "Thu Feb  4 24:00:00 2010"), std::nullopt);
  EXPECT_EQ(Parse("2006-01-02", "2010-13-01"), std::nullopt);
  EXPECT_EQ(Parse("2006-01-02", "2010-00-01"), std::nullopt);
  EXPECT_EQ(Parse("2006-01-02", "2010-02-29"), std::nullopt);
  EXPECT_EQ(Parse("2006-01-02", "2010-04-31"), std::nullopt);
  EXPECT_EQ(Parse("2006-01-02", "2010-01-00"), std::nullopt);
  EXPECT_THAT(Parse("2006-01-02", "2012-02-29"), Optional(1330473600 * kSec));
  EXPECT_EQ(Parse("RFC3339", "2010-02-04T21:00:67.012345678-08:00"), std::nullopt);
}

TEST(GoTimeLayout, MismatchedTextFails) {
  EXPECT_EQ(Parse("ANSIC", "Feb  4 21:00:57 2010"), std::nullopt);  // weekday missing
  EXPECT_EQ(Parse("ANSIC", "Thu Feb  4 21:00:57 @2010"), std::nullopt);
  EXPECT_EQ(Parse("ANSIC", "Xyz Feb  4 21:00:57 2010"), std::nullopt);
  EXPECT_EQ(Parse("RFC3339", "2006-01-02T15:04_abc"), std::nullopt);
  EXPECT_EQ(Parse("RFC3339", "2006-01-02T15:04:05Z_abc"), std::nullopt);
  EXPECT_EQ(Parse("RFC3339", "0000-01-01T00:00:.0+00:00"), std::nullopt);
  EXPECT_EQ(Parse("RFC3339", "\""), std::nullopt);
  EXPECT_EQ(Parse("RFC3339", ""), std::nullopt);
  EXPECT_EQ(Parse("\"2006-01-02T15:04:05Z07:00\"", "0"), std::nullopt);
  EXPECT_EQ(Parse("_2 Jan 06 15:04 MST", "4 --- 00 00:00 GMT"), std::nullopt);
  EXPECT_EQ(Parse("2006-01-02", "2010-02-04 "), std::nullopt);  // extra text
  EXPECT_EQ(Parse("2006-01-02", "10-02-04"), std::nullopt);
}

TEST(GoTimeLayout, ZoneAbbreviationsNeedThreeToFiveUppercaseLetters) {
  EXPECT_THAT(Parse("2006-01-02 15:04 MST", "2010-02-04 21:00 ChST"),
              Optional(kGoTestUtc - 57 * kSec));
  EXPECT_THAT(Parse("2006-01-02 15:04 MST", "2010-02-04 21:00 WITA"),
              Optional(kGoTestUtc - 57 * kSec));
  EXPECT_THAT(Parse("2006-01-02 15:04 MST", "2010-02-04 21:00 AEST"),
              Optional(kGoTestUtc - 57 * kSec));
  EXPECT_THAT(Parse("2006-01-02 15:04 MST", "2010-02-04 21:00 +03"),
              Optional(kGoTestUtc - 57 * kSec));
  EXPECT_EQ(Parse("2006-01-02 15:04 MST", "2010-02-04 21:00 AB"), std::nullopt);
  EXPECT_EQ(Parse("2006-01-02 15:04 MST", "2010-02-04 21:00 ABCD"), std::nullopt);
  EXPECT_EQ(Parse("2006-01-02 15:04 MST", "2010-02-04 21:00 ABCDEF"), std::nullopt);
}

TEST(GoTimeLayout, LocationAppliesWhenTextHasNoZone) {
  // Promtail's timestamp stage test: America/New_York in summer is UTC-4.
  EXPECT_THAT(Parse("2006-01-02 15:04:05", "2019-07-22 20:29:32", "America/New_York"),
              Optional(1563841772 * kSec));
  EXPECT_THAT(Parse("2006-01-02 15:04:05", "2019-01-22 20:29:32", "America/New_York"),
              Optional(1548206972 * kSec));
  // A numeric offset in the text wins over the location.
  EXPECT_THAT(Parse("2006-01-02 15:04:05 -0700", "2019-07-22 20:29:32 +0000", "America/New_York"),
              Optional(1563827372 * kSec));
}

TEST(GoTimeLayout, DaylightSavingGapsAndOverlapsResolveLikeGo) {
  const std::string_view ny = "America/New_York";
  // 2019-03-10 02:30 does not exist in New York; Go yields 06:30Z.
  EXPECT_THAT(Parse("2006-01-02 15:04", "2019-03-10 02:30", ny), Optional(1552199400 * kSec));
  // 2019-11-03 01:30 happens twice; Go takes the first (EDT, 05:30Z).
  EXPECT_THAT(Parse("2006-01-02 15:04", "2019-11-03 01:30", ny), Optional(1572759000 * kSec));
  // Berlin 2019-03-31 02:30 does not exist; Go yields 01:30Z.
  EXPECT_THAT(Parse("2006-01-02 15:04", "2019-03-31 02:30", "Europe/Berlin"),
              Optional(1553995800 * kSec));
}

TEST(GoTimeLayout, UnixSecondsWithOptionalFraction) {
  EXPECT_THAT(Parse("Unix", "1562708916"), Optional(1562708916 * kSec));
  EXPECT_THAT(Parse("Unix", "1562708916.414123"), Optional(1562708916414123000));
  EXPECT_THAT(Parse("Unix", "1562708916.000000123"), Optional(1562708916000000123));
  EXPECT_THAT(Parse("Unix", "-1"), Optional(-kSec));
  // Loki 3 scales any fraction in floating point; ParseInt lets a sign through.
  EXPECT_THAT(Parse("Unix", "1562708916.0000001234"), Optional(1562708916000000123));
  // Values from running Promtail's code: the sign counts as a digit when scaling.
  EXPECT_THAT(Parse("Unix", "1562708916.-5"), Optional(1562708915950000000));
  EXPECT_THAT(Parse("Unix", "1.+5"), Optional(1050000000));
  EXPECT_THAT(Parse("Unix", "-1.5"), Optional(-500000000));
  EXPECT_THAT(Parse("Unix", "1.123456789123456789"), Optional(1123456789));
  EXPECT_EQ(Parse("Unix", "1562708916."), std::nullopt);
  EXPECT_EQ(Parse("Unix", "1.2.3"), std::nullopt);
  EXPECT_EQ(Parse("Unix", "abc"), std::nullopt);
  EXPECT_EQ(Parse("Unix", ""), std::nullopt);
  EXPECT_EQ(Parse("Unix", "99999999999999999"), std::nullopt);  // beyond int64 nanoseconds
}

TEST(GoTimeLayout, UnixMsUsNsAreIntegers) {
  EXPECT_THAT(Parse("UnixMs", "1562708916414"), Optional(1562708916414000000));
  EXPECT_THAT(Parse("UnixUs", "1562708916414123"), Optional(1562708916414123000));
  EXPECT_THAT(Parse("UnixNs", "1562708916000000123"), Optional(1562708916000000123));
  EXPECT_THAT(Parse("UnixMs", "1562723913000"), Optional(1562723913000000000));
  EXPECT_EQ(Parse("UnixMs", "1562708916414.5"), std::nullopt);
  EXPECT_EQ(Parse("UnixMs", "99999999999999999"), std::nullopt);  // overflows
  EXPECT_EQ(Parse("UnixNs", "99999999999999999999"), std::nullopt);
  EXPECT_EQ(Parse("UnixUs", "12a"), std::nullopt);
}

TEST(GoTimeLayout, LayoutWithoutYearUsesCurrentYear) {
  // kNow is 2019-07-10.
  EXPECT_THAT(Parse("Jan _2 15:04:05", "Feb  4 21:00:57"), Optional(1549314057 * kSec));
  EXPECT_THAT(Parse("Jan _2 15:04:05.000000", "Jul  9 21:00:57.000001"),
              Optional(1562706057000001000));
  const GoTimeLayout stamp = GoTimeLayout::Compile("Jan _2 15:04:05");
  // In January, a December stamp is last year's; in December, a January stamp is next year's.
  EXPECT_THAT(stamp.Parse("Dec 31 23:59:59", 1546300800 * kSec),  // now 2019-01-01
              Optional(1546300799 * kSec));
  EXPECT_THAT(stamp.Parse("Jan  1 00:00:00", 1577750400 * kSec),  // now 2019-12-31
              Optional(1577836800 * kSec));
  // Feb 29 parses (year 0 is leap) and rolls over to Mar 1 in a common year.
  EXPECT_THAT(stamp.Parse("Feb 29 00:00:00", kNow), Optional(1551398400 * kSec));
  EXPECT_TRUE(GoTimeLayout::Compile("Jan _2 15:04:05").Parse("Jul  9 21:00:57").has_value());
}

TEST(GoTimeLayout, LiteralUnderscoreBeforeLongYear) {
  EXPECT_THAT(Parse("x_2006", "x_2010"), Optional(1262304000 * kSec));
}

TEST(GoTimeLayout, LayoutWithoutReferenceElementIsError) {
  EXPECT_THAT(ErrorOf("foo"),
              AllOf(HasSubstr("invalid timestamp format \"foo\""), HasSubstr("RFC3339"),
                    HasSubstr("2006-01-02T15:04:05.000Z07:00")));
  EXPECT_THAT(ErrorOf(""), HasSubstr("invalid timestamp format \"\""));
  EXPECT_THAT(ErrorOf("ISO"), HasSubstr("not a named format"));
  EXPECT_EQ(ErrorOf("iso8601"), "no error");  // "1" is the month: a layout, as in Go
}

TEST(GoTimeLayout, UnknownLocationIsError) {
  EXPECT_THAT(ErrorOf("RFC3339", "Mars/Olympus_Mons"),
              AllOf(HasSubstr("\"Mars/Olympus_Mons\""), HasSubstr("IANA")));
  EXPECT_EQ(ErrorOf("RFC3339", "UTC"), "no error");
}

}  // namespace
}  // namespace skald::stages

namespace skald::stages {
namespace {

TEST(GoTimeLayout, RandomTextNeverCrashes) {
  const std::vector<std::string> layouts = {
      "RFC3339Nano",    "UnixDate",
      "RFC850",         "Unix",
      "UnixMs",         "2006-01-02T15:04:05.000Z07:00",
      "Jan _2 002 3PM", "Mon, 02 Jan 06 15:04:05.999 -07:00:00 MST"};
  const std::string alphabet = "0123456789 -+:.,TZJanFebMonPMSTGCzx_\xc3\xa9";
  uint64_t seed = 7;
  auto next = [&seed]() {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return seed >> 33;
  };
  for (const std::string& layout : layouts) {
    const GoTimeLayout t = GoTimeLayout::Compile(layout, "Europe/Berlin");
    for (int i = 0; i < 5000; ++i) {
      std::string text;
      const int n = next() % 40;
      for (int k = 0; k < n; ++k) text += alphabet[next() % alphabet.size()];
      (void)t.Parse(text, kNow);
    }
  }
}

}  // namespace
}  // namespace skald::stages
