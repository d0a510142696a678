#!/bin/bash
# Build sparse 0.6.5~rc1 (bookworm's 0.6.4 is too old for 7.3, and the
# kernel then silently skips checking) from Debian sid's source package
# into out/tools/sparse, and check that it runs.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need make gcc dpkg-source

want=0.6.5~rc1
bin=$OUT/tools/sparse/sparse

# The kernel's own test: 1 when sparse understands 7.3's headers.
valid() {
	[ -x "$bin" ] && [ "$(sh "$KTREE/scripts/checker-valid.sh" "$bin")" = 1 ]
}

[ -f "$KTREE/scripts/checker-valid.sh" ] || die "no kernel tree at $KTREE: run 'make base'"
if valid; then
	exit 0
fi
stage "building sparse $want from sid's source package"
src=$OUT/tools/sparse-src
rm -rf "$src"
mkdir -p "$src"
(cd "$src" && "$TOP/scripts/privapt.sh" sid amd64 source --download-only sparse >fetch.log 2>&1) ||
	die "cannot fetch sparse source from sid, see $src/fetch.log"
dsc=$src/sparse_$want-2.dsc
[ -f "$dsc" ] || die "sid no longer serves sparse $want-2: $(ls "$src")"
(cd "$src" && dpkg-source -x --no-check "$dsc" tree >/dev/null)
make -C "$src/tree" -j"$JOBS" CC=gcc HAVE_LLVM=no HAVE_SQLITE=no HAVE_GTK=no HAVE_LIBXML=no sparse >"$src/build.log" 2>&1 ||
	die "sparse build failed, see $src/build.log"
mkdir -p "$OUT/tools/sparse"
cp "$src/tree/sparse" "$bin"
valid || die "sparse $want fails the kernel's scripts/checker-valid.sh"
echo "sparse: $want built and valid for this kernel"
