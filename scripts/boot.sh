#!/bin/bash
# Usage: boot.sh TREE VARIANT PLAN SMP [MODEL]
# Boot out/build/TREE-VARIANT under QEMU with CPU model MODEL (default or
# rva23, see model_cpu in lib.sh; default: default) with TREE's
# initramfs (the benchmark: image KIMAGE, INITRD_TREE's initramfs), the
# extra cpio archives ADDON_RD (space-separated paths) and the test plan
# file PLAN, always under a timeout, then judge the run: every
# KTAP result, the plan's count, the guest's isa line against the model,
# /dev/kvm, a clean power-off, and a console free of
# WARN/BUG/Oops/KASAN/lockdep/RCU/hung-task reports.
# Writes out/logs/ID.log (console) and out/results/ID.tsv (one line a
# check: pass|fail|skip, name, detail); exits non-zero on any failure.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need qemu-system-riscv64 timeout

tree=$1 variant=$2 plan=$3 smp=$4 model=${5:-default}
cpu=$(model_cpu "$model")
img=${KIMAGE:-$OUT/build/$tree-$variant/arch/riscv/boot/Image}
base_rd=$OUT/initramfs/${INITRD_TREE:-$tree}.cpio.gz
[ -f "$img" ] || die "no kernel image $img: run scripts/kbuild.sh $tree $variant"
[ -f "$base_rd" ] || die "no initramfs $base_rd: run scripts/initramfs.sh ${INITRD_TREE:-$tree}"
[ -f "$plan" ] || die "no test plan $plan"
pname=$(basename "$plan" .plan)
id=$tree-$variant-$pname-smp$smp-$model
tmo=${BOOT_TIMEOUT:-1800}
mem=${QEMU_MEM:-2G}
log=$OUT/logs/$id.log
res=$OUT/results/$id.tsv
mkdir -p "$OUT/logs" "$OUT/results" "$OUT/initramfs"

# The plan goes in as a second cpio archive appended to the first.
rd=$OUT/initramfs/boot-$id.cpio.gz
plist=$OUT/initramfs/plan-$id.list
{
	echo "file /plan $plan 0644 0 0"
	# KVM built as a module: guest/init loads it.
	ko=$OUT/build/$tree-$variant/arch/riscv/kvm/kvm.ko
	if [ -z "${KIMAGE:-}" ] && grep -q '^CONFIG_KVM=m' "$OUT/build/$tree-$variant/.config"; then
		[ -f "$ko" ] || die "KVM is a module in $tree-$variant, but there is no $ko"
		echo "dir /lib 0755 0 0"
		echo "file /lib/kvm.ko $ko 0644 0 0"
	fi
} >"$plist"
read -r -a addons <<<"${ADDON_RD:-}"
for a in "${addons[@]}"; do
	[ -f "$a" ] || die "no extra initramfs archive $a"
done
{ cat "$base_rd" "${addons[@]}"; "$OUT/tools/gen_init_cpio" "$plist" | gzip -1; } >"$rd"

cmd=(qemu-system-riscv64 -M virt -cpu "$cpu" -smp "$smp" -m "$mem"
     -accel "tcg,thread=multi" -nographic -no-reboot -bios default
     -kernel "$img" -initrd "$rd"
     -append "console=ttyS0 earlycon loglevel=5 panic=-1 ${KCMDLINE:-}")
# boot: run QEMU once into $log, its exit code in qrc.
boot() {
	stage "boot $id (timeout ${tmo}s)"
	echo "# ${cmd[*]}" >"$log"
	set +e
	timeout -k 10 "$tmo" "${cmd[@]}" </dev/null >>"$log" 2>&1
	qrc=$?
	set -e
}
# 2 of 238 rva23 boots in results/ came up without /dev/kvm, the cause
# not found: boot once more, keep the first console log and say so in
# the results. A kernel whose KVM never comes up fails both boots.
boot
retried=
if grep -q '^# /dev/kvm is missing' "$log"; then
	mv "$log" "$log.nokvm"
	retried=" after one retry: the first boot had no /dev/kvm ($(grep '^# ' "$log.nokvm" |
		sed -n '/dev\/kvm is missing/,$p' | sed -n '2,4p' | tr '\n' ' ')see $log.nokvm)"
	echo "boot: $id came up without /dev/kvm, booting once more (first log: $log.nokvm)"
	boot
