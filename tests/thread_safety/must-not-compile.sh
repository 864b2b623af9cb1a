#!/usr/bin/env bash
# The thread-safety analysis is live: tests/thread_safety/unguarded_access.cc compiles with
# the lock held and fails, with the analysis' diagnostic, without it.
# Usage: must-not-compile.sh CLANGXX SOURCE_DIR
# Exit status 77 (ctest: skipped) when CLANGXX is not there.
set -uo pipefail
cxx="$1"
src="$2"
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "skipped: no clang++ ($cxx); make deps installs it"
  exit 77
fi
compile=("$cxx" -std=c++20 -fsyntax-only -Wthread-safety -Werror -I"$src"
  "$src/tests/thread_safety/unguarded_access.cc")

if ! "${compile[@]}" -DSKALD_HOLD_THE_LOCK; then
  echo "FAIL: unguarded_access.cc does not compile even with the lock held"
  exit 1
fi
if out="$("${compile[@]}" 2>&1)"; then
  echo "FAIL: reading a guarded member without its lock compiled: the analysis checks nothing"
  exit 1
fi
expected="reading variable 'segments' requires holding mutex 'segs.mu'"
if ! grep -qF "$expected" <<<"$out"; then
  echo "FAIL: the compile failed, but not with \"$expected\":"
  echo "$out"
  exit 1
fi
echo "ok: $expected"
