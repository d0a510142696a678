#!/bin/bash
# Usage: bench.sh  (KERNELS="base series", REPS=5, PLAN=bench/dirty.plan, SMP=2)
# A/B benchmark under QEMU -cpu rv64,h=true: boots every kernel REPS times,
# alternating their order each round, runs the plan and writes a dated
# report to results/DATE/: report.md (medians, min-max, N, ratio against
# the first kernel), data.csv, plot.png, and the exact setup.
# Not part of the test command. QEMU TCG inflates absolute figures: only
# the ratios measured in the same run carry.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need qemu-system-riscv64 gnuplot awk

read -r -a kernels <<<"${KERNELS:-base series}"
reps=${REPS:-5}
plan=$TOP/${PLAN:-bench/dirty.plan}
smp=${SMP:-2}
stamp=$(date -u +%Y-%m-%d-%H%M)
dir=$TOP/results/$stamp
mkdir -p "$dir"
csv=$dir/data.csv

for k in "${kernels[@]}"; do
	[ "$k" = base ] || [ "$k" = series ] || die "kernel '$k': only base and series"
	stage "building $k"
	[ "$k" = base ] && "$TOP/scripts/base.sh" >/dev/null
	[ "$k" = series ] && "$TOP/scripts/tree.sh" >/dev/null
	"$TOP/scripts/kbuild.sh" "$k" min
	"$TOP/scripts/selftests.sh" "$k" >/dev/null
	"$TOP/scripts/initramfs.sh" "$k" >/dev/null
done

n=$(grep -c '^[a-z0-9]' "$plan")
echo "bench: ${#kernels[@]} kernels x $reps rounds, $n runs a boot; expect about $((${#kernels[@]} * reps * 3 / 2)) min on an idle machine"
echo "kernel,round,test,metric,iteration,value" >"$csv"
for r in $(seq 1 "$reps"); do
	# Rotate the order every round so no kernel always runs first.
	order=("${kernels[@]:$(((r - 1) % ${#kernels[@]}))}" "${kernels[@]:0:$(((r - 1) % ${#kernels[@]}))}")
	for k in "${order[@]}"; do
		stage "round $r/$reps: $k"
		BOOT_TIMEOUT=2400 "$TOP/scripts/boot.sh" "$k" min "$plan" "$smp" >"$dir/boot.txt" 2>&1 ||
			die "benchmark boot of $k failed: $(grep -m1 '^FAIL' "$dir/boot.txt")"
		log=$OUT/logs/$k-min-$(basename "$plan" .plan)-smp$smp.log
		cp "$log" "$dir/$k-round$r.log"
		# Iteration 1 populates memory: keep iterations 2 and later.
		tr -d '\r' <"$log" | awk -v k="$k" -v r="$r" '
			/^# START / { t = $3; sub(":", "", t) }
			/Iteration [0-9]+ dirty memory time/ && $3 > 1 { v = $NF; sub("s$", "", v); print k "," r "," t ",dirty_s," $3 "," v }
			/Iteration [0-9]+ clear dirty log time/ && $3 > 1 { v = $NF; sub("s$", "", v); print k "," r "," t ",clear_s," $3 "," v }
			/Overall demand paging rate/ { print k "," r "," t ",pages_per_s,0," $(NF - 1) }' >>"$csv"
	done
done

# Medians, ranges and ratios against the first kernel.
ref=${kernels[0]}
{
	echo "# Benchmark $stamp"
	echo
	echo "QEMU $(qemu-system-riscv64 --version | head -1), -M virt -cpu rv64,h=true,sscofpmf=true -smp $smp -m 2G, TCG multi-threaded, minimal config (configs/min.config)."
	echo "Kernels: ${kernels[*]}; $reps rounds, order rotated each round; plan $(basename "$plan"):"
	echo
	grep '^[a-z0-9]' "$plan" | sed 's/^/    /'
	echo
	echo "Absolute figures are inflated by TCG; only ratios in the same run carry. Ratio = $ref median / kernel median for times (higher is faster), kernel / $ref for rates."
	echo
	echo "| test | metric | kernel | median | min | max | N | ratio vs $ref |"
	echo "|---|---|---|---|---|---|---|---|"
	tail -n +2 "$csv" | sort -t, -k3,3 -k4,4 -k1,1 | awk -F, -v ref="$ref" '
		function median(a, n,   i, j, t) {
			for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
			return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
		}
		{ key = $3 SUBSEP $4 SUBSEP $1; n[key]++; v[key, n[key]] = $6; tm[$3 SUBSEP $4] = 1; ks[$1] = 1 }
		END {
			for (t in tm) for (k in ks) {
				key = t SUBSEP k; if (!(key in n)) continue
				delete a; lo = hi = v[key, 1]
				for (i = 1; i <= n[key]; i++) { a[i] = v[key, i]; if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i] }
				med[key] = median(a, n[key]); mn[key] = lo; mx[key] = hi
			}
			for (key in med) {
				split(key, p, SUBSEP); rk = p[1] SUBSEP p[2] SUBSEP ref
				ratio = (rk in med && med[key] > 0) ? (p[2] == "pages_per_s" ? med[key] / med[rk] : med[rk] / med[key]) : 0
				printf "| %s | %s | %s | %.4g | %.4g | %.4g | %d | %.2f |\n", p[1], p[2], p[3], med[key], mn[key], mx[key], n[key], ratio
			}
		}' | sort
} >"$dir/report.md"

# One panel per metric: every value, x = test (kernels side by side).
tests=$(awk -F, 'NR > 1 && ($4 == "clear_s" || $4 == "dirty_s") && !seen[$3]++ { printf "%s ", $3 }' "$csv")
for m in clear_s dirty_s; do
	for i in "${!kernels[@]}"; do
		awk -F, -v m="$m" -v k="${kernels[$i]}" -v off="$i" -v tests="$tests" '
			BEGIN { n = split(tests, t, " "); for (j = 1; j <= n; j++) x[t[j]] = j }
			$4 == m && $1 == k { print x[$3] + 0.2 * off, $6 }' "$csv" >"$dir/$m-${kernels[$i]}.dat"
	done
done
{
	echo "set terminal png size 1100,500 noenhanced"
	echo "set output '$dir/plot.png'"
	echo "set multiplot layout 1,2"
	printf 'set xtics ('
	n=1 sep=
	for t in $tests; do
		printf '%s"%s" %d' "$sep" "$t" "$n"
		sep=", "
		n=$((n + 1))
	done
	echo ")"
	echo "set xrange [0.5:$n]"
	for m in clear_s dirty_s; do
		echo "set title '$m per iteration (s), one point a measurement'"
		sep="plot "
		for k in "${kernels[@]}"; do
			printf "%s'%s' using 1:2 with points title '%s'" "$sep" "$dir/$m-$k.dat" "$k"
			sep=", "
		done
		echo
	done
	echo "unset multiplot"
} | gnuplot
rm -f "$dir"/*.dat "$dir/boot.txt"
echo "bench: report in $dir/report.md"
cat "$dir/report.md"