fi

: >"$res"
result() {
	printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$res"
	printf '%-4s %s %s\n' "${1^^}" "$2" "$3"
}

# KTAP results from the guest.
planned=$(sed -n 's/^1\.\.\([0-9]*\)\r\?$/\1/p' "$log" | head -1)
tr -d '\r' <"$log" | sed -n -E 's/^(not ok|ok) [0-9]+ ([^ ]+)( # (.*))?$/\1|\2|\4/p' |
	while IFS='|' read -r st name detail; do
		case $st:$detail in
		"ok:SKIP"*) result skip "$id/$name" "$detail" ;;
		ok:*) result pass "$id/$name" "$detail" ;;
		*) result fail "$id/$name" "$detail (see $log)" ;;
		esac
	done
ran=$(wc -l <"$res")
if [ -z "$planned" ]; then
	result fail "$id/plan" "the guest never started its plan (see $log)"
elif [ "$ran" -ne "$planned" ]; then
	result fail "$id/plan" "$ran of $planned tests reported: the guest died mid-plan (see $log)"
else
	result pass "$id/plan" "$planned tests reported"
fi

# The CPU model the guest really got, from its own isa line.
isa=$(tr -d '\r' <"$log" | sed -n 's/^# isa[[:space:]]*: *//p' | head -1)
if [ -z "$isa" ]; then
	result fail "$id/cpu-model" "the guest printed no isa line (see $log)"
elif why=$(model_check "$model" "$isa"); then
	result pass "$id/cpu-model" "$model (-cpu $cpu): $isa"
else
	result fail "$id/cpu-model" "asked for $model (-cpu $cpu), the guest's isa line $why: $isa"
fi

# KVM itself: without /dev/kvm every KVM selftest skips, which must not
# pass as a run.
if grep -q '^# /dev/kvm is missing' "$log"; then
	result fail "$id/kvm" "the guest has no /dev/kvm: every KVM test skipped (see $log)"
else
	result pass "$id/kvm" "/dev/kvm present$retried"
fi

# The run itself: power-off and a clean console.
if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
	result fail "$id/poweroff" "QEMU did not power off within ${tmo}s, killed (see $log)"
elif ! grep -q 'reboot: Power down' "$log"; then
	result fail "$id/poweroff" "QEMU exited ($qrc) without a clean power-off (see $log)"
else
	result pass "$id/poweroff" "clean power-off"
fi
splat='WARNING:|BUG:|Oops|Unable to handle kernel|KASAN|UBSAN|possible recursive locking|possible circular locking|inconsistent lock state|suspicious RCU usage|DEBUG_LOCKS_WARN_ON|turning off the locking correctness validator|rcu: INFO|detected stall|self-detected stall|blocked for more than|Kernel panic|soft lockup|hard LOCKUP|list_add corruption|list_del corruption|refcount_t:|Bad page'
# Kernel lines only (they carry a timestamp), read by one awk: no pipe to break.
hits=$(awk -v re="$splat" '/^\[ *[0-9]+\.[0-9]+\]/ && $0 ~ re { n++ } END { print n + 0 }' "$log")
if [ "$hits" -gt 0 ]; then
	first=$(awk -v re="$splat" '/^\[ *[0-9]+\.[0-9]+\]/ && $0 ~ re { print; exit }' "$log")
	result fail "$id/console" "$hits kernel report line(s), first: ${first:0:160}"
else
	result pass "$id/console" "no WARN/BUG/Oops/lockdep/RCU/hung-task report"
fi
! grep -q '^fail' "$res"
