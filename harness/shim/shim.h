/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim for arch/riscv/kvm/gstage.c, in the style of
 * tools/testing/vma/vma_internal.h: just enough of the kernel API for
 * gstage.c and asm/kvm_gstage.h to build unmodified with a host gcc. The
 * Makefile links every linux/ and asm/ header they include to this file.
 */
#ifndef _GSTAGE_SHIM_H
#define _GSTAGE_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sched.h>

#define CONFIG_64BIT 1

/* Not <errno.h>: it would include our own linux/errno.h. */
#define EAGAIN 11
#define ENOMEM 12
#define EEXIST 17
#define EINVAL 22

typedef uint32_t u32;
typedef uint64_t u64;
typedef u64 gpa_t;
typedef u64 gfn_t;
typedef u64 phys_addr_t;

#define __init
#define U32_MAX 0xffffffffU
#define __ro_after_init
#define unlikely(x) __builtin_expect(!!(x), 0)

/* bits.h, align.h, bitops.h, list.h */
#define BITS_PER_LONG 64
#define BIT(n) (1UL << (n))
#define BIT_ULL(n) (1ULL << (n))
#define GENMASK(h, l) (((~0UL) << (l)) & (~0UL >> (BITS_PER_LONG - 1 - (h))))
#define ALIGN(x, a) (((x) + ((__typeof__(x))(a)-1)) & ~((__typeof__(x))(a)-1))
#define ALIGN_DOWN(x, a) ((x) & ~((__typeof__(x))(a)-1))
#define IS_ALIGNED(x, a) (((x) & ((__typeof__(x))(a)-1)) == 0)
#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
#define min_t(t, a, b) min((t)(a), (t)(b))
#define for_each_set_bit(bit, addr, size)          \
	for ((bit) = 0; (bit) < (size); (bit)++)   \
		if (!(*(addr) & (1UL << (bit)))) { \
		} else
#define __ffs(x) ((unsigned long)__builtin_ctzl(x))
#define __fls(x) ((unsigned long)(BITS_PER_LONG - 1 - __builtin_clzl(x)))
#define ilog2(n) __fls(n)
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr)-offsetof(type, member)))

static inline void bitmap_clear(unsigned long *map, unsigned int start,
				unsigned int len)
{
	for (; len; len--, start++)
		map[start / BITS_PER_LONG] &= ~BIT(start % BITS_PER_LONG);
}

struct list_head {
	struct list_head *next, *prev;
};

#define LIST_HEAD_INIT(name)     \
	{                        \
		&(name), &(name) \
	}
#define LIST_HEAD(name) struct list_head name = LIST_HEAD_INIT(name)
static inline void INIT_LIST_HEAD(struct list_head *list)
{
	list->next = list->prev = list;
}
#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_for_each_entry_safe(pos, n, head, member)                  \
	for (pos = list_entry((head)->next, __typeof__(*pos), member),  \
	    n = list_entry(pos->member.next, __typeof__(*pos), member); \
	     &pos->member != (head);                                    \
	     pos = n, n = list_entry(n->member.next, __typeof__(*n), member))

static inline void list_add(struct list_head *new, struct list_head *head)
{
	new->next = head->next;
	new->prev = head;
	head->next->prev = new;
	head->next = new;
}

static inline void list_del(struct list_head *entry)
{
	entry->prev->next = entry->next;
	entry->next->prev = entry->prev;
}

static inline bool list_empty(const struct list_head *head)
{
	return head->next == head;
}

/* WARN*: counted, a test fails if any fired during it. */
extern unsigned long shim_warn_count;
void shim_warn(const char *file, int line, const char *what);

