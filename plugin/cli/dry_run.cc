#include "plugin/cli/dry_run.h"

#include <time.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "pipeline_stages/go/go_string.h"
#include "pipeline_stages/tenant_id.h"
#include "plugin/cli/config_check.h"
#include "plugin/driver/container_pipeline.h"

namespace skald {
namespace {

void PrintEntry(const LokiEntry& e, const LogOptions& options, std::ostream& out) {
  out << "  entry\n";
  out << "    labels:   " << e.labels.view() << "\n";
  out << "    time:     " << FormatRfc3339Utc(e.timestamp_ns) << "\n";
  out << "    line:     " << stages::GoQuoted(e.line) << "\n";
  if (!e.structured_metadata.empty()) {
    out << "    metadata: ";
    bool first = true;
    for (const auto& [k, v] : e.structured_metadata) {
      out << (first ? "" : ", ") << k << "=" << stages::GoQuoted(v);
      first = false;
    }
    out << "\n";
  }
  const std::string& tenant = e.tenant.empty() ? options.client.tenant_id : e.tenant;
  if (!tenant.empty()) {
    out << "    tenant:   " << stages::GoQuoted(tenant);
    if (std::string why = stages::TenantIdError(tenant); !why.empty()) {
      out << " (Loki refuses it: " << why << "; the plugin drops the entry as invalid_tenant)";
    }
    out << "\n";
  }
}

// Prints the entries one line made and what the stages dropped of it (the observer's events
// from `events_before` on); returns how many entries would be sent.
std::size_t Report(const std::vector<LokiEntry>& entries, const RecordingObserver& observer,
                   std::size_t events_before, const LogOptions& options, std::ostream& out) {
  std::size_t sent = 0;
  for (const LokiEntry& e : entries) {
    PrintEntry(e, options, out);
    if (e.tenant.empty() || stages::TenantIdError(e.tenant).empty()) ++sent;
  }
  for (std::size_t i = events_before; i < observer.events.size(); ++i) {
    out << "  dropped (" << observer.events[i] << ")\n";
  }
  return sent;
}

}  // namespace

std::string FormatRfc3339Utc(int64_t ns) {
  const int64_t seconds = ns >= 0 ? ns / 1000000000 : (ns - 999999999) / 1000000000;
  int64_t frac = ns - seconds * 1000000000;
  const time_t t = static_cast<time_t>(seconds);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  std::string out = buf;
  if (frac != 0) {
    char digits[16];
    std::snprintf(digits, sizeof digits, ".%09lld", static_cast<long long>(frac));
    std::string f = digits;
    while (f.back() == '0') f.pop_back();
    out += f;
  }
  return out + "Z";
}

std::size_t DryRun(const DryRunInput& input, std::istream& lines, std::ostream& out) {
  const LogOptions& options = input.options;
  RecordingObserver observer;
  ContainerPipeline pipeline(options, PlaceholderContainer(input.log_opts), "skald-check-host",
                             &observer);
  LineAssembler assembler(options.max_line_size);
  int64_t now = input.start_ns != 0 ? input.start_ns
                                    : std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count();
  if (pipeline.dropped_by_relabel()) {
    out << "loki-relabel-config drops this container's streams: nothing would be sent\n";
    return 0;
  }
  std::size_t sent = 0;
  std::string text;
  std::size_t number = 0;
  const std::string_view source_name = LogSourceName(input.source);
  while (std::getline(lines, text)) {
    ++number;
    out << "line " << number << " (" << source_name << "): " << stages::GoQuoted(text) << "\n";
    LogEntryView frame;
    frame.source = source_name;
    frame.time_nano = now;
    frame.line = text;
    now += 1000000;
    std::vector<LogLine> assembled;
    assembler.Add(frame, assembled);
    if (assembled.empty()) {
      out << "  skipped (blank: the Go driver sends no whitespace-only line either)\n";
      continue;
    }
    const std::size_t events_before = observer.events.size();
    std::vector<LokiEntry> entries;
    pipeline.Process(assembled, number, entries);
    if (entries.empty() && observer.events.size() == events_before) {
      out << "  held by a stage (multiline, limit, ...): it comes out with a later line or at "
             "the end\n";
    }
    sent += Report(entries, observer, events_before, options, out);
  }
  std::vector<LokiEntry> entries;
  const std::size_t events_before = observer.events.size();
  pipeline.Flush(now, true, entries);
  if (!entries.empty() || observer.events.size() != events_before) {
    out << "end of input: what the stages held\n";
    sent += Report(entries, observer, events_before, options, out);
  }
  out << number << " lines in, " << sent << " entries would be sent\n";
  return sent;
}

}  // namespace skald
