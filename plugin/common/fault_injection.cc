#include "plugin/common/fault_injection.h"

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

void LeakIfAsked() {
  const char* v = std::getenv("SKALD_FAULT_LEAK_AT_EXIT");
  if (v == nullptr || std::string(v) != "1") return;
  char* block = new char[4096];  // its only pointer ends with this call: a leak
  block[0] = 1;
  spdlog::warn("fault injected: SKALD_FAULT_LEAK_AT_EXIT leaked 4096 bytes at {}",
               static_cast<void*>(block));
}

#else

bool FaultInjectionCompiledIn() { return false; }

void AbortIfFaultLine(std::string_view) {}

void LeakIfAsked() {}

#endif

}  // namespace skald
