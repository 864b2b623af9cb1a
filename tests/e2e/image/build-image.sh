#!/bin/sh
# Builds the e2e test image skald-test:latest: a static loggen plus Debian's busybox-static,
# imported with `docker import` (no registry, no base image needed).
#
# Idempotent: the image carries a label with the hash of its inputs; when an image with the
# same hash exists, nothing is rebuilt. Prints the image name on success.
#
#   tests/e2e/image/build-image.sh [IMAGE]      (default IMAGE: skald-test:latest)
#   FORCE=1 tests/e2e/image/build-image.sh      rebuild even if the hash matches
set -eu

IMAGE="${1:-skald-test:latest}"
HERE="$(cd "$(dirname "$0")" && pwd)"
BUSYBOX="${BUSYBOX:-/bin/busybox}"
CC="${CC:-gcc}"

die() { echo "build-image.sh: $*" >&2; exit 1; }

command -v docker >/dev/null 2>&1 || die "docker not found"
command -v "$CC" >/dev/null 2>&1 || die "$CC not found (install gcc and libc6-dev)"
[ -x "$BUSYBOX" ] || die "$BUSYBOX not found (apt-get install busybox-static)"
# A dynamically linked busybox would not run in an image without a libc.
if command -v file >/dev/null 2>&1 && file -L "$BUSYBOX" | grep -q 'dynamically linked'; then
  die "$BUSYBOX is dynamically linked; install busybox-static"
fi

# Serialise concurrent builds (tests may start in parallel).
LOCK="${TMPDIR:-/tmp}/skald-test-image.lock"
exec 9>"$LOCK"
if command -v flock >/dev/null 2>&1; then flock 9; fi

HASH="$(cat "$HERE/loggen.c" "$HERE/build-image.sh" "$BUSYBOX" | sha256sum | cut -c1-32)"
HAVE="$(docker image inspect --format '{{index .Config.Labels "skald.e2e.hash"}}' "$IMAGE" \
  2>/dev/null || true)"
if [ "${FORCE:-0}" != 1 ] && [ "$HAVE" = "$HASH" ]; then
  echo "$IMAGE"
  exit 0
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/skald-test-image.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT INT TERM

ROOT="$WORK/rootfs"
mkdir -p "$ROOT/bin" "$ROOT/usr/bin" "$ROOT/etc" "$ROOT/tmp" "$ROOT/proc" "$ROOT/sys" \
  "$ROOT/dev" "$ROOT/root"
chmod 1777 "$ROOT/tmp"

"$CC" -static -O2 -Wall -Wextra -Werror -o "$ROOT/bin/loggen" "$HERE/loggen.c" \
  || die "compiling loggen failed (is libc6-dev installed? it provides libc.a)"
strip "$ROOT/bin/loggen" 2>/dev/null || true
"$ROOT/bin/loggen" --lines 1 >/dev/null || die "the built loggen does not run"

cp "$BUSYBOX" "$ROOT/bin/busybox"
for applet in $("$BUSYBOX" --list); do
  [ "$applet" = busybox ] && continue
  [ -e "$ROOT/bin/$applet" ] || ln -s busybox "$ROOT/bin/$applet"
done
echo "root:x:0:0:root:/root:/bin/sh" >"$ROOT/etc/passwd"
echo "root:x:0:" >"$ROOT/etc/group"

# Deterministic-ish tarball; the hash label, not the image ID, decides reuse.
tar --numeric-owner --owner=0 --group=0 -C "$ROOT" -cf "$WORK/rootfs.tar" .
docker import \
  --change "LABEL skald.e2e.hash=$HASH" \
  --change 'ENV PATH=/bin:/usr/bin' \
  --change 'WORKDIR /' \
  --change 'CMD ["/bin/sh"]' \
  --message "skald e2e test image" \
  "$WORK/rootfs.tar" "$IMAGE" >/dev/null || die "docker import failed"
echo "$IMAGE"
