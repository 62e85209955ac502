/* test_policy_ceiling.c - the operator's ceiling: its strict parse (positions and
 * messages), policy_ceiling_apply()'s intersection matrix (pattern with pattern,
 * range with range, names with ranges, denied names, user and group overrides,
 * caps and limits), the reasons policy_ceiling_why() gives, and the rendering that
 * keeps the operator's positions across a hand-off. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "conf/conf.h"
#include "policy/policy.h"
#include "policy_diags.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* a gateway config "version: 1\nceiling:\n" + @body, parsed as /etc/warden/gateway.yaml */
static int conf(const char *body, struct wd_gwconf *c, struct policy_diags *d)
{
	char buf[8192];

	snprintf(buf, sizeof(buf), "version: 1\nceiling:\n%s", body);
	policy_diags_init(d);
	return conf_parse(buf, strlen(buf), "/etc/warden/gateway.yaml", c, d);
}

static struct wd_policy *pol(const char *allow_items)
{
	char buf[8192];
	struct policy_diags d;
	struct wd_policy *p = NULL;

	snprintf(buf, sizeof(buf), "version: 1\nnetwork:\n  allow:\n%s", allow_items);
	policy_diags_init(&d);
	if (policy_parse(buf, strlen(buf), "policy.yaml", &p, &d))
		dump(&d);
	policy_diags_free(&d);
	assert_non_null(p);
	return p;
}

/* the effective rules' texts, space-separated */
static void texts(const struct wd_policy *p, char *out, size_t size)
{
	size_t n = 0;

	out[0] = '\0';
	for (size_t i = 0; i < p->nrules && n < size; i++)
		n += (size_t)snprintf(out + n, size - n, "%s%s", i ? " " : "", p->rules[i].text);
}

static bool has_note(const struct wd_policy *p, const char *text)
{
	for (size_t i = 0; i < p->nnarrowed; i++)
		if (strstr(p->narrowed[i].msg, text))
			return true;
	for (size_t i = 0; i < p->nnarrowed; i++)
		print_message("  note: %s\n", p->narrowed[i].msg);
	return false;
}

static const struct policy_who alice = {.uid = 1000, .name = "alice"};

/* apply @ceiling (YAML body) for @who to a policy of @allow_items; expect @want rules */
static struct wd_policy *eff(const char *ceiling, const struct policy_who *who,
			     const char *allow_items, const char *want)
{
	struct wd_gwconf c;
	struct policy_diags d;
	struct wd_policy *u = pol(allow_items), *e = NULL;
	char got[4096];

	if (conf(ceiling, &c, &d))
		dump(&d);
	assert_non_null(c.ceiling);
	assert_int_equal(policy_ceiling_apply(c.ceiling, who, u, &e), 0);
	texts(e, got, sizeof(got));
	assert_string_equal(got, want);
	policy_free(u);
	conf_free(&c);
	policy_diags_free(&d);
	return e;
}

/* ------------------------------------------------------------ the matrix */

