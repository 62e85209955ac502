/* test_run_denials.c - unit tests for run/denials.c, the end-of-run denial block: which
 * events are denials, how they group, the policy line offered for each (and none where no
 * line can allow it), the cap of the block. */
#include "run/denials.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static struct audit_event net(const char *host, int port, const char *reason, const char *id)
{
	struct audit_event ev = {.run = "r1",
				 .type = AUDIT_TYPE_NET,
				 .action = "net.connect",
				 .resource = host,
				 .allowed = false,
				 .reason = reason,
				 .denial_id = id,
				 .has = AUDIT_HAS_PORT,
				 .port = port};
	return ev;
}

#define NO_RULE(h) h ":443 is not allowed by policy p.yaml (no network.allow rule matches)"

static char *render(const struct run_denials *d, int64_t gw, int *lines)
{
	struct wd_buf b = WD_BUF_INIT;
	char *s;

	*lines = run_denials_render(d, "abc123", gw, &b);
	s = strdup(wd_buf_cstr(&b));
	wd_buf_free(&b);
	return s;
}

static void test_network_groups_with_line(void **state)
{
	struct run_denials d = {0};
	struct audit_event ok = net("allowed.test", 443, "allowed", NULL);
	struct audit_event a = net("other.test", 443, NO_RULE("other.test"), "dn-1");
	struct audit_event b = net("other.test", 443, NO_RULE("other.test"), "dn-2");
	int lines;
	char *s;

	(void)state;
	ok.allowed = true;
	assert_int_equal(run_denials_add(&d, &ok), 0);
	assert_int_equal(run_denials_add(&d, &a), 0);
	assert_int_equal(run_denials_add(&d, &b), 0);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.total, 2);
	s = render(&d, 2, &lines);
	assert_int_equal(lines, 3);
	assert_string_equal(
	    s, "warden run: 2 denials in this run (all of them: warden logs --run abc123 "
	       "--denied)\n"
	       "  other.test:443  network, 2 times, denial id dn-2\n"
	       "    to allow it: network.allow: [\"other.test:443\"] (or warden run --allow "
	       "other.test:443)\n");
	free(s);
	run_denials_free(&d);
}

/* a shadow run's would-be denials (issue 31 item 6): their own block, from the allowed events
 * that say "would_deny"; the denial block ignores them, and this one ignores real denials */
static void test_would_deny_block(void **state)
{
	struct run_denials d = {0}, w = {.would = true};
	struct audit_event a = net("other.test", 443, NO_RULE("other.test"), "dn-7");
	struct audit_event q = {.run = "r1",
				.type = AUDIT_TYPE_DNS,
				.action = "dns.query",
				.resource = "other.test",
				.allowed = true,
				.reason = "other.test is not allowed by policy p.yaml",
				.denial_id = "dn-6",
				.decision = AUDIT_WOULD_DENY};
	struct audit_event ssrf = net("loopback.test", 80,
				      "loopback.test resolves only to refused "
				      "addresses (127.0.0.1 is a loopback address)",
				      "dn-8");
	int lines;
	char *s;

	(void)state;
	a.allowed = true;
	a.decision = AUDIT_WOULD_DENY;
	for (struct run_denials *x = &d; x; x = x == &d ? &w : NULL) {
		assert_int_equal(run_denials_add(x, &q), 0);
		assert_int_equal(run_denials_add(x, &a), 0);
		assert_int_equal(run_denials_add(x, &ssrf), 0);
	}
	assert_int_equal(d.total, 1); /* the SSRF guard's denial alone */
	assert_int_equal(w.total, 2);
	s = render(&w, -1, &lines);
	assert_int_equal(lines, 5);
	assert_string_equal(
	    s, "warden run: shadow run: the policy would have blocked 2 accesses (let through; "
	       "all of them: warden logs --run abc123 --would-deny)\n"
	       "  other.test  dns, 1 time, would-be denial id dn-6\n"
	       "    to allow it: network.allow: [\"other.test\"] (or warden run --allow "
	       "other.test)\n"
	       "  other.test:443  network, 1 time, would-be denial id dn-7\n"
	       "    to allow it: network.allow: [\"other.test:443\"] (or warden run --allow "
	       "other.test:443)\n");
	free(s);
	run_denials_free(&d);
	run_denials_free(&w);
}

static void test_no_line_where_none_allows(void **state)
{
	struct run_denials d = {0};
	struct audit_event ceil =
	    net("other.test", 443, "other.test:443 is outside the ceiling", "dn-3");
	struct audit_event addr = net("203.0.113.9", 443, NO_RULE("203.0.113.9"), "dn-4");
	struct audit_event bad = net("a\"b.test", 443, NO_RULE("a\"b.test"), "dn-5");
	int lines;
	char *s;

	(void)state;
	assert_int_equal(run_denials_add(&d, &ceil), 0);
	assert_int_equal(run_denials_add(&d, &addr), 0);
	assert_int_equal(run_denials_add(&d, &bad), 0);
	s = render(&d, -1, &lines);
	assert_int_equal(lines, 7);
	/* an address gets its cidr line; the ceiling and a name that is not one get none */
	assert_non_null(strstr(s,
			       "  203.0.113.9:443  network, 1 time, denial id dn-4\n    to allow "
			       "it: network.allow: [{cidr: \"203.0.113.9/32\", ports: [443]}]\n"));
	assert_null(strstr(s, "allow it: network.allow: [\"other.test"));
	assert_null(strstr(s, "allow it: network.allow: [\"a"));
	assert_non_null(
	    strstr(s, "no policy line allows it: other.test:443 is outside the ceiling"));
	free(s);
	run_denials_free(&d);
}

