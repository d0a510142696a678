#!/bin/bash
# Usage: vmm.sh TREE
# The VMM for the migration test (guest/migrate): sid's riscv64 QEMU
# ($QEMU_PKG $QEMU_VERSION; trixie's 10.0 does not migrate a vCPU's
# privilege mode, see results/*-migration-trap/) and exactly the shared
# libraries it needs, found by walking the ELF NEEDED entries from the
# binary, plus the dynamic loader at its PT_INTERP path; an inner
# initramfs (busybox, guest/vmm-init, guest/memcheck.c built static); and
# the inner kernel out/build/TREE-min. All packed, with guest/migrate, into
# out/initramfs/vmm-TREE.cpio.gz, an archive for boot.sh's ADDON_RD.
# QEMU runs with -bios none -nodefaults: it needs none of its data files.
# Packages are fetched once (private apt configuration, scripts/privapt.sh)
# and unpacked once into out/vmm/. QEMU_SUITE and QEMU_VERSION override the
# pinned package (e.g. trixie 1:10.0.13+ds-0+deb13u1, to reproduce the
# trap loop).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need dpkg-deb "${CROSS_COMPILE}readelf" "${CROSS_COMPILE}gcc" gzip

QEMU_PKG=qemu-system-riscv
QEMU_VERSION=${QEMU_VERSION:-1:11.1.2+ds-3}
QEMU_SUITE=${QEMU_SUITE:-sid}
QEMU_BIN=usr/bin/qemu-system-riscv64