#define WARN_ON(cond)                                         \
	({                                                    \
		int __c = !!(cond);                           \
		if (unlikely(__c))                            \
			shim_warn(__FILE__, __LINE__, #cond); \
		__c;                                          \
	})
#define WARN_ON_ONCE(cond) WARN_ON(cond)
#define WARN_ONCE(cond, fmt, ...) WARN_ON(cond)

/* Marked accesses are relaxed atomics, so TSAN sees them like KCSAN. */
#define READ_ONCE(x)                                         \
	({                                                   \
		__typeof__(x) __r;                           \
		__atomic_load(&(x), &__r, __ATOMIC_RELAXED); \
		__r;                                         \
	})
#define WRITE_ONCE(x, v)                                      \
	do {                                                  \
		__typeof__(x) __w = (v);                      \
		__atomic_store(&(x), &__w, __ATOMIC_RELAXED); \
	} while (0)
/* gstage.c only uses it on PTEs: record a table unlink, as set_pte(). */
void shim_note_unlink(unsigned long old, unsigned long new);
#define cmpxchg(ptr, o, n)                                             \
	({                                                             \
		__typeof__(*(ptr)) __o = (o), __n = (n);               \
		if (__atomic_compare_exchange_n((ptr), &__o, __n, false, \
						__ATOMIC_SEQ_CST,      \
						__ATOMIC_RELAXED))     \
			shim_note_unlink(__o, __n);                    \
		__o;                                                   \
	})
/*
 * Kernel semantics: on failure *(po) gets the value found, unordered. If
 * set, shim_try_cmpxchg_hook runs first: a test stores there what a racing
 * thread would have stored.
 */
extern void (*shim_try_cmpxchg_hook)(unsigned long *ptr, unsigned long new);
#define try_cmpxchg(ptr, po, n)                                      \
	({                                                           \
		__typeof__(*(ptr)) __n = (n);                        \
		if (shim_try_cmpxchg_hook)                           \
			shim_try_cmpxchg_hook((ptr), __n);           \
		__typeof__(*(ptr)) __old = *(po);                    \
		bool __ok = __atomic_compare_exchange_n(             \
			(ptr), (po), __n, false, __ATOMIC_SEQ_CST,   \
			__ATOMIC_RELAXED);                           \
		if (__ok)                                            \
			shim_note_unlink(__old, __n);                \
		__ok;                                                \
	})
static inline bool test_and_clear_bit(long nr, volatile unsigned long *addr)
{
	return __atomic_fetch_and(addr, ~BIT(nr), __ATOMIC_SEQ_CST) & BIT(nr);
}

/* The bitmaps of dirty logging by the D bit; little-endian as riscv. */
#define BITS_TO_LONGS(n) (((n) + BITS_PER_LONG - 1) / BITS_PER_LONG)
#define xchg(ptr, n) __atomic_exchange_n((ptr), (n), __ATOMIC_SEQ_CST)
static inline void set_bit_le(long nr, unsigned long *addr)
{
	__atomic_fetch_or(&addr[nr / BITS_PER_LONG], BIT(nr % BITS_PER_LONG),
			  __ATOMIC_SEQ_CST);
}

static inline void __clear_bit(long nr, unsigned long *addr)
{
	addr[nr / BITS_PER_LONG] &= ~BIT(nr % BITS_PER_LONG);
}

static inline bool __test_and_set_bit(long nr, unsigned long *addr)
{
	bool old = addr[nr / BITS_PER_LONG] & BIT(nr % BITS_PER_LONG);

	addr[nr / BITS_PER_LONG] |= BIT(nr % BITS_PER_LONG);
	return old;
}

#define BITMAP_FIRST_WORD_MASK(start) (~0UL << ((start) & (BITS_PER_LONG - 1)))
#define BITMAP_LAST_WORD_MASK(nbits) (~0UL >> (-(nbits) & (BITS_PER_LONG - 1)))
#define hweight_long(w) ((unsigned long)__builtin_popcountl(w))

typedef struct {
	long counter;
} atomic_long_t;

static inline void atomic_long_or(long i, atomic_long_t *v)
{
	__atomic_fetch_or(&v->counter, i, __ATOMIC_SEQ_CST);
}

#define smp_wmb() __atomic_thread_fence(__ATOMIC_RELEASE)
#define smp_mb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define cpu_relax() __builtin_ia32_pause()

/*
 * RCU (shim.c): rcu_read_lock() records the grace-period counter in the
 * reader thread's slot; a callback runs in shim_rcu_poll() once every
 * reader that may have started before call_rcu() has left.
 */
struct rcu_head {
	struct rcu_head *next;
	void (*func)(struct rcu_head *head);
	unsigned long gp;
};
void rcu_read_lock(void);
void rcu_read_unlock(void);
void call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head));
void shim_rcu_poll(bool wait);
#define rcu_barrier() shim_rcu_poll(true)
int rcu_read_lock_held(void);
#define RCU_LOCKDEP_WARN(cond, what) WARN_ON(cond)
/* The harts that loaded a vCPU; the tests' harts all have. */
typedef struct cpumask {
	unsigned long bits;
} cpumask_t;
/* Runs @func once, as a broadcast: a local flush in it counts as remote. */
void on_each_cpu_mask(const struct cpumask *mask, void (*func)(void *info),
		      void *info, int wait);
