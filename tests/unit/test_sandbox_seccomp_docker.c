/* test_sandbox_seccomp_docker.c - the Docker backend's seccomp profile (sandbox/seccomp_docker.c):
 * the JSON parses in moby 20.10's shape (defaultAction ALLOW, archMap without subarchitectures,
 * an errnoRet on every entry), every row of sandbox_rules[] has its entries with its errno,
 * clone3 gets ENOSYS, and the profile gives the same verdict as the bwrap filter's BPF program
 * (run by sandbox_bpf_run()) for every row's edge values and thousands of others, evaluated
 * the way runc builds it (an entry is one rule; comparisons of one argument are ORed, of
 * different arguments ANDed). The checker is shown to catch a row dropped from the table
 * (each row in turn), a changed errno, a lost bit and a changed ioctl request.
 */
#include "sandbox/sandbox.h"

#include <errno.h>
#include <jansson.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define ALLOW SECCOMP_RET_ALLOW
#define ERR(e) (SECCOMP_RET_ERRNO | (uint32_t)(e))
#define CONFLICT 0xbad0bad0u /* two matching entries with different errnos */

/* ------------------------------------------------------------ the profile, parsed */

enum op { OP_NE, OP_LT, OP_LE, OP_EQ, OP_GE, OP_GT, OP_MASKED_EQ };

static const char *const op_names[] = {
    [OP_NE] = "SCMP_CMP_NE",
    [OP_LT] = "SCMP_CMP_LT",
    [OP_LE] = "SCMP_CMP_LE",
    [OP_EQ] = "SCMP_CMP_EQ",
    [OP_GE] = "SCMP_CMP_GE",
    [OP_GT] = "SCMP_CMP_GT",
    [OP_MASKED_EQ] = "SCMP_CMP_MASKED_EQ",
};

struct darg {
	unsigned index;
	enum op op;
	uint64_t value, value_two;
};

struct dentry {
	const char *names[8]; /* into the json_t the profile keeps */
	size_t nnames;
	int err;
	struct darg args[6];
	size_t nargs;
};

struct profile {
	json_t *root;
	struct dentry *v;
	size_t n;
};

static void profile_free(struct profile *p)
{
	free(p->v);
	json_decref(p->root);
	memset(p, 0, sizeof(*p));
}

static bool only_keys(json_t *o, const char *const *keys, size_t n)
{
	const char *k;
	json_t *v;

	json_object_foreach(o, k, v)
	{
		bool known = false;

		for (size_t i = 0; i < n; i++)
			known |= !strcmp(k, keys[i]);
		if (!known) {
			print_message("unexpected key `%s`\n", k);
			return false;
		}
	}
	return true;
}