tree=$1
img=$OUT/build/$tree-min/arch/riscv/boot/Image
[ -f "$img" ] || die "no inner kernel $img: run scripts/kbuild.sh $tree min"
dir=$OUT/vmm
root=$dir/root-${QEMU_VERSION//:/_}
mkdir -p "$dir"

# Fetch the dependency closure and unpack every package of it into $root.
if [ ! -f "$root/.unpacked" ]; then
	stage "fetching $QEMU_PKG=$QEMU_VERSION:riscv64 and its dependencies from $QEMU_SUITE"
	args=(--no-install-recommends "$QEMU_PKG=$QEMU_VERSION")
	"$TOP/scripts/privapt.sh" "$QEMU_SUITE" riscv64 install -d -y "${args[@]}" >"$dir/fetch.log" 2>&1 ||
		die "cannot download $QEMU_PKG=$QEMU_VERSION:riscv64, see $dir/fetch.log"
	"$TOP/scripts/privapt.sh" "$QEMU_SUITE" riscv64 install -s "${args[@]}" >"$dir/closure.log" 2>&1 ||
		die "cannot list the dependencies of $QEMU_PKG, see $dir/closure.log"
	cache=$OUT/apt/$QEMU_SUITE-riscv64/cache/archives
	rm -rf "$root"
	mkdir -p "$root"
	# "Inst NAME (VERSION SUITE [ARCH])": the cache names the file
	# NAME_VERSION_ARCH.deb, with the epoch's colon as %3a.
	sed -n 's/^Inst \([^ ]*\) (\([^ ]*\) [^[]*\[\([^]]*\)\]).*/\1_\2_\3.deb/p' "$dir/closure.log" |
		sed 's/:/%3a/' >"$dir/debs"
	if [ "$(wc -l <"$dir/debs")" != "$(grep -c '^Inst ' "$dir/closure.log")" ]; then
		die "cannot read the closure's packages from $dir/closure.log"
	fi
	while IFS= read -r deb; do
		[ -f "$cache/$deb" ] || die "package $deb not in $cache"
		dpkg-deb -x "$cache/$deb" "$root"
	done <"$dir/debs"
	deb=$cache/${QEMU_PKG}_${QEMU_VERSION/:/%3a}_riscv64.deb
	got=$(dpkg-deb -f "$deb" Version)
	[ "$got" = "$QEMU_VERSION" ] || die "$deb is version $got, not $QEMU_VERSION"
	touch "$root/.unpacked"
fi
[ -x "$root/$QEMU_BIN" ] || die "no $QEMU_BIN in $root"

# find_lib SONAME: the path, relative to $root, of the library the dynamic
# loader would load (its default directories, no ld.so.cache).
find_lib() {
	local d
	for d in lib/riscv64-linux-gnu usr/lib/riscv64-linux-gnu lib usr/lib; do
		if [ -e "$root/$d/$1" ]; then
			echo "$d/$1"
			return
		fi
	done
	die "library $1 (needed by $2) is not in the packages of $QEMU_PKG's closure"
}

# The binary's interpreter; the loader does not load itself again.
interp=$("${CROSS_COMPILE}readelf" -l "$root/$QEMU_BIN" |
	sed -n 's/.*Requesting program interpreter: \(.*\)\]$/\1/p')
[ -n "$interp" ] || die "$QEMU_BIN has no PT_INTERP"
interp_file=$(readlink -f "$root$interp" 2>/dev/null || true)
case $interp_file in
"$root"/*) ;;
*) interp_file=$(readlink -f "$root/usr$interp") ;;
esac
[ -f "$interp_file" ] || die "the interpreter $interp is not in $root"

# Breadth-first walk of the NEEDED entries.
declare -A seen=(["${interp##*/}"]=1)
libs=()
queue=("$QEMU_BIN")
while [ ${#queue[@]} -gt 0 ]; do
	f=${queue[0]}
	queue=("${queue[@]:1}")
	needed=$("${CROSS_COMPILE}readelf" -d "$root/$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
	for n in $needed; do
		[ -z "${seen[$n]:-}" ] || continue
		seen[$n]=1
		p=$(find_lib "$n" "$f")
		libs+=("$p")
		queue+=("$p")
	done
done

memcheck=$dir/memcheck
if [ ! -x "$memcheck" ] || [ "$TOP/guest/memcheck.c" -nt "$memcheck" ]; then
	"${CROSS_COMPILE}gcc" -static -O2 -Wall -Wextra -Werror -o "$memcheck" "$TOP/guest/memcheck.c"
fi
"$TOP/scripts/busybox.sh"
gen=$OUT/tools/gen_init_cpio
[ -x "$gen" ] || die "no $gen: run scripts/initramfs.sh first"

# The inner guest's initramfs.
cat >"$dir/inner.list" <<EOF
dir /dev 0755 0 0
nod /dev/console 0600 0 0 c 5 1
dir /bin 0755 0 0
dir /proc 0755 0 0
file /bin/busybox $OUT/tools/busybox 0755 0 0
slink /bin/sh busybox 0777 0 0
file /bin/memcheck $memcheck 0755 0 0
file /init $TOP/guest/vmm-init 0755 0 0
EOF
"$gen" "$dir/inner.list" | gzip -1 >"$dir/inner.cpio.gz"

# The archive for the outer guest: directories first, then the files.
list=$dir/vmm-$tree.list
{
	for p in "$QEMU_BIN" "${interp#/}" "${libs[@]}"; do
		d=${p%/*}
		while [ "$d" != "${d%/*}" ]; do
			echo "$d"
			d=${d%/*}
		done
		echo "$d"
	done | sort -u | sed 's|.*|dir /& 0755 0 0|'
	echo "file /$QEMU_BIN $root/$QEMU_BIN 0755 0 0"
	echo "file $interp $interp_file 0755 0 0"
	for p in "${libs[@]}"; do
		echo "file /$p $(readlink -f "$root/$p") 0755 0 0"
	done
	echo "dir /vmm 0755 0 0"
	echo "file /vmm/Image $img 0644 0 0"
	echo "file /vmm/inner.cpio.gz $dir/inner.cpio.gz 0644 0 0"
	echo "file /bin/migrate $TOP/guest/migrate 0755 0 0"
} >"$list"
mkdir -p "$OUT/initramfs"
out=$OUT/initramfs/vmm-$tree.cpio.gz
"$gen" "$list" | gzip -1 >"$out"
echo "vmm: $out ($(du -h "$out" | cut -f1); QEMU $QEMU_VERSION, ${#libs[@]} libraries, inner kernel $img)"
