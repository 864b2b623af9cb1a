#include "plugin/common/allocator.h"

#include <malloc.h>

#include <cstddef>
#include <string>

// jemalloc's control interface. Weak: present only in a program linked with jemalloc (the
// `skald` binary), null in the tests, which run on glibc's malloc.
extern "C" int mallctl(const char* name, void* oldp, std::size_t* oldlenp, void* newp,
                       std::size_t newlen) __attribute__((weak));

// jemalloc's settings, read at its first allocation (a program without jemalloc ignores
// them):
// - narenas:2 — two arenas, not four per CPU: the plugin's threads hand buffers to each other,
//   and few arenas keep less free memory spread over them (an idle plugin's resident size).
// - background_thread:false — no thread of jemalloc's own: an idle plugin purges when the
//   driver calls ReturnFreeMemory.
// - dirty_decay_ms:5000 — pages a burst freed go back within seconds even while the plugin
//   keeps working.
extern "C" {
// NOLINTNEXTLINE: the name and type jemalloc looks up
const char* malloc_conf = "narenas:2,background_thread:false,dirty_decay_ms:5000";
}

namespace skald {
namespace {

// MALLCTL_ARENAS_ALL (jemalloc.h): "arena.<all>.purge" purges every arena.
constexpr const char* kPurgeAllArenas = "arena.4096.purge";

bool RunningOnJemalloc() { return mallctl != nullptr; }

}  // namespace

void ConfigureAllocator() {
  if (RunningOnJemalloc()) return;
  // glibc raises its mmap threshold each time a large block is freed, and its trim threshold
  // with it (to twice that): a per-thread arena then keeps megabytes of freed memory at its
  // top, which malloc_trim does not give back for such an arena. Fixed thresholds keep each
  // arena's free top small, so an idle plugin returns to its start's memory after a burst.
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  mallopt(M_TRIM_THRESHOLD, 256 * 1024);
}

void ReturnFreeMemory() {
  if (RunningOnJemalloc()) {
    mallctl(kPurgeAllArenas, nullptr, nullptr, nullptr, 0);
    return;
  }
  malloc_trim(0);
}

std::string_view AllocatorName() {
  static const std::string name = [] {
    if (!RunningOnJemalloc()) return std::string("glibc malloc");
    const char* version = nullptr;
    std::size_t size = sizeof(version);
    if (mallctl("version", &version, &size, nullptr, 0) != 0 || version == nullptr) {
      return std::string("jemalloc");
    }
    // "5.3.0-0-g54eaed1d...": the release, without the commit.
    const std::string_view full(version);
    return "jemalloc " + std::string(full.substr(0, full.find('-')));
  }();
  return name;
}

}  // namespace skald
