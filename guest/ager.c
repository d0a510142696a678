// SPDX-License-Identifier: GPL-2.0
/*
 * ager [-i] MS CMD [ARG...]: run CMD in a memory cgroup of its own and age
 * its memory every MS milliseconds until CMD exits.
 *
 * By default a pass is a forced MGLRU aging pass on that cgroup, through
 * /sys/kernel/debug/lru_gen ("+ memcg node max_gen 1 1": swappiness 1 so
 * anonymous memory is aged too, force_scan so the page tables, and with
 * them KVM's secondary MMU, are walked). MGLRU walks page tables only where
 * the hardware sets Accessed bits (arch_has_hw_pte_young(), Svadu on
 * RISC-V); elsewhere such a pass clears no KVM Accessed bit.
 *
 * With -i a pass marks every present page of the cgroup's processes idle
 * through /proc/PID/pagemap and /sys/kernel/mm/page_idle/bitmap, which
 * clears the Accessed bits of every mapping of those pages, KVM's G-stage
 * included (mmu_notifier_clear_young(), no TLB flush), on any hardware.
 *
 * Prints the passes and the time they took against CMD's run time: under
 * TCG a pass can take longer than MS, and then the ager keeps one hart
 * busy. Exits with CMD's status, or 1 if not one pass went through. On
 * SIGTERM or SIGINT (e.g. from timeout(1)) it kills every process of the
 * cgroup, CMD's children included, and exits with 128 + the signal.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LRU_GEN "/sys/kernel/debug/lru_gen"
#define PAGE_IDLE "/sys/kernel/mm/page_idle/bitmap"
#define PM_PRESENT (1ULL << 63)
#define PM_PFN_MASK ((1ULL << 55) - 1)
#define MAX_NODES 8

struct memcg {
	unsigned long id;
	int nr_nodes;
	int node[MAX_NODES];
	unsigned long max_gen[MAX_NODES];
};

/* Find memcg @path in lru_gen and the newest generation of each node. */
static int find_memcg(const char *path, struct memcg *mc)
{
	char line[256], word[128];
	unsigned long v;
	int in = 0, n;
	FILE *f;

	f = fopen(LRU_GEN, "r");
	if (!f)
		return -1;
	memset(mc, 0, sizeof(*mc));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "memcg %lu %127s", &v, word) == 2) {
			in = !strcmp(word, path);
			if (in)
				mc->id = v;
		} else if (in && sscanf(line, " node %d", &n) == 1) {
			if (mc->nr_nodes == MAX_NODES)
				break;
			mc->node[mc->nr_nodes++] = n;
		} else if (in && mc->nr_nodes &&
			   sscanf(line, " %lu", &v) == 1) {
			if (v > mc->max_gen[mc->nr_nodes - 1])
				mc->max_gen[mc->nr_nodes - 1] = v;
		}
	}
	fclose(f);
	return mc->id && mc->nr_nodes ? 0 : -1;
}

/* One aging pass on every node of @path; returns the passes that went in. */
static int age(const char *path, int *busy)
{
	struct memcg mc;
	char cmd[96];
	int fd, i, done = 0;

	if (find_memcg(path, &mc))
		return 0;
	fd = open(LRU_GEN, O_WRONLY);
	if (fd < 0)
		return 0;
	for (i = 0; i < mc.nr_nodes; i++) {
		int len = snprintf(cmd, sizeof(cmd), "+ %lu %d %lu 1 1\n",
				   mc.id, mc.node[i], mc.max_gen[i]);

		if (write(fd, cmd, len) == len)
			done++;
		else if (errno == EEXIST || errno == EINVAL)
			(*busy)++; /* raced with another aging pass */
	}
	close(fd);
	return done;
}

/*
 * The pages of one pass, as a PFN bitmap: PFNs come in virtual-address
 * order, so the bitmap is filled first and written in runs of non-zero
 * words, a few pwrite()s a pass.
 */
struct idle_map {
	uint64_t *words;
	size_t nr;
};

static void idle_pfn(struct idle_map *m, uint64_t pfn)
{
	size_t w = pfn / 64;

	if (w >= m->nr) {
		size_t nr = (w + 1) * 2;
		uint64_t *words = realloc(m->words, nr * sizeof(*words));

		if (!words) {
			perror("ager: realloc");
			exit(1);
		}
		memset(words + m->nr, 0, (nr - m->nr) * sizeof(*words));
		m->words = words;
		m->nr = nr;
	}
	m->words[w] |= 1ULL << (pfn % 64);
}

