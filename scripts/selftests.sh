#!/bin/bash
# Usage: selftests.sh TREE
# Build every riscv KVM selftest of kernel tree TREE (series or base) as
# static binaries into out/selftests/TREE, from a copy of the tree's tools/
# (the kernel tree itself is never written to) with the test-only fixes of
# guest/selftest-fixes/, against the UAPI headers of out/build/TREE-min.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need rsync patch "${CROSS_COMPILE}gcc"

tree=$1
src=$(tree_src "$tree")
[ -f "$src/Makefile" ] || die "no kernel tree at $src"
obj=$OUT/build/$tree-min
[ -f "$obj/.config" ] || die "no kernel build at $obj: run scripts/kbuild.sh $tree min"
make -C "$src" O="$obj" -s headers >/dev/null

copy=$OUT/st-src/$tree
dst=$OUT/selftests/$tree
mkdir -p "$copy" "$dst"
rsync -a --delete "$src/tools/" "$copy/tools/"
rsync -a --delete "$src/scripts/" "$copy/scripts/"
rsync -a "$src/Makefile" "$copy/"
# Upstream selftest races that the rig hits, fixed in the copy only (each
# patch says why): guest/selftest-fixes/.
for p in "$TOP"/guest/selftest-fixes/*.patch; do
	patch -s -d "$copy" -p1 <"$p" || die "$p does not apply to $tree's selftests"
done
# Makefile.kvm appends to these: they must come from the environment.
export LDFLAGS=-static
export CFLAGS=-D__GCC_ATOMIC_BOOL_LOCK_FREE=2
make -C "$copy/tools/testing/selftests/kvm" -j"$JOBS" -s \
	ARCH=riscv CROSS_COMPILE="$CROSS_COMPILE" OUTPUT="$dst" \
	KHDR_INCLUDES="-isystem $obj/usr/include" >"$dst/build.log" 2>&1 ||
	die "selftests build failed for $tree, see $dst/build.log"
n=$(find "$dst" -maxdepth 2 -type f -perm -u+x | wc -l)
[ "$n" -gt 0 ] || die "no selftest binaries in $dst"
echo "selftests: $n binaries in $dst"
