/* fuzz_policy.c - libFuzzer harness: arbitrary bytes through the policy parser,
 * the renderers, the matcher and the gateway config parser, and a config's ceiling
 * applied to a fixed policy for a few users, rendered and parsed again (no I/O). */
#include "conf/conf.h"
#include "policy/policy.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the fixed policy a fuzzed ceiling bounds */
static const char fixed[] = "version: 1\nnetwork:\n  allow:\n    - \"*.example.com\"\n"
			    "    - api.github.com:443\n    - a.b.example.org\n"
			    "    - { cidr: 10.0.0.0/8, ports: [22, 443] }\n"
			    "limits: { memory_mb: 512, timeout_s: 60 }\n";

/* @c's ceiling over the fixed policy, for a few users; a render must parse again */
static void ceiling(const struct wd_gwconf *c, struct wd_buf *b)
{
	static const char *const groups[] = {"users", "ci", "wheel"};
	static const struct policy_who who[] = {
	    {.uid = 0, .name = "root"},
	    {.uid = 1000, .name = "alice", .groups = groups, .ngroups = 3},
	    {.uid = 2000},
	};
	static const char *const names[] = {"x.example.com", "api.github.com", "a.b.example.org",
					    "10.1.2.3", "secret.example.com"};
	static const uint8_t addr[4] = {10, 1, 2, 3};
	struct policy_diags d;
	struct wd_policy *p = NULL;
	struct wd_gwconf again;
	struct wd_buf r = WD_BUF_INIT;

	policy_diags_init(&d);
	if (policy_parse(fixed, strlen(fixed), "fixed.yaml", &p, &d))
		abort();
	policy_diags_free(&d);
	for (size_t i = 0; i < sizeof(who) / sizeof(who[0]); i++) {
		struct wd_policy *e = NULL;
		struct policy_why w;
		char why[600];

		if (policy_ceiling_apply(c->ceiling, &who[i], p, &e))
			continue;
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			(void)policy_match(e, names[k], 443);
			if (policy_ceiling_why(e, names[k], 80, &w))
				policy_ceiling_reason(&w, why, sizeof(why));
			if (policy_ceiling_why(e, names[k], 0, &w))
				policy_ceiling_reason(&w, why, sizeof(why));
		}
		if (policy_ceiling_why_addr(e, AF_INET, addr, 22, &w))
			policy_ceiling_reason(&w, why, sizeof(why));
		policy_render_effective(e, b);
		policy_free(e);
	}
	policy_free(p);
	/* what the gateway hands its worker parses again */
	policy_diags_init(&d);
	if (conf_render_yaml(c, &r) || conf_parse(r.data, r.len, "(again)", &again, &d))
		abort();
	conf_free(&again);
	policy_diags_free(&d);
	wd_buf_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"github.com",
					    "a.github.com",
					    "x.y.npmjs.org",
					    "10.20.0.1",
					    "[fd00::1]",
					    "evil-github.com.",
					    "",
					    "A.B.C.D.E.F.example.COM."};
	static const uint8_t addr[16] = {10, 20, 0, 1};
	struct policy_diags d;
	struct wd_policy *p = NULL;
	struct wd_gwconf c;
	struct wd_buf b = WD_BUF_INIT;

	policy_diags_init(&d);
	if (policy_parse((const char *)data, size, "fuzz.yaml", &p, &d) == 0) {
		policy_render_yaml(p, &b);
		policy_render_json(p, &b);
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			for (uint16_t port = 0; port < 3; port++)
				(void)policy_match(p, names[i], (uint16_t)(port * 443));
		(void)policy_match_addr(p, AF_INET, addr, 443);
		(void)policy_match_addr(p, AF_INET6, addr, 443);
		for (size_t i = 0; i < p->nrules; i++)
			if (p->rules[i].host)
				(void)policy_match(p, p->rules[i].host, p->rules[i].ports[0]);
		policy_free(p);
	}
	policy_diags_sort(&d);
	for (size_t i = 0; i < d.n; i++)
		policy_diag_format(&d, i, &b);
	policy_diags_free(&d);

	policy_diags_init(&d);
	if (conf_parse((const char *)data, size, "fuzz.yaml", &c, &d) == 0) {
		conf_render_yaml(&c, &b);
		if (c.ceiling)
			ceiling(&c, &b);
		conf_free(&c);
	}
	policy_diags_free(&d);
	wd_buf_free(&b);
	return 0;
}
