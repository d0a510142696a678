/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim for arch/riscv/kvm/gstage.c, in the style of
 * tools/testing/vma/vma_internal.h: just enough of the kernel API for
 * gstage.c and asm/kvm_gstage.h to build unmodified with a host gcc.
 * Every linux/ and asm/ header under shim/ includes this one file.
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
#define ENOMEM 12
#define EEXIST 17
#define EINVAL 22

typedef uint8_t u8;
typedef uint32_t u32;
typedef uint64_t u64;
typedef u64 gpa_t;
typedef u64 gfn_t;
typedef u64 phys_addr_t;

#define __init
#define __ro_after_init
#define EXPORT_SYMBOL(sym)
#define EXPORT_SYMBOL_GPL(sym)
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* bits.h, align.h, bitops.h */
#define BITS_PER_LONG 64
#define BIT(n) (1UL << (n))
#define BIT_ULL(n) (1ULL << (n))
#define GENMASK(h, l) (((~0UL) << (l)) & (~0UL >> (BITS_PER_LONG - 1 - (h))))
#define ALIGN(x, a) (((x) + ((__typeof__(x))(a)-1)) & ~((__typeof__(x))(a)-1))
#define ALIGN_DOWN(x, a) ((x) & ~((__typeof__(x))(a)-1))
#define min(a, b) ((a) < (b) ? (a) : (b))

#define __ffs(x) ((unsigned long)__builtin_ctzl(x))
#define __fls(x) ((unsigned long)(BITS_PER_LONG - 1 - __builtin_clzl(x)))

void __bitmap_clear(unsigned long *map, unsigned int start, int len);
#define bitmap_clear(map, start, nbits) __bitmap_clear(map, start, nbits)

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
#define WARN(cond, fmt, ...) WARN_ON(cond)
#define BUG_ON(cond) ((cond) ? __builtin_trap() : (void)0)

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
#define cmpxchg(ptr, o, n)                                           \
	({                                                           \
		__typeof__(*(ptr)) __o = (o);                        \
		__atomic_compare_exchange_n((ptr), &__o, (n), false, \
					    __ATOMIC_SEQ_CST,        \
					    __ATOMIC_SEQ_CST);       \
		__o;                                                 \
	})
#define try_cmpxchg(ptr, po, n)                                                \
	__atomic_compare_exchange_n((ptr), (po), (n), false, __ATOMIC_SEQ_CST, \
				    __ATOMIC_SEQ_CST)
#define xchg(ptr, v) __atomic_exchange_n((ptr), (v), __ATOMIC_SEQ_CST)
#define smp_wmb() __atomic_thread_fence(__ATOMIC_RELEASE)
#define cpu_relax() __builtin_ia32_pause()

/* Locks: only counted, gstage.c is single threaded w.r.t. itself. */
typedef struct {
	int writers, readers;
} rwlock_t;
extern unsigned long shim_resched_count;
#define write_lock(l) ((l)->writers++)
#define write_unlock(l) ((l)->writers--)
#define lockdep_assert_held(l) WARN_ON(!(l)->writers && !(l)->readers)
#define lockdep_assert_held_write(l) WARN_ON(!(l)->writers)
#define cond_resched() ((void)0)
#define cond_resched_rwlock_write(l)  \
	({                            \
		shim_resched_count++; \
		0;                    \
	})

/* RCU: callbacks deferred until the test's next quiescent point. */
struct rcu_head {
	struct rcu_head *next;
	void (*func)(struct rcu_head *head);
};
extern int shim_rcu_nesting;
#define rcu_read_lock() (shim_rcu_nesting++)
#define rcu_read_unlock() (shim_rcu_nesting--)
#define rcu_dereference(p) READ_ONCE(p)
void call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head));
void synchronize_rcu(void);
void shim_rcu_quiesce(void);

