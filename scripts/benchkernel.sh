#!/bin/bash
# Usage: benchkernel.sh NAME VARIANT
# Build the benchmark kernel NAME with config VARIANT and copy its image to
# out/bench/NAME-VARIANT.Image (its commit to NAME-VARIANT.commit). NAME:
#   base, series  the branches of out/linux
#   pN            the series' first N patches (base + patches 1..N)
#   range         the base with bench/range-walk.patch (bench only): the
#                 dirty log cleared by kvm_riscv_gstage_wp_range() again,
#                 as before the masked write-protect seed
#   v1            the base with v1 of the series (15 patches), as this
#                 repository held it at commit $V1_REV
#   prefault      the series with bench/prefault.patch (test only):
#                 KVM_PRE_FAULT_MEMORY wired for pre_fault_memory_test
# Every kernel is built in out/linux and out/build/series-VARIANT, one
# commit after the other, so each build after the first is incremental;
# branch series is checked out again at the end.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need git

name=$1 variant=$2
V1_REV=96e8feb06da2938b211960569dc12d94bb0c08fe
cd "$KTREE" || exit
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
	die "out/linux has uncommitted changes: commit them first"
trap 'git checkout -q series' EXIT
case $name in
base | series) rev=$name ;;
p[1-9] | p[1-9][0-9])
	rev=$(git rev-list --reverse base..series | sed -n "${name#p}p")
	[ -n "$rev" ] || die "bench kernel $name: the series has fewer than ${name#p} patches"
	;;
range | v1 | prefault)
	onto=base
	if [ "$name" = range ]; then
		mbox=("$TOP/bench/range-walk.patch")
	elif [ "$name" = prefault ]; then
		mbox=("$TOP/bench/$name.patch")
		onto=series
	else
		v1=$OUT/bench/v1-patches
		rm -rf "$v1"
		mkdir -p "$v1"
		git -C "$TOP" archive "$V1_REV" patches | tar -x -C "$v1" ||
			die "bench kernel v1: commit $V1_REV is not in this clone of the repository (a shallow clone?)"
		rm "$v1"/patches/0000-cover-letter.patch
		mbox=("$v1"/patches/*.patch)
	fi
	git checkout -q --detach "$onto"
	GIT_COMMITTER_NAME=$PROJ_NAME GIT_COMMITTER_EMAIL=$PROJ_EMAIL \
		git am -q --committer-date-is-author-date "${mbox[@]}" ||
		{
			git am --abort
			die "bench kernel $name: its patches do not apply to $onto"
		}
	rev=$(git rev-parse HEAD)
	;;
*) die "unknown bench kernel '$name' (base, series, pN, range, v1 or prefault)" ;;
esac
git checkout -q --detach "$rev"
stage "building bench kernel $name ($variant): $(git log -1 --format='%h %s')"
"$TOP/scripts/kbuild.sh" series "$variant"
mkdir -p "$OUT/bench"
cp "$OUT/build/series-$variant/arch/riscv/boot/Image" "$OUT/bench/$name-$variant.Image"
git log -1 --format='%h %s' >"$OUT/bench/$name-$variant.commit"