static bool get_u64(json_t *v, uint64_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

static int parse_arg(json_t *a, struct darg *d)
{
	static const char *const keys[] = {"index", "value", "valueTwo", "op"};
	const char *op = json_string_value(json_object_get(a, "op"));
	uint64_t idx;

	if (!json_is_object(a) || !only_keys(a, keys, 4) || !op ||
	    !get_u64(json_object_get(a, "index"), &idx) || idx > 5 ||
	    !get_u64(json_object_get(a, "value"), &d->value) ||
	    !get_u64(json_object_get(a, "valueTwo"), &d->value_two))
		return -1;
	d->index = (unsigned)idx;
	for (size_t i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++)
		if (!strcmp(op, op_names[i])) {
			d->op = (enum op)i;
			return 0;
		}
	return -1;
}

static int parse_entry(json_t *s, struct dentry *e)
{
	static const char *const keys[] = {"names", "action", "errnoRet", "args", "comment"};
	json_t *names = json_object_get(s, "names"), *args = json_object_get(s, "args"), *v;
	const char *action = json_string_value(json_object_get(s, "action"));
	uint64_t err;
	size_t i;

	/* moby refuses `name` beside `names`; this profile uses `names` only */
	if (!json_is_object(s) || !only_keys(s, keys, 5) || !json_is_array(names) ||
	    !json_array_size(names) || json_array_size(names) > 8 || !json_is_array(args) ||
	    json_array_size(args) > 6 || !action || strcmp(action, "SCMP_ACT_ERRNO") ||
	    !get_u64(json_object_get(s, "errnoRet"), &err) || err == 0 || err > 4095 ||
	    !json_is_string(json_object_get(s, "comment")))
		return -1;
	e->err = (int)err;
	json_array_foreach(names, i, v)
	{
		if (!json_is_string(v) || !json_string_length(v))
			return -1;
		e->names[e->nnames++] = json_string_value(v);
	}
	json_array_foreach(args, i, v)
	{
		if (parse_arg(v, &e->args[e->nargs++]))
			return -1;
	}
	return 0;
}

/* the JSON text in moby 20.10's shape, or -1 */
static int profile_parse(const char *text, struct profile *p)
{
	static const char *const keys[] = {"defaultAction", "archMap", "syscalls"};
	json_error_t jerr;
	json_t *map, *sys, *v;
	const char *def;
	size_t i;

	memset(p, 0, sizeof(*p));
	p->root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	if (!p->root) {
		print_message("json: %s (line %d)\n", jerr.text, jerr.line);
		return -1;
	}
	/* moby refuses `architectures` beside `archMap` */
	if (!json_is_object(p->root) || !only_keys(p->root, keys, 3))
		return -1;
	def = json_string_value(json_object_get(p->root, "defaultAction"));
	if (!def || strcmp(def, "SCMP_ACT_ALLOW"))
		return -1;
	map = json_object_get(p->root, "archMap");
	if (!json_is_array(map) || !json_array_size(map))
		return -1;
	json_array_foreach(map, i, v)
	{
		static const char *const akeys[] = {"architecture", "subArchitectures"};
		json_t *sub = json_object_get(v, "subArchitectures");

		/* no i386, no x32: their calls meet the bad-arch action */
		if (!json_is_object(v) || !only_keys(v, akeys, 2) ||
		    !json_is_string(json_object_get(v, "architecture")) || !json_is_array(sub) ||
		    json_array_size(sub))
			return -1;
	}
	sys = json_object_get(p->root, "syscalls");
	if (!json_is_array(sys))
		return -1;
	p->v = calloc(json_array_size(sys) + 1, sizeof(*p->v));
	if (!p->v)
		return -1;
	json_array_foreach(sys, i, v)
	{
		if (parse_entry(v, &p->v[p->n++]))
			return -1;
	}
	return 0;
}

static bool has_name(const struct dentry *e, const char *name)
{
	for (size_t i = 0; i < e->nnames; i++)
		if (!strcmp(e->names[i], name))
			return true;
	return false;
}

static bool cmp(const struct darg *a, uint64_t x)
{
	switch (a->op) {
	case OP_NE:
		return x != a->value;
	case OP_LT:
		return x < a->value;
	case OP_LE:
		return x <= a->value;
	case OP_EQ:
		return x == a->value;
	case OP_GE:
		return x >= a->value;
	case OP_GT:
		return x > a->value;
	case OP_MASKED_EQ:
		return (x & a->value) == a->value_two;
	}
	return false;
}

/* Does @e match the call, as runc makes its rule(s)? */
static bool entry_matches(const struct dentry *e, const uint64_t *args)
{
	unsigned count[6] = {0};
	bool repeated = false, all = true, any = false;

	if (!e->nargs)
		return true;
	for (size_t i = 0; i < e->nargs; i++)
		repeated |= ++count[e->args[i].index] > 1;
	for (size_t i = 0; i < e->nargs; i++) {
		bool m = cmp(&e->args[i], args[e->args[i].index]);

		all &= m;
		any |= m;
	}
	return repeated ? any : all;
}

/* The verdict of the profile for a call of @name. */
static uint32_t profile_verdict(const struct profile *p, const char *name, const uint64_t *args)
{
	uint32_t v = ALLOW;

	for (size_t i = 0; i < p->n; i++) {
		const struct dentry *e = &p->v[i];

		if (!has_name(e, name) || !entry_matches(e, args))
			continue;
		if (v != ALLOW && v != ERR(e->err))
			return CONFLICT;
		v = ERR(e->err);
	}
	return v;
}

static void render(const struct sandbox_rule *rules, size_t n, unsigned allow, struct profile *p)
{
	struct wd_buf out = WD_BUF_INIT;
	struct wd_err err;
	int ret;

	wd_err_clear(&err);
	ret = sandbox_seccomp_docker_render(rules, n, allow, &out, &err);
	if (ret)
		print_message("render: %s\n", err.msg);
	assert_int_equal(ret, 0);
	assert_non_null(out.data);
	assert_int_equal(profile_parse(wd_buf_cstr(&out), p), 0);
	wd_buf_free(&out);
}

/* ------------------------------------------------------------ the bwrap filter */

struct prog {
	struct sock_filter *v;
	size_t n;
};

static void build(struct prog *p, unsigned allow)
{
	struct wd_err err;

	wd_err_clear(&err);
	if (sandbox_seccomp_bpf(allow, &p->v, &p->n, &err))
		print_message("build: %s\n", err.msg);
	assert_non_null(p->v);
}

static uint32_t bpf_verdict(const struct prog *p, int nr, const uint64_t *args)
{
	struct seccomp_data d = {.nr = nr, .arch = AUDIT_ARCH_X86_64};
	uint32_t action = 0xdead;

	memcpy(d.args, args, sizeof(d.args));
	assert_int_equal(sandbox_bpf_run(p->v, p->n, &d, &action, NULL), 0);
	return action;
}

/* ------------------------------------------------------------ the probes */

#define MAX_PROBES 1536

/* The values a row's argument is probed with: its edges and many others. */
static size_t probes(const struct sandbox_cond *k, uint64_t *v)
{
	static const uint64_t fixed[] = {0,
					 ~0ULL,
					 1ULL << 32,
					 0xffffffffULL,
					 0x5401,
					 0x5401 | (1ULL << 40),
					 0x8,
					 0x20000,
					 0x20008,
					 0x400000,
					 0x40000,
					 0x100008,
					 0x01200011 /* fork */,
					 0x003d0f00 /* pthread_create */,
					 04755,
					 02755,
					 0755};
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	size_t n = 0;

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		v[n++] = fixed[i];
	v[n++] = k->value;
	v[n++] = k->value | (1ULL << 32);
	v[n++] = k->value | 0xffffffff00000000ULL;
	v[n++] = k->value ^ 1;
	v[n++] = ~k->value;
	for (unsigned b = 0; b < 64; b++) {
		uint64_t bit = 1ULL << b;

		v[n++] = bit;
		v[n++] = bit | 0755;
		v[n++] = 0xffffffffULL ^ bit;
		v[n++] = k->value & ~bit;
	}
	for (uint64_t i = 0; i < 200; i++) {
		v[n++] = i;
		v[n++] = i | (1ULL << 32);
	}
	while (n < MAX_PROBES) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		switch (n % 4) {
		case 0:
			v[n++] = x;
			break;
		case 1:
			v[n++] = x & 0xffffffff;
			break;
		case 2:
			v[n++] = x & (0x0fe20008 | k->value);
			break;
		default:
			v[n++] = x & (k->value | 0xff);
			break;
		}
	}
	return n;
}