static void test_pattern_pattern(void **state)
{
	struct wd_policy *e;

	(void)state;
	/* the same pattern: kept as is, no note */
	e = eff("  allow: [\"*.example.com\"]\n", &alice, "    - \"*.example.com\"\n",
		"*.example.com:80,443");
	assert_int_equal(e->nnarrowed, 0);
	policy_free(e);
	/* the user's pattern is wider: narrowed to the ceiling's */
	e = eff("  allow: [\"*.api.example.com\", www.example.com]\n", &alice,
		"    - \"*.example.com\"\n", "*.api.example.com:80,443 www.example.com:80,443");
	assert_true(has_note(e, "`*.example.com:80,443` is narrowed by the host's ceiling to "
				"`*.api.example.com:80,443` "
				"(/etc/warden/gateway.yaml:3)"));
	policy_free(e);
	/* the user's is narrower: kept */
	e = eff("  allow: [\"*.example.com\"]\n", &alice,
		"    - a.b.example.com\n    - \"*.b.example.com\"\n",
		"a.b.example.com:80,443 *.b.example.com:80,443");
	policy_free(e);
	/* a wildcard never covers its apex; disjoint names are dropped */
	e = eff("  allow: [\"*.example.com\"]\n", &alice,
		"    - example.com\n    - other.org\n    - x.example.com\n",
		"x.example.com:80,443");
	assert_true(has_note(e, "`example.com:80,443` is dropped: not allowed by the host's "
				"ceiling /etc/warden/gateway.yaml:3"));
	assert_true(has_note(e, "`other.org:80,443` is dropped"));
	policy_free(e);
	/* ports: only those both list; none in common: dropped, naming the ceiling rule */
	e = eff("  allow:\n    - api.example.com:443\n    - { host: \"*.example.com\", ports: "
		"[22] }\n",
		&alice, "    - api.example.com\n    - git.example.com:443\n",
		"api.example.com:443");
	assert_true(has_note(
	    e,
	    "`api.example.com:80,443` is narrowed by the host's ceiling to `api.example.com:443` "
	    "(/etc/warden/gateway.yaml:4)"));
	assert_true(has_note(e, "`git.example.com:443` is dropped: the host's ceiling "
				"/etc/warden/gateway.yaml:5 allows `*.example.com:22` (other "
				"ports only)"));
	policy_free(e);
}

/* a udp rule is bounded by the ceiling's udp rules only: a tcp rule of the ceiling does not
 * admit udp to its name, nor a udp rule tcp; `allow: any` and denied names bound both */
static void test_udp(void **state)
{
	struct wd_policy *e;

	(void)state;
	e = eff("  allow:\n    - { host: \"*.example.test\", proto: udp, ports: [3478, 443] }\n"
		"    - web.example.test\n",
		&alice,
		"    - { host: stun.example.test, proto: udp, ports: [3478, 9] }\n"
		"    - { host: web.example.test, proto: udp, ports: [443] }\n"
		"    - { host: stun.example.test, ports: [3478] }\n"
		"    - web.example.test\n",
		"stun.example.test:3478/udp web.example.test:443/udp web.example.test:80,443");
	assert_true(has_note(e, "`stun.example.test:9,3478/udp` is narrowed by the host's "
				"ceiling to `stun.example.test:3478/udp`"));
	assert_true(has_note(e, "`stun.example.test:3478` is dropped: not allowed"));
	assert_int_equal(policy_match_proto(e, "stun.example.test", 3478, POLICY_PROTO_UDP), 0);
	assert_int_equal(policy_match(e, "stun.example.test", 3478), -ENOENT);
	assert_int_equal(policy_match(e, "web.example.test", 443), 2);
	policy_free(e);
	/* a ceiling's tcp rule alone: the udp rule is dropped */
	e = eff("  allow: [stun.example.test:3478]\n", &alice,
		"    - { host: stun.example.test, proto: udp, ports: [3478] }\n", "");
	assert_true(has_note(e, "`stun.example.test:3478/udp` is dropped"));
	policy_free(e);
	/* allow: any keeps it; a denied name drops it */
	e = eff("  allow: any\n  deny: [\"*.bad.test\"]\n", &alice,
		"    - { host: stun.example.test, proto: udp, ports: [3478] }\n"
		"    - { host: s.bad.test, proto: udp, ports: [3478] }\n",
		"stun.example.test:3478/udp");
	assert_true(has_note(e, "`s.bad.test:3478/udp` is dropped: the host's ceiling"));
	policy_free(e);
}