/* Mark every present page of process @pid idle. */
static void idle_process(struct idle_map *m, int pid)
{
	char file[64], line[512];
	unsigned long start, end;
	uint64_t ent[512];
	int pm;
	FILE *maps;

	snprintf(file, sizeof(file), "/proc/%d/maps", pid);
	maps = fopen(file, "r");
	snprintf(file, sizeof(file), "/proc/%d/pagemap", pid);
	pm = open(file, O_RDONLY);
	while (maps && pm >= 0 && fgets(line, sizeof(line), maps)) {
		if (sscanf(line, "%lx-%lx", &start, &end) != 2)
			continue;
		for (; start < end; start += 512 * 4096UL) {
			size_t n = (end - start) / 4096;
			ssize_t got;
			size_t i;

			if (n > 512)
				n = 512;
			got = pread(pm, ent, n * 8, start / 4096 * 8);
			for (i = 0; got > 0 && i < (size_t)got / 8; i++) {
				if (!(ent[i] & PM_PRESENT))
					continue;
				if (!(ent[i] & PM_PFN_MASK)) {
					fprintf(stderr,
						"ager: %s shows no PFNs (not root?)\n",
						file);
					exit(1);
				}
				idle_pfn(m, ent[i] & PM_PFN_MASK);
			}
		}
	}
	if (pm >= 0)
		close(pm);
	if (maps)
		fclose(maps);
}

/*
 * One page_idle pass over the processes of cgroup @procs; returns 1 if it
 * marked pages. page_idle skips pages that are not on an LRU list.
 */
static int idle(const char *procs, long *pages)
{
	struct idle_map m = { .words = NULL, .nr = 0 };
	FILE *f = fopen(procs, "r");
	long marked = 0;
	size_t i, j;
	int fd, pid;
	ssize_t n;

	while (f && fscanf(f, "%d", &pid) == 1)
		idle_process(&m, pid);
	if (f)
		fclose(f);
	fd = open(PAGE_IDLE, O_WRONLY);
	for (i = 0; fd >= 0 && i < m.nr; i = j) {
		for (; i < m.nr && !m.words[i]; i++)
			;
		for (j = i; j < m.nr && m.words[j]; j++)
			marked += __builtin_popcountll(m.words[j]);
		if (j == i)
			continue;
		/*
		 * The kernel stops at max_pfn, which the last word of a run
		 * can cross: a short write (or ENXIO) ends the pass, as the
		 * later runs lie above it.
		 */
		n = pwrite(fd, m.words + i, (j - i) * 8, i * 8);
		if (n < 0 && errno != ENXIO) {
			perror(PAGE_IDLE);
			exit(1);
		}
		if (n != (ssize_t)((j - i) * 8))
			break;
	}
	if (fd >= 0)
		close(fd);
	free(m.words);
	*pages += marked;
	return marked > 0;
}

static volatile sig_atomic_t stop_sig;

static void on_stop(int sig)
{
	stop_sig = sig;
}

static void write_file(const char *file, const char *s)
{
	int fd = open(file, O_WRONLY);

	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s)) {
		perror(file);
		exit(1);
	}
	close(fd);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	char cg[64], path[32], procs[80];
	int ms, status, passes = 0, busy = 0, page_idle = 0, i;
	double start, aging = 0;
	struct timespec ts;
	long pages = 0;
	pid_t child;

	if (argc > 1 && !strcmp(argv[1], "-i")) {
		page_idle = 1;
		argv++;
		argc--;
	}
	if (argc < 3 || atoi(argv[1]) <= 0) {
		fprintf(stderr, "usage: ager [-i] MS CMD [ARG...]\n");
		return 2;
	}
	ms = atoi(argv[1]);
	snprintf(path, sizeof(path), "/ager.%d", getpid());
	snprintf(cg, sizeof(cg), "/sys/fs/cgroup%s", path);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	if (mkdir(cg, 0755)) {
		perror(cg);
		return 1;
	}

	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	start = now();
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (!child) {
		write_file(procs, "0");
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (!stop_sig && waitpid(child, &status, WNOHANG) == 0) {
		double t;

		nanosleep(&ts, NULL);
		t = now();
		passes += page_idle ? idle(procs, &pages) : age(path, &busy);
		aging += now() - t;
	}
	if (stop_sig) {
		char kill_file[96];

		snprintf(kill_file, sizeof(kill_file), "%s/cgroup.kill", cg);
		write_file(kill_file, "1");
		waitpid(child, &status, 0);
		/* cgroup.kill is asynchronous: wait (up to 10 s) until it is empty. */
		for (i = 0; i < 1000 && rmdir(cg) && errno == EBUSY; i++)
			usleep(10000);
		fprintf(stderr, "ager: signal %d: killed every process of %s\n",
			stop_sig, cg);
	}
	rmdir(cg);
	if (page_idle)
		printf("ager: %d page_idle passes every %d ms, %ld pages marked idle, aging %.1f s of %.1f s\n",
		       passes, ms, pages, aging, now() - start);
	else
		printf("ager: %d aging passes every %d ms, %d raced, aging %.1f s of %.1f s\n",
		       passes, ms, busy, aging, now() - start);
	if (!passes) {
		fprintf(stderr, "ager: no aging pass went through %s\n",
			page_idle ? PAGE_IDLE : LRU_GEN);
		return 1;
	}
	if (stop_sig)
		return 128 + stop_sig;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
