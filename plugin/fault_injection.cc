#include "plugin/fault_injection.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <string>

namespace skald {

#ifdef SKALD_FAULT_INJECTION

bool FaultInjectionCompiledIn() { return true; }

void AbortIfFaultLine(std::string_view line) {
  static const std::string text = [] {
    const char* v = std::getenv("SKALD_FAULT_ABORT_ON_LINE");
    return std::string(v != nullptr ? v : "");
  }();
  if (text.empty() || line.find(text) == std::string_view::npos) return;
  spdlog::critical("fault injected: a line holds SKALD_FAULT_ABORT_ON_LINE; aborting");
  spdlog::default_logger()->flush();
  std::abort();
}

#else

bool FaultInjectionCompiledIn() { return false; }

void AbortIfFaultLine(std::string_view) {}

#endif

}  // namespace skald
