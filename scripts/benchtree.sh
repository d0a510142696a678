#!/bin/bash
# Usage: benchtree.sh NAME
# Make the bench-only kernel tree out/linux-NAME, a worktree of out/linux:
#   pN     the series' first N patches (base + patches 1..N)
#   range  the base with bench/range-walk.patch: dirty-log clearing by
#          kvm_riscv_gstage_wp_range() again, as before the masked-WP seed
# These trees are never part of patches/.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need git

name=$1
patch=
case $name in
p[1-9])
	rev=$(git -C "$KTREE" rev-list --reverse base..series | sed -n "${name#p}p")
	[ -n "$rev" ] || die "bench tree $name: the series has fewer than ${name#p} patches"
	;;
range)
	rev=base
	patch=$TOP/bench/range-walk.patch
	;;
*) die "unknown bench tree '$name' (pN or range)" ;;
esac

wt=$OUT/linux-$name
if [ -d "$wt" ]; then
	git -C "$wt" checkout -q --detach "$rev"
else
	git -C "$KTREE" worktree add -q --detach "$wt" "$rev"
fi
if [ -n "$patch" ]; then
	GIT_COMMITTER_NAME=$PROJ_NAME GIT_COMMITTER_EMAIL=$PROJ_EMAIL \
		git -C "$wt" am -q --committer-date-is-author-date "$patch" ||
		die "bench tree $name: $patch does not apply to the base"
fi
echo "bench tree $name: $(git -C "$wt" log -1 --format='%h %s')"
