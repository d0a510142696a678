#!/bin/bash
# The main job: base + series, build the minimal kernel, boot it under
# QEMU with the CPU model MODEL (default: default, rv64,h=true; or rva23)
# and run dirty_log_perf_test (DLPT_ARGS, default "-v 2 -b 256M -i 3") on
# SMP harts (default 2), then print its figures.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

args=${DLPT_ARGS:--v 2 -b 256M -i 3}
smp=${SMP:-2}
model=${MODEL:-default}
tree=${TREE:-series}
stage "tree"
[ "$tree" = base ] || "$TOP/scripts/tree.sh"
[ "$tree" != base ] || "$TOP/scripts/base.sh"
stage "kernel ($tree, minimal config)"
"$TOP/scripts/kbuild.sh" "$tree" min
stage "selftests"
"$TOP/scripts/selftests.sh" "$tree"
"$TOP/scripts/initramfs.sh" "$tree"
plan=$OUT/plans/run.plan
mkdir -p "$OUT/plans"
echo "dirty_log_perf_test: ./dirty_log_perf_test $args" >"$plan"
rc=0
"$TOP/scripts/boot.sh" "$tree" min "$plan" "$smp" "$model" || rc=$?
log=$OUT/logs/$tree-min-run-smp$smp-$model.log

echo
echo "dirty_log_perf_test $args on $tree ($(sed -n 's/^# kernel: //p' "$log" | tr -d '\r'))"
grep -m1 '^# isa' "$log" | tr -d '\r' | sed "s/^# /guest hart (CPU model $model) /"
grep -E 'Populate memory time|Iteration [0-9]+ (dirty memory|clear dirty log) time|Clear dirty log over|Get dirty log over' "$log" |
	tr -d '\r' | sed 's/^# /  /'
exit "$rc"
