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
patches=("$TOP"/patches/*/[0-9][0-9][0-9][0-9]-*.patch)
fails=0 n=0
for p in "${patches[@]}"; do
	case $p in
	*/0000-cover-letter.patch) continue ;;
	esac
	n=$((n + 1))
	out=$(cd "$KTREE" && scripts/checkpatch.pl --strict --no-color \
		--ignore "$CHECKPATCH_IGNORE" "$p" 2>&1) || true
	total=$(echo "$out" | grep -E '^total: ' || echo "total: checkpatch did not finish")
	if echo "$total" | grep -q '^total: 0 errors, 0 warnings, 0 checks, '; then
		echo "PASS checkpatch/${p#"$TOP"/patches/}"
	else
		echo "FAIL checkpatch/${p#"$TOP"/patches/} $total"
		echo "$out" | grep -E '^(ERROR|WARNING|CHECK):' | sed 's/^/    /'
		fails=$((fails + 1))
	fi
done
[ "$n" -gt 0 ] || echo "checkpatch: no patches in patches/"

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
