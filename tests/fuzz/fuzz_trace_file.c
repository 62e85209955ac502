/* fuzz_trace_file.c - libFuzzer harness: arbitrary bytes through the trace file reader
 * (trace/file.c); a trace it accepts goes on through `warden init`'s inference (trace/infer*.c)
 * and the policy it writes must parse without an error: what a trace holds never breaks, or
 * adds lines to, the YAML (no I/O: the "does it exist" callback answers from the path). */
#include "policy/policy.h"
#include "trace/file.h"
#include "trace/infer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const creds[] = {"~/.ssh", "/etc/shadow", NULL};
static const char *const base_dirs[] = {"/usr", "/lib", NULL};
static const char *const base_files[] = {"/etc/ld.so.cache", NULL};
static const char *const protect[] = {"/run/warden", NULL};

/* a path "exists" unless its last component starts with 'x' (both answers get exercised) */
static bool fake_exists(const char *path, void *ctx)
{
	const char *last = strrchr(path, '/');

	(void)ctx;
	return !last || last[1] != 'x';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct infer_opts o = {
	    .policy_dir = "/srv/proj",
	    .home = NULL,
	    .cred_stores = creds,
	    .base_dirs = base_dirs,
	    .base_files = base_files,
	    .protect = protect,
	    .exists = fake_exists,
	    .source = "fuzz.jsonl",
	    .now = "2026-12-01",
	};
	struct infer_result res;
	struct wd_err err = {0};
	struct trace t;

	if (trace_parse((const char *)data, size, "fuzz.jsonl", &t, &err)) {
		trace_free(&t);
		return 0;
	}
	if (!infer_policy(&t, &o, &res)) {
		struct policy_diags d;
		struct wd_policy *p = NULL;

		policy_diags_init(&d);
		if (policy_parse(res.yaml.data, res.yaml.len, "/srv/proj/policy.yaml", &p, &d) ||
		    d.errors) {
			fprintf(stderr, "the inferred policy does not parse:\n%s\n", res.yaml.data);
			for (size_t i = 0; i < d.n; i++)
				fprintf(stderr, "%d:%d: %s\n", d.v[i].line, d.v[i].col, d.v[i].msg);
			abort();
		}
		policy_free(p);
		policy_diags_free(&d);
	}
	infer_result_free(&res);
	trace_free(&t);
	return 0;
}
