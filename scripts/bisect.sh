#!/bin/bash
# Per-patch checks: check out every commit of base..series in out/linux in
# turn and build the minimal kernel incrementally in out/build/series-min
# with W=1 and sparse (sparse from out/tools, C=1: every file a commit
# recompiles is checked; kbuild.sh builds with W=1 always, so nothing is
# compiled twice). At the base every object of arch/riscv/kvm/ is rebuilt
# and checked; after that only what a commit changes is recompiled, which
# is all a commit can add a warning to. A commit's warnings are compared
# with the base's (line numbers dropped; the base recompiles every file
# the series touches): a new one fails.
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

obj=$OUT/build/series-min
log=$OUT/logs/bisect
mkdir -p "$log"

# build RAW: build the minimal kernel at the commit checked out, with W=1
# and sparse, into RAW; print its warnings (compiler, sparse and W=1's
# kernel-doc), line numbers dropped.
# Every object of arch/riscv/kvm/ compiled must have been checked.
build() {
	local raw=$1 cc checked
	KCHECK=$OUT/tools/sparse/sparse "$TOP/scripts/kbuild.sh" series min >"$raw" 2>&1 || return 1
	cc=$(grep -c '^  CC \{6\}arch/riscv/kvm/.*\.o$' "$raw" || true)
	checked=$(grep -c '^  CHECK   arch/riscv/kvm/' "$raw" || true)
	[ "$checked" -ge "$cc" ] || {
		echo "sparse checked $checked of the $cc objects compiled (see $raw)" >&2
		return 1
	}
	{ grep -E ': (warning|error): |^Warning: ' "$raw" || true; } | sed -E 's/:[0-9]+(:[0-9]+)?(:? )/\2/' | sort -u
}

git checkout -q --detach base
find "$obj/arch/riscv/kvm" -name '*.o' -delete 2>/dev/null || true
build "$log/base.raw" >"$log/base.warn" || die "base: W=1/sparse build failed, see $log/base.raw"
grep -q '^  CHECK   arch/riscv/kvm/' "$log/base.raw" || die "base: sparse checked nothing in arch/riscv/kvm, see $log/base.raw"
fails=0
for c in $(git rev-list --reverse base..series); do
	git checkout -q --detach "$c"
	name="$(git log -1 --format='%h %s' "$c")"
	if ! build "$log/$c.raw" >"$log/$c.warn"; then
		echo "FAIL bisect/build '$name' does not build with W=1/sparse: $(grep -m3 -E 'error|Error|sparse checked' "$log/$c.raw" | tr '\n' ' ')"
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