static void test_cidr(void **state)
{
	struct wd_policy *e;
	uint8_t a[4];

	(void)state;
	/* cidr with cidr: the narrower range, the common ports */
	e = eff("  allow:\n    - { cidr: 10.20.0.0/16, ports: [5432, 6379] }\n", &alice,
		"    - { cidr: 10.0.0.0/8, ports: [5432] }\n"
		"    - { cidr: 10.20.30.0/24, ports: [6379, 80] }\n"
		"    - { cidr: 192.0.2.0/24, ports: [5432] }\n"
		"    - { cidr: \"fd00::/8\", ports: [5432] }\n",
		"10.20.0.0/16:5432 10.20.30.0/24:6379");
	inet_pton(AF_INET, "10.20.1.1", a);
	assert_true(policy_allows_addr(e, AF_INET, a, 5432));
	inet_pton(AF_INET, "10.30.1.1", a);
	assert_false(policy_allows_addr(e, AF_INET, a, 5432));
	assert_true(has_note(e, "`192.0.2.0/24:5432` is dropped"));
	policy_free(e);
	/* a name and a range never overlap, either way */
	e = eff("  allow:\n    - { cidr: 10.20.0.0/16, ports: [443] }\n    - db.example.com\n",
		&alice,
		"    - api.example.com:443\n    - { cidr: 10.0.0.0/8, ports: [80] }\n"
		"    - db.example.com:443\n",
		"db.example.com:443");
	policy_free(e);
}

static void test_denied(void **state)
{
	struct wd_policy *e;
	struct policy_why w;
	char why[512];

	(void)state;
	e = eff(
	    "  allow: any\n  deny:\n    - secret.example.com\n    - \"*.internal.example.com\"\n",
	    &alice,
	    "    - \"*.example.com\"\n    - secret.example.com:443\n"
	    "    - x.internal.example.com\n    - { cidr: 10.0.0.0/8, ports: [22] }\n",
	    "*.example.com:80,443 10.0.0.0/8:22");
	/* the rules a deny covers are dropped; inside a kept one, its names are refused */
	assert_true(has_note(e, "`secret.example.com:443` is dropped: the host's ceiling "
				"/etc/warden/gateway.yaml:5 denies `secret.example.com`"));
	assert_true(has_note(e, "`x.internal.example.com:80,443` is dropped"));
	assert_true(has_note(e, "`*.example.com:80,443`: the host's ceiling "
				"/etc/warden/gateway.yaml:5 denies `secret.example.com`"));
	assert_true(policy_allows(e, "www.example.com", 443));
	assert_int_equal(policy_match(e, "secret.example.com", 443), -EACCES);
	assert_int_equal(policy_match(e, "a.internal.example.com", 80), -EACCES);
	assert_int_equal(policy_match_name(e, "SECRET.example.com."), -EACCES);
	assert_true(policy_ceiling_why(e, "secret.example.com", 443, &w));
	assert_true(w.denied);
	assert_string_equal(policy_ceiling_reason(&w, why, sizeof(why)),
			    "denied by the host's ceiling /etc/warden/gateway.yaml:5 "
			    "(`secret.example.com`)");
	assert_true(policy_ceiling_why(e, "b.internal.example.com", 0, &w));
	assert_string_equal(w.from, "/etc/warden/gateway.yaml:6");
	/* what the user's own policy refuses is not the ceiling's doing */
	assert_false(policy_ceiling_why(e, "other.org", 443, &w));
	assert_false(policy_ceiling_why(e, "www.example.com", 443, &w));
	policy_free(e);
}

static void test_why(void **state)
{
	struct wd_policy *e;
	struct policy_why w;
	char why[512];
	uint8_t a[4];

	(void)state;
	e = eff("  allow:\n    - api.example.com:443\n    - { cidr: 10.20.0.0/16, ports: [443] "
		"}\n",
		&alice,
		"    - api.example.com\n    - evil.example.net\n"
		"    - { cidr: 10.0.0.0/8, ports: [443, 22] }\n",
		"api.example.com:443 10.20.0.0/16:443");
	assert_true(policy_ceiling_why(e, "evil.example.net", 443, &w));
	assert_string_equal(policy_ceiling_reason(&w, why, sizeof(why)),
			    "not allowed by the host's ceiling /etc/warden/gateway.yaml:3");
	assert_true(policy_ceiling_why(e, "api.example.com", 80, &w));
	assert_string_equal(policy_ceiling_reason(&w, why, sizeof(why)),
			    "not allowed by the host's ceiling /etc/warden/gateway.yaml:4 (its "
			    "rule `api.example.com:443` is for other ports)");
	assert_false(policy_ceiling_why(e, "api.example.com", 443, &w));
	assert_true(policy_ceiling_why(e, "evil.example.net", 0, &w));
	inet_pton(AF_INET, "10.99.0.1", a);
	assert_true(policy_ceiling_why_addr(e, AF_INET, a, 443, &w));
	assert_string_equal(w.from, "/etc/warden/gateway.yaml:3");
	inet_pton(AF_INET, "10.20.0.1", a);
	assert_true(policy_ceiling_why_addr(e, AF_INET, a, 22, &w));
	assert_string_equal(w.rule, "10.20.0.0/16:443");
	assert_false(policy_ceiling_why_addr(e, AF_INET, a, 443, &w));
	policy_free(e);
}