static const struct {
	const char *name;
	int nr;
} outside[] = {{"read", 0}, {"openat", 257}, {"getpid", 39}, {"ptrace", 101}, {"rseq", 334}};

/*
 * How many calls get another verdict from the profile @p than from the program @bpf: every
 * row of the real table probed at its argument (the others 0, then all ones), and calls
 * outside the table. Prints the first few.
 */
static size_t mismatches(const struct profile *p, const struct prog *bpf)
{
	static uint64_t vals[MAX_PROBES];
	size_t bad = 0;

	for (size_t i = 0; i < sandbox_nrules; i++) {
		const struct sandbox_rule *r = &sandbox_rules[i];
		size_t n = probes(&r->cond, vals);
		struct profile sub = {.v = calloc(p->n + 1, sizeof(*sub.v))};

		/* the entries of this call alone (the verdict reads no other) */
		assert_non_null(sub.v);
		for (size_t e = 0; e < p->n; e++)
			if (has_name(&p->v[e], r->syscall))
				sub.v[sub.n++] = p->v[e];
		for (size_t j = 0; j < n; j++) {
			for (int fill = 0; fill < 2; fill++) {
				uint64_t args[6];
				uint32_t want, got;

				for (int a = 0; a < 6; a++)
					args[a] = fill ? ~0ULL : 0;
				args[r->cond.arg] = vals[j];
				want = bpf_verdict(bpf, r->nr_x86_64, args);
				got = profile_verdict(&sub, r->syscall, args);
				if (want == got)
					continue;
				if (bad++ < 4)
					print_message(
					    "%s(arg%u=0x%llx): filter 0x%x, profile 0x%x\n",
					    r->syscall, r->cond.arg, (unsigned long long)vals[j],
					    want, got);
			}
		}
		free(sub.v);
	}
	for (size_t i = 0; i < sizeof(outside) / sizeof(outside[0]); i++) {
		const uint64_t args[6] = {0};

		if (bpf_verdict(bpf, outside[i].nr, args) != ALLOW ||
		    profile_verdict(p, outside[i].name, args) != ALLOW)
			bad++;
	}
	return bad;
}

