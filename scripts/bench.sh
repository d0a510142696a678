#!/bin/bash
# Usage: bench.sh  (EXPERIMENTS="wp atomic ..." default: all, REPS=5)
# A/B benchmark under QEMU (each experiment names its CPU model, see
# model_cpu in lib.sh). Runs the experiments of
# bench/experiments: boots each experiment's kernels REPS times, rotating
# their order every round, runs its plan, and writes a dated report to
# results/DATE/: report.md (medians, min-max, N, ratios against the
# experiment's first kernel), data.csv, one PNG a experiment, the exact
# setup. Kernels come from scripts/benchkernel.sh; every kernel boots the
# series' initramfs: the same userspace.
# A boot that fails (a test line failed) is recorded, its figures kept,
# and the next boot goes on; the report lists the failures and the run
# exits non-zero. REPORT=results/DATE writes the report of a run again
# from its data.csv (same EXPERIMENTS and REPS), booting nothing.
# Not part of the test command. QEMU TCG inflates absolute figures: only
# the ratios measured in the same run carry.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need qemu-system-riscv64 gnuplot awk

reps=${REPS:-5}
table=$TOP/bench/experiments
exps=()
while read -r name _; do
	exps+=("$name")
done < <(grep -v -e '^#' -e '^$' "$table")
read -r -a want <<<"${EXPERIMENTS:-${exps[*]}}"
for e in "${want[@]}"; do
	printf '%s\n' "${exps[@]}" | grep -qx "$e" || die "no experiment '$e' in bench/experiments (${exps[*]})"
done

# exp_row NAME: prints "variant model smp plan kernels..." of experiment NAME;
# exp_params NAME: its kernel parameters (the row's NAME=VALUE words), which
# every boot of the experiment gets.
exp_row() {
	awk -v n="$1" '$1 == n { $1 = ""; gsub(/ [^ ]*=[^ ]*/, ""); print substr($0, 2) }' "$table"
}
exp_params() {
	awk -v n="$1" '$1 == n { for (i = 6; i <= NF; i++) if ($i ~ /=/) printf "%s ", $i }' "$table"
}

failures=()
if [ -n "${REPORT:-}" ]; then
	dir=$(cd "$REPORT" && pwd) || die "REPORT=$REPORT: no such folder"
	csv=$dir/data.csv
	[ -f "$csv" ] || die "REPORT=$REPORT: no data.csv there"
	stamp=$(basename "$dir")