static void test_overrides(void **state)
{
	static const char *const ceil =
	    "  allow: [\"*.example.com\"]\n"			       /* 3 */
	    "  deny: [secret.example.com]\n"			       /* 4 */
	    "  limits: { runs: 2, connections: 10, memory_mb: 512 }\n" /* 5 */
	    "  users:\n"					       /* 6 */
	    "    alice:\n"					       /* 7 */
	    "      allow: [\"*.example.org\"]\n"		       /* 8 */
	    "      limits: { runs: 5 }\n"			       /* 9 */
	    "    \"2000\":\n"					       /* 10 */
	    "      allow: any\n"				       /* 11 */
	    "  groups:\n"					       /* 12 */
	    "    ci:\n"						       /* 13 */
	    "      allow: [\"*.ci.example.net\"]\n"		       /* 14 */
	    "      limits: { connections: 50 }\n"		       /* 15 */
	    "    build:\n"					       /* 16 */
	    "      allow: [pypi.org]\n"				       /* 17 */
	    "      deny: [bad.ci.example.net]\n"		       /* 18 */
	    "      limits: { connections: 40, runs: 3 }\n";	       /* 19 */
	static const char *const items = "    - \"*.example.com\"\n    - \"*.example.org\"\n"
					 "    - a.ci.example.net\n    - bad.ci.example.net\n"
					 "    - pypi.org:443\n";
	const char *ci_build[] = {"users", "ci", "build"};
	const struct policy_who bob = {.uid = 1001, .name = "bob"};
	const struct policy_who carol = {
	    .uid = 1002, .name = "carol", .groups = ci_build, .ngroups = 3};
	const struct policy_who nameless = {.uid = 2000};
	struct wd_policy *e;

	(void)state;
	/* alice: her own allow list replaces the top's; the top's deny and caps stay */
	e = eff(ceil, &alice, items, "*.example.org:80,443");
	assert_int_equal(e->caps[POLICY_CAP_RUNS], 5);
	assert_string_equal(e->caps_from[POLICY_CAP_RUNS], "/etc/warden/gateway.yaml:9");
	assert_int_equal(e->caps[POLICY_CAP_CONNECTIONS], 10);
	assert_string_equal(e->ceiling_from, "/etc/warden/gateway.yaml:8");
	policy_free(e);
	/* bob: no override, the top level */
	e = eff(ceil, &bob, items, "*.example.com:80,443");
	assert_int_equal(e->caps[POLICY_CAP_RUNS], 2);
	policy_free(e);
	/* carol: her groups' lists together, their denials added, the largest caps */
	e = eff(ceil, &carol, items, "a.ci.example.net:80,443 pypi.org:443");
	assert_int_equal(e->caps[POLICY_CAP_CONNECTIONS], 50);
	assert_string_equal(e->caps_from[POLICY_CAP_CONNECTIONS], "/etc/warden/gateway.yaml:15");
	assert_int_equal(e->caps[POLICY_CAP_RUNS], 3);
	assert_string_equal(e->ceiling_from,
			    "/etc/warden/gateway.yaml:14, /etc/warden/gateway.yaml:17");
	assert_true(has_note(e, "`bad.ci.example.net:80,443` is dropped: the host's ceiling "
				"/etc/warden/gateway.yaml:18 denies"));
	policy_free(e);
	/* a uid without a name: users."2000" by number; `any` still has the top's deny */
	e = eff(ceil, &nameless, items,
		"*.example.com:80,443 *.example.org:80,443 a.ci.example.net:80,443 "
		"bad.ci.example.net:80,443 pypi.org:443");
	assert_int_equal(policy_match(e, "secret.example.com", 443), -EACCES);
	assert_null(e->ceiling_allow);
	policy_free(e);
}

