// SPDX-License-Identifier: GPL-2.0
/*
 * Out-of-line parts of the gstage.c userspace shim: the simulated
 * physical memory arena, RCU, WARN counting and recorded TLB flushes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sanitizer/asan_interface.h>
#include "shim.h"

/* A freed table entry looks like a table outside the arena. */
#define SHIM_POISON 0xdead0001UL
#define SHIM_MAX_READERS 16

char *shim_mem;
struct page *shim_pages;
unsigned long shim_mem_pages, shim_warn_count, shim_seq;
unsigned long shim_hgatp, shim_hgatp_max_mode, shim_rcu_deferred;
long shim_pages_in_use, shim_pgtable_pages;
struct shim_flush shim_flushes[SHIM_MAX_FLUSH];
unsigned long shim_nr_flushes, shim_nr_flush_all, shim_flush_all_seq;
unsigned long shim_flush_every_seq;

static unsigned long mem_used; /* bump allocator, in pages */
static struct list_head free_list = LIST_HEAD_INIT(free_list);
/* Shared-walk faults allocate and free tables in parallel. */
static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
unsigned long shim_unlinked_frees;
void (*shim_try_cmpxchg_hook)(unsigned long *ptr, unsigned long new);
bool shim_svvptc;
void (*shim_flush_hook)(bool local, gpa_t gpa, gpa_t gpsz);

static unsigned long rcu_gp = 1, rcu_slot[SHIM_MAX_READERS];
static int rcu_nr_slots;
static __thread int rcu_me = -1, rcu_depth;
static struct rcu_head *rcu_pending, **rcu_tail = &rcu_pending;
static struct rcu_head *rcu_running; /* the callback being run */

void shim_bad_addr(const char *what, unsigned long val)
{
	fprintf(stderr, "FATAL: %s(%#lx) outside the live page arena\n", what,
		val);
	abort();
}

void shim_warn(const char *file, int line, const char *what)
{
	if (shim_warn_count++ < 10)
		fprintf(stderr, "# WARNING at %s:%d: %s\n", file, line, what);
}

/* Relaxed atomic stores: lockless walkers may read any page. */
static void fill_page(struct page *page, unsigned long val)
{
	unsigned long *p = (unsigned long *)page_address(page);
	int i;

	for (i = 0; i < PTRS_PER_PTE; i++)
		__atomic_store_n(&p[i], val, __ATOMIC_RELAXED);
}

void shim_mem_init(unsigned long npages)
{
	shim_mem = aligned_alloc(PMD_SIZE, npages << PAGE_SHIFT);
	shim_pages = calloc(npages, sizeof(*shim_pages));
	if (!shim_mem || !shim_pages)
		abort();
	shim_mem_pages = npages;
}

/* A fresh arena; runs the RCU callbacks of the previous test first. */
void shim_mem_reset(void)
{
	shim_rcu_poll(true);
	ASAN_UNPOISON_MEMORY_REGION(shim_mem, shim_mem_pages << PAGE_SHIFT);
	mem_used = 0;
	shim_pages_in_use = 0;
	shim_pgtable_pages = 0;
	free_list = (struct list_head)LIST_HEAD_INIT(free_list);
}

/* @n zeroed pages aligned to @n pages (n is a power of two). */
void *shim_alloc_pages(unsigned long n)
{
	unsigned long first, i;
	struct page *page;

	pthread_mutex_lock(&mem_lock);
	first = ALIGN(mem_used, n);
	if (n == 1 && !list_empty(&free_list)) {
		page = list_entry(free_list.next, struct page, lru);
		list_del(&page->lru);
		first = page - shim_pages;
	} else if (first + n > shim_mem_pages) {
		fprintf(stderr, "FATAL: page arena exhausted\n");
		abort();
	} else {
		mem_used = first + n;
	}
	for (i = first; i < first + n; i++) {
		WRITE_ONCE(shim_pages[i].freed, false);
		shim_pages[i].unlink_seq = 0;
		ASAN_UNPOISON_MEMORY_REGION(page_address(&shim_pages[i]),
					    PAGE_SIZE);
		fill_page(&shim_pages[i], 0);
	}
	shim_pages_in_use += n;
	pthread_mutex_unlock(&mem_lock);
	return page_address(&shim_pages[first]);
}

void *kvm_mmu_memory_cache_alloc(struct kvm_mmu_memory_cache *mc)
{
	if (!WARN_ON(!mc->nobjs))
		mc->nobjs--;
	return shim_alloc_pages(1);
}

