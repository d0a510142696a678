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

run_stage shellcheck shellcheck -x "$TOP"/scripts/*.sh "$TOP/.ci/run" "$TOP/guest/init" "$TOP/guest/lockstat" "$TOP/guest/kvmstat" \
	"$TOP/guest/migrate" "$TOP/guest/progress" "$TOP/guest/vmm-init"
run_stage tree step "$TOP/scripts/tree.sh"
run_stage checkpatch "$TOP/scripts/checkpatch.sh"
run_stage docs "$TOP/scripts/check-docs.sh"
run_stage mail "$TOP/scripts/check-mail.sh"
run_stage b4 "$TOP/scripts/b4-apply.sh"
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
# The selftest matrix on both CPU models (see model_cpu in lib.sh): QEMU's
# default rv64 (Svadu, Svvptc) and the RVA23 profile (Svade: Accessed and
# Dirty faults; no Svvptc). rseq_test (100,000 forced migrations, no
# G-stage work) took 84 s with -smp 2 and over 6 min with -smp 4 or
# lockdep: the test command skips it (boot.sh with matrix.plan runs it).
# memslot_perf_test (memslot changes, the same code on both models; 61 s
# with -smp 4) runs on the default model only. D-bit logging (the RFC
# posting, off by default) is on where it applies: the default model.
KCMDLINE="skip=rseq_test kvm.dirty_bit_logging=1" run_stage matrix-min-smp2-default "$TOP/scripts/boot.sh" series min "$TOP/guest/plans/matrix.plan" 2 default
KCMDLINE=skip=rseq_test,memslot_perf_test run_stage matrix-min-smp4-rva23 "$TOP/scripts/boot.sh" series min "$TOP/guest/plans/matrix.plan" 4 rva23
run_stage leak-min "$TOP/scripts/boot.sh" series min "$TOP/guest/plans/leak.plan" 2
# D-bit logging (the RFC posting) on where it applies, and by default
# (off): the same plan under another name (the run's id).
KCMDLINE="kvm.dirty_bit_logging=1 dbit=Y" run_stage dbit-min-default "$TOP/scripts/boot.sh" series min "$TOP/guest/plans/dbit.plan" 2 default
mkdir -p "$OUT/plans"
cp "$TOP/guest/plans/dbit.plan" "$OUT/plans/dbit-off.plan"
KCMDLINE=dbit=N run_stage dbit-off-min-default "$TOP/scripts/boot.sh" series min "$OUT/plans/dbit-off.plan" 2 default
KCMDLINE="kvm.dirty_bit_logging=1 dbit=Y" run_stage dbit-min-rva23 "$TOP/scripts/boot.sh" series min "$TOP/guest/plans/dbit.plan" 2 rva23
# QEMU/KVM in the test guest live-migrates a Linux guest that checks its
# own memory (guest/migrate), with the dirty bitmap and the dirty ring.
run_stage vmm step "$TOP/scripts/vmm.sh" series
ADDON_RD=$OUT/initramfs/vmm-series.cpio.gz KCMDLINE="only=migrate_bitmap,migrate_ring,migrate_cancel,migrate_idle kvm.dirty_bit_logging=1" \
	run_stage migrate-min "$TOP/scripts/boot.sh" series min "$TOP/guest/plans/migrate.plan" 2
ADDON_RD=$OUT/initramfs/vmm-series.cpio.gz KCMDLINE=only=migrate_idle \
	run_stage migrate-min-rva23 "$TOP/scripts/boot.sh" series min "$TOP/guest/plans/migrate.plan" 2 rva23
# KVM_PRE_FAULT_MEMORY, which riscv_kvm_queue has: its loop needs every
# successful fault to fill out_map. The series with the test-only
# bench/prefault.patch runs pre_fault_memory_test on both models (built
# in out/build/series-min, which the next build of the series rebuilds).
run_stage prefault-build step "$TOP/scripts/prefault.sh"
for m in default rva23; do
	KIMAGE=$OUT/bench/prefault-min.Image INITRD_TREE=series ADDON_RD=$OUT/initramfs/prefault-addon.cpio.gz \
		run_stage "prefault-min-$m" "$TOP/scripts/boot.sh" series min "$TOP/guest/plans/prefault.plan" 2 "$m"
done
# The debug kernel: lockdep, PROVE_RCU, DEBUG_VM, and KVM=m. KASAN is
# not in the test command: its kernel took longer to build than the
# rest of the run and ran the selftests 5-10 times slower, which took CI
# past its 90 minutes on a loaded host. The harness runs gstage.c under
# ASan, TSan and UBSan here; before posting, the same stages run on
# VARIANT=debug+kasan (README.md).
run_stage build-debug step "$TOP/scripts/kbuild.sh" series debug
KCMDLINE=kvm.dirty_bit_logging=1 run_stage modcycle "$TOP/scripts/boot.sh" series debug "$TOP/guest/plans/modcycle.plan" 2
# The debug matrix runs only the selftests that drive the G-stage
# (faults, dirty logging and splitting, Accessed-bit faults under
# page_idle aging, hugetlb, memslot changes) on the RVA23 model; the
# minimal kernel runs every one on both models, and the stress lines
# below run dirty_log_perf_test under aging with lockdep.
dbg_only=dirty_log_page_splitting_test,dirty_log_zero_page_test,dirty_log_idle_aging,dirty_log_thp_test,dirty_log_reclaim_test
dbg_only+=,dirty_log_hugetlb_64kb,demand_paging_hugetlb_64kb,kvm_page_table_test
dbg_only+=,memslot_modification_stress_test
KCMDLINE=only=$dbg_only run_stage matrix-debug-smp2-rva23 "$TOP/scripts/boot.sh" series debug "$TOP/guest/plans/matrix.plan" 2 rva23
# Lockless aging under MGLRU and page_idle aging, with lockdep and
# PROVE_RCU, on both models (D-bit logging on where it applies).
KCMDLINE=kvm.dirty_bit_logging=1 run_stage stress-debug-default "$TOP/scripts/boot.sh" series debug "$TOP/guest/plans/stress.plan" 2 default
# Without Svadu MGLRU does not walk page tables: only the page_idle lines
# age KVM's memory there. dirty_log_idle_aging of the debug matrix
# already dirties memory under page_idle aging on this model, and
# idle_vm_cycles (111 s on this model) runs on the default one: the zaps
# run here, on a G-stage of another depth (Sv39x4).
KCMDLINE=only=zap_idle_delete,zap_idle_munmap,zap_idle_dirtylog run_stage stress-debug-rva23 "$TOP/scripts/boot.sh" series debug "$TOP/guest/plans/stress.plan" 2 rva23

p=$(grep -c '^PASS ' "$summary" || true)
f=$(grep -c '^FAIL ' "$summary" || true)
s=$(grep -c '^SKIP ' "$summary" || true)
echo
echo "test: $(($(date +%s) - t0)) s; failures:"
grep '^FAIL ' "$summary" || echo "  none"
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
