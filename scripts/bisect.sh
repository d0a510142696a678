#!/bin/bash
# Per-patch checks: check out every commit of base..series in out/linux in
# turn and (1) build the minimal kernel incrementally in
# out/build/series-min, (2) build arch/riscv/kvm/ with W=1 and sparse
# (C=2, sparse from out/tools) in out/build/series-w1. Warnings are
# compared with the base's (line numbers dropped): a new one fails.
# Ends with branch series checked out again.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need git "${CROSS_COMPILE}gcc"

"$TOP/scripts/sparse.sh"
cd "$KTREE" || exit
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
	die "out/linux has uncommitted changes: commit them first"
git rev-parse -q --verify refs/heads/series >/dev/null || die "no branch series: run 'make tree'"
trap 'git checkout -q series' EXIT

w1=$OUT/build/series-w1
log=$OUT/logs/bisect
mkdir -p "$w1" "$log"
if [ ! -f "$w1/.config" ]; then
	"$TOP/scripts/kbuild.sh" series min >/dev/null # makes series-min/.config
	cp "$OUT/build/series-min/.config" "$w1/.config"
	make -s O="$w1" olddefconfig
fi

# W=1 + sparse over arch/riscv/kvm/: prints the normalised warnings.
check_kvm() {
	local raw=$1
	make O="$w1" CC="$KCC" -j"$JOBS" W=1 C=2 CHECK="$OUT/tools/sparse/sparse" \
		arch/riscv/kvm/ >"$raw" 2>&1 || return 1
	grep -q '^  CHECK   .*arch/riscv/kvm/' "$raw" || {
		echo "sparse did not run (no CHECK lines in $raw)" >&2
		return 1
	}
	{ grep -E ': (warning|error): ' "$raw" || true; } | sed -E 's/:[0-9]+:([0-9]+:)? /: /' | sort
}

git checkout -q --detach base
check_kvm "$log/base.raw" >"$log/base.warn" || die "base: W=1/sparse build of arch/riscv/kvm failed, see $log/base.raw"
fails=0
for c in $(git rev-list --reverse base..series); do
	git checkout -q --detach "$c"
	name="$(git log -1 --format='%h %s' "$c")"
	if ! "$TOP/scripts/kbuild.sh" series min >"$log/$c.build" 2>&1; then
		echo "FAIL bisect/build '$name' does not build: $(grep -m3 -E 'error|Error' "$log/$c.build" | tr '\n' ' ')"
		fails=$((fails + 1))
		continue
	fi
	if ! check_kvm "$log/$c.raw" >"$log/$c.warn"; then
		echo "FAIL bisect/w1-sparse '$name': see $log/$c.raw"
		fails=$((fails + 1))
		continue
	fi
	new=$(comm -13 "$log/base.warn" "$log/$c.warn")
	if [ -n "$new" ]; then
		echo "FAIL bisect/warnings '$name' adds warnings:"
		printf '%s\n' "$new" | sed 's/^/    /'
		fails=$((fails + 1))
	else
		echo "PASS bisect '$name' builds, no new W=1/sparse warning"
	fi
done
[ "$fails" -eq 0 ]
