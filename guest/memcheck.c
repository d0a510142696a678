// SPDX-License-Identifier: GPL-2.0
/*
 * memcheck [-r PAGES_PER_S] [-i SECONDS] MIB: the inner guest's memory
 * check for the migration test. Pass after pass, writes the pass number
 * into the first word of every page of MIB MiB; before each write, checks
 * that the page still holds the previous pass's number. A page whose last
 * write a migration lost (a dirty page not sent) holds an older number on
 * the destination and is caught by the next pass.
 *
 * -r writes at most PAGES_PER_S pages a second (so that kernels can be
 * compared at the same guest write rate); without it, or with 0, full
 * speed: the guest then spends nearly all its time in user mode.
 * -i prints a progress line at the end of a pass at most every SECONDS
 * (default 1; 0: every pass).
 *
 * Output: "MEMCHECK pass P ok longest_ms=L" lines, L the longest pass
 * since the previous line: a guest that stalls (its vCPU waiting in the
 * host) shows there; on a mismatch, up to 16
 * "MEMCHECK ERROR page N holds X, expected Y" lines, the rest of the pass
 * is only checked, then "MEMCHECK FAIL pass P: B bad pages" and exit 1.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE_SIZE 4096UL
#define WORDS_PER_PAGE (PAGE_SIZE / sizeof(uint64_t))
#define RATE_CHUNK 64
#define MAX_REPORTS 16

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleep until @t (CLOCK_MONOTONIC seconds). */
static void sleep_until(double t)
{
	struct timespec ts = {
		.tv_sec = (time_t)t,
		.tv_nsec = (long)((t - (time_t)t) * 1e9),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

/* Check the rest of pass @pass read-only from page @from; count the bad. */
static unsigned long check_rest(uint64_t *mem, size_t pages, size_t from,
				uint64_t pass, unsigned long bad)
{
	size_t i;

	for (i = from; i < pages; i++) {
		uint64_t v = mem[i * WORDS_PER_PAGE];

		if (v == pass - 1)
			continue;
		if (bad++ < MAX_REPORTS)
			printf("MEMCHECK ERROR page %zu holds %llu, expected %llu\n",
			       i, (unsigned long long)v,
			       (unsigned long long)(pass - 1));
	}
	return bad;
}

static void usage(void)
{
	fprintf(stderr, "usage: memcheck [-r PAGES_PER_S] [-i SECONDS] MIB\n");
	exit(2);
}

int main(int argc, char **argv)
{
	double interval = 1, longest = 0, start, last, begin, end;
	unsigned long rate = 0, written = 0;
	size_t pages, i;
	uint64_t pass, *mem;
	int opt;

	while ((opt = getopt(argc, argv, "r:i:")) != -1) {
		switch (opt) {
		case 'r':
			rate = strtoul(optarg, NULL, 0);
			break;
		case 'i':
			interval = strtod(optarg, NULL);
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();
	pages = strtoul(argv[optind], NULL, 0) * (1UL << 20) / PAGE_SIZE;
	if (!pages)
		usage();
	mem = mmap(NULL, pages * PAGE_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (mem == MAP_FAILED) {
		perror("memcheck: mmap");
		return 1;
	}
	printf("MEMCHECK start %zu pages, rate %lu pages/s\n", pages, rate);
	fflush(stdout);
	start = now();
	last = start;
	for (pass = 1;; pass++) {
		begin = now();
		for (i = 0; i < pages; i++) {
			uint64_t *p = &mem[i * WORDS_PER_PAGE];

			if (*p != pass - 1) {
				unsigned long bad =
					check_rest(mem, pages, i, pass, 0);

				printf("MEMCHECK FAIL pass %llu: %lu bad pages\n",
				       (unsigned long long)pass, bad);
				return 1;
			}
			*p = pass;
			if (rate && ++written % RATE_CHUNK == 0)
				sleep_until(start + (double)written / rate);
		}
		end = now();
		if (end - begin > longest)
			longest = end - begin;
		if (end - last >= interval) {
			last = end;
			printf("MEMCHECK pass %llu ok longest_ms=%.1f\n",
			       (unsigned long long)pass, longest * 1000);
			fflush(stdout);
			longest = 0;
		}
	}
}
