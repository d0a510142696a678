#!/bin/bash
# Usage: kbuild.sh TREE VARIANT [make targets...]
# Build kernel tree TREE (series: out/linux, base: out/linux-base) with config
# VARIANT (configs/min.config plus the add-ons VARIANT names) into
# out/build/TREE-VARIANT, incrementally. Default target: Image (and modules
# where KVM is a module: the debug variant).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need "${CROSS_COMPILE}gcc" make flex bison bc

tree=$1 variant=$2
shift 2
src=$(tree_src "$tree")
[ -f "$src/Makefile" ] || die "no kernel tree at $src: run 'make tree'"
mapfile -t frags < <(variant_frags "$variant")
for f in "${frags[@]}"; do
	[ -f "$f" ] || die "no config fragment $f"
done
obj=$OUT/build/$tree-$variant
mkdir -p "$obj"

# Regenerate .config only when a fragment changed.
stamp=$obj/.frags.sha
want=$(cat "${frags[@]}" | sha256sum)
if [ ! -f "$obj/.config" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
	(cd "$src" && scripts/kconfig/merge_config.sh -n -O "$obj" "${frags[@]}" >"$obj/merge.log" 2>&1) ||
		die "merge_config failed, see $obj/merge.log"
	# Every requested value must have landed; a later fragment overrides.
	grep -h '^CONFIG_' "${frags[@]}" | awk -F= '{ v[$1] = $0 } END { for (k in v) print v[k] }' |
		while IFS= read -r l; do
			if [ "${l#*=}" = n ]; then
				! grep -q "^${l%%=*}=" "$obj/.config" || die "config $l did not land ($obj)"
			else
				grep -qx "$l" "$obj/.config" || die "config $l did not land ($obj)"
			fi
		done
	echo "$want" >"$stamp"
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	targets=(Image)
	! grep -q '^CONFIG_KVM=m' "$obj/.config" || targets+=(modules)
fi
# The minimal kernel is built with W=1 (extra warnings, the same code), so
# that the per-commit W=1/sparse check of scripts/bisect.sh compiles nothing
# twice. KCHECK=PATH: also run sparse PATH on every file compiled (C=1) and
# print kbuild's short lines (CC, CHECK), which bisect.sh counts.
args=(-s)
[ "$variant" != min ] || args=(W=1 -s)
[ -z "${KCHECK:-}" ] || args=(W=1 C=1 CHECK="$KCHECK")
# W=1 runs kernel-doc on every file: with Debian's python3, not a
# version manager's shim on PATH (a second a call).
make -C "$src" O="$obj" CC="$KCC" PYTHON3=/usr/bin/python3 -j"$JOBS" "${args[@]}" "${targets[@]}"
