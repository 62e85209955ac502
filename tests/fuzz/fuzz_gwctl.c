/* fuzz_gwctl.c - libFuzzer harness: arbitrary bytes through the gateway's
 * control request parser (gateway/ctl.c) and, for a register or replace
 * request, through the policy parser the gateway then runs on it. */
#include "gateway/ctl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gw_ctl_req req;
	char why[256];

	if (gw_ctl_parse((const char *)data, size, &req, why, sizeof(why)) == 0) {
		if (req.policy) {
			struct policy_diags d;
			struct wd_policy *p = NULL;

			policy_diags_init(&d);
			if (policy_parse(req.policy, req.policy_len, "fuzz.yaml", &p, &d) == 0)
				policy_free(p);
			policy_diags_free(&d);
		}
		gw_ctl_req_clear(&req);
	}
	return 0;
}
