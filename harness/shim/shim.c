// SPDX-License-Identifier: GPL-2.0
/*
 * Out-of-line parts of the gstage.c userspace shim: the simulated
 * physical memory arena, page refcounts, deferred RCU callbacks, WARN
 * counting and recorded TLB flushes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "shim.h"

#define SHIM_POISON 0x5a

char *shim_mem;
struct page *shim_pages;
unsigned long shim_mem_pages;
unsigned long shim_mem_used; /* bump allocator, in pages */
long shim_pages_in_use;
unsigned long shim_warn_count, shim_resched_count;
int shim_rcu_nesting;
unsigned long shim_hgatp, shim_hgatp_max_mode;
struct shim_flush shim_flushes[SHIM_MAX_FLUSH];
unsigned long shim_nr_flushes, shim_nr_flush_all;
static struct rcu_head *rcu_pending;

void shim_bad_addr(const char *what, unsigned long val)
{
	fprintf(stderr, "FATAL: %s(%#lx) outside the page arena\n", what, val);
	abort();
}

void shim_warn(const char *file, int line, const char *what)
{
	if (shim_warn_count++ < 10)
		fprintf(stderr, "# WARNING at %s:%d: %s\n", file, line, what);
}

void shim_mem_init(unsigned long npages)
{
	shim_mem = aligned_alloc(1UL << 21, npages << PAGE_SHIFT);
	shim_pages = calloc(npages, sizeof(*shim_pages));
	if (!shim_mem || !shim_pages)
		abort();
	shim_mem_pages = npages;
	memset(shim_mem, 0, npages << PAGE_SHIFT);
}

void shim_mem_reset(void)
{
	shim_rcu_quiesce();
	memset(shim_mem, 0, shim_mem_used << PAGE_SHIFT);
	memset(shim_pages, 0, shim_mem_used * sizeof(*shim_pages));
	shim_mem_used = 0;
	shim_pages_in_use = 0;
}

/* @n zeroed pages aligned to @n pages (n is a power of two). */
void *shim_alloc_pages(unsigned long n)
{
	unsigned long first = ALIGN(shim_mem_used, n), i;

	if (first + n > shim_mem_pages) {
		fprintf(stderr, "FATAL: page arena exhausted\n");
		abort();
	}
	for (i = first; i < first + n; i++)
		shim_pages[i].refcount = 1;
	shim_mem_used = first + n;
	shim_pages_in_use += n;
	return shim_mem + (first << PAGE_SHIFT);
}

bool shim_page_live(const void *v)
{
	return virt_to_page(v)->refcount > 0;
}

void put_page(struct page *page)
{
	if (WARN_ON(page->refcount <= 0))
		return;
	if (--page->refcount)
		return;
	shim_pages_in_use--;
	/* Poison: a walker that still uses the table sees garbage leaves. */
	memset(page_address(page), SHIM_POISON, PAGE_SIZE);
}

void free_page(unsigned long addr)
{
	put_page(virt_to_page((void *)addr));
}

void *kvm_mmu_memory_cache_alloc(struct kvm_mmu_memory_cache *mc)
{
	if (!WARN_ON(!mc->nobjs))
		mc->nobjs--;
	return shim_alloc_pages(1);
}

void call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head))
{
	head->func = func;
	head->next = rcu_pending;
	rcu_pending = head;
}

/* Called between operations, when no reader can be running. */
void shim_rcu_quiesce(void)
{
	struct rcu_head *head;

	WARN_ON(shim_rcu_nesting);
	while ((head = rcu_pending)) {
		rcu_pending = head->next;
		head->func(head);
	}
}

void synchronize_rcu(void)
{
	shim_rcu_quiesce();
}

void __bitmap_clear(unsigned long *map, unsigned int start, int len)
{
	unsigned long *p = map + start / BITS_PER_LONG;
	const unsigned int size = start + len;
	int bits_to_clear = BITS_PER_LONG - (start % BITS_PER_LONG);
	unsigned long mask_to_clear = ~0UL << (start & (BITS_PER_LONG - 1));

	while (len - bits_to_clear >= 0) {
		*p &= ~mask_to_clear;
		len -= bits_to_clear;
		bits_to_clear = BITS_PER_LONG;
		mask_to_clear = ~0UL;
		p++;
	}
	if (len) {
		mask_to_clear &= ~0UL >> (-size & (BITS_PER_LONG - 1));
		*p &= ~mask_to_clear;
	}
}

static void record_flush(bool local, unsigned long vmid, gpa_t gpa, gpa_t gpsz,
			 unsigned long order)
{
	if (shim_nr_flushes < SHIM_MAX_FLUSH)
		shim_flushes[shim_nr_flushes] = (struct shim_flush){
			.local = local,
			.vmid = vmid,
			.order = order,
			.addr = gpa,
			.size = gpsz,
		};
	shim_nr_flushes++;
}

void kvm_riscv_local_hfence_gvma_vmid_gpa(unsigned long vmid, gpa_t gpa,
					  gpa_t gpsz, unsigned long order)
{
	record_flush(true, vmid, gpa, gpsz, order);
}

void kvm_riscv_hfence_gvma_vmid_gpa(struct kvm *kvm, unsigned long hbase,
				    unsigned long hmask, gpa_t gpa, gpa_t gpsz,
				    unsigned long order, unsigned long vmid)
{
	record_flush(false, vmid, gpa, gpsz, order);
}

void kvm_riscv_local_hfence_gvma_all(void)
{
	shim_nr_flush_all++;
}