static void test_dns_file_limit_lines(void **state)
{
	struct run_denials d = {0};
	struct audit_event dns = {.run = "r1",
				  .type = AUDIT_TYPE_DNS,
				  .action = "dns.query",
				  .resource = "api.example.test",
				  .reason = "api.example.test is not allowed by policy p.yaml"};
	struct audit_event rd = {.run = "r1",
				 .type = AUDIT_TYPE_FILE,
				 .action = "file.open",
				 .resource = "/etc/shadow",
				 .op = "read",
				 .has = AUDIT_HAS_COUNT,
				 .count = 4};
	struct audit_event wr = {.run = "r1",
				 .type = AUDIT_TYPE_FILE,
				 .action = "file.open",
				 .resource = "/srv/out.txt",
				 .op = "create"};
	struct audit_event mem = {.run = "r1",
				  .type = AUDIT_TYPE_LIMIT,
				  .action = "limit.memory",
				  .resource = "/bin/x",
				  .has = AUDIT_HAS_LIMIT,
				  .limit = 256LL << 20};
	struct audit_event summary = {.run = "r1",
				      .type = AUDIT_TYPE_FILE,
				      .action = "file.open",
				      .resource = "",
				      .has = AUDIT_HAS_COUNT,
				      .count = 10};
	int lines;
	char *s;

	(void)state;
	assert_int_equal(run_denials_add(&d, &dns), 0);
	assert_int_equal(run_denials_add(&d, &rd), 0);
	assert_int_equal(run_denials_add(&d, &wr), 0);
	assert_int_equal(run_denials_add(&d, &mem), 0);
	assert_int_equal(run_denials_add(&d, &summary), 0);
	assert_int_equal(d.total, 1 + 4 + 1 + 1 + 10);
	s = render(&d, -1, &lines);
	assert_int_equal(lines, 10);
	assert_non_null(strstr(s, "  api.example.test  dns, 1 time\n    to allow it: "
				  "network.allow: [\"api.example.test\"] (or warden run --allow "
				  "api.example.test)\n"));
	assert_non_null(strstr(s, "  /etc/shadow  file read, 4 times\n    to allow it: "
				  "filesystem.read: [\"/etc/shadow\"] (or warden run --read "
				  "/etc/shadow)\n"));
	assert_non_null(strstr(s, "filesystem.write: [\"/srv/out.txt\"] (or warden run --write "
				  "/srv/out.txt)\n"));
	/* the summary without a name is counted, and the block says more are in the log */
	assert_non_null(strstr(s, "  and 10 more: warden logs --run abc123 --denied\n"));
	free(s);
	run_denials_free(&d);
	/* the limit alone */
	assert_int_equal(run_denials_add(&d, &mem), 0);
	s = render(&d, -1, &lines);
	assert_non_null(strstr(s, "to allow it: limits.memory_mb: 512  (now 256)"));
	free(s);
	run_denials_free(&d);
}

/* a path a shell would split or expand gets its policy line (quoted) but no flag to paste */
static void test_no_flag_for_a_path_a_shell_splits(void **state)
{
	struct run_denials d = {0};
	struct audit_event rd = {.run = "r1",
				 .type = AUDIT_TYPE_FILE,
				 .action = "file.open",
				 .resource = "/srv/my notes;x.txt",
				 .op = "read"};
	int lines;
	char *s;

	(void)state;
	assert_int_equal(run_denials_add(&d, &rd), 0);
	s = render(&d, -1, &lines);
	assert_non_null(strstr(s, "    to allow it: filesystem.read: [\"/srv/my notes;x.txt\"]\n"));
	assert_null(strstr(s, "warden run --read"));
	free(s);
	run_denials_free(&d);
}

static void test_cap_and_daemon_rest(void **state)
{
	struct run_denials d = {0};
	char host[32], reason[128];
	int lines;
	char *s;

	(void)state;
	for (int i = 0; i < 30; i++) {
		struct audit_event ev;

		snprintf(host, sizeof(host), "n%d.test", i);
		snprintf(reason, sizeof(reason),
			 "%s:443 is not allowed by policy p (no "
			 "network.allow rule matches)",
			 host);
		ev = net(host, 443, reason, "dn-x");
		assert_int_equal(run_denials_add(&d, &ev), 0);
	}
	s = render(&d, 40, &lines);
	assert_true(lines <= RUN_DENIALS_MAX_LINES);
	assert_non_null(strstr(s, "warden run: 40 denials in this run"));
	assert_non_null(strstr(s, "  and 27 more: warden logs --run abc123 --denied\n"));
	assert_non_null(strstr(s, "  10 more denied by the gateway, in its own audit log"));
	free(s);
	run_denials_free(&d);
	/* nothing denied: no block at all */
	s = render(&d, 0, &lines);
	assert_int_equal(lines, 0);
	assert_string_equal(s, "");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_network_groups_with_line),
	    cmocka_unit_test(test_would_deny_block),
	    cmocka_unit_test(test_no_line_where_none_allows),
	    cmocka_unit_test(test_dns_file_limit_lines),
	    cmocka_unit_test(test_no_flag_for_a_path_a_shell_splits),
	    cmocka_unit_test(test_cap_and_daemon_rest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
