#!/bin/bash
# Usage: benchkernel.sh NAME VARIANT
# Build the benchmark kernel NAME with config VARIANT and copy its image to
# out/bench/NAME-VARIANT.Image (its commit to NAME-VARIANT.commit). NAME:
#   base, series  the branches of out/linux
#   pN            the series' first N patches (base + patches 1..N)
#   range         the base with bench/range-walk.patch (bench only): the
#                 dirty log cleared by kvm_riscv_gstage_wp_range() again,
#                 as before the masked write-protect seed
# Every kernel is built in out/linux and out/build/series-VARIANT, one
# commit after the other, so each build after the first is incremental;
# branch series is checked out again at the end.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need git

name=$1 variant=$2
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
range)
	git checkout -q --detach base
	GIT_COMMITTER_NAME=$PROJ_NAME GIT_COMMITTER_EMAIL=$PROJ_EMAIL \
		git am -q --committer-date-is-author-date "$TOP/bench/range-walk.patch" ||
		{
			git am --abort
			die "bench kernel range: bench/range-walk.patch does not apply to the base"
		}
	rev=$(git rev-parse HEAD)
	;;
*) die "unknown bench kernel '$name' (base, series, pN or range)" ;;
esac
git checkout -q --detach "$rev"
stage "building bench kernel $name ($variant): $(git log -1 --format='%h %s')"
"$TOP/scripts/kbuild.sh" series "$variant"
mkdir -p "$OUT/bench"
cp "$OUT/build/series-$variant/arch/riscv/boot/Image" "$OUT/bench/$name-$variant.Image"
git log -1 --format='%h %s' >"$OUT/bench/$name-$variant.commit"
