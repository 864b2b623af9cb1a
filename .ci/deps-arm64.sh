#!/usr/bin/env bash
# Installs what the arm64 build and its tests need beside the host's own packages (`make deps`
# runs it): Debian's aarch64 cross compiler, qemu-user-static and the :arm64 variants of the
# libraries skald links (Debian multiarch co-installs them with the amd64 ones).
#
# libsimdjson-dev and libyaml-cpp-dev are not `Multi-Arch: same`: their :arm64 packages would
# remove the amd64 ones. Only their runtime libraries are installed as :arm64 packages; the -dev
# packages (with the runtime ones, so that their CMake files find what they name) are unpacked
# into $SKALD_ARM64_DEV (default /opt/skald/arm64-dev), which .ci/toolchain-arm64.cmake searches.
# crossbuild-essential-arm64 is not used: it does not co-install with libabsl-dev:arm64.
set -euo pipefail
prefix=${SKALD_ARM64_DEV:-/opt/skald/arm64-dev}
host_packages=(g++-aarch64-linux-gnu qemu-user-static)
arm64_packages=(libcpp-httplib-dev libprotobuf-dev libre2-dev libspdlog-dev libsnappy-dev
  libssl-dev libabsl-dev libgtest-dev libgmock-dev libmaxminddb-dev libsimdjson14 libyaml-cpp0.7)
# -dev package (unpacked) and the runtime package of the same version (installed and unpacked)
unpacked=(libsimdjson-dev:libsimdjson14 libyaml-cpp-dev:libyaml-cpp0.7)

installed() { dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q 'install ok installed'; }

updated=0
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "deps-arm64: adding the arm64 architecture"
  dpkg --add-architecture arm64
  apt-get update -qq
  updated=1
fi
missing=()
for p in "${host_packages[@]}"; do installed "$p" || missing+=("$p"); done
for p in "${arm64_packages[@]}"; do installed "$p:arm64" || missing+=("$p:arm64"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps-arm64: installing ${missing[*]}"
  [ $updated = 1 ] || apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

# The unpacked -dev packages, again whenever the installed runtime version changes.
stamp=$prefix/.versions
want=""
for pair in "${unpacked[@]}"; do
  runtime=${pair#*:}
  want+="$runtime=$(dpkg-query -W -f='${Version}' "$runtime:arm64") "
done
if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "deps-arm64: all present"
  exit 0
fi
echo "deps-arm64: unpacking ${unpacked[*]} (arm64) into $prefix"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chown _apt "$tmp" 2>/dev/null || true  # apt downloads as _apt where it can
for pair in "${unpacked[@]}"; do
  dev=${pair%%:*} runtime=${pair#*:}
  version=$(dpkg-query -W -f='${Version}' "$runtime:arm64")
  (cd "$tmp" && apt-get download -qq "$dev:arm64=$version" "$runtime:arm64=$version")
done
rm -rf "$prefix" && mkdir -p "$prefix"
for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$prefix"; done
echo -n "$want" >"$stamp"
