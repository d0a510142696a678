// SPDX-License-Identifier: GPL-2.0
/*
 * Tests for arch/riscv/kvm/gstage.c against a reference model.
 *
 * The model keeps every leaf of a two-slot window (2 x 1 GiB, at a random
 * 1 GiB aligned GPA) in one array per level: lv[2] = 1 GiB leaves,
 * lv[1] = 2 MiB leaves, lv[0] = 4 KiB leaves, each holding the expected
 * PTE value. Per-1G and per-2M leaf counts let walks skip empty space.
 * HAVE_* (from the Makefile) select the API of the tree under test.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/kvm_host.h>
#include <asm/kvm_gstage.h>

#define NSLOT 2
#define W _PAGE_WRITE
#define A _PAGE_ACCESSED
#define D _PAGE_DIRTY
#define CHG_MAX 8192
#define ROOT_PAGES ((long)(kvm_riscv_gstage_pgd_size / PAGE_SIZE))

static unsigned long opt_seeds = 200, opt_ops = 500, opt_race_iters = 20000;
static const char *opt_only;

/* ---- minimal KTAP-ish test runner ---- */
static int nr_pass, nr_fail, test_no, cur_fails;

static bool check_fail(int line, const char *cond)
{
	if (cur_fails++ < 5)
		printf("# FAIL line %d: %s\n", line, cond);
	return false;
}

