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
BASE_DATE="2026-11-15T22:30:00Z"

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

base_var() {
	sed -n "s/^$1=//p" "$TOP/BASE"
}

# Use ccache from the home folder when it is there; never required.
if command -v ccache >/dev/null 2>&1; then
	export CCACHE_DIR=${CCACHE_DIR:-$HOME/.ccache}
	KCC="ccache ${CROSS_COMPILE}gcc"
else
	KCC="${CROSS_COMPILE}gcc"
fi
export KCC
