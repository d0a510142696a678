#!/bin/bash
# Usage: prefault.sh
# Build what the pre-fault check boots: the series with the test-only
# bench/prefault.patch (KVM_PRE_FAULT_MEMORY wired for riscv) as
# out/bench/prefault-min.Image, and that patch's pre_fault_memory_test as
# the extra archive out/initramfs/prefault-addon.cpio.gz for the series'
# initramfs. Needs scripts/selftests.sh series and initramfs.sh series.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need rsync git "${CROSS_COMPILE}gcc" gzip

patch=$TOP/bench/prefault.patch
st=$OUT/st-src/series
[ -d "$st/tools" ] || die "no selftest sources in $st: run scripts/selftests.sh series"
[ -x "$OUT/tools/gen_init_cpio" ] || die "no gen_init_cpio: run scripts/initramfs.sh series"

"$TOP/scripts/benchkernel.sh" prefault min

# The selftest: the series' copy of tools/ with the patch's tools/ part.
copy=$OUT/st-src/prefault
dst=$OUT/selftests/prefault
mkdir -p "$copy" "$dst"
rsync -a --delete "$st/" "$copy/"
# GIT_CEILING_DIRECTORIES: the copy is a plain folder under this repository.
GIT_CEILING_DIRECTORIES=$OUT git -C "$copy" apply --include='tools/*' "$patch" ||
	die "bench/prefault.patch: its tools/ part does not apply to the series"
export LDFLAGS=-static
export CFLAGS=-D__GCC_ATOMIC_BOOL_LOCK_FREE=2
make -C "$copy/tools/testing/selftests/kvm" -j"$JOBS" -s \
	ARCH=riscv CROSS_COMPILE="$CROSS_COMPILE" OUTPUT="$dst" \
	KHDR_INCLUDES="-isystem $OUT/build/series-min/usr/include" \
	"$dst/pre_fault_memory_test" >"$dst/build.log" 2>&1 ||
	die "pre_fault_memory_test did not build, see $dst/build.log"

list=$OUT/initramfs/prefault-addon.list
echo "file /kvm/pre_fault_memory_test $dst/pre_fault_memory_test 0755 0 0" >"$list"
"$OUT/tools/gen_init_cpio" "$list" | gzip -1 >"$OUT/initramfs/prefault-addon.cpio.gz"
echo "prefault: $OUT/bench/prefault-min.Image, $OUT/initramfs/prefault-addon.cpio.gz"