/* ------------------------------------------------------------ the tests */

static void test_parses(void **state)
{
	struct profile p;

	(void)state;
	render(sandbox_rules, sandbox_nrules, 0, &p);
	assert_true(p.n > sandbox_nrules);
	profile_free(&p);
	render(sandbox_rules, sandbox_nrules, SANDBOX_ALLOW_USERNS, &p);
	assert_true(p.n > 0);
	profile_free(&p);
}

/* Every row the policy keeps has entries with its errno; every row it loosens has none. */
static void check_rows_present(unsigned allow)
{
	struct profile p;

	render(sandbox_rules, sandbox_nrules, allow, &p);
	for (size_t i = 0; i < sandbox_nrules; i++) {
		const struct sandbox_rule *r = &sandbox_rules[i];
		size_t found = 0;

		for (size_t j = 0; j < p.n; j++) {
			if (!has_name(&p.v[j], r->syscall))
				continue;
			assert_int_equal(p.v[j].err, r->err);
			found++;
		}
		if (r->loosened_by & allow)
			assert_int_equal(found, 0);
		else if (!found)
			fail_msg("no entry for %s", r->syscall);
		/* "always" rows are one entry without arguments */
		if (!(r->loosened_by & allow) && r->cond.kind == SANDBOX_ALWAYS)
			assert_int_equal(found, 1);
	}
	profile_free(&p);
}

static void test_every_row(void **state)
{
	(void)state;
	check_rows_present(0);
	check_rows_present(SANDBOX_ALLOW_USERNS);
}

static void test_clone3_enosys(void **state)
{
	struct profile p;
	size_t found = 0;

	(void)state;
	render(sandbox_rules, sandbox_nrules, 0, &p);
	for (size_t j = 0; j < p.n; j++) {
		if (!has_name(&p.v[j], "clone3"))
			continue;
		assert_int_equal(p.v[j].err, ENOSYS);
		assert_int_equal(p.v[j].nargs, 0);
		found++;
	}
	assert_int_equal(found, 1);
	/* and socket's families get EAFNOSUPPORT, TIOCSTI EPERM, whatever the upper bits */
	{
		uint64_t a[6] = {40 /* AF_VSOCK */};

		assert_int_equal(profile_verdict(&p, "socket", a), ERR(EAFNOSUPPORT));
		a[0] = 2;
		assert_int_equal(profile_verdict(&p, "socket", a), ALLOW);
		a[0] = 0;
		a[1] = 0x5412 | (1ULL << 32);
		assert_int_equal(profile_verdict(&p, "ioctl", a), ERR(EPERM));
		a[1] = 0x5401;
		assert_int_equal(profile_verdict(&p, "ioctl", a), ALLOW);
	}
	profile_free(&p);
}

