#!/bin/bash
# Run the kernel's checkpatch.pl --strict on every patch of every posting
# in patches/:
# each must report 0 errors, 0 warnings and 0 checks. Instead of
# checkpatch's "does MAINTAINERS need updating?" prompt, every file that
# the series adds or moves must be in a MAINTAINERS section (THE REST
# does not count), checked with get_maintainer.pl.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need perl

[ -x "$KTREE/scripts/checkpatch.pl" ] || die "no kernel tree at $KTREE: run 'make tree'"
shopt -s nullglob
patches=()
for p in "$TOP"/patches/*/[0-9][0-9][0-9][0-9]-*.patch; do
	[[ $p == */0000-cover-letter.patch ]] || patches+=("$p")
done
n=${#patches[@]}
[ "$n" -gt 0 ] || echo "checkpatch: no patches in patches/"

# check PATCH OUT: checkpatch's report on PATCH into OUT; $JOBS at a time.
check() {
	(cd "$KTREE" && scripts/checkpatch.pl --strict --no-color --ignore "$CHECKPATCH_IGNORE" "$1") >"$2" 2>&1 || true
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in "${!patches[@]}"; do
	[ "$(jobs -rp | wc -l)" -lt "$JOBS" ] || wait -n
	check "${patches[$i]}" "$tmp/$i" &
done
wait

fails=0
for i in "${!patches[@]}"; do
	p=${patches[$i]}
	total=$(grep -E '^total: ' "$tmp/$i" || echo "total: checkpatch did not finish")
	if echo "$total" | grep -q '^total: 0 errors, 0 warnings, 0 checks, '; then
		echo "PASS checkpatch/${p#"$TOP"/patches/}"
	else
		echo "FAIL checkpatch/${p#"$TOP"/patches/} $total"
		grep -E '^(ERROR|WARNING|CHECK):' "$tmp/$i" | sed 's/^/    /'
		fails=$((fails + 1))
	fi
done

for f in $(git -C "$KTREE" diff --name-only --diff-filter=AR base series); do
	sections=$(cd "$KTREE" && scripts/get_maintainer.pl --no-git --no-git-fallback \
		--sections -f "$f" | grep -E '^[A-Z0-9][^:]*$' | grep -vx 'THE REST' | paste -sd, -)
	if [ -n "$sections" ]; then
		echo "PASS maintainers/$f ($sections)"
	else
		echo "FAIL maintainers/$f is in no MAINTAINERS section"
		fails=$((fails + 1))
	fi
done
[ "$fails" -eq 0 ]