/* Simulated physical memory: page tables live in one aligned arena. */
#define PAGE_SHIFT 12
#define PAGE_SIZE (1UL << PAGE_SHIFT)
#define PMD_SIZE (1UL << 21)
#define PUD_SIZE (1UL << 30)
#define PTRS_PER_PTE 512
#define PFN_DOWN(x) ((x) >> PAGE_SHIFT)
#define PFN_PHYS(x) ((phys_addr_t)(x) << PAGE_SHIFT)
#define SHIM_PHYS_BASE 0x80000000UL

struct page {
	int refcount;
	struct rcu_head rcu;
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

static inline void *pfn_to_virt(unsigned long pfn)
{
	unsigned long off = PFN_PHYS(pfn) - SHIM_PHYS_BASE;

	if (off >= shim_mem_pages << PAGE_SHIFT)
		shim_bad_addr("pfn_to_virt", pfn);
	return shim_mem + off;
}

static inline struct page *virt_to_page(const void *v)
{
	return &shim_pages[(__pa(v) - SHIM_PHYS_BASE) >> PAGE_SHIFT];
}

#define page_address(page) (shim_mem + (((page)-shim_pages) << PAGE_SHIFT))

void put_page(struct page *page);
void free_page(unsigned long addr);

/* Test-side arena control (shim.c). */
extern unsigned long shim_mem_used;
extern long shim_pages_in_use;
void shim_mem_init(unsigned long npages);
void shim_mem_reset(void);
void *shim_alloc_pages(unsigned long n);
bool shim_page_live(const void *v);

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
#define _PAGE_GLOBAL (1 << 5)
#define _PAGE_ACCESSED (1 << 6)
#define _PAGE_DIRTY (1 << 7)
#define _PAGE_SOFT_DIRTY 0
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
#define set_pte(ptep, pte) WRITE_ONCE(*(ptep), pte)
#define pfn_pte(pfn, prot) \
	__pte(((unsigned long)(pfn) << _PAGE_PFN_SHIFT) | pgprot_val(prot))
#define pte_pfn(pte) __page_val_to_pfn(pte_val(pte))
#define pte_young(pte) (pte_val(pte) & _PAGE_ACCESSED)
#define pte_mkdirty(pte) __pte(pte_val(pte) | _PAGE_DIRTY | _PAGE_SOFT_DIRTY)
#define pte_wrprotect(pte) __pte((pte_val(pte) & ~_PAGE_WRITE) | _PAGE_READ)

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
	return !!(__atomic_fetch_and(&ptep->pte, ~(unsigned long)_PAGE_ACCESSED,
				     __ATOMIC_SEQ_CST) &
		  _PAGE_ACCESSED);
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

/* asm/hwcap.h, asm/cpufeature.h */
#define RISCV_ISA_EXT_SVADU 0
#define RISCV_ISA_EXT_SVVPTC 1
#define riscv_has_extension_unlikely(ext) false

/* KVM: struct kvm and recorded TLB flushes (asm/kvm_tlb.h) */
struct kvm_vmid {
	unsigned long vmid;
};

struct kvm_arch {
	pgd_t *pgd;
	unsigned long pgd_levels;
	struct kvm_vmid vmid;
};

struct kvm {
	rwlock_t mmu_lock;
	struct kvm_arch arch;
};

struct shim_flush {
	bool local;
	unsigned long vmid, order;
	gpa_t addr, size;
};
#define SHIM_MAX_FLUSH 4096
extern struct shim_flush shim_flushes[SHIM_MAX_FLUSH];
extern unsigned long shim_nr_flushes, shim_nr_flush_all;

void kvm_riscv_local_hfence_gvma_vmid_gpa(unsigned long vmid, gpa_t gpa,
					  gpa_t gpsz, unsigned long order);
void kvm_riscv_hfence_gvma_vmid_gpa(struct kvm *kvm, unsigned long hbase,
				    unsigned long hmask, gpa_t gpa, gpa_t gpsz,
				    unsigned long order, unsigned long vmid);
void kvm_riscv_local_hfence_gvma_all(void);

#endif /* _GSTAGE_SHIM_H */