#define CHECK(cond) ((cond) ? true : check_fail(__LINE__, #cond))
#define CHECKF(cond, fmt, ...)                           \
	((cond) ? true :                                 \
		  (printf("# " fmt "\n", ##__VA_ARGS__), \
		   check_fail(__LINE__, #cond)))

static unsigned long rnd_state;

/* xorshift64*, with state *@s (never 0): threads keep their own. */
static unsigned long rnd_next(unsigned long *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717UL;
}

static unsigned long rnd(void)
{
	return rnd_next(&rnd_state);
}

static unsigned long rndn(unsigned long n)
{
	return rnd() % n;
}

/* ---- the API of the tree under test ---- */
#ifdef HAVE_UNMAP_END
#define gstage_unmap(gs, s, size, may_block)                               \
	({                                                                 \
		gpa_t __s = (s);                                           \
		kvm_riscv_gstage_unmap_range(gs, __s, __s + (size), may_block); \
	})
#else
#define gstage_unmap kvm_riscv_gstage_unmap_range
#endif

#ifdef HAVE_MAP_PROT
/* What kvm_riscv_mmu_map() says of the page: its thread's. */
static __thread bool host_writable;
#define set_host_writable(gs, on) (host_writable = (on))

static int gstage_map(struct kvm_gstage *gs, struct kvm_mmu_memory_cache *pc,
		      gpa_t gpa, phys_addr_t hpa, unsigned long size, bool ro,
		      bool x, struct kvm_gstage_mapping *out)
{
	unsigned long prot = _PAGE_BASE | _PAGE_READ | (ro ? 0 : _PAGE_WRITE) |
			     (x ? _PAGE_EXEC : 0) |
			     (host_writable ? KVM_GSTAGE_PTE_HOST_WRITABLE : 0);

	return kvm_riscv_gstage_map_page(gs, pc, gpa, hpa, size, __pgprot(prot),
					 out);
}
#else
#define gstage_map kvm_riscv_gstage_map_page
#ifdef KVM_GSTAGE_FLAGS_HOST_WRITABLE
#define set_host_writable(gs, on)                                  \
	((on) ? ((gs)->flags |= KVM_GSTAGE_FLAGS_HOST_WRITABLE) : \
		((gs)->flags &= ~KVM_GSTAGE_FLAGS_HOST_WRITABLE))
#endif
#endif

#ifdef HAVE_AGE_RANGE
/* As the MMU notifiers of mmu.c: under RCU, without mmu_lock. */
static bool gstage_age(struct kvm_gstage *gs, gpa_t s, gpa_t end, bool test_only)
{
	bool young;

	rcu_read_lock();
	young = kvm_riscv_gstage_age_range(gs, s, end, test_only);
	rcu_read_unlock();
	return young;
}
#endif

/* The masked write-protect; with D-bit logging it may track instead. */
#ifdef HAVE_DBIT
#define wp_pt_masked(gs, base, mask) kvm_riscv_gstage_wp_pt_masked(gs, base, mask, NULL)
#else
#define wp_pt_masked kvm_riscv_gstage_wp_pt_masked
#endif

/* A G-stage used by a vCPU's fault: its fences may be local. */
#ifdef HAVE_FAULT_VCPU
static __thread struct kvm_vcpu fault_vcpu;
#define set_fault(gs) ((gs)->vcpu = &fault_vcpu)
#elif defined(KVM_GSTAGE_FLAGS_FAULT)
#define set_fault(gs) ((gs)->flags |= KVM_GSTAGE_FLAGS_FAULT)
#endif

/* ---- environment: a VM with an empty G-stage ---- */
struct env {
	struct kvm kvm;
	struct kvm_gstage gs;
	struct kvm_mmu_memory_cache pc;
	unsigned long warns;
};

static void env_init(struct env *e, unsigned long levels)
{
	shim_mem_reset();
	memset(e, 0, sizeof(*e));
	e->kvm.arch.pgd = shim_alloc_pages(ROOT_PAGES);
	kvm_account_pgtable_pages(e->kvm.arch.pgd, ROOT_PAGES); /* as mmu.c */
	e->kvm.arch.pgd_levels = levels;
	e->kvm.arch.vmid.vmid = 7;
	kvm_riscv_gstage_init(&e->gs, &e->kvm);
	e->warns = shim_warn_count;
}

/* Like mmu.c: top up pgd_levels pages before each operation. */
static void op_begin(struct env *e)
{
	e->pc.nobjs = e->gs.pgd_levels;
	shim_nr_flushes = 0;
}

static bool op_end(struct env *e)
{
	shim_rcu_poll(true);
	return CHECKF(shim_warn_count == e->warns, "%lu WARN(s)",
		      shim_warn_count - e->warns);
}

static unsigned long lsize(int l)
{
	return 1UL << (PAGE_SHIFT + 9 * l);
}

static int map_gpa(struct env *e, gpa_t gpa, int l, bool ro, bool x)
{
	struct kvm_gstage_mapping out;
	gpa_t hpa = ALIGN_DOWN(gpa + (1UL << 40), lsize(l));

	return gstage_map(&e->gs, &e->pc, gpa, hpa, lsize(l), ro,
					 x, &out);
}

/* The leaf mapping @gpa or NULL; @level: its level, or where the walk ended */
static pte_t *leaf(struct env *e, gpa_t gpa, u32 *level)
{
	pte_t *ptep;
	u32 l;
#ifdef HAVE_GET_LEAF_VAL
	pte_t val;

	if (!kvm_riscv_gstage_get_leaf(&e->gs, gpa, &ptep, &val, level ?: &l))
		return NULL;
	CHECK(pte_val(val) == pte_val(*ptep));
#else
	if (!kvm_riscv_gstage_get_leaf(&e->gs, gpa, &ptep, level ?: &l))
		return NULL;
#endif
	return ptep;
}

#ifndef HAVE_FREE_PGD
/* The base tree's mmu.c frees the root itself. */
static void free_root(struct rcu_head *head)
{
	struct page *page = container_of(head, struct page, rcu_head);

	kvm_account_pgtable_pages(page_address(page), -ROOT_PAGES);
	__free_pages(page, get_order(kvm_riscv_gstage_pgd_size));
}

static void kvm_riscv_gstage_free_pgd(pgd_t *pgd)
{
	call_rcu(&virt_to_page(pgd)->rcu_head, free_root);
}
#endif

/* Like kvm_riscv_mmu_free_pgd(): empty, unpublish and free the root. */
static void env_free_pgd(struct env *e)
{
	gstage_unmap(
		&e->gs, 0, kvm_riscv_gstage_gpa_size(e->gs.pgd_levels), false);
	WRITE_ONCE(e->kvm.arch.pgd, NULL);
	kvm_riscv_gstage_free_pgd(e->gs.pgd);
}

/* Was the whole VMID flushed (@remote: on every hart, not just this one)? */
static bool flushed_all(bool remote)
{
	unsigned long i;

	for (i = 0; i < min(shim_nr_flushes, SHIM_MAX_FLUSH); i++)
		if (!shim_flushes[i].size && !(remote && shim_flushes[i].local))
			return true;
	return false;
}

/* ---- reference model ---- */
struct model {
	gpa_t base;
	unsigned long delta; /* hpa = gpa + delta */
	unsigned long *lv[3];
	unsigned int cnt1g[NSLOT], cnt2m[NSLOT * 512];
	long nleaves;
	int nchg;
	struct {
		gpa_t addr, size;
		bool upgrade; /* only sets bits: a new leaf, W, A or D */
		bool install; /* a new leaf */
	} chg[CHG_MAX];
};

static struct model m;

static unsigned long *mslot(gpa_t gpa, int l)
{
	return &m.lv[l][(gpa - m.base) >> (PAGE_SHIFT + 9 * l)];
}

static bool in_window(gpa_t gpa)
{
	return gpa >= m.base && gpa - m.base < NSLOT * PUD_SIZE;
}

static unsigned long model_get(gpa_t gpa, int *level)
{
	int l;

	for (l = 2; l >= 0; l--) {
		if (*mslot(gpa, l)) {
			*level = l;
			return *mslot(gpa, l);
		}
	}
	return 0;
}

/* Step over the empty space at @gpa (which has no leaf). */
static gpa_t model_hole(gpa_t gpa)
{
	if (!m.cnt1g[(gpa - m.base) >> 30])
		return ALIGN_DOWN(gpa, PUD_SIZE) + PUD_SIZE;
	if (!m.cnt2m[(gpa - m.base) >> 21])
		return ALIGN_DOWN(gpa, PMD_SIZE) + PMD_SIZE;
	return ALIGN_DOWN(gpa, PAGE_SIZE) + PAGE_SIZE;
}

/* Set the leaf at (@gpa, @l); @track records it as a change to flush. */
static void model_set(gpa_t gpa, int l, unsigned long pte, bool track)
{
	unsigned long *p = mslot(gpa, l);
	int d = !!pte - !!*p;

	if (*p == pte)
		return;
	m.cnt1g[(gpa - m.base) >> 30] += d;
	if (l < 2)
		m.cnt2m[(gpa - m.base) >> 21] += d;
	m.nleaves += d;
	if (track && m.nchg < CHG_MAX) {
		m.chg[m.nchg].addr = ALIGN_DOWN(gpa, lsize(l));
		m.chg[m.nchg].size = lsize(l);
		m.chg[m.nchg].upgrade = !(*p & ~pte);
		m.chg[m.nchg++].install = !*p;
	}
	*p = pte;
}

static void model_reset(unsigned long seed)
{
	unsigned long i;

	for (i = 0; i < NSLOT * 512; i++)
		if (m.cnt2m[i])
			memset(&m.lv[0][i * 512], 0, 512 * sizeof(long));
	memset(m.lv[1], 0, NSLOT * 512 * sizeof(long));
	memset(m.lv[2], 0, NSLOT * sizeof(long));
	memset(m.cnt1g, 0, sizeof(m.cnt1g));
	memset(m.cnt2m, 0, sizeof(m.cnt2m));
	m.nleaves = 0;
	m.nchg = 0;
}

static void model_split(gpa_t gpa, int target)
{
	unsigned long pte;
	int l, i;

	while ((pte = model_get(gpa, &l)) && l > target) {
		gpa_t b = ALIGN_DOWN(gpa, lsize(l));

		model_set(b, l, 0, true);
		for (i = 0; i < 512; i++)
			model_set(b + i * lsize(l - 1), l - 1,
				  pte | ((i * lsize(l - 1)) >> PAGE_SHIFT)
						  << _PAGE_PFN_SHIFT,
				  true);
	}
}

/* Apply @fn to every leaf that intersects [s, e). */
static void model_for_each(gpa_t s, gpa_t e,
			   void (*fn)(gpa_t gpa, int l, unsigned long pte))
{
	unsigned long pte;
	gpa_t addr = s;
	int l;

	while (addr < e && in_window(addr)) {
		pte = model_get(addr, &l);
		if (pte) {
			addr = ALIGN_DOWN(addr, lsize(l));
			fn(addr, l, pte);
			addr += lsize(l);
		} else {
			addr = model_hole(addr);
		}
	}
}

static void wp_fn(gpa_t gpa, int l, unsigned long pte)
{
	model_set(gpa, l, pte & ~W, true);
}

static void unmap_fn(gpa_t gpa, int l, unsigned long pte)
{
	model_set(gpa, l, 0, true);
}

static bool model_young;

static void young_fn(gpa_t gpa, int l, unsigned long pte)
{
	model_young |= !!(pte & A);
}

static void age_fn(gpa_t gpa, int l, unsigned long pte)
{
	young_fn(gpa, l, pte);
	model_set(gpa, l, pte & ~A, false);
}

/* Walk the leaves intersecting [s, end): they match the model; count. */
static long walk_leaves, walk_tables, model_leaves, walk_level_leaves[5];
static bool walk_model = true; /* false: only count */

static bool walk(struct env *e, pte_t *t, int l, gpa_t gpa, gpa_t s, gpa_t end)
{
	int i, n = l == (int)e->gs.pgd_levels - 1 ? 2048 : 512, ml = 0;
	unsigned long v, mp = 0;
	gpa_t a;

	for (i = 0; i < n; i++) {
		a = gpa + i * lsize(l);
		v = pte_val(t[i]);
		if (!v || a + lsize(l) <= s || a >= end)
			continue;
		if (v & _PAGE_LEAF) {
			walk_leaves++;
			walk_level_leaves[l]++;
			if (walk_model &&
			    !CHECKF(l <= 2 && in_window(a) &&
					    (mp = model_get(a, &ml)) == v &&
					    ml == l,
				    "leaf %#lx level %d at %#lx, model %#lx/%d",
				    v, l, a, mp, ml))
				return false;
			continue;
		}
		if (!CHECKF(l > 0 && (v & 0x3ff) == _PAGE_TABLE,
			    "bad table entry %#lx level %d at %#lx", v, l, a))
			return false;
		walk_tables++;
		if (!walk(e, pfn_to_virt(pte_pfn(__pte(v))), l - 1, a, s, end))
			return false;
	}
	return true;
}

static void count_fn(gpa_t gpa, int l, unsigned long pte)
{
	model_leaves++;
}

static bool verify(struct env *e, gpa_t s, gpa_t end)
{
	walk_leaves = model_leaves = 0;
	model_for_each(s, end, count_fn);
	return walk(e, (pte_t *)e->gs.pgd, e->gs.pgd_levels - 1, 0, s, end) &&
	       CHECKF(walk_leaves == model_leaves, "%ld leaves, model has %ld",
		      walk_leaves, model_leaves);
}

/* Every table reachable, every page accounted (if the tree accounts). */
static bool no_leaked_tables(struct env *e)
{
	int l;

	shim_rcu_poll(true);
	walk_tables = walk_leaves = 0;
	memset(walk_level_leaves, 0, sizeof(walk_level_leaves));
	if (!walk(e, (pte_t *)e->gs.pgd, e->gs.pgd_levels - 1, 0, 0, ~0UL))
		return false;
#ifdef HAVE_PAGE_STATS
	/* The page-size stats count exactly the leaves of each level. */
	for (l = 0; l < 3; l++)
		if (!CHECKF(atomic64_read(&e->kvm.stat.pages[l]) ==
				    walk_level_leaves[l],
			    "pages stat of level %d is %ld, %ld leaves mapped",
			    l, atomic64_read(&e->kvm.stat.pages[l]),
			    walk_level_leaves[l]))
			return false;
#else
	(void)l;
#endif
#ifdef HAVE_FREE_PGD
	if (!CHECKF(shim_pgtable_pages == shim_pages_in_use,
		    "%ld pages accounted, %ld in use", shim_pgtable_pages,
		    shim_pages_in_use))
		return false;
#endif
	return CHECKF(walk_tables + ROOT_PAGES == shim_pages_in_use,
		      "%ld tables reachable, %ld pages in use", walk_tables,
		      shim_pages_in_use - ROOT_PAGES);
}

static bool full_check(struct env *e)
{
	return no_leaked_tables(e) && CHECK(walk_leaves == m.nleaves);
}

/*
 * Every hfence is for the VM's VMID, or for all. A change that takes
 * something away (a permission, a leaf) is covered by a flush of every hart
 * or of the whole VMID. One that only sets bits is covered by any flush, the
 * faulting hart's own fence included, and a new leaf with Svvptc by none. Only a fence of this hart
 * may come without a change: a fault that found nothing to change.
 */
static bool check_hfences(struct env *e)
{
	unsigned long i, j, n = min(shim_nr_flushes, SHIM_MAX_FLUSH);
	struct shim_flush *f = shim_flushes;

	for (j = 0; j < n; j++)
		if (!CHECKF(f[j].vmid == 7 || f[j].vmid == SHIM_VMID_ALL,
			    "hfence %lu: vmid %lu", j, f[j].vmid) ||
		    !CHECKF(m.nchg || !f[j].size || f[j].local,
			    "remote hfence for no change"))
			return false;
	for (i = 0; i < (unsigned long)m.nchg; i++) {
		bool up = m.chg[i].upgrade;

		if (up && m.chg[i].install && shim_svvptc)
			continue;
		for (j = 0; j < n; j++)
			if ((up || !f[j].local) &&
			    (!f[j].size || (f[j].addr <= m.chg[i].addr &&
					    m.chg[i].addr + m.chg[i].size <=
						    f[j].addr + f[j].size)))
				break;
		if (!CHECKF(j < n, "%s at %#lx+%#lx not flushed",
			    up ? "upgrade" : "change", m.chg[i].addr,
			    m.chg[i].size))
			return false;
	}
	return true;
}

/* ---- property test ---- */
static gpa_t rand_gpa(void)
{
	static const unsigned int idx2m[] = { 0,   1,	2,   3,	  100, 101,
					      255, 256, 257, 300, 400, 500,
					      508, 509, 510, 511 };

	return m.base + rndn(NSLOT) * PUD_SIZE + idx2m[rndn(16)] * PMD_SIZE +
	       rndn(512) * PAGE_SIZE;
}

static void rand_range(gpa_t *s, gpa_t *e)
{
	unsigned long r = rndn(100);

	*s = rand_gpa();
	if (r < 55)
		*e = *s + (1 + rndn(64)) * PAGE_SIZE;
	else if (r < 90)
		*e = *s + rndn(4) * PMD_SIZE + rndn(512) * PAGE_SIZE +
		     PAGE_SIZE;
	else if (r < 97)
		*e = *s + PUD_SIZE;
	else
		*s = m.base, *e = m.base + NSLOT * PUD_SIZE;
	*e = min(*e, m.base + NSLOT * PUD_SIZE);
}

static gpa_t gpa_to_hpa(gpa_t gpa)
{
	return (gpa & GENMASK(49, 0)) + m.delta;
}

static bool prop_map(struct env *e)
{
	gpa_t gpa = rand_gpa(), mgpa = gpa, hpa, cmp, csz;
	int l = rndn(100) < 60 ? 0 : rndn(100) < 60 ? 1 : 2, ol = 0, al = 0;
	u32 hl;
	bool ro = rndn(2), x = rndn(4) == 0, hw = rndn(2);
	unsigned long prot = _PAGE_BASE | _PAGE_READ | (ro ? 0 : W) |
			     (x ? _PAGE_EXEC : 0);
	unsigned long old = model_get(gpa, &ol), at;
	bool split;

#ifdef set_host_writable
	/*
	 * As kvm_riscv_mmu_map() for a page that the host lets KVM map
	 * writable: the leaf keeps that through write-protect, split and aging.
	 */
	set_host_writable(&e->gs, hw);
	if (hw)
		prot |= KVM_GSTAGE_PTE_HOST_WRITABLE;
#else
	(void)hw;
#endif

	/*
	 * As kvm_riscv_mmu_map(): a THP fault maps the huge page at the
	 * aligned GPA, a hugetlb or 4 KiB one at the faulting GPA.
	 */
	if (l == 1 && rndn(2))
		mgpa = ALIGN_DOWN(gpa, PMD_SIZE);
	/*
	 * A huge leaf over a table replaces it, whether the lookup finds a
	 * smaller leaf or none: see map_huge_over_table.
	 */
	at = model_get(mgpa, &al);
	if (l && (at ? al < l : !leaf(e, mgpa, &hl) && hl < l)) {
#ifdef HAVE_FREE_PGD
		model_for_each(ALIGN_DOWN(gpa, lsize(l)),
			       ALIGN_DOWN(gpa, lsize(l)) + lsize(l), unmap_fn);
		old = 0;
#else
		/* the base tree would leak the table */
		l = 0;
		mgpa = gpa;
#endif
	}
	hpa = ALIGN_DOWN(gpa_to_hpa(gpa), lsize(l));
	/* Now and then a new 4 KiB page out of the run (a host CoW copy). */
	if (!old && !l && !rndn(8))
		hpa += PMD_SIZE;
	csz = lsize(old && ol > l ? ol : l);
	cmp = ALIGN_DOWN(gpa, csz);
	split = old && ol > l;
	if (split) {
		model_split(gpa, l);
		old = model_get(gpa, &ol);
	}
	/*
	 * A leaf of another page is replaced: see the CoW copy above. One of
	 * the page only gains bits where the tree's fault can only add them,
	 * but for the leaf that a split just made.
	 */
#ifdef HAVE_MAP_PROT
	if (old && !split && (old & _PAGE_PFN_MASK) ==
		   (pfn_pte(PFN_DOWN(hpa), __pgprot(0)).pte & _PAGE_PFN_MASK))
		model_set(gpa, ol, old | prot | D, true);
	else
#endif
	if (old)
		model_set(gpa, ol, (pfn_pte(PFN_DOWN(hpa), __pgprot(0)).pte & _PAGE_PFN_MASK) |
					   prot | D, true);
	else
		model_set(gpa, l,
			  pfn_pte(PFN_DOWN(hpa), __pgprot(prot | D)).pte, true);

	struct kvm_gstage_mapping out;
	int ret = gstage_map(&e->gs, &e->pc, mgpa, hpa,
					    lsize(l), ro, x, &out);
	return CHECKF(!ret, "map %#lx level %d: %d", gpa, l, ret) &&
	       /* What KVM_PRE_FAULT_MEMORY loops on: the mapping made. */
	       CHECKF(pte_val(out.pte) && out.level == l &&
			      out.addr == ALIGN_DOWN(mgpa, lsize(l)),
		      "map %#lx level %d: out_map %#lx level %u pte %#lx", gpa,
		      l, out.addr, out.level, pte_val(out.pte)) &&
	       check_hfences(e) && verify(e, cmp, cmp + csz);
}

static bool prop_split(struct env *e)
{
	gpa_t gpa = rand_gpa();
	int target = rndn(2), ol;
	bool flush = rndn(2), ret;

	model_get(gpa, &ol);
	model_split(gpa, target);
	ret = kvm_riscv_gstage_split_huge(&e->gs, &e->pc, gpa, target, flush);
	if (flush && !(CHECK(!ret) && check_hfences(e)))
		return false;
	return (flush || CHECK(ret == !!m.nchg)) &&
	       verify(e, ALIGN_DOWN(gpa, PMD_SIZE),
		      ALIGN_DOWN(gpa, PMD_SIZE) + PMD_SIZE);
}

/*
 * A range operation that returned @ret true leaves the flush of [@s, @end)
 * to its caller: record it, after the flushes the walk did itself (before
 * it yielded).
 */
static void caller_flush(bool ret, gpa_t s, gpa_t end)
{
	if (ret && shim_nr_flushes < SHIM_MAX_FLUSH)
		shim_flushes[shim_nr_flushes++] = (struct shim_flush){
			.vmid = 7,
			.addr = s,
			.size = end - s,
		};
}

static bool prop_unmap(struct env *e)
{
	gpa_t s, end;
	unsigned long pte, freed;
	bool ret;
	int l;

	rand_range(&s, &end);
	/* Widen to fully cover huge leaves: partial ones are a separate test */
	if ((pte = model_get(s, &l)))
		s = ALIGN_DOWN(s, lsize(l));
	if (in_window(end - 1) && (pte = model_get(end - 1, &l)))
		end = ALIGN_DOWN(end - 1, lsize(l)) + lsize(l);
	model_for_each(s, end, unmap_fn);
	freed = shim_flush_every_seq;
	ret = gstage_unmap(&e->gs, s, end - s, rndn(2));
	/*
	 * An unmap that freed tables, which flushed every VMID, asks for the
	 * caller's flush too (for nested virtualization's hook): left out here.
	 */
	freed = freed != shim_flush_every_seq;
	caller_flush(ret && (m.nchg || !freed), s, end);
	return CHECKF(!ret || m.nchg || freed, "unmap %#lx-%#lx: flush for nothing",
		      s, end) &&
	       check_hfences(e) && verify(e, s, end);
}

static bool prop_wp(struct env *e)
{
	gpa_t s, end, fs, fend;
	unsigned long pte;
	bool ret;
	int l;

	rand_range(&s, &end);
	model_for_each(s, end, wp_fn);
	ret = kvm_riscv_gstage_wp_range(&e->gs, s, end);
	/* The caller flushes the memslot, which holds its huge leaves whole. */
	fs = s;
	fend = end;
	if ((pte = model_get(s, &l)))
		fs = ALIGN_DOWN(s, lsize(l));
	if (in_window(end - 1) && (pte = model_get(end - 1, &l)))
		fend = ALIGN_DOWN(end - 1, lsize(l)) + lsize(l);
	caller_flush(ret, fs, fend);
	return CHECKF(!ret || m.nchg, "wp %#lx-%#lx: flush for nothing", s,
		      end) &&
	       check_hfences(e) && verify(e, s, end);
}

static bool prop_wp_masked(struct env *e)
{
	gfn_t base = rand_gpa() >> PAGE_SHIFT;
	unsigned long mask = rnd() & rnd(), bits = mask;
	bool ret;

	if (rndn(4))
		base = ALIGN_DOWN(base, 64);
	if (!in_window((base + 64) << PAGE_SHIFT))
		base -= 64;
	if (rndn(8) == 0)
		mask = bits = ~0UL;
	for (; bits; bits &= bits - 1)
		model_for_each((base + __ffs(bits)) << PAGE_SHIFT,
			       (base + __ffs(bits) + 1) << PAGE_SHIFT, wp_fn);
	ret = wp_pt_masked(&e->gs, base, mask);
	return CHECKF(ret == !!m.nchg, "wp mask %#lx@%#lx returned %d", mask,
		      base, ret) &&
	       verify(e, base << PAGE_SHIFT, (base + 64) << PAGE_SHIFT);
}

#ifdef HAVE_RECOVER_HUGE
/*
 * The host's answer in the tests: a span may be mapped whole unless the
 * hash of its address and size says no (one in four), and never above
 * 1 GiB, as get_hva_mapping_size() in mmu.c.
 */
static bool recover_can_map(struct kvm_gstage *gstage, gpa_t addr, gpa_t size,
			    const void *data)
{
	unsigned long deny = data ? *(const unsigned long *)data : 0;

	return size <= PUD_SIZE &&
	       ((addr / size + deny) * 0x9e3779b97f4a7c15UL) >> 62;
}

static bool recover_always(struct kvm_gstage *gstage, gpa_t addr, gpa_t size,
			   const void *data)
{
	return size <= PUD_SIZE;
}

static bool recover_never(struct kvm_gstage *gstage, gpa_t addr, gpa_t size,
			  const void *data)
{
	return false;
}

typedef bool (*can_map_fn)(struct kvm_gstage *gstage, gpa_t addr, gpa_t size,
			   const void *data);
#ifdef HAVE_RECOVER_SLOT
/* The host's answer for a memslot [s, end): @can_map's, one recovery at a time. */
static can_map_fn recover_fn;
static const void *recover_data;

bool kvm_riscv_mmu_host_maps_huge(struct kvm *kvm, const struct kvm_memory_slot *slot,
				  gpa_t gpa, gpa_t size)
{
	return recover_fn(NULL, gpa, size, recover_data);
}

static void gstage_recover(struct kvm_gstage *gs, gpa_t s, gpa_t end,
			   can_map_fn can_map, const void *data)
{
	struct kvm_memory_slot slot = {
		.base_gfn = gpa_to_gfn(s),
		.npages = gpa_to_gfn(end) - gpa_to_gfn(s),
	};

	recover_fn = can_map;
	recover_data = data;
	kvm_riscv_gstage_recover_huge(gs, &slot);
}
#else
#define gstage_recover kvm_riscv_gstage_recover_huge
#endif

/*
 * Replace the 512 leaves at level @l - 1 of the span at @b, if they map a
 * contiguous run from an aligned page with the same attributes, with the
 * leaf at @l: as kvm_riscv_gstage_recover_huge() documents it.
 */
static unsigned long model_recovered[3];

static void model_recover(gpa_t b, int l)
{
	const unsigned long perm_bits = _PAGE_READ | W | _PAGE_EXEC |
					KVM_GSTAGE_PTE_HOST_WRITABLE;
	const unsigned long ad_bits = A | D;
	unsigned long base, perm = perm_bits, ad = 0, v;
	int i;

	base = *mslot(b, l - 1) & ~(perm_bits | ad_bits);
	if (!*mslot(b, l - 1) || *mslot(b, l) ||
	    (l == 1 && *mslot(b, 2)) ||
	    pte_pfn(__pte(base)) % (lsize(l) >> PAGE_SHIFT))
		return;
	for (i = 0; i < 512; i++) {
		v = *mslot(b + i * lsize(l - 1), l - 1);
		if (!v || (v & ~(perm_bits | ad_bits)) !=
				  base + (((i * lsize(l - 1)) >> PAGE_SHIFT) << _PAGE_PFN_SHIFT))
			return;
		perm &= v;
		ad |= v & ad_bits;
	}
	if (!(perm & _PAGE_READ))
		return;
	for (i = 0; i < 512; i++)
		model_set(b + i * lsize(l - 1), l - 1, 0, true);
	model_set(b, l, base | perm | ad, true);
	model_recovered[l]++;
}

static bool prop_recover(struct env *e)
{
	unsigned long deny = rnd();
	gpa_t s, end, b;
	int l;

	rand_range(&s, &end);
	for (l = 1; l <= 2; l++)
		for (b = ALIGN(s, lsize(l)); b + lsize(l) <= end; b += lsize(l))
			if (recover_can_map(NULL, b, lsize(l), &deny))
				model_recover(b, l);
	gstage_recover(&e->gs, s, end, recover_can_map, &deny);
	return CHECKF(flushed_all(true) == !!m.nchg, "recover %#lx-%#lx: %d changes",
		      s, end, m.nchg) &&
	       verify(e, s, end);
}
#endif

/* Simulated hardware A/D update on one leaf. */
static bool prop_touch(struct env *e)
{
	gpa_t gpa = rand_gpa();
	unsigned long pte, bits;
	pte_t *ptep;
	int l;

	if (!(pte = model_get(gpa, &l)))
		return true;
	bits = A | ((pte & W) && rndn(2) ? D : 0);
	model_set(gpa, l, pte | bits, false);
	ptep = leaf(e, gpa, NULL);
	if (!CHECK(ptep))
		return false;
	__atomic_fetch_or(&ptep->pte, bits, __ATOMIC_RELAXED);
	return true;
}

#ifdef HAVE_AGE_RANGE
static bool prop_age(struct env *e)
{
	bool test_only = rndn(2), ret;
	gpa_t s, end;

	rand_range(&s, &end);
	model_young = false;
	model_for_each(s, end, test_only ? young_fn : age_fn);
	ret = gstage_age(&e->gs, s, end, test_only);
	return CHECKF(ret == model_young, "age %#lx-%#lx(%d) returned %d", s,
		      end, test_only, ret) &&
	       CHECKF(!shim_nr_flushes, "aging flushed") && verify(e, s, end);
}
#endif

/* An operation of a randomized test, drawn as often as its weight says. */
struct weighted_op {
	const char *name;
	bool (*fn)(struct env *e);
	int weight;
};

/* A random operation of @ops[@n]. */
static const struct weighted_op *pick_op(const struct weighted_op *ops,
					 size_t n)
{
	unsigned long total = 0, r;
	size_t k;

	for (k = 0; k < n; k++)
		total += ops[k].weight;
	r = rndn(total);
	for (k = 0; r >= (unsigned long)ops[k].weight; k++)
		r -= ops[k].weight;
	return &ops[k];
}

static const struct weighted_op prop_ops[] = {
	{ "map", prop_map, 35 },
	{ "split", prop_split, 10 },
#ifdef HAVE_RECOVER_HUGE
	{ "recover", prop_recover, 4 },
#endif
	{ "unmap", prop_unmap, 12 },
	{ "wp", prop_wp, 10 },
	{ "wp_masked", prop_wp_masked, 10 },
	{ "touch", prop_touch, 15 },
#ifdef HAVE_AGE_RANGE
	{ "age", prop_age, 10 },
#endif
};

static void prop_test(unsigned long levels)
{
	const struct weighted_op *o;
	unsigned long seed, op;
	struct env e;

	for (seed = 1; seed <= opt_seeds && !cur_fails; seed++) {
		rnd_state = seed * 0x9e3779b97f4a7c15UL + levels;
		env_init(&e, levels);
		shim_svvptc = rndn(2);
		/* Unmaps that may block stop and resume every few entries. */
		shim_resched_period = rndn(2) ? 16 + rndn(64) : 0;
#ifdef set_fault
		/* Map as a fault does: upgrades may fence this hart only. */
		if (rndn(2))
			set_fault(&e.gs);
#endif
		model_reset(seed);
		m.base = rndn((kvm_riscv_gstage_gpa_size(levels) >> 30) - NSLOT)
			 << 30;
		m.delta = (1UL << 40) + (rndn(1024) << 30);
		for (op = 0; op < opt_ops; op++) {
			o = pick_op(prop_ops, ARRAY_SIZE(prop_ops));
			op_begin(&e);
			m.nchg = 0;
			if (!o->fn(&e) || !op_end(&e) ||
			    (op % 64 == 63 && !full_check(&e))) {
				printf("# seed %lu op %lu (%s) failed\n", seed,
				       op, o->name);
				return;
			}
		}
		if (!full_check(&e))
			printf("# seed %lu: final check failed\n", seed);
	}
#ifdef HAVE_RECOVER_HUGE
	/* The seeds must have made tables to recover. */
	printf("# recovered %lu 2 MiB and %lu 1 GiB leaves\n", model_recovered[1],
	       model_recovered[2]);
	CHECK(cur_fails || model_recovered[1]);
	memset(model_recovered, 0, sizeof(model_recovered));
#endif
}

/* ---- targeted tests ---- */
static void test_mode_detect(unsigned long unused)
{
	static const unsigned long modes[][2] = {
		{ HGATP_MODE_SV57X4, 5 },
		{ HGATP_MODE_SV48X4, 4 },
		{ HGATP_MODE_SV39X4, 3 },
		{ HGATP_MODE_OFF, 0 },
	};
	unsigned long i, n;

	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		shim_hgatp_max_mode = modes[i][0];
		n = shim_nr_flush_all;
		kvm_riscv_gstage_mode_detect();
		CHECK(kvm_riscv_gstage_max_pgd_levels == modes[i][1]);
		CHECK(shim_hgatp == 0 && shim_nr_flush_all == n + 1);
	}
}

/*
 * A huge leaf that the range covers only partly is unmapped whole, and
 * either the caller is asked to flush or the whole VMID was flushed.
 */
static void test_unmap_partial_huge(unsigned long unused)
{
	static const struct {
		int l;
		long off, size; /* range relative to the huge leaf */
	} c[] = {
		{ 1, 10 << 12, 1 << 12 },
		{ 1, -(1L << 12), 3 << 12 },
		{ 1, (1L << 21) - (1 << 12), 1L << 21 },
		{ 2, (1L << 21) - (1 << 12), (1L << 21) + (2 << 12) },
		{ 2, 0, (1L << 30) - (1 << 12) },
	};
	gpa_t gpa0 = 3 * PUD_SIZE;
	unsigned long i, levels;
	struct env e;
	bool ret;

	walk_model = false;
	for (levels = 3; levels <= 5; levels++) {
		for (i = 0; i < ARRAY_SIZE(c); i++) {
			env_init(&e, levels);
			op_begin(&e);
			map_gpa(&e, gpa0, c[i].l, false, false);
			op_begin(&e);
			ret = gstage_unmap(
				&e.gs, gpa0 + c[i].off, c[i].size, false);
			CHECKF(ret || flushed_all(false), "case %lu: no flush",
			       i);
			if (!op_end(&e) || !no_leaked_tables(&e) ||
			    !CHECKF(!walk_leaves, "case %lu: %ld leaves left",
				    i, walk_leaves))
				return;
		}
	}
}

/*
 * Tearing the VM down (kvm_riscv_mmu_free_pgd) frees every table, after a
 * flush of the whole VMID (the shim WARNs otherwise), then the root; also
 * when the unmap may block and yields (every 3rd check), as the unmap of
 * a memslot does: a table whose walk was resumed is unlinked as well.
 */
static void test_unmap_frees_tables(unsigned long unused)
{
	unsigned long levels, i;
	struct env e;
	bool ret;

	walk_model = false;
	for (i = 0; i < 6; i++) {
		levels = 3 + i % 3;
		shim_resched_period = i < 3 ? 0 : 3;
		env_init(&e, levels);
		op_begin(&e);
		map_gpa(&e, 0x1000, 0, false, false);
		op_begin(&e);
		map_gpa(&e, 5 * PUD_SIZE + 0x3000, 0, false, false);
		op_begin(&e);
		map_gpa(&e, 7 * PUD_SIZE, 1, false, false);
		op_begin(&e);
		kvm_riscv_gstage_split_huge(&e.gs, &e.pc, 7 * PUD_SIZE, 0,
					    true);
		op_begin(&e);
		map_gpa(&e, kvm_riscv_gstage_gpa_size(levels) - PUD_SIZE, 2,
			false, false);
		op_begin(&e);
		ret = gstage_unmap(&e.gs, 0,
						   kvm_riscv_gstage_gpa_size(levels),
						   shim_resched_period);
		CHECK(ret || flushed_all(false));
		if (!op_end(&e) || !no_leaked_tables(&e) ||
		    !CHECKF(shim_pages_in_use == ROOT_PAGES &&
				    shim_pgtable_pages == ROOT_PAGES,
			    "Sv%lux4%s: %ld pages in use, %ld accounted",
			    9 * levels + 12, shim_resched_period ? ", yielding" : "",
			    shim_pages_in_use, shim_pgtable_pages))
			break;
		env_free_pgd(&e);
		CHECK(op_end(&e) && !shim_pages_in_use && !shim_pgtable_pages);
	}
	shim_resched_period = 0;
}

/* A 2M leaf over a 4K table, empty or not, frees it after a full flush. */
static void test_map_huge_over_table(unsigned long unused)
{
	gpa_t gpa0 = 2 * PMD_SIZE;
	struct env e;
	int empty;
	u32 l;

	walk_model = false;
	for (empty = 0; empty < 2; empty++) {
		env_init(&e, 3);
		op_begin(&e);
		map_gpa(&e, gpa0 + PAGE_SIZE, 0, false, false);
		op_begin(&e);
		if (empty)
			gstage_unmap(&e.gs, gpa0 + PAGE_SIZE,
						     PAGE_SIZE, false);
		op_begin(&e);
		CHECK(!map_gpa(&e, gpa0 + 2 * PAGE_SIZE, 1, false, false));
		CHECK(flushed_all(false));
		CHECK(op_end(&e) && leaf(&e, gpa0 + PAGE_SIZE, &l) && l == 1);
		CHECK(no_leaked_tables(&e));
	}
}

#ifdef HAVE_RECOVER_HUGE
/* Map the 4 KiB pages of [@gpa, @gpa + @size), each at @hpa(page). */
static bool map_4k_span(struct env *e, gpa_t gpa, gpa_t size, long skip,
			long shift, long ro)
{
	struct kvm_gstage_mapping out;
	gpa_t a, hpa;
	long i;

	for (a = gpa, i = 0; a < gpa + size; a += PAGE_SIZE, i++) {
		if (i == skip)
			continue;
		hpa = a + (1UL << 40) + (i == shift ? PMD_SIZE : 0) +
		      (shift == -2 ? PAGE_SIZE : 0);
		op_begin(e);
		if (!CHECK(!gstage_map(&e->gs, &e->pc, a, hpa,
						      PAGE_SIZE, i == ro, false,
						      &out)))
			return false;
	}
	return true;
}

/*
 * A table of 512 contiguous 4 KiB leaves from an aligned page becomes the
 * 2 MiB leaf that maps them, with the permissions all of them have and
 * the Accessed and Dirty bits any of them has, and is freed after a flush
 * of every hart; a table with a hole, a page out of the run, a run from
 * an unaligned page, a span the host maps small or that the range does
 * not cover stays. A 1 GiB span of 4 KiB leaves becomes a 1 GiB leaf.
 */
static void test_recover_huge(unsigned long unused)
{
	static const struct {
		const char *name;
		long skip, shift, ro;	/* page index, or -1 */
		bool never, partial, want;
	} c[] = {
		{ "contiguous", -1, -1, -1, false, false, true },
		{ "one read-only", -1, -1, 77, false, false, true },
		{ "hole", 300, -1, -1, false, false, false },
		{ "page out of the run", -1, 511, -1, false, false, false },
		{ "unaligned run", -1, -2, -1, false, false, false },
		{ "host maps small", -1, -1, -1, true, false, false },
		{ "range covers part", -1, -1, -1, false, true, false },
	};
	gpa_t gpa0 = 3 * PUD_SIZE + 5 * PMD_SIZE;
	unsigned long i, levels;
	pte_t *ptep, *first;
	struct env e;
	u32 l;

	walk_model = false;
	for (levels = 3; levels <= 5; levels++) {
		for (i = 0; i < ARRAY_SIZE(c); i++) {
			env_init(&e, levels);
			if (!map_4k_span(&e, gpa0, PMD_SIZE, c[i].skip, c[i].shift,
					 c[i].ro))
				return;
			first = leaf(&e, gpa0, &l);
			if (!CHECK(first && l == 0))
				return;
			/* One leaf without A, one with D cleared. */
			set_pte(&first[1], __pte(pte_val(first[1]) & ~A));
			set_pte(&first[2], __pte(pte_val(first[2]) & ~D));
			op_begin(&e);
			gstage_recover(&e.gs, gpa0 + (c[i].partial ? PAGE_SIZE : 0),
						      gpa0 + PMD_SIZE,
						      c[i].never ? recover_never : recover_always,
						      NULL);
			ptep = leaf(&e, gpa0 + PAGE_SIZE, &l);
			if (!CHECKF(ptep && (l == 1) == c[i].want,
				    "%s (Sv%lux4): level %u", c[i].name, 9 * levels + 12, l) ||
			    !CHECKF(flushed_all(true) == c[i].want, "%s: flush", c[i].name) ||
			    !op_end(&e) || !no_leaked_tables(&e))
				return;
			if (!c[i].want)
				continue;
			CHECKF(pte_pfn(*ptep) == PFN_DOWN(gpa0 + (1UL << 40)) &&
				       (pte_val(*ptep) & (A | D)) == (A | D) &&
				       !(pte_val(*ptep) & W) == (c[i].ro >= 0) &&
				       (pte_val(*ptep) & _PAGE_READ),
			       "%s: huge leaf %#lx", c[i].name, pte_val(*ptep));
		}
	}

	/* A 1 GiB leaf split down to 4 KiB leaves is recovered whole. */
	env_init(&e, 3);
	op_begin(&e);
	map_gpa(&e, 2 * PUD_SIZE, 2, false, false);
	op_begin(&e);
	kvm_riscv_gstage_split_huge(&e.gs, &e.pc, 2 * PUD_SIZE, 0, true);
	for (i = 1; i < PTRS_PER_PTE; i++) {
		e.pc.nobjs = 1;
		kvm_riscv_gstage_split_huge(&e.gs, &e.pc, 2 * PUD_SIZE + i * PMD_SIZE, 0,
					    true);
	}
	op_begin(&e);
	gstage_recover(&e.gs, 0, kvm_riscv_gstage_gpa_size(3),
				      recover_always, NULL);
	ptep = leaf(&e, 2 * PUD_SIZE + 12345 * PAGE_SIZE, &l);
	CHECKF(ptep && l == 2 && pte_pfn(*ptep) == PFN_DOWN(2 * PUD_SIZE + (1UL << 40)),
	       "1 GiB: level %u", l);
	CHECK(op_end(&e) && no_leaked_tables(&e) && shim_pages_in_use == ROOT_PAGES);
}
#endif

#ifdef HAVE_AGE_RANGE
static void test_age_partial_huge(unsigned long unused)
{
	gpa_t gpa0 = 4 * PMD_SIZE;
	struct env e;
	pte_t *ptep;
	int i;

	env_init(&e, 4);
	op_begin(&e);
	map_gpa(&e, gpa0, 1, false, false);
	ptep = leaf(&e, gpa0, NULL);
	op_begin(&e);
	CHECK(gstage_age(&e.gs, gpa0 + 8192, gpa0 + 12288,
					 true));
	CHECK(pte_young(*ptep));
	CHECK(gstage_age(&e.gs, gpa0 + 8192, gpa0 + 12288,
					 false));
	CHECK(!pte_young(*ptep));
	CHECK(!gstage_age(&e.gs, gpa0, gpa0 + PMD_SIZE, false));
	/* split into 512 young 4K leaves: all of them are aged */
	op_begin(&e);
	kvm_riscv_gstage_split_huge(&e.gs, &e.pc, gpa0, 0, true);
	for (i = 0; i < 512; i++)
		__atomic_fetch_or(&leaf(&e, gpa0 + i * PAGE_SIZE, NULL)->pte, A,
				  __ATOMIC_RELAXED);
	op_begin(&e);
	CHECK(gstage_age(&e.gs, gpa0, gpa0 + PMD_SIZE, false));
	for (i = 0; i < 512; i++)
		if (!CHECK(!pte_young(*leaf(&e, gpa0 + i * PAGE_SIZE, NULL))))
			break;
	CHECKF(!shim_nr_flushes, "aging flushed");
	op_end(&e);
}

/*
 * Lockless agers, as mmu.c runs them under rcu_read_lock(), race with a
 * thread that maps, splits and unmaps under a mutex standing for mmu_lock,
 * then tears the VM down. Walking into a freed table aborts (pfn_to_virt),
 * reading one is an ASAN use-after-poison, and a table freed outside an
 * RCU callback or before a full flush WARNs.
 */
struct age_race {
	struct kvm *kvm;
	bool stop;
	unsigned long walks;
	int started;
};

static void *ager_thread(void *arg)
{
	struct age_race *r = arg;
	unsigned long seed = (unsigned long)&seed | 1, x, walks = 0;
	struct kvm_gstage gs;
	gpa_t s;
	int i;

	__atomic_fetch_add(&r->started, 1, __ATOMIC_RELAXED);
	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		rcu_read_lock();
		for (i = 0; i < 3; i++, walks++) {
			kvm_riscv_gstage_init(&gs, r->kvm);
			if (!gs.pgd)
				break;
			x = rnd_next(&seed);
			s = ALIGN_DOWN(x % (2 * PUD_SIZE), PAGE_SIZE);
			gstage_age(
				&gs, s, s + (x & 1 ? 4 * PMD_SIZE : PUD_SIZE),
				x & 2);
		}
		rcu_read_unlock();
	}
	__atomic_fetch_add(&r->walks, walks, __ATOMIC_RELAXED);
	return NULL;
}

static void test_race_age(unsigned long unused)
{
	static pthread_mutex_t mmu_lock = PTHREAD_MUTEX_INITIALIZER;
	unsigned long i, n, deferred = shim_rcu_deferred;
	struct age_race r = { 0 };
	bool last = false;
	pthread_t t[2];
	struct env e;
	gpa_t g;

	rnd_state = 42;
	env_init(&e, 3);
	r.kvm = &e.kvm;
	for (i = 0; i < ARRAY_SIZE(t); i++)
		pthread_create(&t[i], NULL, ager_thread, &r);
	/* On a loaded machine the agers may be slow to start: wait for them. */
	while (__atomic_load_n(&r.started, __ATOMIC_RELAXED) <
	       (int)ARRAY_SIZE(t))
		sched_yield();
	/* Go on past opt_race_iters until a free had to wait for a reader. */
	for (n = 0; !last; n++) {
		last = n >= 10 * opt_race_iters ||
		       (n >= opt_race_iters && shim_rcu_deferred != deferred);
		g = rndn(2) * PUD_SIZE + rndn(4) * PMD_SIZE +
		    rndn(512) * PAGE_SIZE;
		pthread_mutex_lock(&mmu_lock);
		op_begin(&e);
		if (last)
			env_free_pgd(&e);
		else if (rndn(2))
			map_gpa(&e, g, rndn(8) ? 0 : 1, false, false);
		else if (rndn(4))
			gstage_unmap(
				&e.gs, g, PAGE_SIZE << rndn(12), false);
		else if (rndn(3))
			gstage_unmap(
				&e.gs, ALIGN_DOWN(g, PMD_SIZE << rndn(2)),
				PMD_SIZE << rndn(2), false);
		else
			kvm_riscv_gstage_split_huge(&e.gs, &e.pc, g, 0, true);
		pthread_mutex_unlock(&mmu_lock);
		shim_rcu_poll(false);
	}
	__atomic_store_n(&r.stop, true, __ATOMIC_RELAXED);
	for (i = 0; i < ARRAY_SIZE(t); i++)
		pthread_join(t[i], NULL);
	deferred = shim_rcu_deferred - deferred;
	printf("# %lu updates, %lu lockless walks, a free waited %lu times\n",
	       n, r.walks, deferred);
	CHECK(op_end(&e) && deferred && r.walks);
	CHECKF(!shim_pages_in_use && !shim_pgtable_pages,
	       "%ld pages in use, %ld accounted", shim_pages_in_use,
	       shim_pgtable_pages);
}
#endif

#ifdef KVM_GSTAGE_FLAGS_SHARED
/*
 * Faults with mmu_lock held for read (KVM_GSTAGE_FLAGS_SHARED), as mmu.c
 * runs them, race with each other for the same tables and leaves, and with
 * a writer that unmaps and write-protects. A fault that returns -EAGAIN is
 * retried with the lock held for write, as mmu.c does. After every fault,
 * still under the lock, its GPA is mapped to its own host page; at the end
 * every table is reachable and accounted, the stats are exact, and the
 * tables that lost a race were freed unlinked and zeroed (shim.c checks).
 */
struct fault_race {
	struct kvm *kvm;
	pthread_rwlock_t lock;
	unsigned long faults, retried, bad;
	/* The region the writer last unmapped, and how often it did. */
	gpa_t unmapped;
	unsigned long unmaps;
	bool stop;
};

static void *fault_thread(void *arg)
{
	struct fault_race *r = arg;
	unsigned long seed = (unsigned long)&seed | 1, x, n;
	unsigned long retried = 0, bad = 0, unmaps = 0, seen;
	struct kvm_mmu_memory_cache pc = { 0 };
	struct kvm_gstage_mapping out;
	struct kvm_gstage gs;
	pte_t *ptep, pte;
	gpa_t g, hpa;
	u32 level;
	int l, ret;

	for (n = 0; !__atomic_load_n(&r->stop, __ATOMIC_RELAXED); n++) {
		x = rnd_next(&seed);
		g = (x >> 8) % 2 * PUD_SIZE + (x >> 9) % 2 * PMD_SIZE +
		    (x >> 10) % 64 * PAGE_SIZE;
		/*
		 * First fault after an unmap: both threads fault on the
		 * region the writer just emptied, as they leave the lock
		 * together, so that they race to link its table.
		 */
		seen = __atomic_load_n(&r->unmaps, __ATOMIC_ACQUIRE);
		if (seen != unmaps) {
			unmaps = seen;
			g = __atomic_load_n(&r->unmapped, __ATOMIC_RELAXED) +
			    (x >> 10) % 64 * PAGE_SIZE;
		}
		/*
		 * One of the four 2 MiB regions is backed by a huge page,
		 * as the host backs a range with one page size: a 2 MiB
		 * fault over 4 KiB leaves replaces their table.
		 */
		l = (x >> 8) % 2 && (x >> 9) % 2;
		hpa = ALIGN_DOWN(g + (1UL << 40), lsize(l));
		pc.nobjs = r->kvm->arch.pgd_levels;
		pthread_rwlock_rdlock(&r->lock);
		kvm_riscv_gstage_init(&gs, r->kvm);
		gs.flags |= KVM_GSTAGE_FLAGS_SHARED;
		ret = gstage_map(&gs, &pc, g, hpa, lsize(l),
						x & 16, false, &out);
		if (ret == -EAGAIN) {
			pthread_rwlock_unlock(&r->lock);
			pthread_rwlock_wrlock(&r->lock);
			gs.flags &= ~KVM_GSTAGE_FLAGS_SHARED;
			ret = gstage_map(&gs, &pc, g, hpa,
							lsize(l), x & 16, false,
							&out);
			retried++;
		}
		/* Mapped, by a leaf of any level, to the host page of @g. */
		if (ret ||
		    !kvm_riscv_gstage_get_leaf(&gs, g, &ptep, &pte, &level) ||
		    pte_pfn(pte) !=
			    PFN_DOWN(ALIGN_DOWN(g + (1UL << 40), lsize(level))))
			bad++;
		pthread_rwlock_unlock(&r->lock);
	}
	__atomic_fetch_add(&r->faults, n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&r->retried, retried, __ATOMIC_RELAXED);
	__atomic_fetch_add(&r->bad, bad, __ATOMIC_RELAXED);
	return NULL;
}

/* What the racing fault of test_shared_fault_same_leaf() stored. */
static unsigned long same_leaf;

static void store_same_leaf(unsigned long *ptr, unsigned long new)
{
	if (!(new & _PAGE_LEAF))
		return;
	WRITE_ONCE(*ptr, new);
	same_leaf = new;
}

/*
 * A shared fault that loses the race for its leaf to a fault that stored
 * the same leaf maps nothing more: it fences its own hart (the whole VMID:
 * it may have cached an empty non-leaf entry), counts no leaf and returns
 * 0, with mmu_lock still held for read.
 */
static void test_shared_fault_same_leaf(unsigned long unused)
{
	gpa_t gpa = PUD_SIZE + 2 * PAGE_SIZE;
	struct shim_flush *f = &shim_flushes[0];
	struct env e;
	pte_t *ptep;

	walk_model = false;
	env_init(&e, 3);
	op_begin(&e);
	/* A neighbour, so that only the leaf is left to fill. */
	CHECK(!map_gpa(&e, gpa - PAGE_SIZE, 0, false, false));
	op_begin(&e);
#ifdef set_fault
	set_fault(&e.gs);
#endif
	e.gs.flags |= KVM_GSTAGE_FLAGS_SHARED;
	same_leaf = 0;
	shim_try_cmpxchg_hook = store_same_leaf;
	CHECK(!map_gpa(&e, gpa, 0, false, false));
	shim_try_cmpxchg_hook = NULL;
	e.gs.flags &= ~KVM_GSTAGE_FLAGS_SHARED;
	ptep = leaf(&e, gpa, NULL);
	CHECKF(same_leaf && ptep && pte_val(*ptep) == same_leaf,
	       "the racing fault's leaf is not the one mapped");
	CHECKF(shim_nr_flushes == 1 && f->local && !f->size &&
		       f->vmid == e.kvm.arch.vmid.vmid,
	       "%lu flushes, want 1: a local fence of the whole VMID",
	       shim_nr_flushes);
#ifdef HAVE_PAGE_STATS
	/*
	 * Only the neighbour is counted: this fault must not count the leaf
	 * it lost. Count it for the racing fault the hook stands in for, so
	 * that op_end() finds the stats exact.
	 */
	CHECK(atomic64_read(&e.kvm.stat.pages[0]) == 1);
	atomic64_add(1, &e.kvm.stat.pages[0]);
#endif
	CHECK(op_end(&e) && no_leaked_tables(&e));
}

#ifdef HAVE_RECOVER_HUGE
/*
 * Dirty logging switched off while the vCPUs fault: the region at @g is
 * filled with 4 KiB leaves (mmu_lock held for write), then recovered with
 * mmu_lock held for read, as mmu.c does, while the faults go on; the read
 * lock is still held on return. Return: whether the region went from
 * 4 KiB leaves to one 2 MiB leaf.
 */
static bool race_recover(struct env *e, struct fault_race *r, gpa_t g)
{
	pte_t *ptep, pte;
	bool split, huge;
	u32 level;
	int i;

	pthread_rwlock_wrlock(&r->lock);
	for (i = 0; i < PTRS_PER_PTE; i++) {
		e->pc.nobjs = e->gs.pgd_levels;
		if (map_gpa(e, g + i * PAGE_SIZE, 0, false, false))
			break;
	}
	pthread_rwlock_unlock(&r->lock);
	pthread_rwlock_rdlock(&r->lock);
	split = kvm_riscv_gstage_get_leaf(&e->gs, g, &ptep, &pte, &level) && !level;
	gstage_recover(&e->gs, g, g + PMD_SIZE, recover_always, NULL);
	huge = kvm_riscv_gstage_get_leaf(&e->gs, g, &ptep, &pte, &level) && level == 1;

	return split && huge;
}
#endif

static void test_race_shared_faults(unsigned long unused)
{
	unsigned long n, lost = shim_unlinked_frees, seed = 7, x, recovered = 0;
	struct fault_race r = { 0 };
	pthread_rwlockattr_t attr;
	pthread_t t[2];
	struct env e;
	unsigned int i;
	gpa_t g;

	env_init(&e, 3);
	r.kvm = &e.kvm;
	/* As the kernel's rwlock: the readers do not starve the writer. */
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(
		&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&r.lock, &attr);
	for (i = 0; i < ARRAY_SIZE(t); i++)
		pthread_create(&t[i], NULL, fault_thread, &r);
	/* Go on past opt_race_iters until a fault lost a race for a table. */
	for (n = 0; n < 10 * opt_race_iters &&
		    (n < opt_race_iters || shim_unlinked_frees == lost);
	     n++) {
		x = rnd_next(&seed);
		g = (x >> 8) % 2 * PUD_SIZE + (x >> 9) % 2 * PMD_SIZE;
#ifdef HAVE_RECOVER_HUGE
		if (x % 8 == 4) {
			recovered += race_recover(&e, &r, g);
		} else
#endif
		if (x % 4) {
			pthread_rwlock_wrlock(&r.lock);
			gstage_unmap(&e.gs, g, PMD_SIZE, false);
			__atomic_store_n(&r.unmapped, g, __ATOMIC_RELAXED);
			__atomic_fetch_add(&r.unmaps, 1, __ATOMIC_RELEASE);
			shim_rcu_poll(false);
		} else {
#ifdef HAVE_SHARED_WP_RANGE
			/* As at dirty-log enable: with the faults. */
			pthread_rwlock_rdlock(&r.lock);
#else
			pthread_rwlock_wrlock(&r.lock);
#endif
			kvm_riscv_gstage_wp_range(&e.gs, g, g + PMD_SIZE);
		}
		pthread_rwlock_unlock(&r.lock);
		for (i = 0; i < 64; i++)
			sched_yield();
	}
	__atomic_store_n(&r.stop, true, __ATOMIC_RELAXED);
	for (i = 0; i < ARRAY_SIZE(t); i++)
		pthread_join(t[i], NULL);
	lost = shim_unlinked_frees - lost;
	printf("# %lu shared faults (%lu retried for write) against %lu unmaps, write-protects and recoveries (%lu recovered): %lu bad, %lu lost table races\n",
	       r.faults, r.retried, n, recovered, r.bad, lost);
	walk_model = false;
	CHECK(op_end(&e) && no_leaked_tables(&e));
	CHECK(!r.bad && r.retried && lost);
#ifdef HAVE_RECOVER_HUGE
	CHECK(recovered);
#endif
	env_free_pgd(&e);
	shim_rcu_poll(true);
	CHECKF(!shim_pages_in_use && !shim_pgtable_pages,
	       "%ld pages in use, %ld accounted", shim_pages_in_use,
	       shim_pgtable_pages);
}
#endif

/* ---- races with a "hardware" thread doing atomic A/D updates ---- */
#define RACE_N 64

/* A race test and its "hardware" thread go through rounds in lockstep. */
struct hw_rounds {
	unsigned long round, ack, done;
	bool stop;
};

struct race {
	pte_t *ptep[RACE_N];
	struct hw_rounds h;
	unsigned char set[RACE_N]; /* 1: hw set A, 2: hw set D */
};

static void hw_wait(unsigned long *spins)
{
	if (++*spins > 4096)
		sched_yield();
	else
		cpu_relax();
}

/* Pin the calling thread to @cpu (modulo #CPUs), or unpin if @cpu < 0. */
static void pin_to_cpu(int cpu)
{
	long i, n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	for (i = 0; i < n; i++)
		if (cpu < 0 || i == cpu % n)
			CPU_SET(i, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* Test side: start round @rd once the hardware thread took it. */
static void hw_round_start(struct hw_rounds *h, unsigned long rd)
{
	unsigned long spins = 0;

	__atomic_store_n(&h->round, rd, __ATOMIC_RELEASE);
	/* Start together: both threads are on a CPU right now. */
	while (__atomic_load_n(&h->ack, __ATOMIC_ACQUIRE) != rd)
		hw_wait(&spins);
}

/* Test side: wait until the hardware thread is done with round @rd. */
static void hw_round_wait(struct hw_rounds *h, unsigned long rd)
{
	unsigned long spins = 0;

	while (__atomic_load_n(&h->done, __ATOMIC_ACQUIRE) != rd)
		hw_wait(&spins);
}

/* Hardware side: take the round after *@cur; false once stopped. */
static bool hw_round_take(struct hw_rounds *h, unsigned long *cur)
{
	unsigned long spins = 0, last = *cur;

	while ((*cur = __atomic_load_n(&h->round, __ATOMIC_ACQUIRE)) == last) {
		if (__atomic_load_n(&h->stop, __ATOMIC_RELAXED))
			return false;
		hw_wait(&spins);
	}
	__atomic_store_n(&h->ack, *cur, __ATOMIC_RELEASE);
	return true;
}

/* Hardware side: a random delay below @maxd (xorshift state @seed). */
static void hw_delay(unsigned long *seed, unsigned long maxd)
{
	unsigned long k, d = rnd_next(seed) % maxd;

	for (k = 0; k < d; k++)
		__asm__ volatile("" ::: "memory");
}

/*
 * Sets A (read access) then A|D (write access), only while W is set, on
 * each PTE in turn, aiming at the moment write-protect reaches it: start
 * on PTE i once PTE i - 1 - lead is protected, after a random delay. Both
 * knobs adapt: arriving too late shortens the delay, then leads further.
 */
static void *hw_thread(void *arg)
{
	struct race *r = arg;
	unsigned long cur = 0, seed = 88172645463325252UL, maxd = 64;
	unsigned long spins, old;
	int i, b, lead = 0;

	pin_to_cpu(1);
	while (hw_round_take(&r->h, &cur)) {
		for (i = 0; i < RACE_N; i++) {
			for (spins = 0;
			     i > lead &&
			     (__atomic_load_n(&r->ptep[i - 1 - lead]->pte,
					      __ATOMIC_RELAXED) &
			      W);)
				hw_wait(&spins);
			for (b = 0; b < 2; b++) {
				hw_delay(&seed, maxd);
				old = __atomic_load_n(&r->ptep[i]->pte,
						      __ATOMIC_RELAXED);
				do {
					if (!(old & W))
						break;
				} while (!__atomic_compare_exchange_n(
					&r->ptep[i]->pte, &old,
					old | A | (b ? D : 0), false,
					__ATOMIC_RELAXED, __ATOMIC_RELAXED));
				if (!(old & W)) {
					maxd = maxd * 3 / 4 + 1;
					if (maxd <= 4 && lead < 8)
						lead++, maxd = 64;
					break;
				}
				r->set[i] |= 1 << b;
				if ((maxd += 2) > 1024 && lead)
					lead--, maxd = 64;
			}
		}
		__atomic_store_n(&r->h.done, cur, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void race_test(unsigned long masked)
{
	unsigned long rd, rounds = (opt_race_iters + RACE_N - 1) / RACE_N;
	unsigned long lost_a = 0, lost_d = 0, w_left = 0, hw_bits = 0;
	unsigned long clean[RACE_N], v;
	gpa_t gpa0 = 5 * PMD_SIZE;
	struct race r = { 0 };
	struct env e;
	pthread_t t;
	int i;

	env_init(&e, 3);
	for (i = 0; i < RACE_N; i++) {
		op_begin(&e);
		map_gpa(&e, gpa0 + i * PAGE_SIZE, 0, false, false);
		r.ptep[i] = leaf(&e, gpa0 + i * PAGE_SIZE, NULL);
		clean[i] = pte_val(*r.ptep[i]) & ~(A | D);
	}
	/* Separate CPUs, or the threads may only interleave at preemption. */
	pin_to_cpu(0);
	pthread_create(&t, NULL, hw_thread, &r);
	for (rd = 1; rd <= rounds; rd++) {
		for (i = 0; i < RACE_N; i++) {
			set_pte(r.ptep[i], __pte(clean[i]));
			r.set[i] = 0;
		}
		hw_round_start(&r.h, rd);
		if (masked)
			CHECK(wp_pt_masked(
				&e.gs, gpa0 >> PAGE_SHIFT, ~0UL));
		else
			CHECK(kvm_riscv_gstage_wp_range(
				&e.gs, gpa0, gpa0 + RACE_N * PAGE_SIZE));
		hw_round_wait(&r.h, rd);
		for (i = 0; i < RACE_N; i++) {
			v = pte_val(ptep_get(r.ptep[i]));
			w_left += !!(v & W);
			lost_a += (r.set[i] & 1) && !(v & A);
			lost_d += (r.set[i] & 2) && !(v & D);
			hw_bits += __builtin_popcount(r.set[i]);
		}
	}
	__atomic_store_n(&r.h.stop, true, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	pin_to_cpu(-1);
	printf("# %lu racing WPs: hw set %lu bits, lost A %lu, lost D %lu, W left %lu\n",
	       rounds * RACE_N, hw_bits, lost_a, lost_d, w_left);
	CHECK(lost_a == 0 && lost_d == 0 && w_left == 0);
	op_end(&e);
}

/*
 * The "hardware" sets A and D in a huge leaf (Svadu needs no mmu_lock)
 * while kvm_riscv_gstage_split_huge() replaces it by a table: whatever
 * the hardware set in the leaf before the table took its place must be in
 * every child. The delay adapts to arrive during the split: too late (the
 * table is in) shortens it, too early (the split had not begun) lengthens
 * it.
 */
struct split_race {
	pte_t *ptep;
	struct hw_rounds h;
	unsigned long splitting;
	bool set, raced;
};

static void *split_hw_thread(void *arg)
{
	struct split_race *r = arg;
	unsigned long cur = 0, seed = 88172645463325252UL, maxd = 64;
	unsigned long old;

	pin_to_cpu(1);
	while (hw_round_take(&r->h, &cur)) {
		hw_delay(&seed, maxd);
		old = __atomic_load_n(&r->ptep->pte, __ATOMIC_RELAXED);
		do {
			if (!(old & _PAGE_LEAF))
				break;
		} while (!__atomic_compare_exchange_n(
			&r->ptep->pte, &old, old | A | D, false,
			__ATOMIC_RELAXED, __ATOMIC_RELAXED));
		r->set = old & _PAGE_LEAF;
		r->raced = r->set && __atomic_load_n(&r->splitting,
						     __ATOMIC_ACQUIRE) == cur;
		if (!r->set && maxd > 16)
			maxd -= maxd / 4;
		else if (!r->raced)
			maxd += maxd / 8 + 16;
		__atomic_store_n(&r->h.done, cur, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void test_race_split_huge(unsigned long unused)
{
	unsigned long rd, rounds = opt_race_iters / 16, set = 0, raced = 0;
	unsigned long lost = 0;
	gpa_t gpa0 = 5 * PMD_SIZE;
	struct split_race r = { 0 };
	unsigned long v;
	struct env e;
	pthread_t t;
	pte_t *c;
	u32 l;
	int i;

	env_init(&e, 3);
	pin_to_cpu(0);
	pthread_create(&t, NULL, split_hw_thread, &r);
	for (rd = 1; rd <= rounds; rd++) {
		op_begin(&e);
		CHECK(!map_gpa(&e, gpa0, 1, false, false));
		r.ptep = leaf(&e, gpa0, &l);
		if (!CHECK(r.ptep && l == 1))
			break;
		set_pte(r.ptep, __pte(pte_val(*r.ptep) & ~(A | D)));
		hw_round_start(&r.h, rd);
		__atomic_store_n(&r.splitting, rd, __ATOMIC_RELEASE);
		kvm_riscv_gstage_split_huge(&e.gs, &e.pc, gpa0, 0, false);
		hw_round_wait(&r.h, rd);
		c = leaf(&e, gpa0, &l);
		if (!CHECK(c && l == 0))
			break;
		if (r.set) {
			set++;
			raced += r.raced;
			for (i = 0; i < PTRS_PER_PTE; i++) {
				v = pte_val(ptep_get(&c[i]));
				if (!(v & A) || !(v & D)) {
					lost++;
					break;
				}
			}
		}
		gstage_unmap(&e.gs, gpa0, PMD_SIZE, false);
		op_end(&e);
	}
	__atomic_store_n(&r.h.stop, true, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	pin_to_cpu(-1);
	printf("# %lu racing splits: hw set A|D in %lu, %lu of them during the split, lost in %lu\n",
	       rounds, set, raced, lost);
	CHECK(raced && lost == 0);
	CHECK(no_leaked_tables(&e));
}

#ifdef KVM_GSTAGE_FLAGS_SHARED
/*
 * ---- harts with TLBs ----
 * Harts that cache translations as RISC-V allows, and access pages of the
 * G-stage: a hart uses its cached entry until an hfence that covers it (a
 * local one only on the hart that runs the code); without Svvptc it may
 * cache an empty entry too, and an empty non-leaf entry only goes with a
 * fence of the whole VMID (an hfence with an address drops leaf entries). With Svadu its walk sets A (and D for a
 * store); with Svade a cached entry whose A (or D) is clear faults. A
 * fault runs gstage_map() on the faulting hart, as
 * kvm_riscv_mmu_map() does (shared first, then exclusive), and the access
 * is retried. Between accesses: aging, write-protect of a dirty mask, and
 * unmap, each followed by the flush their callers in mmu.c do.
 * Checked: no hart keeps a translation that allows more than the
 * page table (no stale writable entry after a write-protect), no store to
 * a write-protected page succeeds without a fault that marked it dirty,
 * and no access faults more than TLB_MAX_FAULTS times (no livelock).
 */
#define TLB_HARTS 4
#define TLB_PAGES 64
#define TLB_MAX_FAULTS 3

static struct {
	bool adu;
	int hart; /* the hart that runs the code under test */
	gpa_t base;
	struct {
		bool cached;
		bool nonleaf; /* empty non-leaf: only a VMID fence drops it */
		unsigned long pte;
	} tlb[TLB_HARTS][TLB_PAGES];
	bool logging[TLB_PAGES], dirty[TLB_PAGES];
	unsigned long accesses, faults, refaults;
} t;

/* Pages 2i and 2i + 1 are page i of two neighbouring 2 MiB regions. */
static gpa_t tlb_gpa(int p)
{
	return t.base + (p & 1) * PMD_SIZE + (p >> 1) * PAGE_SIZE;
}

static void tlb_flush_hook(bool local, gpa_t gpa, gpa_t gpsz)
{
	int h, p;

	for (h = 0; h < TLB_HARTS; h++)
		for (p = 0; p < TLB_PAGES; p++)
			if ((!local || h == t.hart) &&
			    (!gpsz ||
			     (!t.tlb[h][p].nonleaf && gpa <= tlb_gpa(p) &&
			      tlb_gpa(p) < gpa + gpsz)))
				t.tlb[h][p].cached = false;
}

/*
 * Hart @h walks the page table for page @p and caches what it finds; with
 * Svadu, the walk of an access sets @ad in a leaf that allows @need.
 */
static void tlb_fill(struct env *e, int h, int p, unsigned long need,
		     unsigned long ad)
{
	unsigned long *c = &t.tlb[h][p].pte;
	pte_t *ptep, pte;
	u32 l;

	*c = 0;
	if (kvm_riscv_gstage_get_leaf(&e->gs, tlb_gpa(p), &ptep, &pte, &l)) {
		*c = pte_val(pte);
		if (ad && (*c & need) == need)
			*c = __atomic_or_fetch(&ptep->pte, ad,
					       __ATOMIC_RELAXED);
	}
	/* An empty entry above the last level is a non-leaf one. */
	t.tlb[h][p].nonleaf = !*c && l > 0;
	t.tlb[h][p].cached = *c || !shim_svvptc;
}

/* Hart @h loads from or stores to page @p: false if it takes a fault. */
static bool tlb_access(struct env *e, int h, int p, bool write)
{
	unsigned long need = _PAGE_PRESENT | _PAGE_READ | (write ? W : 0);
	unsigned long ad = A | (write ? D : 0);
	unsigned long *c = &t.tlb[h][p].pte;

	/* Svadu: an entry without the A/D bits the access sets walks again. */
	if (t.adu && (*c & need) == need && (*c & ad) != ad)
		t.tlb[h][p].cached = false;
	if (!t.tlb[h][p].cached)
		tlb_fill(e, h, p, need, t.adu ? ad : 0);
	return (*c & need) == need && (*c & ad) == ad;
}

/* A speculative walk: the hart caches what it finds, and does not fault. */
static bool tlb_op_walk(struct env *e)
{
	int h = rndn(TLB_HARTS), p = rndn(TLB_PAGES);

	if (!t.tlb[h][p].cached)
		tlb_fill(e, h, p, 0, 0);
	return true;
}

static bool tlb_fault(struct env *e, int h, int p, bool write)
{
	bool ro = t.logging[p] && !write;
	gpa_t gpa = tlb_gpa(p);
	struct kvm_gstage_mapping out;
	int ret;

	t.hart = h;
	e->pc.nobjs = e->gs.pgd_levels;
#ifdef set_fault
	set_fault(&e->gs);
#endif
	e->gs.flags |= KVM_GSTAGE_FLAGS_SHARED;
	ret = gstage_map(&e->gs, &e->pc, gpa, gpa + m.delta,
					PAGE_SIZE, ro, true, &out);
	e->gs.flags &= ~KVM_GSTAGE_FLAGS_SHARED;
	if (ret == -EAGAIN) {
		e->pc.nobjs = e->gs.pgd_levels;
		ret = gstage_map(&e->gs, &e->pc, gpa,
						gpa + m.delta, PAGE_SIZE, ro,
						true, &out);
	}
	/* kvm_riscv_mmu_map() marks a page dirty when it maps it writable. */
	if (!ro)
		t.dirty[p] = true;
	return CHECKF(!ret, "fault on %#lx: %d", gpa, ret);
}

static bool tlb_op_access(struct env *e)
{
	int h = rndn(TLB_HARTS), p = rndn(TLB_PAGES), n;
	bool write = rndn(2);

	t.accesses++;
	for (n = 0; !tlb_access(e, h, p, write); n++) {
		if (!CHECKF(n < TLB_MAX_FAULTS,
			    "hart %d: %s of page %d faults again and again (cached %#lx)",
			    h, write ? "store" : "load", p, t.tlb[h][p].pte) ||
		    !tlb_fault(e, h, p, write))
			return false;
		t.faults++;
		t.refaults += n > 0;
	}
	return CHECKF(
		!write || !t.logging[p] || t.dirty[p],
		"hart %d stored to write-protected page %d: not marked dirty",
		h, p);
}

/* kvm_age_gfn(), then the flush of clear_flush_young() or none. */
static bool tlb_op_age(struct env *e)
{
	t.hart = rndn(TLB_HARTS);
	if (gstage_age(&e->gs, t.base, t.base + 2 * PMD_SIZE,
				       false) &&
	    rndn(2))
		kvm_flush_remote_tlbs(&e->kvm);
	return true;
}

/* KVM_CLEAR_DIRTY_LOG of a 32-page mask in one region, then the flush. */
static bool tlb_op_wp_masked(struct env *e)
{
	unsigned long mask = rnd() & rnd(), r = rndn(2), i;

	t.hart = rndn(TLB_HARTS);
	for (i = 0; i < 32; i++) {
		if (mask & BIT(i)) {
			t.logging[2 * i + r] = true;
			t.dirty[2 * i + r] = false;
		}
	}
	if (wp_pt_masked(&e->gs, tlb_gpa(r) >> PAGE_SHIFT,
					  mask & GENMASK(31, 0)))
		kvm_flush_remote_tlbs(&e->kvm);
	return true;
}

static bool tlb_op_unmap(struct env *e)
{
	gpa_t s = tlb_gpa(rndn(TLB_PAGES));

	t.hart = rndn(TLB_HARTS);
	if (gstage_unmap(&e->gs, s, (1 + rndn(8)) * PAGE_SIZE,
					 false))
		kvm_flush_remote_tlbs(&e->kvm);
	return true;
}

static bool tlb_op_stop_logging(struct env *e)
{
	memset(t.logging, 0, sizeof(t.logging));
	return true;
}

/* No hart holds a translation that allows more than the page table does. */
static bool tlb_check(struct env *e)
{
	unsigned long perm = _PAGE_PRESENT | _PAGE_READ | W | _PAGE_EXEC;
	pte_t *ptep, pte;
	int h, p;
	u32 l;

	for (h = 0; h < TLB_HARTS; h++) {
		for (p = 0; p < TLB_PAGES; p++) {
			unsigned long c = t.tlb[h][p].pte, mem = 0;

			if (!t.tlb[h][p].cached || !(c & _PAGE_PRESENT))
				continue;
			if (kvm_riscv_gstage_get_leaf(&e->gs, tlb_gpa(p), &ptep,
						      &pte, &l))
				mem = pte_val(pte);
			if (!CHECKF(pte_pfn(__pte(c)) == pte_pfn(__pte(mem)) &&
					    !(c & perm & ~mem),
				    "hart %d holds %#lx for page %d, the page table %#lx",
				    h, c, p, mem))
				return false;
		}
	}
	return true;
}

static const struct weighted_op tlb_ops[] = {
	{ "access", tlb_op_access, 70 },
	{ "walk", tlb_op_walk, 10 },
	{ "age", tlb_op_age, 6 },
	{ "wp_masked", tlb_op_wp_masked, 6 },
	{ "unmap", tlb_op_unmap, 4 },
	{ "stop_logging", tlb_op_stop_logging, 1 },
};

/* @adu: Svadu and Svvptc (QEMU's default rv64), else Svade only (RVA23). */
static void tlb_test(unsigned long adu)
{
	const struct weighted_op *o;
	unsigned long seed, op;
	struct env e;

	memset(&t, 0, sizeof(t));
	t.adu = adu;
	shim_svvptc = adu;
	shim_flush_hook = tlb_flush_hook;
	for (seed = 1; seed <= opt_seeds && !cur_fails; seed++) {
		rnd_state = seed * 0x9e3779b97f4a7c15UL + adu;
		env_init(&e, 3);
		model_reset(seed);
		memset(t.tlb, 0, sizeof(t.tlb));
		memset(t.logging, 0, sizeof(t.logging));
		t.base = rndn((kvm_riscv_gstage_gpa_size(3) >> 30) - 1) << 30;
		m.delta = (1UL << 40) + (rndn(1024) << 30);
		for (op = 0; op < opt_ops; op++) {
			o = pick_op(tlb_ops, ARRAY_SIZE(tlb_ops));
			op_begin(&e);
			if (!o->fn(&e) || !op_end(&e) || !tlb_check(&e)) {
				printf("# seed %lu op %lu (%s) failed\n", seed,
				       op, o->name);
				goto out;
			}
		}
		env_free_pgd(&e);
		shim_rcu_poll(true);
	}
out:
	shim_flush_hook = NULL;
	printf("# %lu accesses by %d harts: %lu faults, %lu of them again after a fault\n",
	       t.accesses, TLB_HARTS, t.faults, t.refaults);
}

#endif

#ifdef HAVE_DBIT
/*
 * Dirty logging by the D bit (kvm_riscv_gstage_wp_pt_masked() with a
 * tracked mask,
 * kvm_riscv_gstage_harvest(), an unmap with a dirty_slot), against a hart
 * that stores as Svadu allows: through a cached writable and dirty entry
 * without touching the leaf, else setting D with a cmpxchg() that checks W
 * in memory; without a writable leaf it faults, and the fault maps or
 * makes the leaf writable and dirty and marks the page before the store,
 * as mmu.c does. The hart writes a hot set of 64 of the 512 pages that
 * moves on every round. Each round the main thread, as KVM_GET_DIRTY_LOG
 * without manual protection, harvests (read side), takes the dirty pages
 * and cleans them (write side), flushes (the hart acknowledges), and
 * copies them; before that, an MMU notifier unmaps a page of the last
 * hot set now and then. Every store made before a round began must be
 * in a copy by its end, and the last store to each page in the end.
 */
#define DBIT_PAGES 512
#define DBIT_BASE (PUD_SIZE >> PAGE_SHIFT)

struct dbit_race {
	struct kvm *kvm;
	pthread_rwlock_t lock;
	unsigned long mem[DBIT_PAGES];	/* the pages' contents */
	unsigned long dirty[BITS_TO_LONGS(DBIT_PAGES)];
	unsigned long epoch, acked;	/* flushes asked for, done */
	unsigned long round, seen;	/* the hot set's round, the hart's */
	unsigned long stores, faults;
	bool stop;
};

/* A fault as mmu.c takes it: map or make writable, then mark dirty. */
static void dbit_fault(struct dbit_race *r, struct kvm_mmu_memory_cache *pc,
		       unsigned long p)
{
	gpa_t gpa = gfn_to_gpa(DBIT_BASE + p);
	struct kvm_gstage_mapping out;
	struct kvm_gstage gs;
	pte_t *ptep, old;
	u32 level;

	pthread_rwlock_rdlock(&r->lock);
	kvm_riscv_gstage_init(&gs, r->kvm);
	gs.flags |= KVM_GSTAGE_FLAGS_SHARED;
	pc->nobjs = r->kvm->arch.pgd_levels;
	if (kvm_riscv_gstage_get_leaf(&gs, gpa, &ptep, &old, &level)) {
		while (!(pte_val(old) & _PAGE_WRITE) &&
		       !try_cmpxchg(&ptep->pte, &old.pte,
				    pte_val(old) | _PAGE_WRITE | _PAGE_DIRTY))
			;
	} else if (gstage_map(&gs, pc, gpa, gpa + (1UL << 40), PAGE_SIZE, false, false,
			      &out) == -EAGAIN) {
		pthread_rwlock_unlock(&r->lock);
		pthread_rwlock_wrlock(&r->lock);
		gs.flags &= ~KVM_GSTAGE_FLAGS_SHARED;
		gstage_map(&gs, pc, gpa, gpa + (1UL << 40), PAGE_SIZE, false, false, &out);
	}
	set_bit_le(p, r->dirty);
	pthread_rwlock_unlock(&r->lock);
}

static void *dbit_hart(void *arg)
{
	struct dbit_race *r = arg;
	unsigned long seed = 7, tlb[BITS_TO_LONGS(DBIT_PAGES)] = { 0 };
	struct kvm_mmu_memory_cache pc = { 0 };
	unsigned long p, pte, round, n;
	struct kvm_gstage gs;
	pte_t *ptep, old;
	u32 level;

	for (n = 0; !__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE); n++) {
		/* A flush drops every cached entry before it is acknowledged. */
		if (__atomic_load_n(&r->epoch, __ATOMIC_ACQUIRE) != r->acked) {
			memset(tlb, 0, sizeof(tlb));
			__atomic_store_n(&r->acked, r->epoch, __ATOMIC_RELEASE);
		}
		round = __atomic_load_n(&r->round, __ATOMIC_ACQUIRE);
		__atomic_store_n(&r->seen, round, __ATOMIC_RELEASE);
		p = round % (DBIT_PAGES / 64) * 64 + rnd_next(&seed) % 64;
		while (!(tlb[p / BITS_PER_LONG] & BIT(p % BITS_PER_LONG))) {
			kvm_riscv_gstage_init(&gs, r->kvm);
			rcu_read_lock();
			if (!kvm_riscv_gstage_get_leaf(&gs, gfn_to_gpa(DBIT_BASE + p), &ptep,
						       &old, &level) ||
			    !(pte_val(old) & _PAGE_WRITE)) {
				rcu_read_unlock();
				dbit_fault(r, &pc, p);
				r->faults++;
				continue;
			}
			/* Svadu: set D only if the leaf in memory still allows it. */
			pte = pte_val(old);
			if ((pte & _PAGE_DIRTY) ||
			    __atomic_compare_exchange_n(&ptep->pte, &pte, pte | _PAGE_DIRTY, false,
							__ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
				tlb[p / BITS_PER_LONG] |= BIT(p % BITS_PER_LONG);
			rcu_read_unlock();
		}
		__atomic_store_n(&r->mem[p], n + 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&r->acked, r->epoch, __ATOMIC_RELEASE);
	r->stores = n;
	return NULL;
}

/* The flush before the ioctl returns: the hart drops its entries. */
static void dbit_flush(struct dbit_race *r, bool hart_runs)
{
	unsigned long e = __atomic_add_fetch(&r->epoch, 1, __ATOMIC_ACQ_REL);

	while (hart_runs && __atomic_load_n(&r->acked, __ATOMIC_ACQUIRE) != e)
		sched_yield();
}

static void test_race_dbit(unsigned long unused)
{
	unsigned long tracked[BITS_TO_LONGS(DBIT_PAGES)] = { 0 };
	unsigned long idle[BITS_TO_LONGS(DBIT_PAGES)] = { 0 };
	unsigned long took[BITS_TO_LONGS(DBIT_PAGES)], copied[DBIT_PAGES] = { 0 };
	unsigned long before[DBIT_PAGES], i, t, w, p, late = 0, bad = 0;
	struct kvm_memory_slot slot = { .base_gfn = DBIT_BASE, .npages = DBIT_PAGES };
	static struct dbit_race r;
	struct kvm_gstage_dbit d = {
		.base_gfn = DBIT_BASE, .tracked = tracked, .idle = idle, .dirty = r.dirty,
	};
	bool last = false;
	pthread_t hart;
	struct env e;

	rnd_state = 40;
	memset(&r, 0, sizeof(r));
	env_init(&e, 3);
	r.kvm = &e.kvm;
	slot.dirty_bitmap = r.dirty;
	pthread_rwlock_init(&r.lock, NULL);
	pthread_create(&hart, NULL, dbit_hart, &r);
	for (i = 1; !last; i++) {
		last = i > opt_race_iters / 20;
		if (last) {
			__atomic_store_n(&r.stop, true, __ATOMIC_RELEASE);
			pthread_join(hart, NULL);
		} else {
			/* Move the hot set on, and let the hart store there. */
			__atomic_store_n(&r.round, i, __ATOMIC_RELEASE);
			while (__atomic_load_n(&r.seen, __ATOMIC_ACQUIRE) != i)
				sched_yield();
		}
		/* An MMU notifier unmaps a page of the last hot set. */
		if (!last && rndn(2)) {
			pthread_rwlock_wrlock(&r.lock);
			kvm_riscv_gstage_init(&e.gs, &e.kvm);
			e.gs.dirty_slot = &slot;
			p = (i - 1) % (DBIT_PAGES / 64) * 64 + rndn(64);
			gstage_unmap(&e.gs, gfn_to_gpa(DBIT_BASE + p), PAGE_SIZE, false);
			pthread_rwlock_unlock(&r.lock);
			dbit_flush(&r, true);
		}
		for (p = 0; p < DBIT_PAGES; p++)
			before[p] = __atomic_load_n(&r.mem[p], __ATOMIC_ACQUIRE);
		/* The harvest, with mmu_lock held for read. */
		pthread_rwlock_rdlock(&r.lock);
		kvm_riscv_gstage_init(&e.gs, &e.kvm);
		e.gs.flags |= KVM_GSTAGE_FLAGS_SHARED;
		d.sweep = rndn(2);
		kvm_riscv_gstage_harvest(&e.gs, &d, DBIT_BASE, DBIT_BASE + DBIT_PAGES);
		pthread_rwlock_unlock(&r.lock);
		/* Take the dirty pages and clean them, with it held for write. */
		pthread_rwlock_wrlock(&r.lock);
		kvm_riscv_gstage_init(&e.gs, &e.kvm);
		for (w = 0; w < BITS_TO_LONGS(DBIT_PAGES); w++) {
			took[w] = __atomic_exchange_n(&r.dirty[w], 0, __ATOMIC_SEQ_CST);
			if (!took[w])
				continue;
			t = 0;
			kvm_riscv_gstage_wp_pt_masked(&e.gs, DBIT_BASE + w * BITS_PER_LONG,
						      took[w], &t);
			tracked[w] |= t;
			idle[w] &= ~t;
		}
		pthread_rwlock_unlock(&r.lock);
		/* The flush, before the ioctl returns; then userspace copies. */
		dbit_flush(&r, !last);
		for (w = 0; w < BITS_TO_LONGS(DBIT_PAGES); w++)
			for_each_set_bit(t, &took[w], BITS_PER_LONG)
				copied[w * BITS_PER_LONG + t] =
					__atomic_load_n(&r.mem[w * BITS_PER_LONG + t],
							__ATOMIC_ACQUIRE);
		for (p = 0; p < DBIT_PAGES; p++)
			late += copied[p] < before[p];
		shim_rcu_poll(false);
	}
	for (p = 0; p < DBIT_PAGES; p++)
		bad += copied[p] != r.mem[p];
	printf("# %lu rounds, %lu stores, %lu faults; %lu stores not copied in their round, %lu pages not at the end\n",
	       i - 1, r.stores, r.faults, late, bad);
	CHECK(op_end(&e) && !late && !bad && r.faults);
}
#endif

static const struct {
	const char *name;
	void (*fn)(unsigned long arg);
	unsigned long arg;
} tests[] = {
	{ "mode_detect", test_mode_detect },
	{ "prop_sv39x4", prop_test, 3 },
	{ "prop_sv48x4", prop_test, 4 },
	{ "prop_sv57x4", prop_test, 5 },
	{ "unmap_partial_huge", test_unmap_partial_huge },
	{ "unmap_frees_tables", test_unmap_frees_tables },
	{ "map_huge_over_table", test_map_huge_over_table },
#ifdef HAVE_RECOVER_HUGE
	{ "recover_huge", test_recover_huge },
#endif
#ifdef HAVE_AGE_RANGE
	{ "age_partial_huge", test_age_partial_huge },
#endif
#ifdef HAVE_LOCKLESS_AGE
	{ "race_age_lockless", test_race_age },
#endif
#ifdef KVM_GSTAGE_FLAGS_SHARED
	{ "shared_fault_same_leaf", test_shared_fault_same_leaf },
	{ "race_shared_faults", test_race_shared_faults },
	{ "tlb_svade", tlb_test, false },
	{ "tlb_svadu_svvptc", tlb_test, true },
#endif
	{ "race_wp_pt_masked", race_test, true },
	{ "race_wp_range", race_test, false },
	{ "race_split_huge", test_race_split_huge },
#ifdef HAVE_DBIT
	{ "race_dbit", test_race_dbit },
#endif
};

#ifdef GSTAGE_COUNT
/*
 * Instruction counts of the write-protect and aging paths, run under
 * valgrind --tool=callgrind --collect-atstart=no: only the calls between
 * the CALLGRIND_TOGGLE_COLLECT pairs are counted, one dump per measurement.
 */
#include <valgrind/callgrind.h>

#define MEASURE(name, call)                    \
	do {                                   \
		CALLGRIND_TOGGLE_COLLECT;      \
		call;                          \
		CALLGRIND_TOGGLE_COLLECT;      \
		CALLGRIND_DUMP_STATS_AT(name); \
	} while (0)

static const gpa_t gpa0 = 8 * PMD_SIZE;

/* A VM with [gpa0, gpa0 + @size) mapped writable and young by level @l leaves */
static void setup(struct env *e, unsigned long levels, int l, gpa_t size)
{
	gpa_t gpa;

	env_init(e, levels);
	for (gpa = gpa0; gpa < gpa0 + size; gpa += lsize(l)) {
		op_begin(e);
		map_gpa(e, gpa, l, false, false);
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
	unsigned long levels = argc > 1 ? strtoul(argv[1], NULL, 0) : 3;
	unsigned long mask;
	char name[64];
	unsigned int i;
	struct env e;
	int l;

	shim_mem_init(1024);
	printf("# pgd_levels %lu\n", levels);
	for (l = 0; l < 2; l++) {
		for (i = 0; i < ARRAY_SIZE(pct); i++) {
			setup(&e, levels, l, PMD_SIZE);
			snprintf(name, sizeof(name), "wp_pt_masked/%s/%d%%",
				 l ? "2M" : "4K", pct[i]);
			mask = mask_of(pct[i]);
			MEASURE(name, wp_pt_masked(
					      &e.gs, gpa0 >> PAGE_SHIFT, mask));
		}
	}
	setup(&e, levels, 0, PMD_SIZE);
	MEASURE("wp_range/2M-of-4K",
		kvm_riscv_gstage_wp_range(&e.gs, gpa0, gpa0 + PMD_SIZE));
	setup(&e, levels, 1, PMD_SIZE);
	MEASURE("wp_range/2M-leaf",
		kvm_riscv_gstage_wp_range(&e.gs, gpa0, gpa0 + PMD_SIZE));
	setup(&e, levels, 0, PUD_SIZE);
	MEASURE("wp_range/1G-of-4K",
		kvm_riscv_gstage_wp_range(&e.gs, gpa0, gpa0 + PUD_SIZE));
	setup(&e, levels, 0, PUD_SIZE);
	MEASURE("unmap_range/1G-of-4K",
		gstage_unmap(&e.gs, gpa0, PUD_SIZE, true));
	/* A fault's map: tables linked on the way, or into a table in place. */
	env_init(&e, levels);
	op_begin(&e);
	MEASURE("map_page/4K-new-tables", map_gpa(&e, gpa0, 0, false, false));
	setup(&e, levels, 0, PMD_SIZE);
	gstage_unmap(&e.gs, gpa0, PAGE_SIZE, true);
	op_begin(&e);
	MEASURE("map_page/4K-in-table", map_gpa(&e, gpa0, 0, false, false));
	setup(&e, levels, 0, PMD_SIZE);
	MEASURE("get_leaf/4K", leaf(&e, gpa0, NULL));
#ifdef HAVE_AGE_RANGE
	setup(&e, levels, 0, PMD_SIZE);
	MEASURE("age_range/2M-of-4K",
		gstage_age(&e.gs, gpa0, gpa0 + PMD_SIZE,
					   false));
	setup(&e, levels, 0, PMD_SIZE);
	gstage_age(&e.gs, gpa0, gpa0 + PMD_SIZE, false);
	MEASURE("age_range/2M-of-4K-old",
		gstage_age(&e.gs, gpa0, gpa0 + PMD_SIZE,
					   false));
	setup(&e, levels, 0, PMD_SIZE);
	MEASURE("test_age_range/2M-of-4K",
		gstage_age(&e.gs, gpa0, gpa0 + PMD_SIZE, true));
	setup(&e, levels, 1, PMD_SIZE);
	MEASURE("age_range/2M-leaf",
		gstage_age(&e.gs, gpa0, gpa0 + PMD_SIZE,
					   false));
#else
	printf("# kvm_riscv_gstage_age_range() not in this tree\n");
#endif
	return 0;
}
#else
int main(int argc, char **argv)
{
	unsigned long i, n = 0;

	for (i = 1; i + 1 < (unsigned long)argc; i += 2) {
		if (!strcmp(argv[i], "--seeds"))
			opt_seeds = strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--ops"))
			opt_ops = strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--race-iters"))
			opt_race_iters = strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--only"))
			opt_only = argv[i + 1];
		else
			break;
	}
	if (i != (unsigned long)argc) {
		fprintf(stderr,
			"usage: %s [--seeds N] [--ops N] [--race-iters N] [--only SUBSTR]\n",
			argv[0]);
		return 2;
	}
	shim_mem_init(8192);
	m.lv[0] = calloc(NSLOT * 512 * 512, sizeof(long));
	m.lv[1] = calloc(NSLOT * 512, sizeof(long));
	m.lv[2] = calloc(NSLOT, sizeof(long));
	for (i = 0; i < ARRAY_SIZE(tests); i++)
		n += !opt_only || strstr(tests[i].name, opt_only);
	printf("TAP version 13\n1..%lu\n", n);
	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		if (opt_only && !strstr(tests[i].name, opt_only))
			continue;
		cur_fails = 0;
		walk_model = true;
		tests[i].fn(tests[i].arg);
		printf("%sok %d %s\n", cur_fails ? "not " : "", ++test_no,
		       tests[i].name);
		if (cur_fails)
			nr_fail++;
		else
			nr_pass++;
	}
	printf("%d passed, %d failed\n", nr_pass, nr_fail);
	return nr_fail ? 1 : 0;
}
#endif