else
	# Build every kernel once per variant; userspace comes from the series.
	stage "preparing kernels"
	"$TOP/scripts/base.sh" >/dev/null
	"$TOP/scripts/tree.sh" >/dev/null
	"$TOP/scripts/kbuild.sh" series min
	"$TOP/scripts/selftests.sh" series >/dev/null
	"$TOP/scripts/initramfs.sh" series >/dev/null
	# Plans that run guest/migrate need the VMM archive (scripts/vmm.sh).
	vmm_plan() {
		grep -qE '^[a-z0-9_]+:.*(^|[ ;&])migrate ' "$TOP/$1"
	}
	declare -A built=()
	mins=0
	for e in "${want[@]}"; do
		read -r variant model smp plan kernels <<<"$(exp_row "$e")"
		[ -f "$TOP/$plan" ] || die "experiment $e: no plan $plan"
		! vmm_plan "$plan" || "$TOP/scripts/vmm.sh" series >/dev/null
		for k in $kernels; do
			if [ -z "${built[$k/$variant]:-}" ]; then
				"$TOP/scripts/benchkernel.sh" "$k" "$variant"
				built[$k/$variant]=1
			fi
		done
		# About 25 s a test line on an idle machine, twice that with LOCK_STAT.
		n=$(grep -c '^[a-z0-9]' "$TOP/$plan")
		k=$(wc -w <<<"$kernels")
		f=1
		[ "$variant" = min ] || f=2
		mins=$((mins + (k * reps * n * f * 25 + 59) / 60 + k * reps / 2))
	done
	echo "bench: ${want[*]}, $reps rounds each; expect about $mins min on an idle machine"

	# The results folder only once every kernel is ready: a run that cannot
	# start leaves none behind.
	stamp=$(date -u +%Y-%m-%d-%H%M)
	dir=$TOP/results/$stamp
	mkdir -p "$dir"
	csv=$dir/data.csv
	echo "experiment,kernel,round,test,metric,iteration,value" >"$csv"

	for e in "${want[@]}"; do
		read -r variant model smp plan kernels <<<"$(exp_row "$e")"
		read -r -a ks <<<"$kernels"
		for r in $(seq 1 "$reps"); do
			# Rotate the order every round so no kernel always runs first.
			o=$(((r - 1) % ${#ks[@]}))
			for k in "${ks[@]:$o}" "${ks[@]:0:$o}"; do
				stage "$e: round $r/$reps: $k"
				addon=
				! vmm_plan "$plan" || addon=$OUT/initramfs/vmm-series.cpio.gz
				if ! ADDON_RD=$addon KIMAGE=$OUT/bench/$k-$variant.Image INITRD_TREE=series BOOT_TIMEOUT=2400 KCMDLINE=$(exp_params "$e") \
					"$TOP/scripts/boot.sh" "$k" "$variant" "$TOP/$plan" "$smp" "$model" >"$dir/boot.txt" 2>&1; then
					failures+=("$e round $r, $k: $(grep -m1 '^FAIL' "$dir/boot.txt" || tail -n 1 "$dir/boot.txt")")
					echo "bench: ${failures[-1]}" >&2
				fi
				log=$OUT/logs/$k-$variant-$(basename "$plan" .plan)-smp$smp-$model.log
				cp "$log" "$dir/$e-$k-round$r.log"
				# dirty_log_perf_test: iterations 2 and later, and iteration 1
				# on its own.
				tr -d '\r' <"$log" | awk -v p="$e,$k,$r" '
					function out(m, i, v) { print p "," t "," m "," i "," v }
					/^# START / { t = $3; sub(":", "", t) }
					/Iteration [0-9]+ dirty memory time/ && $3 > 1 { v = $NF; sub("s$", "", v); out("dirty_s", $3, v) }
					/Iteration [0-9]+ clear dirty log time/ && $3 > 1 { v = $NF; sub("s$", "", v); out("clear_s", $3, v) }
					/Iteration [0-9]+ get dirty log time/ && $3 > 1 { v = $NF; sub("s$", "", v); out("get_s", $3, v) }
					# Iteration 1 writes before anything is write-protected or cleaned.
					/Iteration 1 dirty memory time/ { v = $NF; sub("s$", "", v); out("dirty1_s", 1, v) }
					/Populate memory time/ { v = $NF; sub("s$", "", v); out("populate_s", 0, v) }
					# access_tracking_perf_test: each access pass over idle memory.
					/(Writing to|Reading from) idle memory *:/ { v = $NF; sub("s$", "", v)
						out($0 ~ /Writing/ ? "idle_write_s" : "idle_read_s", 0, v) }
					# guest/migrate: QEMU info migrate figures, memcheck errors.
					/MIGRATE result=/ { for (i = 1; i <= NF; i++) { split($i, kv, "=")
						if (kv[1] ~ /^(total_ms|setup_ms|downtime_ms|dirty_syncs|transferred_kib|dst_errors|src_errors|write_pages_per_s|longest_pass_ms|pages_2m_before|pages_2m_cancelled|pages_2m_after)$/) out(kv[1], 0, kv[2])
						if (kv[1] == "result") out("migrate_failed", 0, kv[2] != "pass") } }
					# guest/slotzap: the delete or munmap of a populated slot.
					/slotzap: .* took [0-9.]+ ms/ { out("zap_ms", 0, $(NF - 1)) }
					# guest/kvmstat: G-stage fault and fence counters.
					/kvmstat: / { for (i = 1; i <= NF; i++) if ($i ~ /^[a-z_0-9]+=[0-9]+$/) { split($i, kv, "="); out(kv[1], 0, kv[2]) } }
					/Overall demand paging rate/ { out("pages_per_s", 0, $(NF - 1)) }
					# dirty_log_thp_test: the pass with dirty logging, the one after.
					/Pass [0-9]+ \((with|after) dirty logging\): / { v = $NF; sub("s$", "", v); out($0 ~ /with/ ? "thp_logged_s" : "thp_after_s", 0, v) }
					/ager: [0-9]+ (aging|page_idle) passes/ { a = $0; sub(/.*ager: /, "", a); split(a, g, " "); out("agings", 0, g[1])
						# "aging A s of T s": the share of the run spent aging.
						if (match($0, /aging [0-9.]+ s of [0-9.]+ s/)) { split(substr($0, RSTART, RLENGTH), g, " "); if (g[5] > 0) out("aging_share", 0, g[2] / g[5]) } }
					# lock_stat: con-bounces contentions wait-min wait-max wait-total ...
					/lockstat: .*mmu_lock(-W)?:/ { s = substr($0, index($0, ":") + 1); sub(/.*mmu_lock(-W)?:/, "", s)
						split(s, f, " "); out("w_contentions", 0, f[2]); out("w_wait_us", 0, f[5]); out("w_hold_max_us", 0, f[10]) }
					/lockstat: .*mmu_lock-R:/ { s = $0; sub(/.*mmu_lock-R:/, "", s)
						split(s, f, " "); out("r_contentions", 0, f[2]); out("r_wait_us", 0, f[5]) }' >>"$csv"
			done
		done
	done
	rm -f "$dir/boot.txt"
fi

# Report: one section an experiment; medians, ranges and ratios against
# the experiment's first kernel.
{
	echo "# Benchmark $stamp"
	echo
	echo "QEMU: $(qemu-system-riscv64 --version | head -1); -M virt -m ${QEMU_MEM:-2G}, TCG multi-threaded; each experiment names its CPU model."
	echo "Host: $(nproc) CPUs, $(uname -r). $reps rounds, the kernels' order rotated every round. Command: \`${QEMU_MEM:+QEMU_MEM=$QEMU_MEM }REPS=$reps EXPERIMENTS=\"${want[*]}\" make bench\`."
	echo
	echo "Absolute figures are inflated by TCG and by a shared host; only ratios within one experiment carry."
	echo "Ratio: reference median / kernel median (above 1: the kernel takes less time or waits less),"
	echo "except pages_per_s, write_pages_per_s, agings, aging_share (the ager's time in aging passes / the test's run time) and pages_2m_* (2 MiB G-stage leaves): kernel / reference (above 1: the kernel does more)."
	for e in "${want[@]}"; do
		read -r variant model smp plan kernels <<<"$(exp_row "$e")"
		read -r -a ks <<<"$kernels"
		echo
		echo "## $e"
		echo
		params=$(exp_params "$e")
		echo "Config: $(variant_frags "$variant" | sed "s|^$TOP/||" | sed ':a;N;s/\n/ + /;ba'); CPU model $model (-cpu $(model_cpu "$model")); -smp $smp; kernel parameters: ${params:-none}; plan $plan (run from the selftests folder):"
		echo
		grep '^[a-z0-9]' "$TOP/$plan" | sed 's/^/    /'
		echo
		for k in "${ks[@]}"; do
			echo "- $k: $(cat "$OUT/bench/$k-$variant.commit")"
		done
		echo
		echo "| test | metric | kernel | median | min | max | N | ratio vs ${ks[0]} |"
		echo "|---|---|---|---|---|---|---|---|"
		awk -F, -v e="$e" -v ref="${ks[0]}" -v order="$kernels" '
			function median(a, n,   i, j, t) {
				for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
				return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
			}
			$1 == e { key = $4 SUBSEP $5 SUBSEP $2; if (!(key in n)) keys[++nk] = key; n[key]++; v[key, n[key]] = $7 }
			END {
				nko = split(order, ko, " ")
				for (i = 1; i <= nko; i++) rank[ko[i]] = i
				for (i = 1; i <= nk; i++) {
					key = keys[i]; delete a; lo = hi = v[key, 1]
					for (j = 1; j <= n[key]; j++) { a[j] = v[key, j]; if (a[j] < lo) lo = a[j]; if (a[j] > hi) hi = a[j] }
					med[key] = median(a, n[key]); mn[key] = lo; mx[key] = hi
				}
				for (i = 1; i <= nk; i++) {
					key = keys[i]; split(key, p, SUBSEP); rk = p[1] SUBSEP p[2] SUBSEP ref
					up = p[2] ~ /pages_per_s$/ || p[2] == "agings" || p[2] == "aging_share" || p[2] ~ /^pages_2m_/
					if (!(rk in med)) ratio = "-"
					else if (up) ratio = med[rk] > 0 ? sprintf("%.2f", med[key] / med[rk]) : "-"
					else ratio = med[key] > 0 ? sprintf("%.2f", med[rk] / med[key]) : (med[rk] > 0 ? "inf" : "-")
					printf "%s\t%s\t%d\t| %s | %s | %s | %.4g | %.4g | %.4g | %d | %s |\n", p[1], p[2], rank[p[3]], p[1], p[2], p[3], med[key], mn[key], mx[key], n[key], ratio
				}
			}' "$csv" | sort -t"$(printf '\t')" -k1,1 -k2,2 -k3,3n | cut -f4
		echo
		echo "![$e]($e.png)"
	done
	if [ "${#failures[@]}" -gt 0 ]; then
		echo
		echo "## Failed boots (their figures are in the tables)"
		echo
		printf -- '- %s\n' "${failures[@]}"
	fi
} >"$dir/report.md"

# One PNG a experiment, a panel a metric: every measurement, x = test,
# kernels side by side.
for e in "${want[@]}"; do
	read -r variant model smp plan kernels <<<"$(exp_row "$e")"
	read -r -a ks <<<"$kernels"
	tests=$(awk -F, -v e="$e" '$1 == e && !seen[$4]++ { printf "%s ", $4 }' "$csv")
	metrics=$(awk -F, -v e="$e" '$1 == e && $5 != "agings" && $5 !~ /contentions/ && !seen[$5]++ { printf "%s ", $5 }' "$csv")
	[ -n "$metrics" ] || continue
	{
		echo "set terminal png size $((450 * $(wc -w <<<"$metrics") + 100)),450 noenhanced"
		echo "set output '$dir/$e.png'"
		echo "set datafile separator ','"
		echo "set yrange [0:*]"
		echo "set multiplot layout 1,$(wc -w <<<"$metrics") title '$e ($kernels)'"
		printf 'set xtics ('
		n=1 sep=
		for t in $tests; do
			printf '%s"%s" %d' "$sep" "$t" "$n"
			sep=", "
			n=$((n + 1))
		done
		echo ") rotate by -30"
		echo "set xrange [0.5:$n]"
		for m in $metrics; do
			echo "set title '$m, one point a measurement'"
			sep="plot "
			for i in "${!ks[@]}"; do
				printf "%s'%s' using (strcol(1) eq '%s' && strcol(2) eq '%s' && strcol(5) eq '%s' ? %s + 0.15 * %d : NaN):7 with points title '%s'" \
					"$sep" "$csv" "$e" "${ks[$i]}" "$m" "x(strcol(4))" "$i" "${ks[$i]}"
				sep=", "
			done
			echo
		done
		echo "unset multiplot"
	} >"$dir/$e.gp"
	# x(): a test's position on the axis.
	{
		printf 'x(s) = '
		n=1
		for t in $tests; do
			printf '(s eq "%s") ? %d : ' "$t" "$n"
			n=$((n + 1))
		done
		echo "NaN"
		cat "$dir/$e.gp"
	} | gnuplot
	rm -f "$dir/$e.gp"
done
echo "bench: report in $dir/report.md"
cat "$dir/report.md"
[ "${#failures[@]}" -eq 0 ] || die "${#failures[@]} benchmark boot(s) failed: see the report"