/* The profile answers every probed call as the bwrap filter does, with and without userns. */
static void test_same_verdicts(void **state)
{
	const unsigned allows[] = {0, SANDBOX_ALLOW_USERNS};

	(void)state;
#if !defined(__x86_64__)
	skip(); /* the table's numbers and the program's arch are x86_64's */
#endif
	for (size_t i = 0; i < sizeof(allows) / sizeof(allows[0]); i++) {
		struct profile p;
		struct prog bpf;

		build(&bpf, allows[i]);
		render(sandbox_rules, sandbox_nrules, allows[i], &p);
		assert_int_equal(mismatches(&p, &bpf), 0);
		profile_free(&p);
		free(bpf.v);
	}
}

/* The checker above fails when a row is missing from the profile: each row in turn. */
static void test_dropped_row_fails(void **state)
{
	struct sandbox_rule *copy = calloc(sandbox_nrules, sizeof(*copy));
	struct prog bpf;

	(void)state;
#if !defined(__x86_64__)
	skip();
#endif
	assert_non_null(copy);
	build(&bpf, 0);
	for (size_t drop = 0; drop < sandbox_nrules; drop++) {
		struct profile p;
		size_t n = 0;

		for (size_t i = 0; i < sandbox_nrules; i++)
			if (i != drop)
				copy[n++] = sandbox_rules[i];
		render(copy, n, 0, &p);
		if (mismatches(&p, &bpf) == 0)
			fail_msg("dropping row %zu (%s) went unnoticed", drop,
				 sandbox_rules[drop].syscall);
		profile_free(&p);
	}
	free(copy);
	free(bpf.v);
}

/* ... and when a row's errno, one of its bits or its value changes. */
static void test_changed_row_fails(void **state)
{
	struct sandbox_rule *copy = calloc(sandbox_nrules, sizeof(*copy));
	struct prog bpf;
	size_t changed = 0;

	(void)state;
#if !defined(__x86_64__)
	skip();
#endif
	assert_non_null(copy);
	build(&bpf, 0);
	for (size_t i = 0; i < sandbox_nrules; i++) {
		const struct sandbox_rule *r = &sandbox_rules[i];
		struct profile p;

		if (r->cond.kind == SANDBOX_NOT_IN || r->cond.kind == SANDBOX_PERSONA)
			continue; /* their sets are behind const pointers; errno changes below */
		memcpy(copy, sandbox_rules, sandbox_nrules * sizeof(*copy));
		if (r->cond.kind == SANDBOX_ANY_BIT)
			copy[i].cond.value &= copy[i].cond.value - 1; /* its lowest bit lost */
		else if (r->cond.kind == SANDBOX_LOW32_EQ)
			copy[i].cond.value ^= 1; /* another request */
		else
			copy[i].err = copy[i].err == EPERM ? EACCES : EPERM;
		render(copy, sandbox_nrules, 0, &p);
		if (mismatches(&p, &bpf) == 0)
			fail_msg("changing row %zu (%s) went unnoticed", i, r->syscall);
		profile_free(&p);
		changed++;
	}
	/* the errno of the socket and personality rows */
	for (size_t i = 0; i < sandbox_nrules; i++) {
		struct profile p;

		if (sandbox_rules[i].cond.kind != SANDBOX_NOT_IN &&
		    sandbox_rules[i].cond.kind != SANDBOX_PERSONA)
			continue;
		memcpy(copy, sandbox_rules, sandbox_nrules * sizeof(*copy));
		copy[i].err = EACCES;
		render(copy, sandbox_nrules, 0, &p);
		assert_true(mismatches(&p, &bpf) > 0);
		profile_free(&p);
		changed++;
	}
	assert_int_equal(changed, sandbox_nrules);
	free(copy);
	free(bpf.v);
}