static void test_no_and_empty_ceiling(void **state)
{
	struct wd_gwconf c;
	struct policy_diags d;
	struct wd_policy *e;

	(void)state;
	/* no ceiling section: nothing to apply (the gateway leaves policies as they are) */
	policy_diags_init(&d);
	assert_int_equal(conf_parse("version: 1\n", 11, "gw.yaml", &c, &d), 0);
	assert_null(c.ceiling);
	policy_diags_free(&d);
	/* an empty ceiling: nothing is allowed, with a warning */
	policy_diags_init(&d);
	assert_int_equal(conf_parse("version: 1\nceiling:\n", 20, "gw.yaml", &c, &d), 0);
	assert_non_null(c.ceiling);
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 2, 9, "users' runs may reach nothing"));
	conf_free(&c);
	policy_diags_free(&d);
	e = eff("  limits: { runs: 1 }\n", &alice, "    - example.com\n", "");
	assert_true(has_note(e, "`example.com:80,443` is dropped: not allowed by the host's "
				"ceiling /etc/warden/gateway.yaml:2"));
	policy_free(e);
	/* root is bounded like anyone (fail closed), unless the operator says otherwise */
	{
		const struct policy_who root = {.uid = 0, .name = "root"};

		e = eff("  allow: [a.example.com]\n", &root, "    - b.example.com\n", "");
		policy_free(e);
		e = eff("  allow: [a.example.com]\n  users: { root: { allow: any } }\n", &root,
			"    - b.example.com\n", "b.example.com:80,443");
		policy_free(e);
	}
}

static void test_limits(void **state)
{
	struct wd_gwconf c;
	struct policy_diags d;
	struct wd_policy *u = NULL, *e = NULL;
	const char *y = "version: 1\nlimits: { memory_mb: 4096, timeout_s: 60 }\n";

	(void)state;
	assert_int_equal(conf("  allow: any\n  limits: { memory_mb: 1024, pids: 100, "
			      "timeout_s: 600 }\n",
			      &c, &d),
			 0);
	policy_diags_free(&d);
	policy_diags_init(&d);
	assert_int_equal(policy_parse(y, strlen(y), "p.yaml", &u, &d), 0);
	assert_int_equal(policy_ceiling_apply(c.ceiling, &alice, u, &e), 0);
	assert_int_equal(e->limits.memory_mb, 1024);
	assert_int_equal(e->limits.pids, 100);
	assert_int_equal(e->limits.timeout_s, 60);
	assert_true(has_note(e, "limits.memory_mb 4096 is lowered to 1024 by the host's ceiling "
				"/etc/warden/gateway.yaml:4"));
	assert_true(has_note(e, "limits.pids is not set; the host's ceiling "
				"/etc/warden/gateway.yaml:4 sets 100"));
	policy_free(e);
	policy_free(u);
	conf_free(&c);
	policy_diags_free(&d);
}

/* a policy and a ceiling that overlap in more than POLICY_CEILING_MAX_PAIRS pairs are
 * refused before the rules are made (a gateway does this in its event loop); a large
 * ceiling alone costs a name rule a few lookups */
