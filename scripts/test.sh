#!/bin/bash
# The test command: every check of the rig and the series. Each stage
# prints PASS/FAIL lines; a stage that stops without a verdict counts as
# one failure. Ends with "N passed, N failed".
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

mkdir -p "$OUT/logs"
summary=$OUT/logs/test-summary.txt
: >"$summary"
t0=$(date +%s)

# run_stage NAME CMD...: run CMD, echo its PASS/FAIL/SKIP lines, count.
run_stage() {
	local name=$1 out=$OUT/logs/stage-$1.log rc=0
	shift
	stage "$name"
	"$@" >"$out" 2>&1 || rc=$?
	grep -E '^(PASS|FAIL|SKIP) ' "$out" | tee -a "$summary" || true
	if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$out"; then
		echo "FAIL $name: $(grep -m1 '^ERROR' "$out" || tail -n 3 "$out" | tr '\n' ' ') (log: $out)" |
			tee -a "$summary"
	elif [ "$rc" -eq 0 ] && ! grep -qE '^(PASS|FAIL) ' "$out"; then
		echo "PASS $name" | tee -a "$summary"
	fi
	return 0
}

step() { "$@" >/dev/null; }

run_stage shellcheck shellcheck -x "$TOP"/scripts/*.sh "$TOP/.ci/run" "$TOP/guest/init" "$TOP/guest/lockstat"
run_stage tree step "$TOP/scripts/tree.sh"
run_stage checkpatch "$TOP/scripts/checkpatch.sh"
run_stage docs "$TOP/scripts/check-docs.sh"
run_stage mail "$TOP/scripts/check-mail.sh"
run_stage build-min step "$TOP/scripts/kbuild.sh" series min
run_stage bisect "$TOP/scripts/bisect.sh"
run_stage selftests step "$TOP/scripts/selftests.sh" series
run_stage initramfs step "$TOP/scripts/initramfs.sh" series
# The harness prints KTAP: one PASS/FAIL line a test.
harness() {
	make -s -C "$TOP/harness" KSRC="$KTREE" BUILD="$OUT/harness" test 2>&1 |
		sed -E 's/^ok [0-9]+ /PASS harness\//; s/^not ok [0-9]+ /FAIL harness\//'
}
run_stage harness harness
# The harness's own check: a write-protect that never reports a flush,
# injected into a copy of gstage.c, must make its property tests fail.
run_stage harness-broken make -s -C "$TOP/harness" KSRC="$KTREE" BUILD="$OUT/harness" broken
run_stage matrix-min-smp2 "$TOP/scripts/boot.sh" series min "$TOP/guest/plans/matrix.plan" 2
# rseq_test (100,000 forced migrations, no G-stage work) takes 1.5 min with
# -smp 2 and over 6 min with -smp 4 or lockdep: it runs with -smp 2 only.
KCMDLINE=skip=rseq_test run_stage matrix-min-smp4 "$TOP/scripts/boot.sh" series min "$TOP/guest/plans/matrix.plan" 4
run_stage leak-min "$TOP/scripts/boot.sh" series min "$TOP/guest/plans/leak.plan" 2
run_stage build-mod step "$TOP/scripts/kbuild.sh" series mod
run_stage modcycle "$TOP/scripts/boot.sh" series mod "$TOP/guest/plans/modcycle.plan" 2
run_stage build-debug step "$TOP/scripts/kbuild.sh" series debug
KCMDLINE=skip=rseq_test run_stage matrix-debug-smp2 "$TOP/scripts/boot.sh" series debug "$TOP/guest/plans/matrix.plan" 2
# Lockless aging under forced MGLRU aging, with lockdep and PROVE_RCU.
run_stage stress-debug "$TOP/scripts/boot.sh" series debug "$TOP/guest/plans/stress.plan" 2

p=$(grep -c '^PASS ' "$summary" || true)
f=$(grep -c '^FAIL ' "$summary" || true)
s=$(grep -c '^SKIP ' "$summary" || true)
echo
echo "test: $(($(date +%s) - t0)) s; failures:"
grep '^FAIL ' "$summary" || echo "  none"
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