/* Does a table entry of a live page link to @page? */
static bool linked(struct page *page)
{
	unsigned long pfn = (__pa(page_address(page)) >> PAGE_SHIFT), i, j, v;

	for (i = 0; i < mem_used; i++) {
		if (READ_ONCE(shim_pages[i].freed))
			continue;
		for (j = 0; j < PTRS_PER_PTE; j++) {
			v = pte_val(ptep_get(
				(pte_t *)page_address(&shim_pages[i]) + j));
			if ((v & (_PAGE_PRESENT | _PAGE_LEAF)) ==
				    _PAGE_PRESENT &&
			    pte_pfn(__pte(v)) == pfn)
				return true;
		}
	}
	return false;
}

void shim_note_unlink(unsigned long old, unsigned long new)
{
#ifdef SHIM_CHECKS
	if ((old & (_PAGE_PRESENT | _PAGE_LEAF)) == _PAGE_PRESENT && old != new)
		virt_to_page(pfn_to_virt(pte_pfn(__pte(old))))->unlink_seq = ++shim_seq;
#endif
}

static bool zeroed(struct page *page)
{
	pte_t *p = page_address(page);
	int i;

	for (i = 0; i < PTRS_PER_PTE; i++)
		if (pte_val(ptep_get(&p[i])))
			return false;
	return true;
}

/*
 * Pages are freed by RCU callbacks; a table only after it was unlinked (it
 * or the root of its subtree) and then the whole VMID was flushed. Outside
 * a callback, only a zeroed table page that no entry links to (a fault
 * lost the race to link it) may be freed. Freed pages are poisoned, for
 * ASAN too.
 */
static void free_pages_checked(struct page *page, unsigned long n)
{
	struct page *top =
		rcu_running ? container_of(rcu_running, struct page, rcu_head) :
			      NULL;
	unsigned long i;

	pthread_mutex_lock(&mem_lock);
	if (!top) {
#ifdef SHIM_CHECKS /* not in instruction counts: it scans every page */
		WARN_ON(n != 1 || !zeroed(page) || linked(page));
#endif
		shim_unlinked_frees++;
	} else if (n == 1) {
#ifdef SHIM_CHECKS /* which keeps unlink_seq (set_pte()) */
		WARN_ON(!top->unlink_seq ||
			shim_flush_all_seq < top->unlink_seq);
#endif
	}
	for (i = 0; i < n; i++, page++) {
		if (WARN_ON(page->freed))
			break;
		fill_page(page, SHIM_POISON);
		ASAN_POISON_MEMORY_REGION(page_address(page), PAGE_SIZE);
		WRITE_ONCE(page->freed, true);
		list_add(&page->lru, &free_list);
		shim_pages_in_use--;
	}
	pthread_mutex_unlock(&mem_lock);
}

void free_page(unsigned long addr)
{
	if (addr) /* as free_pages(): 0 is no page */
		free_pages_checked(virt_to_page((void *)addr), 1);
}

void __free_pages(struct page *page, unsigned int order)
{
	free_pages_checked(page, 1UL << order);
}

void rcu_read_lock(void)
{
	if (rcu_depth++)
		return;
	if (rcu_me < 0)
		rcu_me = __atomic_fetch_add(&rcu_nr_slots, 1, __ATOMIC_SEQ_CST);
	if (rcu_me >= SHIM_MAX_READERS)
		abort();
	__atomic_store_n(&rcu_slot[rcu_me],
			 __atomic_load_n(&rcu_gp, __ATOMIC_SEQ_CST),
			 __ATOMIC_SEQ_CST);
	/* Pairs with the fence in shim_rcu_poll(): see it or be seen. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

int rcu_read_lock_held(void)
{
	return rcu_depth > 0;
}

void rcu_read_unlock(void)
{
	if (!--rcu_depth)
		__atomic_store_n(&rcu_slot[rcu_me], 0, __ATOMIC_RELEASE);
}

/* Single updater: call_rcu() and shim_rcu_poll() run in one thread. */
void call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head))
{
	/* A table queued by a callback was unlinked with its parent. */
	if (rcu_running)
		container_of(head, struct page, rcu_head)->unlink_seq =
			container_of(rcu_running, struct page, rcu_head)
				->unlink_seq;
#ifdef SHIM_CHECKS
	/*
	 * A table is queued only once every hart that may have cached it
	 * flushed every VMID since it was unlinked.
	 */
	if (!rcu_running) {
		struct page *page = container_of(head, struct page, rcu_head);

		WARN_ON(page->unlink_seq && shim_flush_every_seq < page->unlink_seq);
	}
#endif
	head->func = func;
	head->next = NULL;
	head->gp = __atomic_add_fetch(&rcu_gp, 1, __ATOMIC_SEQ_CST);
	*rcu_tail = head;
	rcu_tail = &head->next;
}

