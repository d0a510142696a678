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
# A commit is linked as far as vmlinux.o: the kernel's final link can fail
# only on a symbol vmlinux.o leaves undefined, so a commit whose vmlinux.o
# needs a symbol the base's did not is linked into an Image too, and so is
# the last commit. A commit that changes nothing under the kernel build
# (only tools/ or Documentation/) builds what its parent built: it is not
# built again. Ends with branch series checked out again.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need git "${CROSS_COMPILE}gcc" "${CROSS_COMPILE}nm"

"$TOP/scripts/sparse.sh"
cd "$KTREE" || exit
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
	die "out/linux has uncommitted changes: commit them first"
git rev-parse -q --verify refs/heads/series >/dev/null || die "no branch series: run 'make tree'"
trap 'git checkout -q series' EXIT

obj=$OUT/build/series-min
log=$OUT/logs/bisect
mkdir -p "$log"

# build RAW [TARGET]: build TARGET of the minimal kernel (default
# vmlinux_o, which makes vmlinux.o) at the commit checked out, with W=1 and
# sparse, into RAW; print its warnings (compiler, sparse and W=1's
# kernel-doc), line numbers dropped. Every object of arch/riscv/kvm/
# compiled must have been checked.
build() {
	local raw=$1 target=${2:-vmlinux_o} cc checked
	KCHECK=$OUT/tools/sparse/sparse "$TOP/scripts/kbuild.sh" series min "$target" >"$raw" 2>&1 || return 1
	cc=$(grep -c '^  CC \{6\}arch/riscv/kvm/.*\.o$' "$raw" || true)
	checked=$(grep -c '^  CHECK   arch/riscv/kvm/' "$raw" || true)
	[ "$checked" -ge "$cc" ] || {
		echo "sparse checked $checked of the $cc objects compiled (see $raw)" >&2
		return 1
	}
	{ grep -E ': (warning|error): |^Warning: ' "$raw" || true; } | sed -E 's/:[0-9]+(:[0-9]+)?(:? )/\2/' | sort -u
}

# undefined: the symbols vmlinux.o leaves to the final link.
undefined() { "${CROSS_COMPILE}nm" -u "$obj/vmlinux.o" | awk '{ print $2 }' | sort -u; }

git checkout -q --detach base
find "$obj/arch/riscv/kvm" -name '*.o' -delete 2>/dev/null || true
build "$log/base.raw" >"$log/base.warn" || die "base: W=1/sparse build failed, see $log/base.raw"
grep -q '^  CHECK   arch/riscv/kvm/' "$log/base.raw" || die "base: sparse checked nothing in arch/riscv/kvm, see $log/base.raw"
undefined >"$log/base.undef"
last=$(git rev-parse series)
fails=0
for c in $(git rev-list --reverse base..series); do
	git checkout -q --detach "$c"
	name="$(git log -1 --format='%h %s' "$c")"
	if [ "$c" != "$last" ] && ! git diff --name-only "$c^" "$c" | grep -qvE '^(tools|Documentation)/'; then
		echo "PASS bisect '$name' changes only tools/ or Documentation/: the kernel is its parent's"
		continue
	fi
	target=vmlinux_o
	[ "$c" != "$last" ] || target=Image
	if ! build "$log/$c.raw" $target >"$log/$c.warn"; then
		echo "FAIL bisect/build '$name' does not build with W=1/sparse: $(grep -m3 -E 'error|Error|sparse checked' "$log/$c.raw" | tr '\n' ' ')"
		fails=$((fails + 1))
		continue
	fi
	how="builds"
	if [ "$target" = vmlinux_o ] && [ -n "$(undefined | comm -13 "$log/base.undef" -)" ]; then
		if ! build "$log/$c.link.raw" Image >/dev/null; then
			echo "FAIL bisect/link '$name' does not link: $(grep -m3 -E 'undefined reference|error|Error' "$log/$c.link.raw" | tr '\n' ' ')"
			fails=$((fails + 1))
			continue
		fi
		how="builds and links (vmlinux.o needs a symbol the base's did not)"
	fi
	new=$(comm -13 "$log/base.warn" "$log/$c.warn")
	if [ -n "$new" ]; then
		echo "FAIL bisect/warnings '$name' adds warnings:"
		printf '%s\n' "$new" | sed 's/^/    /'
		fails=$((fails + 1))
	else
		echo "PASS bisect '$name' $how, no new W=1/sparse warning"
	fi
done
[ "$fails" -eq 0 ]
