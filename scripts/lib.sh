# shellcheck shell=bash
# shellcheck disable=SC2034 # the variables are for the scripts that source this
# Common settings for the rig's scripts; sourced, never run.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${OUT:-$TOP/out}
KTREE=$OUT/linux
BASETREE=$OUT/linux-base
export ARCH=riscv CROSS_COMPILE=riscv64-linux-gnu-
JOBS=${JOBS:-$(nproc)}

# The one identity the series is committed under (author and committer).
PROJ_NAME="RISC-V KVM G-stage series"
PROJ_EMAIL="kvm-gstage@example.org"
# checkpatch types that every run ignores: the base is a source package
# without git history, so ids in Fixes: tags cannot be looked up (their
# format is still checked); new and moved files are checked against
# MAINTAINERS by scripts/checkpatch.sh itself.
CHECKPATCH_IGNORE=UNKNOWN_COMMIT_ID,FILE_PATH_CHANGES
BASE_DATE="2026-11-15T22:30:00Z"

# The series is sent as these postings, in this order, each applying on
# top of the ones before it: patches/NAME/ holds each (format-patch
# output; its cover letter's text is cover/NAME.txt). In out/linux,
# branch posting/NAME ends each posting but the last, which ends at
# branch series.
POSTINGS=(1-fixes 2-walker 3-lifetime 4-faults 5-huge 6-dbit)
VERSION=4
# Postings sent as RFCs, a first version each (the others are v$VERSION).
RFC_POSTINGS=(6-dbit)
# Patches that let a guest reach host memory, by subject: 'make mail'
# also writes each, on its own, to out/mail/0-security/, addressed to
# security@kernel.org and the maintainers but no list, to be sent before
# the postings (Documentation/process/security-bugs.rst); the postings
# wait until the security team agrees to their publication.
SECURITY_FIRST=("RISC-V: KVM: Keep the dirty-log write fast path off pages the host does not let the guest write"
	"RISC-V: KVM: Handle fence requests with preemption disabled"
	"RISC-V: KVM: Enter the guest only with the VM's current VMID in hgatp")
# Patches that are not riscv-specific, by subject: 'make mail' also writes
# each, on its own, to out/mail/0-kvm/, addressed as get_maintainer.pl
# says for it alone (KVM's maintainer and kvm@vger.kernel.org), so that it
# can be taken without the riscv postings.
GENERIC_ALONE=("KVM: Documentation: Correct the mmu_lock comment"
	"KVM: selftests: Run dirty_log_page_splitting_test on riscv"
	"KVM: selftests: Give the guest the random seed that memstress seeds from")

# posting_ref NAME: the branch that ends posting NAME.
posting_ref() {
	if [ "$1" = "${POSTINGS[-1]}" ]; then
		echo series
	else
		echo "posting/$1"
	fi
}

# posting_prefix NAME: the subject prefix of posting NAME's mails.
posting_prefix() {
	local p
	for p in "${RFC_POSTINGS[@]}"; do
		[ "$p" != "$1" ] || { echo "RFC PATCH"; return; }
	done
	echo "PATCH v$VERSION"
}

# posting_from NAME: where posting NAME starts (the base, or the branch
# that ends the posting before it).
posting_from() {
	local prev=base p
	for p in "${POSTINGS[@]}"; do
		[ "$p" = "$1" ] && break
		prev=$(posting_ref "$p")
	done
	echo "$prev"
}

die() {
	echo "ERROR: $*" >&2
	exit 1
}

stage() {
	echo "==> [$(date +%H:%M:%S)] $*"
}

need() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 ||
			die "missing tool '$t': run 'make deps' (scripts/install-deps.sh) as root"
	done
}

# Source folder of kernel tree NAME: series (out/linux) or base
# (out/linux-base). The benchmark's other kernels are built in out/linux
# (scripts/benchkernel.sh).
tree_src() {
	case $1 in
	series) echo "$KTREE" ;;
	base) echo "$BASETREE" ;;
	*) die "unknown kernel tree '$1' (series or base)" ;;
	esac
}

# CPU models a run can ask for: "default" is QEMU's rv64 with the
# hypervisor extension (Svadu, Svvptc: hardware A/D updates, no stale
# entries); "rva23" is QEMU's RVA23 profile CPU, the baseline of the
# hardware people run (Svade: A/D faults; no Svvptc).
model_cpu() {
	case $1 in
	default) echo "rv64,h=true,sscofpmf=true" ;;
	rva23) echo "rva23s64" ;;
	*) die "unknown CPU model '$1' (default or rva23)" ;;
	esac
}

# model_check MODEL ISA: exits 0 if the guest's /proc/cpuinfo isa string
# ISA is what MODEL must give, else prints what is wrong.
model_check() {
	local model=$1 isa=$2 has=() lacks=() e
	case $model in
	default) has=(svadu svvptc) ;;
	rva23) has=(svade svnapot) lacks=(svadu svvptc) ;;
	esac
	case ${isa%%_*} in
	rv64*h*) ;;
	*) echo "no hypervisor extension in '${isa%%_*}'"; return 1 ;;
	esac
	for e in "${has[@]}"; do
		[[ _${isa}_ == *_${e}_* ]] || { echo "no $e"; return 1; }
	done
	for e in "${lacks[@]}"; do
		[[ _${isa}_ != *_${e}_* ]] || { echo "has $e"; return 1; }
	done
}

base_var() {
	sed -n "s/^$1=//p" "$TOP/BASE"
}

# variant_frags VARIANT: the config fragments of VARIANT, one path a line:
# configs/min.config, then the add-ons VARIANT joins with '+' (debug+kasan:
# debug.config, kasan.config).
variant_frags() {
	local a addons
	echo "$TOP/configs/min.config"
	IFS=+ read -ra addons <<<"$1"
	for a in "${addons[@]}"; do
		[ "$a" = min ] || echo "$TOP/configs/$a.config"
	done
}

# Use ccache from the home folder when it is there; never required.
if command -v ccache >/dev/null 2>&1; then
	export CCACHE_DIR=${CCACHE_DIR:-$HOME/.ccache}
	# Paths relative to the checkout: another clone hits the same cache.
	export CCACHE_BASEDIR=$TOP
	KCC="ccache ${CROSS_COMPILE}gcc"
else
	KCC="${CROSS_COMPILE}gcc"
fi
export KCC