/*
 * Run the callbacks whose grace period ended: no reader is still inside a
 * critical section that began before the callback was queued. With @wait,
 * wait for all of them.
 */
void shim_rcu_poll(bool wait)
{
	struct rcu_head *head;
	unsigned long s;
	int i, n;

	WARN_ON(rcu_depth);
	while ((head = rcu_pending)) {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		n = __atomic_load_n(&rcu_nr_slots, __ATOMIC_SEQ_CST);
		for (i = 0; i < n; i++) {
			s = __atomic_load_n(&rcu_slot[i], __ATOMIC_SEQ_CST);
			if (s && s < head->gp)
				break;
		}
		if (i < n) {
			shim_rcu_deferred++;
			if (!wait)
				return;
			sched_yield();
			continue;
		}
		rcu_pending = head->next;
		if (!rcu_pending)
			rcu_tail = &rcu_pending;
		rcu_running = head;
		head->func(head);
		rcu_running = NULL;
	}
}

unsigned long shim_resched_period;
static unsigned long shim_resched_calls;

bool need_resched(void)
{
	return shim_resched_period &&
	       !(__atomic_add_fetch(&shim_resched_calls, 1, __ATOMIC_RELAXED) %
		 shim_resched_period);
}

static __thread bool shim_ipi; /* on_each_cpu_mask() runs the function here */

/* Every simulated hart is in the mask: a call flushes them all. */
void on_each_cpu_mask(const struct cpumask *mask, void (*func)(void *info),
		      void *info, int wait)
{
	shim_ipi = true;
	func(info);
	shim_ipi = false;
}

/* Ranged flushes may come from parallel faults; whole-VMID ones may not. */
static void record_flush(bool local, unsigned long vmid, gpa_t gpa, gpa_t gpsz,
			 unsigned long order)
{
	unsigned long n;

	local = local && !shim_ipi;
	WARN_ON(gpsz && (gpsz != BIT(order) || !IS_ALIGNED(gpa, gpsz)));
	n = __atomic_fetch_add(&shim_nr_flushes, 1, __ATOMIC_RELAXED);
	if (n < SHIM_MAX_FLUSH)
		shim_flushes[n] = (struct shim_flush){ local, vmid, gpa, gpsz };
	if (!gpsz)
		shim_flush_all_seq = ++shim_seq;
	if (shim_flush_hook)
		shim_flush_hook(local, gpa, gpsz);
}

void kvm_riscv_local_hfence_gvma_vmid_gpa(unsigned long vmid, gpa_t gpa,
					  gpa_t gpsz, unsigned long order)
{
	record_flush(true, vmid, gpa, gpsz ?: 1, order);
}

void kvm_riscv_hfence_gvma_vmid_gpa(struct kvm *kvm, unsigned long hbase,
				    unsigned long hmask, gpa_t gpa, gpa_t gpsz,
				    unsigned long order, unsigned long vmid)
{
	record_flush(false, vmid, gpa, gpsz ?: 1, order);
}

void kvm_riscv_local_hfence_gvma_vmid_all(unsigned long vmid)
{
	record_flush(true, vmid, 0, 0, 0);
}

void kvm_riscv_hfence_gvma_vmid_all(struct kvm *kvm, unsigned long hbase,
				    unsigned long hmask, unsigned long vmid)
{
	record_flush(false, vmid, 0, 0, 0);
}

/* Without SBI NACL, as here: the local fence of @gpsz at @gpa, or all. */
void kvm_riscv_fault_hfence_gvma_vmid(unsigned long vmid, gpa_t gpa,
				      gpa_t gpsz, unsigned long order)
{
	record_flush(true, vmid, gpa, gpsz, order);
}

void kvm_flush_remote_tlbs(struct kvm *kvm)
{
	record_flush(false, kvm->arch.vmid.vmid, 0, 0, 0);
}

void kvm_riscv_local_hfence_gvma_all(void)
{
	if (shim_ipi)
		shim_flush_every_seq = ++shim_seq;
	shim_nr_flush_all++;
	record_flush(true, SHIM_VMID_ALL, 0, 0, 0);
}