static void test_too_big(void **state)
{
	struct wd_buf g = WD_BUF_INIT, u = WD_BUF_INIT;
	struct wd_gwconf c;
	struct policy_diags d;
	struct wd_policy *p = NULL, *e = NULL;

	(void)state;
	assert_int_equal(wd_buf_puts(&g, "version: 1\nceiling:\n  allow:\n"), 0);
	for (int i = 0; i < 1100; i++)
		assert_int_equal(wd_buf_printf(&g, "    - \"*.c%d.example.com\"\n", i), 0);
	assert_int_equal(wd_buf_puts(&u, "version: 1\nnetwork:\n  allow:\n"), 0);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(wd_buf_printf(&u, "    - \"*.example.com:%d\"\n", i + 1), 0);
	assert_int_equal(wd_buf_puts(&u, "    - x.c7.example.com\n"), 0);
	policy_diags_init(&d);
	assert_int_equal(conf_parse(g.data, g.len, "g.yaml", &c, &d), 0);
	policy_diags_free(&d);
	policy_diags_init(&d);
	assert_int_equal(policy_parse(u.data, u.len, "u.yaml", &p, &d), 0);
	policy_diags_free(&d);
	assert_int_equal(policy_ceiling_apply(c.ceiling, &alice, p, &e), -E2BIG);
	assert_null(e);
	policy_free(p);
	/* control: the one exact rule under the same ceiling */
	p = pol("    - x.c7.example.com\n");
	assert_int_equal(policy_ceiling_apply(c.ceiling, &alice, p, &e), 0);
	assert_int_equal(e->nrules, 1);
	policy_free(e);
	policy_free(p);
	conf_free(&c);
	wd_buf_free(&g);
	wd_buf_free(&u);
}

/* ------------------------------------------------------------ parse and render */

static void test_parse_errors(void **state)
{
	struct wd_gwconf c;
	struct policy_diags d;

	(void)state;
	assert_int_equal(conf("  allow: [\"*.example.com\"]\n  alow: []\n", &c, &d), -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 4, 3, "alow"));
	assert_null(c.ceiling);
	policy_diags_free(&d);
	assert_int_equal(conf("  allow: everything\n", &c, &d), -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 10, "expected a list of rules"));
	policy_diags_free(&d);
	assert_int_equal(conf("  allow: [\"*.com\"]\n", &c, &d), -EINVAL);
	assert_true(
	    has_diag(&d, POLICY_DIAG_ERROR, 3, 11, "ceiling.allow: `*.com` covers a whole"));
	policy_diags_free(&d);
	assert_int_equal(conf("  deny: [\"a.example.com:443\"]\n", &c, &d), -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 10, "without ports"));
	policy_diags_free(&d);
	assert_int_equal(conf("  limits: { runs: 0 }\n", &c, &d), -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 19, "ceiling.limits.runs"));
	policy_diags_free(&d);
	assert_int_equal(conf("  limits: { run: 3 }\n", &c, &d), -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 13, "runs"));
	policy_diags_free(&d);
	assert_int_equal(conf("  users: { alice: { allow: any, users: {} } }\n", &c, &d), -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 33, "users"));
	policy_diags_free(&d);
	assert_int_equal(conf("  users: { \"-x\": {} }\n", &c, &d), -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 12, "expected a user name"));
	policy_diags_free(&d);
	assert_int_equal(conf("  groups: [a]\n", &c, &d), -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 11, "expected a mapping of names"));
	policy_diags_free(&d);
	assert_int_equal(conf("  allow: [{ host: a.example.com, from: 7 }]\n", &c, &d), 0);
	conf_free(&c);
	policy_diags_free(&d);
	/* `from` belongs to ceilings only */
	{
		struct wd_policy *p = NULL;
		const char *y =
		    "version: 1\nnetwork:\n  allow: [{ host: a.example.com, from: x }]\n";

		policy_diags_init(&d);
		assert_int_equal(policy_parse(y, strlen(y), "p.yaml", &p, &d), -EINVAL);
		assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 34, "from"));
		policy_diags_free(&d);
	}
}

/* rendered and parsed again (the hand-off to the worker, the embedded gateway's file):
 * the same ceiling, citing the operator's file */