/* Trees before 4-perf/0009 flush on every online hart: count them as a mask. */
#define on_each_cpu(func, info, wait) on_each_cpu_mask(NULL, func, info, wait)
extern unsigned long shim_rcu_deferred;

/* Simulated physical memory: page tables live in one aligned arena. */
#define PAGE_SHIFT 12
#define PAGE_SIZE (1UL << PAGE_SHIFT)
#define PMD_SIZE (1UL << 21)
#define PUD_SIZE (1UL << 30)
#define PTRS_PER_PTE 512
#define PFN_DOWN(x) ((x) >> PAGE_SHIFT)
#define PFN_PHYS(x) ((phys_addr_t)(x) << PAGE_SHIFT)
#define SHIM_PHYS_BASE 0x80000000UL
#define get_order(n) ((int)__fls(((n)-1) | (PAGE_SIZE - 1)) + 1 - PAGE_SHIFT)

struct page {
	bool freed; /* marked accesses: lockless walkers check it */
	unsigned long private;
	unsigned long unlink_seq; /* when set_pte() unlinked this table */
	struct list_head lru;
	struct rcu_head rcu_head;
};

extern char *shim_mem;
extern struct page *shim_pages;
extern unsigned long shim_mem_pages;
void shim_bad_addr(const char *what, unsigned long val);

static inline unsigned long __pa(const void *v)
{
	unsigned long off = (unsigned long)v - (unsigned long)shim_mem;

	if (off >= shim_mem_pages << PAGE_SHIFT)
		shim_bad_addr("__pa", (unsigned long)v);
	return SHIM_PHYS_BASE + off;
}

/* Walking into a freed table is fatal: the page may be in use again. */
static inline void *pfn_to_virt(unsigned long pfn)
{
	unsigned long off = PFN_PHYS(pfn) - SHIM_PHYS_BASE;

	if (off >= shim_mem_pages << PAGE_SHIFT)
		shim_bad_addr("pfn_to_virt", pfn);
#ifdef SHIM_CHECKS
	if (READ_ONCE(shim_pages[off >> PAGE_SHIFT].freed))
		shim_bad_addr("pfn_to_virt(freed page)", pfn);
#endif
	return shim_mem + off;
}

#define virt_to_page(v) \
	(&shim_pages[(__pa((void *)(v)) - SHIM_PHYS_BASE) >> PAGE_SHIFT])
#define page_address(page) \
	((void *)(shim_mem + (((page)-shim_pages) << PAGE_SHIFT)))
#define page_private(page) ((page)->private)
#define set_page_private(page, v) ((page)->private = (v))

void free_page(unsigned long addr);
void __free_pages(struct page *page, unsigned int order);
#define __free_page(page) __free_pages(page, 0)
#define put_page(page) free_page((unsigned long)page_address(page))

/* Table pages accounted by gstage.c (and the root, by the test). */
extern long shim_pgtable_pages;
#define kvm_account_pgtable_pages(virt, nr) \
	((void)(virt),                      \
	 __atomic_fetch_add(&shim_pgtable_pages, (nr), __ATOMIC_RELAXED))

/* Test-side arena control (shim.c). */
extern long shim_pages_in_use;
void shim_mem_init(unsigned long npages);
void shim_mem_reset(void);
void *shim_alloc_pages(unsigned long n);

struct kvm_mmu_memory_cache {
	int nobjs;
};
void *kvm_mmu_memory_cache_alloc(struct kvm_mmu_memory_cache *mc);

/* riscv Sv39/48/57 PTEs (asm/pgtable-bits.h, asm/pgtable.h) */
#define _PAGE_PRESENT (1 << 0)
#define _PAGE_READ (1 << 1)
#define _PAGE_WRITE (1 << 2)
#define _PAGE_EXEC (1 << 3)
#define _PAGE_USER (1 << 4)
#define _PAGE_ACCESSED (1 << 6)
#define _PAGE_DIRTY (1 << 7)
#define _PAGE_LEAF (_PAGE_READ | _PAGE_WRITE | _PAGE_EXEC)
#define _PAGE_TABLE _PAGE_PRESENT
#define _PAGE_PFN_SHIFT 10
#define _PAGE_PFN_MASK GENMASK(53, 10)

