// The memory allocator the plugin runs on, and how it gives memory back.
//
// The `skald` program links jemalloc (SKALD_ALLOCATOR=jemalloc, the default but for sanitizer
// and fuzz builds): a line's buffers are made on the reader and shipping threads and freed on a
// Loki client's lane, and glibc's malloc spends a quarter of those threads' time on such
// cross-thread frees (consolidating chunks in the producer's arena under its lock). The tests
// and benchmarks that run in-process keep the system's malloc; these functions work with
// either.
#pragma once

#include <string_view>

namespace skald {

// Settings made once, first thing in main (glibc's thresholds; jemalloc reads its own from
// the program's `malloc_conf`).
void ConfigureAllocator();

// Hands the free memory the allocator keeps back to the system: jemalloc purges its arenas'
// unused pages, glibc trims its arenas. For an idle plugin after a burst.
void ReturnFreeMemory();

// "jemalloc 5.3.0" or "glibc malloc": what `skald --version` reports.
std::string_view AllocatorName();

}  // namespace skald
