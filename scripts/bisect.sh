#!/bin/bash
# Per-patch checks: check out every commit of base..series in out/linux in
# turn and (1) build the minimal kernel incrementally in
# out/build/series-min, (2) build arch/riscv/kvm/ with W=1 and sparse
# (sparse from out/tools) incrementally in out/build/series-w1. At the
# base every object of arch/riscv/kvm/ is rebuilt and checked; after that
# only what a commit changes is recompiled and checked (C=1), which is all
# a commit can add a warning to. Warnings are compared with the base's
# (line numbers dropped): a new one fails.
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

# W=1 + sparse over what changed in arch/riscv/kvm/: prints the
# normalised warnings. Every object compiled must have been checked.
check_kvm() {
	local raw=$1 cc checked
	make O="$w1" CC="$KCC" -j"$JOBS" W=1 C=1 CHECK="$OUT/tools/sparse/sparse" \
		arch/riscv/kvm/ >"$raw" 2>&1 || return 1
	cc=$(grep -c '^  CC \{6\}arch/riscv/kvm/.*\.o$' "$raw" || true)
	checked=$(grep -c '^  CHECK   arch/riscv/kvm/' "$raw" || true)
	[ "$checked" -ge "$cc" ] || {
		echo "sparse checked $checked of the $cc objects compiled (see $raw)" >&2
		return 1
	}
	{ grep -E ': (warning|error): ' "$raw" || true; } | sed -E 's/:[0-9]+:([0-9]+:)? /: /' | sort
}

git checkout -q --detach base
find "$w1/arch/riscv/kvm" -name '*.o' -delete 2>/dev/null || true
check_kvm "$log/base.raw" >"$log/base.warn" || die "base: W=1/sparse build of arch/riscv/kvm failed, see $log/base.raw"
grep -q '^  CHECK   arch/riscv/kvm/' "$log/base.raw" || die "base: sparse checked nothing in arch/riscv/kvm, see $log/base.raw"
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