static int render_err(const struct sandbox_rule *rules, size_t n, unsigned allow)
{
	struct wd_buf out = WD_BUF_INIT;
	struct wd_err err;
	int ret;

	wd_err_clear(&err);
	ret = sandbox_seccomp_docker_render(rules, n, allow, &out, &err);
	if (ret)
		assert_true(strlen(err.msg) > 0);
	wd_buf_free(&out);
	return ret;
}

/* What it cannot write is an error, never a profile short of a row. */
static void test_bad_input(void **state)
{
	static const uint64_t big_set[] = {1, 64};
	struct sandbox_rule r = sandbox_rules[0];

	(void)state;
	assert_int_equal(render_err(sandbox_rules, sandbox_nrules, 1u << 7), -EINVAL);
	assert_int_equal(render_err(sandbox_rules, 0, 0), -EINVAL);
	r.err = 0;
	assert_int_equal(render_err(&r, 1, 0), -EINVAL);
	r = sandbox_rules[0];
	r.cond = (struct sandbox_cond){.kind = SANDBOX_ANY_BIT, .arg = 6, .value = 1};
	assert_int_equal(render_err(&r, 1, 0), -EINVAL);
	r.cond = (struct sandbox_cond){.kind = SANDBOX_ANY_BIT, .arg = 0, .value = 0};
	assert_int_equal(render_err(&r, 1, 0), -EINVAL);
	r.cond = (struct sandbox_cond){.kind = SANDBOX_ANY_BIT, .arg = 0, .value = 1ULL << 63};
	assert_int_equal(render_err(&r, 1, 0), -ERANGE);
	r.cond = (struct sandbox_cond){.kind = SANDBOX_NOT_IN, .arg = 0, .set = big_set, .nset = 2};
	assert_int_equal(render_err(&r, 1, 0), -EINVAL);
	r.cond = (struct sandbox_cond){.kind = (enum sandbox_cond_kind)99};
	assert_int_equal(render_err(&r, 1, 0), -EINVAL);
	/* every row loosened: nothing left to refuse */
	r = sandbox_rules[0];
	r.loosened_by = SANDBOX_ALLOW_USERNS;
	assert_int_equal(render_err(&r, 1, SANDBOX_ALLOW_USERNS), -EINVAL);
	assert_int_equal(render_err(&r, 1, 0), 0);
}

/* sandbox_seccomp_docker_json() is the render of the real table. */
static void test_json_is_the_table(void **state)
{
	struct wd_buf a = WD_BUF_INIT, b = WD_BUF_INIT;
	struct wd_err err;

	(void)state;
	wd_err_clear(&err);
	assert_int_equal(sandbox_seccomp_docker_json(0, &a, &err), 0);
	assert_int_equal(sandbox_seccomp_docker_render(sandbox_rules, sandbox_nrules, 0, &b, &err),
			 0);
	assert_string_equal(wd_buf_cstr(&a), wd_buf_cstr(&b));
	assert_non_null(strstr(wd_buf_cstr(&a), "\"SCMP_ARCH_X86_64\""));
	assert_null(strstr(wd_buf_cstr(&a), "SCMP_ARCH_X86\""));
	assert_null(strstr(wd_buf_cstr(&a), "SCMP_ARCH_X32"));
	wd_buf_free(&a);
	wd_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parses),
	    cmocka_unit_test(test_every_row),
	    cmocka_unit_test(test_clone3_enosys),
	    cmocka_unit_test(test_same_verdicts),
	    cmocka_unit_test(test_dropped_row_fails),
	    cmocka_unit_test(test_changed_row_fails),
	    cmocka_unit_test(test_bad_input),
	    cmocka_unit_test(test_json_is_the_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