typedef struct {
	unsigned long pte;
} pte_t;
typedef struct {
	unsigned long pgd;
} pgd_t;
typedef struct {
	unsigned long pgprot;
} pgprot_t;

#define pte_val(x) ((x).pte)
#define __pte(x) ((pte_t){ (x) })
#define pgprot_val(x) ((x).pgprot)
#define __pgprot(x) ((pgprot_t){ (x) })
#define __page_val_to_pfn(v) (((v)&_PAGE_PFN_MASK) >> _PAGE_PFN_SHIFT)

#define _PAGE_BASE (_PAGE_PRESENT | _PAGE_ACCESSED | _PAGE_USER)
#define PAGE_READ __pgprot(_PAGE_BASE | _PAGE_READ)
#define PAGE_WRITE __pgprot(_PAGE_BASE | _PAGE_READ | _PAGE_WRITE)
#define PAGE_READ_EXEC __pgprot(_PAGE_BASE | _PAGE_READ | _PAGE_EXEC)
#define PAGE_WRITE_EXEC \
	__pgprot(_PAGE_BASE | _PAGE_READ | _PAGE_EXEC | _PAGE_WRITE)

#define ptep_get(ptep) READ_ONCE(*(ptep))
#define pfn_pte(pfn, prot) \
	__pte(((unsigned long)(pfn) << _PAGE_PFN_SHIFT) | pgprot_val(prot))
#define pte_pfn(pte) __page_val_to_pfn(pte_val(pte))
#define pte_young(pte) (pte_val(pte) & _PAGE_ACCESSED)
#define pte_mkdirty(pte) __pte(pte_val(pte) | _PAGE_DIRTY)

/* Only gstage.c's writer side uses set_pte(): record table unlinks. */
extern unsigned long shim_seq;
static inline void set_pte(pte_t *ptep, pte_t pte)
{
	shim_note_unlink(pte_val(ptep_get(ptep)), pte_val(pte));
	WRITE_ONCE(*ptep, pte);
}

static inline pgprot_t pte_pgprot(pte_t pte)
{
	return __pgprot(pte_val(pfn_pte(pte_pfn(pte), __pgprot(0))) ^
			pte_val(pte));
}

struct vm_area_struct;
static inline int ptep_test_and_clear_young(struct vm_area_struct *vma,
					    unsigned long address, pte_t *ptep)
{
	if (!pte_young(ptep_get(ptep)))
		return 0;
	return test_and_clear_bit(ilog2(_PAGE_ACCESSED), &ptep->pte);
}

/* asm/csr.h */
#define HGATP_MODE_OFF 0UL
#define HGATP_MODE_SV32X4 1UL
#define HGATP_MODE_SV39X4 8UL
#define HGATP_MODE_SV48X4 9UL
#define HGATP_MODE_SV57X4 10UL
#define HGATP_PAGE_SHIFT 12
#define HGATP_MODE_SHIFT 60
#define CSR_HGATP 0x680
extern unsigned long shim_hgatp, shim_hgatp_max_mode;
#define csr_write(csr, val) ((void)(csr), shim_hgatp = (val))
#define csr_read(csr)                                              \
	((void)(csr),                                              \
	 (shim_hgatp >> HGATP_MODE_SHIFT) <= shim_hgatp_max_mode ? \
		 shim_hgatp :                                      \
		 0UL)

/* asm/hwcap.h, asm/cpufeature.h: the tests choose whether harts have Svvptc. */
#define RISCV_ISA_EXT_SVVPTC 1
extern bool shim_svvptc;
#define riscv_has_extension_unlikely(ext) \
	((ext) == RISCV_ISA_EXT_SVVPTC && shim_svvptc)

/* KVM: struct kvm and recorded TLB flushes (asm/kvm_tlb.h) */
struct kvm_vmid {
	unsigned long vmid;
};

