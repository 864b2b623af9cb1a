#!/usr/bin/env bash
# Configures a clang build directory (once: an existing one is left as it is).
#   configure.sh <dir> clang  the one clang build of the product that `make asan` (the unit and
#                             integration tests under ASan + UBSan), `make fuzz` (the libFuzzer
#                             targets: -fsanitize=fuzzer-no-link everywhere) and
#                             `make thread-safety` (-Wthread-safety -Werror) share
#   configure.sh <dir> tsan   ThreadSanitizer (`make tsan`)
# -O1 without NDEBUG (reports with usable stacks, the libraries' own checks on), line tables
# only for debug info (all a sanitizer's stack needs: a smaller, faster build), no benchmarks;
# ccache when installed.
set -euo pipefail
build="${1:?usage: configure.sh <dir> clang|tsan}"
kind="${2:?usage: configure.sh <dir> clang|tsan}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
[[ -f "$build/build.ninja" ]] && exit 0
case "$kind" in
  clang) flags=(-DSKALD_FUZZ=ON -DSKALD_SANITIZE=address,undefined -DSKALD_THREAD_SAFETY=ON) ;;
  tsan) flags=(-DSKALD_SANITIZE=thread) ;;
  *)
    echo "configure.sh: unknown kind $kind (clang or tsan)" >&2
    exit 2
    ;;
esac
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja "${flags[@]}" -DSKALD_BUILD_BENCH=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
  "${launcher[@]}" >/dev/null
