/* fuzz_policy.c - libFuzzer harness: arbitrary bytes through the policy parser,
 * the renderers, the matcher and the gateway config parser (no I/O). */
#include "policy/policy.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	if (policy_gwconf_parse((const char *)data, size, "fuzz.yaml", &c, &d) == 0)
		policy_gwconf_render_yaml(&c, &b);
	policy_diags_free(&d);
	wd_buf_free(&b);
	return 0;
}
