#!/bin/bash
# Fetch Debian trixie's busybox-static for riscv64 (through a private apt
# configuration, no foreign dpkg architecture on the host) and extract the
# binary to out/tools/busybox.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need dpkg-deb

bin=$OUT/tools/busybox
if [ -x "$bin" ]; then
	exit 0
fi
stage "fetching busybox-static:riscv64 from trixie"
dir=$OUT/tools/busybox-deb
rm -rf "$dir"
mkdir -p "$dir"
(cd "$dir" && "$TOP/scripts/privapt.sh" trixie riscv64 download busybox-static:riscv64 >fetch.log 2>&1) ||
	die "cannot download busybox-static:riscv64, see $dir/fetch.log"
dpkg-deb -x "$dir"/busybox-static_*_riscv64.deb "$dir/x"
file_out=$(od -An -tx1 -j18 -N2 "$dir/x/usr/bin/busybox" | tr -d ' ')
[ "$file_out" = f300 ] || die "busybox from the package is not a riscv64 ELF"
cp "$dir/x/usr/bin/busybox" "$bin"
echo "busybox: $(ls "$dir"/*.deb)"
