/* audit_write.c - the cost of one audit event with and without the hash chain (docs/audit.md,
 * "The chain"; docs/benchmarks.md): writes N DNS-like events into a fresh log in FOLDER with
 * each writer shape the product uses, unchained then chained, and prints ns per event.
 *   single:   one locked write() per event (the launcher's events)
 *   batch64:  AUDIT_WRITE_DEFER, flushed every 64 events (the gateway's DNS front per wake-up)
 *   two:      two writers on one file taking turns, one event each (launcher and embedded
 *             gateway): every line's prev is read back from the file
 * Usage: audit_write [-n EVENTS] [-r ROUNDS] FOLDER. Medians of ROUNDS, in CPU time (user and
 * system) per event. */
#include "audit/audit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum shape { SINGLE, BATCH, TWO };

static const char *const shape_names[] = {"single", "batch64", "two"};

/* the process's CPU time (user and system): on a shared machine, time spent waiting for a CPU
 * is not the writer's cost */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* one round: ns per event, or 0 on an error (said on stderr) */
static double one(const char *folder, enum shape s, bool chain, long n)
{
	struct audit_log *a = NULL, *b = NULL;
	struct audit_event ev = {0};
	struct wd_err err;
	char path[4096], name[64];
	uint64_t t0, t1;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/bench-audit-%d.jsonl", folder, (int)getpid());
	unlink(path);
	if (audit_log_open(path, &a, &err) || (s == TWO && audit_log_open(path, &b, &err))) {
		fprintf(stderr, "audit_write: %s\n", err.msg);
		audit_log_close(a);
		return 0;
	}
	if (chain) {
		audit_log_chain(a);
		if (b)
			audit_log_chain(b);
	}
	ev.run = "5f1c2a9e0b7d";
	ev.type = AUDIT_TYPE_DNS;
	ev.action = "dns.query";
	ev.allowed = true;
	ev.reason = "allowed by policy";
	ev.rule = "*.wild.test";
	ev.qtype = "A";
	ev.has = AUDIT_HAS_UID;
	ev.uid = 1000;
	ev.user = "user";
	t0 = now_ns();
	for (long i = 0; i < n && !ret; i++) {
		snprintf(name, sizeof(name), "h%ld.wild.test", i % 100);
		ev.resource = name;
		clock_gettime(CLOCK_REALTIME, &ev.ts);
		if (s == BATCH) {
			ret = audit_log_write(a, &ev, AUDIT_WRITE_DEFER, &err);
			if (!ret && (i % 64 == 63 || i == n - 1))
				ret = audit_log_flush(a, &err) < 0 ? -1 : 0;
		} else {
			ret = audit_log_write(s == TWO && (i & 1) ? b : a, &ev, 0, &err);
		}
	}
	t1 = now_ns();
	if (ret)
		fprintf(stderr, "audit_write: %s\n", err.msg);
	audit_log_close(a);
	audit_log_close(b);
	unlink(path);
	return ret ? 0 : (double)(t1 - t0) / (double)n;
}

static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

int main(int argc, char **argv)
{
	long n = 20000, rounds = 5;
	double v[64];
	int c;

	while ((c = getopt(argc, argv, "n:r:")) != -1) {
		if (c == 'n')
			n = atol(optarg);
		else if (c == 'r')
			rounds = atol(optarg);
		else
			return 2;
	}
	if (optind != argc - 1 || n < 1 || rounds < 1 || rounds > 64) {
		fprintf(stderr, "usage: audit_write [-n EVENTS] [-r ROUNDS(1-64)] FOLDER\n");
		return 2;
	}
	printf("%-8s %14s %14s %8s  (CPU ns per event)\n", "shape", "plain", "chained", "ratio");
	for (int s = SINGLE; s <= TWO; s++) {
		double med[2];

		for (int ch = 0; ch < 2; ch++) {
			for (long r = 0; r < rounds; r++) {
				v[r] = one(argv[optind], (enum shape)s, ch, n);
				if (v[r] == 0)
					return 1;
			}
			qsort(v, (size_t)rounds, sizeof(v[0]), cmp);
			med[ch] = v[rounds / 2];
		}
		printf("%-8s %14.0f %14.0f %8.2f\n", shape_names[s], med[0], med[1],
		       med[1] / med[0]);
	}
	return 0;
}
