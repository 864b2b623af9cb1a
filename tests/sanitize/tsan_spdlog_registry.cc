// ThreadSanitizer builds (`make tsan`) only. spdlog's registry is a function-local static inside
// the distribution's uninstrumented libspdlog: TSan does not see its initialization guard, so
// the first log calls made at once on two threads (two plugin API handlers, say) are reported
// as a race on it. The plugin makes it on its main thread before it starts any other
// (plugin/main.cc sets the log level first); the test program does the same, before main.
#include <spdlog/spdlog.h>

namespace {

const bool kRegistryMade = spdlog::default_logger_raw() != nullptr;

}  // namespace
