// SPDX-License-Identifier: GPL-2.0
/*
 * Instruction counts of gstage.c write-protect/aging paths, run under
 * valgrind --tool=callgrind --collect-atstart=no: only the calls between
 * the CALLGRIND_TOGGLE_COLLECT pairs are counted, one dump per measurement.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>
#include <linux/kvm_host.h>
#include <asm/kvm_gstage.h>

static struct kvm kvm;
static struct kvm_gstage gs;
static unsigned long levels = 3;
static const gpa_t gpa0 = 8 * PMD_SIZE;

#define MEASURE(name, call)                    \
	do {                                   \
		CALLGRIND_TOGGLE_COLLECT;      \
		call;                          \
		CALLGRIND_TOGGLE_COLLECT;      \
		CALLGRIND_DUMP_STATS_AT(name); \
	} while (0)

/* Fresh VM with [gpa0, gpa0 + npages * 4K) mapped writable and young. */
static void setup(unsigned long npages, bool huge)
{
	struct kvm_mmu_memory_cache pc;
	struct kvm_gstage_mapping out;
	unsigned long i, sz = huge ? PMD_SIZE : PAGE_SIZE;

	shim_mem_reset();
	memset(&kvm, 0, sizeof(kvm));
	kvm.arch.pgd = shim_alloc_pages(kvm_riscv_gstage_pgd_size / PAGE_SIZE);
	kvm.arch.pgd_levels = levels;
	kvm_riscv_gstage_init(&gs, &kvm);
	for (i = 0; i < npages; i += sz / PAGE_SIZE) {
		pc.nobjs = levels;
		kvm_riscv_gstage_map_page(&gs, &pc, gpa0 + i * PAGE_SIZE,
					  (1UL << 40) + i * PAGE_SIZE, sz,
					  false, false, &out);
	}
}

/* @pct percent of 64 bits, spread by a fixed pseudo-random order. */
static unsigned long mask_of(int pct)
{
	unsigned long mask = 0, x = 12345;
	int n = (64 * pct + 50) / 100;

	while (__builtin_popcountl(mask) < n) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		mask |= 1UL << (x >> 58);
	}
	return mask;
}

int main(int argc, char **argv)
{
	static const int pct[] = { 10, 30, 50, 70, 100 };
	unsigned long mask;
	char name[64];
	unsigned int i;

	if (argc > 1)
		levels = strtoul(argv[1], NULL, 0);
	shim_mem_init(64);
	printf("# pgd_levels %lu\n", levels);
	for (i = 0; i < sizeof(pct) / sizeof(pct[0]); i++) {
		setup(64, false);
		snprintf(name, sizeof(name), "wp_pt_masked/4K/%d%%", pct[i]);
		mask = mask_of(pct[i]);
		MEASURE(name, kvm_riscv_gstage_wp_pt_masked(
				      &gs, gpa0 >> PAGE_SHIFT, mask));
	}
	for (i = 0; i < sizeof(pct) / sizeof(pct[0]); i++) {
		setup(512, true);
		snprintf(name, sizeof(name), "wp_pt_masked/2M/%d%%", pct[i]);
		mask = mask_of(pct[i]);
		MEASURE(name, kvm_riscv_gstage_wp_pt_masked(
				      &gs, gpa0 >> PAGE_SHIFT, mask));
	}
	setup(512, false);
	MEASURE("wp_range/2M-of-4K",
		kvm_riscv_gstage_wp_range(&gs, gpa0, gpa0 + PMD_SIZE));
	setup(512, true);
	MEASURE("wp_range/2M-leaf",
		kvm_riscv_gstage_wp_range(&gs, gpa0, gpa0 + PMD_SIZE));
#ifdef HAVE_AGE_RANGE
	setup(512, false);
	MEASURE("age_range/2M-of-4K",
		kvm_riscv_gstage_age_range(&gs, gpa0, gpa0 + PMD_SIZE, false));
	setup(512, false);
	MEASURE("test_age_range/2M-of-4K",
		kvm_riscv_gstage_age_range(&gs, gpa0, gpa0 + PMD_SIZE, true));
	setup(512, true);
	MEASURE("age_range/2M-leaf",
		kvm_riscv_gstage_age_range(&gs, gpa0, gpa0 + PMD_SIZE, false));
#else
	printf("# kvm_riscv_gstage_age_range() not in this tree\n");
#endif
	return 0;
}
