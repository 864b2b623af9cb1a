# Cross-compiling skald for arm64 (aarch64) on an amd64 Debian host: `make plugin ARCH=arm64`,
# `make test-arm64`. What it needs is installed by .ci/deps-arm64.sh (`make deps`): Debian's
# aarch64-linux-gnu compiler, the :arm64 libraries in /usr/lib/aarch64-linux-gnu (multiarch)
# and, for the two -dev packages that do not co-install, their unpacked copies in
# SKALD_ARM64_DEV (default /opt/skald/arm64-dev). protoc is the host's; test programs run under
# qemu-aarch64-static (also what gtest_discover_tests and ctest use to start them).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

if(DEFINED ENV{SKALD_ARM64_DEV})
  set(SKALD_ARM64_DEV "$ENV{SKALD_ARM64_DEV}")
else()
  set(SKALD_ARM64_DEV /opt/skald/arm64-dev)
endif()

# Libraries, headers and CMake package files: the arm64 ones only (multiarch paths under /, the
# unpacked -dev packages); programs (protoc, pkg-config): the host's.
set(CMAKE_FIND_ROOT_PATH "${SKALD_ARM64_DEV}" /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config reads the arm64 .pc files (and the architecture-independent ones) only.
set(ENV{PKG_CONFIG_LIBDIR}
  "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig:${SKALD_ARM64_DEV}/usr/lib/aarch64-linux-gnu/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# Test programs run with the loader and libraries of the :arm64 packages, at their multiarch
# paths (/lib/ld-linux-aarch64.so.1, /usr/lib/aarch64-linux-gnu): the same files the arm64 plugin
# bundle copies. (The cross toolchain's own libc in /usr/aarch64-linux-gnu, which
# QEMU_LD_PREFIX=/usr/aarch64-linux-gnu would select, can be an older build than that.)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static)

# No RUNPATH into SKALD_ARM64_DEV: every library the programs load is installed at the
# multiarch path (the :arm64 runtime packages), where the loader looks anyway, in this machine
# and in the plugin's rootfs alike (the project's own libraries are static).
set(CMAKE_SKIP_BUILD_RPATH ON)
