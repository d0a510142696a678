// SPDX-License-Identifier: GPL-2.0
/*
 * ager MS CMD [ARG...]: run CMD in a memory cgroup of its own and force an
 * MGLRU aging pass on that cgroup every MS milliseconds until CMD exits,
 * through /sys/kernel/debug/lru_gen ("+ memcg node max_gen 1 1": swappiness
 * 1 so anonymous memory is aged too, force_scan so the page tables, and
 * with them KVM's secondary MMU, are walked). Prints the passes and the
 * time they took against CMD's run time: under TCG an aging pass can take
 * longer than MS, and then the ager keeps one hart busy. Exits with CMD's
 * status, or 1 if not one aging pass went through.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LRU_GEN "/sys/kernel/debug/lru_gen"
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
	int ms, status, passes = 0, busy = 0;
	double start, aging = 0;
	struct timespec ts;
	pid_t child;

	if (argc < 3 || atoi(argv[1]) <= 0) {
		fprintf(stderr, "usage: ager MS CMD [ARG...]\n");
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
	while (waitpid(child, &status, WNOHANG) == 0) {
		double t;

		nanosleep(&ts, NULL);
		t = now();
		passes += age(path, &busy);
		aging += now() - t;
	}
	rmdir(cg);
	printf("ager: %d aging passes every %d ms, %d raced, aging %.1f s of %.1f s\n",
	       passes, ms, busy, aging, now() - start);
	if (!passes) {
		fprintf(stderr, "ager: no aging pass went through %s\n",
			LRU_GEN);
		return 1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
