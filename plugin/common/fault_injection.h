// FaultInjection: crashes on purpose, for the tests that must see the plugin die and come back
// (the crash-loop guard). Compiled in only when the build has SKALD_FAULT_INJECTION (the test
// build `make test` runs end to end; never the release bundle): then a line holding the text of
// SKALD_FAULT_ABORT_ON_LINE, when it reaches the driver (live or replayed), aborts the process;
// SKALD_FAULT_LEAK_AT_EXIT=1 leaks a block at shutdown (for the test that LeakSanitizer's check
// at exit is reached). In other builds every call does nothing.
#pragma once

#include <string_view>

namespace skald {

// True when this build has the switch (tests assert it, so that they cannot pass without it).
bool FaultInjectionCompiledIn();

// Aborts the process when the switch is compiled in, set, and `line` holds its text.
void AbortIfFaultLine(std::string_view line);

// Leaks a block when the switch is compiled in and SKALD_FAULT_LEAK_AT_EXIT=1.
void LeakIfAsked();

}  // namespace skald