static void test_render_keeps_positions(void **state)
{
	static const char *const ceil = "  allow:\n    - api.example.com:443\n"
					"    - { cidr: 10.20.0.0/16, ports: [5432] }\n"
					"  deny: [\"*.internal.example.com\"]\n"
					"  limits: { connections: 7 }\n"
					"  groups: { ci: { allow: any, limits: { runs: 9 } } }\n"
					"  users: { bob: { allow: [{ host: stun.example.com, "
					"proto: udp, ports: [3478] }] } }\n";
	struct wd_gwconf c, c2;
	struct policy_diags d;
	struct wd_buf b = WD_BUF_INIT, b2 = WD_BUF_INIT;
	struct wd_policy *u = pol("    - api.example.com\n    - x.internal.example.com\n"),
			 *e = NULL;
	struct policy_why w;

	(void)state;
	assert_int_equal(conf(ceil, &c, &d), 0);
	policy_diags_free(&d);
	assert_int_equal(conf_render_yaml(&c, &b), 0);
	policy_diags_init(&d);
	if (conf_parse(b.data, b.len, "(from warden-gateway)", &c2, &d))
		dump(&d);
	assert_non_null(c2.ceiling);
	assert_int_equal(conf_render_yaml(&c2, &b2), 0);
	assert_string_equal(b.data, b2.data);
	/* a udp rule keeps its transport through the hand-off */
	assert_non_null(strstr(b.data, "ports: [3478], proto: udp, from: "));
	assert_int_equal(c2.ceiling->users[0].allow[0].proto, POLICY_PROTO_UDP);
	assert_int_equal(policy_ceiling_apply(c2.ceiling, &alice, u, &e), 0);
	assert_true(policy_ceiling_why(e, "api.example.com", 80, &w));
	assert_string_equal(w.from, "/etc/warden/gateway.yaml:4");
	assert_string_equal(e->caps_from[POLICY_CAP_CONNECTIONS], "/etc/warden/gateway.yaml:7");
	assert_true(has_note(e, "/etc/warden/gateway.yaml:6 denies `*.internal.example.com`"));
	policy_free(e);
	policy_free(u);
	conf_free(&c);
	conf_free(&c2);
	policy_diags_free(&d);
	wd_buf_free(&b);
	wd_buf_free(&b2);
}

static void test_render_effective(void **state)
{
	struct wd_policy *e;
	struct wd_buf b = WD_BUF_INIT;

	(void)state;
	e = eff("  allow: [api.example.com:443]\n  limits: { runs: 2 }\n", &alice,
		"    - api.example.com\n    - evil.example.net\n", "api.example.com:443");
	assert_int_equal(policy_render_effective(e, &b), 0);
	assert_non_null(strstr(b.data, "- \"api.example.com:443\"  # within the ceiling's rule at "
				       "/etc/warden/gateway.yaml:3"));
	assert_non_null(strstr(b.data, "runs: 2  (/etc/warden/gateway.yaml:4)"));
	assert_non_null(strstr(b.data, "policy.yaml:5:7: `evil.example.net:80,443` is dropped"));
	wd_buf_free(&b);
	policy_free(e);
}

/* the per-user DNS query cap: parsed with its place, an override wins, the largest group's,
 * the default when no scope sets it, rendered and shown; bad values with file:line:col */