struct kvm_arch {
	pgd_t *pgd;
	unsigned long pgd_levels;
	struct kvm_vmid vmid;
	cpumask_t gstage_cpus;
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define BUILD_BUG_ON(cond) _Static_assert(!(cond), #cond)

typedef struct {
	long counter;
} atomic64_t;

static inline void atomic64_add(long i, atomic64_t *v)
{
	__atomic_fetch_add(&v->counter, i, __ATOMIC_RELAXED);
}

static inline void atomic64_inc(atomic64_t *v)
{
	atomic64_add(1, v);
}

static inline long atomic64_read(atomic64_t *v)
{
	return __atomic_load_n(&v->counter, __ATOMIC_RELAXED);
}

/* The VM stats that gstage.c updates (asm/kvm_host.h), if the tree has them. */
struct kvm_vm_stat {
	atomic64_t pages[3];
	atomic64_t gstage_fence_all_vmid;
};

struct kvm {
	int mmu_lock;
	struct kvm_arch arch;
	struct kvm_vm_stat stat;
};

/* The vCPU stats that gstage.c updates for a fault, if the tree has them. */
struct kvm_vcpu {
	struct {
		u64 gstage_fault_spurious;
		u64 gstage_fence_local;
	} stat;
};

struct kvm_memory_slot {
	gfn_t base_gfn;
	unsigned long npages;
	unsigned long *dirty_bitmap;
};

/* mmu.c's, for kvm_riscv_gstage_recover_huge(): the test defines it. */
bool kvm_riscv_mmu_host_maps_huge(struct kvm *kvm, const struct kvm_memory_slot *slot,
				  gpa_t gpa, gpa_t size);

/* The tests hold their own locks; lockdep is not simulated. */
#define lockdep_assert_held(lock) ((void)(lock))
#define lockdep_assert_held_write(lock) ((void)(lock))

#define lockdep_assert_held_read(lock) ((void)(lock))

static inline int cond_resched_rwlock_write(int *lock)
{
	return 0;
}

static inline int cond_resched_rwlock_read(int *lock)
{
	return 0;
}

/*
 * need_resched() says yes on every shim_resched_period-th call (never if
 * 0), so that unmaps that may block stop and resume their walks.
 */
extern unsigned long shim_resched_period;
bool need_resched(void);
#define rwlock_needbreak(lock) ((void)(lock), 0)

/* A flush of the whole VMID has size 0. */
struct shim_flush {
	bool local;
	unsigned long vmid;
	gpa_t addr, size;
};
#define SHIM_MAX_FLUSH 4096
extern struct shim_flush shim_flushes[SHIM_MAX_FLUSH];
extern unsigned long shim_nr_flushes, shim_nr_flush_all, shim_flush_all_seq;
/* The last flush of every VMID on every hart (an IPI's local one too). */
extern unsigned long shim_flush_every_seq;
/* The VMID an hfence of every VMID records. */
#define SHIM_VMID_ALL (~0UL)
/* Table pages freed outside RCU callbacks: never linked (shim.c). */
extern unsigned long shim_unlinked_frees;

/*
 * If set, called for every hfence of a VMID: @local for the hart that runs
 * the code, else for every hart; @gpsz 0 for the whole VMID.
 */
extern void (*shim_flush_hook)(bool local, gpa_t gpa, gpa_t gpsz);

void kvm_riscv_local_hfence_gvma_vmid_gpa(unsigned long vmid, gpa_t gpa,
					  gpa_t gpsz, unsigned long order);
void kvm_riscv_hfence_gvma_vmid_gpa(struct kvm *kvm, unsigned long hbase,
				    unsigned long hmask, gpa_t gpa, gpa_t gpsz,
				    unsigned long order, unsigned long vmid);
void kvm_riscv_local_hfence_gvma_vmid_all(unsigned long vmid);
void kvm_riscv_hfence_gvma_vmid_all(struct kvm *kvm, unsigned long hbase,
				    unsigned long hmask, unsigned long vmid);
void kvm_riscv_fault_hfence_gvma_vmid(unsigned long vmid, gpa_t gpa,
				      gpa_t gpsz, unsigned long order);
void kvm_flush_remote_tlbs(struct kvm *kvm);
#define gfn_to_gpa(gfn) ((gpa_t)(gfn) << PAGE_SHIFT)
#define gpa_to_gfn(gpa) ((gfn_t)((gpa) >> PAGE_SHIFT))
void kvm_riscv_local_hfence_gvma_all(void);

#endif /* _GSTAGE_SHIM_H */
