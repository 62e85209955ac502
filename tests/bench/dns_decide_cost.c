/* dns_decide_cost.c - what the DNS exfiltration budget adds to one query's decision, in one
 * process and without sockets (docs/benchmarks.md, "The DNS exfiltration budget"): the bench
 * policy's names (allowed.test and h1..h99.wild.test, as tests/bench/run asks them) decided
 * with gw_dns_decide() alone, then with gw_dns_decide_budget() after it (every name seen
 * before, as in the bench after its warm-up), in turns. Prints ns per query for each and
 * their difference. Usage: dns_decide_cost [QUERIES] (default 2,000,000 a turn). */
#include "gateway/decide.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NAMES 100

static struct dns_query queries[NAMES];

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/* @n queries in turn over the names, with the budget step when @budget is not NULL: ns each */
static double turn(const struct wd_policy *p, struct gw_dnsbudget *budget, long n)
{
	struct gw_dns_verdict v;
	uint64_t t0 = now_ns();
	unsigned synthetic = 0;

	for (long i = 0; i < n; i++) {
		struct gw_dns_facts f = {.parsed = DNS_OK,
					 .q = &queries[i % NAMES],
					 .policy = p,
					 .upstream = true,
					 .budget = budget,
					 .now = 1};

		gw_dns_decide(&f, &v);
		if (budget)
			gw_dns_decide_budget(&f, &v);
		synthetic += v.reason == GW_DR_SYNTHETIC;
	}
	if (synthetic != n) {
		fprintf(stderr, "dns_decide_cost: %u of %ld answered\n", synthetic, n);
		exit(1);
	}
	return (double)(now_ns() - t0) / (double)n;
}

int main(int argc, char **argv)
{
	static const char yaml[] = "version: 1\n"
				   "network:\n"
				   "  allow:\n"
				   "    - { host: allowed.test, ports: [80] }\n"
				   "    - { host: \"*.wild.test\", ports: [80] }\n";
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 2000000;
	struct gw_dnsbudget b = {0};
	struct policy_diags d;
	struct wd_policy *p = NULL;

	policy_diags_init(&d);
	if (n <= 0 || policy_parse(yaml, strlen(yaml), "bench.yaml", &p, &d)) {
		fprintf(stderr, "usage: dns_decide_cost [QUERIES]\n");
		return 2;
	}
	policy_diags_free(&d);
	for (int i = 0; i < NAMES; i++) {
		struct dns_query *q = &queries[i];

		q->header_ok = q->question_ok = true;
		q->qtype = DNS_TYPE_A;
		q->qclass = DNS_CLASS_IN;
		if (i)
			snprintf(q->qname, sizeof(q->qname), "h%d.wild.test", i);
		else
			snprintf(q->qname, sizeof(q->qname), "allowed.test");
		q->qname_wire_len = strlen(q->qname);
		memcpy(q->qname_wire, q->qname, q->qname_wire_len);
	}
	(void)turn(p, &b, NAMES); /* every name charged once: the bench's warm-up */
	for (int round = 0; round < 3; round++) {
		double plain = turn(p, NULL, n), budget = turn(p, &b, n);

		printf(
		    "round %d: decide %.1f ns, decide + budget %.1f ns, budget %.1f ns a query\n",
		    round + 1, plain, budget, budget - plain);
	}
	gw_dnsb_free(&b);
	policy_free(p);
	return 0;
}