static void test_dns_cap(void **state)
{
	static const char *const ceil =
	    "  allow: any\n"					   /* 3 */
	    "  limits: { dns_queries_per_s: 200 }\n"		   /* 4 */
	    "  users:\n"					   /* 5 */
	    "    bob:\n"					   /* 6 */
	    "      limits: { dns_queries_per_s: 5 }\n"		   /* 7 */
	    "  groups:\n"					   /* 8 */
	    "    ci: { limits: { dns_queries_per_s: 300 } }\n"	   /* 9 */
	    "    build: { limits: { dns_queries_per_s: 400 } }\n"; /* 10 */
	const char *ci_build[] = {"ci", "build"};
	const struct policy_who bob = {.uid = 1001, .name = "bob"};
	const struct policy_who carol = {
	    .uid = 1002, .name = "carol", .groups = ci_build, .ngroups = 2};
	struct wd_gwconf c;
	struct policy_diags d;
	struct wd_policy *e;
	struct wd_buf b = WD_BUF_INIT;

	(void)state;
	assert_string_equal(policy_cap_name(POLICY_CAP_DNS_QUERIES_PER_S), "dns_queries_per_s");
	e = eff(ceil, &alice, "    - a.example.com\n", "a.example.com:80,443");
	assert_int_equal(e->caps[POLICY_CAP_DNS_QUERIES_PER_S], 200);
	assert_string_equal(e->caps_from[POLICY_CAP_DNS_QUERIES_PER_S],
			    "/etc/warden/gateway.yaml:4");
	assert_int_equal(policy_render_effective(e, &b), 0);
	assert_non_null(strstr(b.data, "dns_queries_per_s: 200  (/etc/warden/gateway.yaml:4)"));
	wd_buf_free(&b);
	policy_free(e);
	e = eff(ceil, &bob, "    - a.example.com\n", "a.example.com:80,443");
	assert_int_equal(e->caps[POLICY_CAP_DNS_QUERIES_PER_S], 5);
	assert_string_equal(e->caps_from[POLICY_CAP_DNS_QUERIES_PER_S],
			    "/etc/warden/gateway.yaml:7");
	policy_free(e);
	e = eff(ceil, &carol, "    - a.example.com\n", "a.example.com:80,443");
	assert_int_equal(e->caps[POLICY_CAP_DNS_QUERIES_PER_S], 400);
	assert_string_equal(e->caps_from[POLICY_CAP_DNS_QUERIES_PER_S],
			    "/etc/warden/gateway.yaml:10");
	policy_free(e);
	/* set nowhere: the default, said so */
	e = eff("  allow: any\n", &alice, "    - a.example.com\n", "a.example.com:80,443");
	assert_int_equal(e->caps[POLICY_CAP_DNS_QUERIES_PER_S], POLICY_DNS_QUERIES_PER_S_DEFAULT);
	assert_string_equal(e->caps_from[POLICY_CAP_DNS_QUERIES_PER_S], "the default");
	policy_free(e);
	/* rendered for the worker and parsed again: the same place */
	assert_int_equal(conf(ceil, &c, &d), 0);
	assert_int_equal(conf_render_yaml(&c, &b), 0);
	assert_non_null(
	    strstr(b.data, "dns_queries_per_s: { max: 5, from: \"/etc/warden/gateway.yaml:7\" }"));
	wd_buf_free(&b);
	conf_free(&c);
	policy_diags_free(&d);
	/* refused, with the place */
	assert_int_equal(conf("  limits: { dns_queries_per_s: 0 }\n", &c, &d), -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 32, "ceiling.limits.dns_queries_per_s"));
	policy_diags_free(&d);
	assert_int_equal(conf("  limits: { dns_queries_per_s: 1000001 }\n", &c, &d), -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 32, "ceiling.limits.dns_queries_per_s"));
	policy_diags_free(&d);
	assert_int_equal(conf("  limits: { dns_queries_per_s: lots }\n", &c, &d), -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 32, "dns_queries_per_s"));
	policy_diags_free(&d);
	assert_int_equal(conf("  limits: { dns_query_per_s: 10 }\n", &c, &d), -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 13, "dns_query_per_s"));
	policy_diags_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pattern_pattern),
	    cmocka_unit_test(test_cidr),
	    cmocka_unit_test(test_udp),
	    cmocka_unit_test(test_denied),
	    cmocka_unit_test(test_why),
	    cmocka_unit_test(test_overrides),
	    cmocka_unit_test(test_no_and_empty_ceiling),
	    cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_too_big),
	    cmocka_unit_test(test_parse_errors),
	    cmocka_unit_test(test_render_keeps_positions),
	    cmocka_unit_test(test_render_effective),
	    cmocka_unit_test(test_dns_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
