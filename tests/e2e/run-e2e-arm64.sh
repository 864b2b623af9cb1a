#!/usr/bin/env bash
# The arm64 bundle end to end on this host's dockerd: BUNDLE (make plugin ARCH=arm64) created as
# a plugin copy of its own, skald-arm64-e2e (its journals in the directory Docker keeps for it,
# metrics on 127.0.0.1:9656), so that it never meets an installed `skald` or the amd64 copy
# skald-e2e. Its aarch64 binary runs under qemu-aarch64-static through binfmt_misc: this
# script mounts binfmt_misc if needed and registers qemu for aarch64 ELF files with the F flag
# (the interpreter is opened here, so it need not exist inside the plugin's rootfs), unless an
# enabled registration with F is already there. Afterwards it removes what it registered, puts
# back a registration it disabled and unmounts what it mounted, whatever the outcome.
#   tests/e2e/run-e2e-arm64.sh BUNDLE BUILD [CTEST_ARGS...]
# BUILD is a build of the host's architecture (the test programs drive docker from here).
# CTEST_ARGS go to ctest; without them the suites of SKALD_E2E_ARM64_SUITES run.
set -euo pipefail
bundle=$(cd "${1:?bundle directory}" && pwd)
build=${2:?build directory}
shift 2
cd "$(dirname "$0")/../.."
binfmt=/proc/sys/fs/binfmt_misc
ours=skald-qemu-aarch64
qemu=$(command -v qemu-aarch64-static) || {
  echo "run-e2e-arm64: qemu-aarch64-static is missing (make deps installs it)" >&2
  exit 1
}
# The ELF header of an aarch64 executable (EM_AARCH64 = 0xb7), as in Debian's qemu-user-static.
magic='\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
magic_hex=7f454c460201010000000000000000000200b700

mounted_here=0
registered_here=0
disabled_here=""
restore() {
  local rc=$?
  if [ $registered_here = 1 ] && [ -e "$binfmt/$ours" ]; then echo -1 >"$binfmt/$ours"; fi
  if [ -n "$disabled_here" ] && [ -e "$disabled_here" ]; then echo 1 >"$disabled_here"; fi
  if [ $mounted_here = 1 ]; then umount "$binfmt"; fi
  echo "run-e2e-arm64: binfmt_misc restored (mounted here: $mounted_here," \
    "registered here: $registered_here, disabled and re-enabled: ${disabled_here:-none})"
  exit $rc
}
trap restore EXIT

if ! mountpoint -q "$binfmt"; then
  mount -t binfmt_misc binfmt_misc "$binfmt"
  mounted_here=1
fi
# An existing registration for aarch64 ELF files: used when enabled with F (the plugin's
# rootfs has no qemu), else disabled for the run so that ours is the one applied.
usable=""
for entry in "$binfmt"/*; do
  case $(basename "$entry") in register | status) continue ;; esac
  grep -qx "magic $magic_hex" "$entry" 2>/dev/null || continue
  grep -qx enabled "$entry" || continue
  if grep -q '^flags:.*F' "$entry"; then
    usable=$entry
  else
    echo 0 >"$entry"
    disabled_here=$entry
  fi
done
if [ -n "$usable" ]; then
  echo "run-e2e-arm64: using the binfmt_misc registration $usable"
else
  echo ":$ours:M::$magic:$mask:$qemu:F" >"$binfmt/register"
  registered_here=1
  echo "run-e2e-arm64: registered $qemu for aarch64 ELF files (binfmt_misc $ours, flag F)"
fi
# The binary runs here as docker will run it: directly, through the registration.
"$bundle/rootfs/usr/bin/skald" --version

suites=${SKALD_E2E_ARM64_SUITES:-Arm64|Delivery|DockerLogs|Metrics}
[ $# -gt 0 ] || set -- -R "^e2e(-arm64)?\\.($suites)\$"
SKALD_E2E_PLUGIN=skald-arm64-e2e SKALD_E2E_METRICS_PORT=9656 SKALD_E2E_LABELS='^e2e(-arm64)?$' \
  tests/e2e/run-e2e.sh "$bundle" "$build" "$@"
