/* seccomp_docker.c - sandbox_rules[] as a Docker seccomp profile: the JSON that `docker run
 * --security-opt seccomp=FILE` reads (moby 20.10's profile format, applied by runc through
 * libseccomp), for the Docker backend. It refuses what the bwrap backend's BPF filter
 * (seccomp.c) refuses, rendered from the same table, with the same conditions and errnos.
 *
 * The choices (docs/seccomp.md, "The Docker backend's profile", has the long form):
 * - Allow by default with Warden's deny table, as the bwrap filter is. A profile given to
 *   Docker replaces Docker's own default profile; merging our refusals into a copy of its
 *   allow-list would carry moby's table in our tree, tie each run to that table's version and
 *   make one program behave differently under the two backends. Rows loosened by
 *   sandbox.allow are left out, as in the bwrap filter.
 * - One syscalls[] entry per libseccomp rule that seccomp.c adds: runc turns an entry into one
 *   rule whose comparisons are ANDed (it ORs comparisons of the same argument, a quirk this
 *   file does not lean on), so each entry carries at most one comparison and "any of these
 *   bits" is one SCMP_CMP_MASKED_EQ(bit, bit) entry per bit, "none of these values" one
 *   SCMP_CMP_EQ entry per value in between and one SCMP_CMP_GT above, personality the same
 *   union of single comparisons as add_persona() (whose comment proves it exact). In an
 *   argument, `value` is libseccomp's datum_a (the mask of MASKED_EQ) and `valueTwo` datum_b.
 * - The foreign ABIs: archMap names the native architectures (x86_64, aarch64) with no
 *   subArchitectures, so the filter runc builds holds the native one only, and a call of i386
 *   (int $0x80), of x32 (numbers with __X32_SYSCALL_BIT) or of 32-bit ARM meets libseccomp's
 *   bad-architecture action, which runc leaves at its default: the thread is killed (SIGSYS)
 *   where the bwrap filter returns EPERM. Docker's JSON has no per-architecture default
 *   action, and listing i386 as a subarchitecture would let its calls through the same names
 *   (socketcall(2) carries socket()'s family in memory, where no rule can read it).
 * - Every entry sets errnoRet (runc's default errno is EPERM, clone3 needs ENOSYS, socket
 *   EAFNOSUPPORT) and a `comment` with the row's condition (and its why on the first entry).
 */
#include "sandbox/sandbox.h"

#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LOW32 0xffffffffULL
/* the most comparisons a row becomes: personality's 1 + 32 + 32 */
#define MAX_PARTS 72
/* the largest errno the seccomp return value carries (SECCOMP_RET_DATA is 16 bits; runc
 * passes it as an int16) */
#define MAX_ERRNO 4095

enum cmp_op {
	CMP_NONE, /* no comparison: every call */
	CMP_EQ,
	CMP_GT,
	CMP_MASKED_EQ,
};

/* One comparison of one argument, as libseccomp's struct scmp_arg_cmp. */
struct part {
	enum cmp_op op;
	unsigned arg;
	uint64_t a; /* EQ, GT: the value; MASKED_EQ: the mask */
	uint64_t b; /* MASKED_EQ: the value */
};

static const char *op_name(enum cmp_op op)
{
	switch (op) {
	case CMP_EQ:
		return "SCMP_CMP_EQ";
	case CMP_GT:
		return "SCMP_CMP_GT";
	case CMP_MASKED_EQ:
		return "SCMP_CMP_MASKED_EQ";
	case CMP_NONE:
		break;
	}
	return NULL;
}

static int push(struct part *parts, size_t *n, struct part p)
{
	if (*n >= MAX_PARTS)
		return -E2BIG;
	parts[(*n)++] = p;
	return 0;
}

/* personality(): the union add_persona() in seccomp.c adds, comparison for comparison */
static int persona_parts(const struct sandbox_cond *k, struct part *parts, size_t *n)
{
	uint64_t m = LOW32 & ~k->value;
	unsigned bits[32], nb = 0;
	int ret = push(parts, n, (struct part){.op = CMP_GT, .arg = k->arg, .a = LOW32});

	for (unsigned b = 0; b < 32; b++)
		if (m & (1ULL << b))
			bits[nb++] = b;
	if (!nb)
		return -EINVAL;
	for (unsigned i = 0; !ret && i < nb; i++) {
		uint64_t set = 1ULL << bits[i], clear = 1ULL << bits[(i + 1) % nb];

		ret = push(
		    parts, n,
		    (struct part){.op = CMP_MASKED_EQ, .arg = k->arg, .a = set | clear, .b = set});
	}
	for (unsigned b = 0; !ret && b < 32; b++) {
		uint64_t set = 1ULL << bits[0], clear = 1ULL << b;

		if (!(k->value & clear))
			continue;
		ret = push(
		    parts, n,
		    (struct part){.op = CMP_MASKED_EQ, .arg = k->arg, .a = set | clear, .b = set});
	}
	return ret;
}

/* The comparisons whose union is @r's condition (one, CMP_NONE, for "always"). */
static int row_parts(const struct sandbox_rule *r, struct part *parts, size_t *n)
{
	const struct sandbox_cond *k = &r->cond;
	uint64_t top;
	int ret = 0;

	*n = 0;
	if (k->arg > 5)
		return -EINVAL;
	switch (k->kind) {
	case SANDBOX_ALWAYS:
		return push(parts, n, (struct part){.op = CMP_NONE});
	case SANDBOX_LOW32_EQ:
		return push(
		    parts, n,
		    (struct part){
			.op = CMP_MASKED_EQ, .arg = k->arg, .a = LOW32, .b = k->value & LOW32});
	case SANDBOX_ANY_BIT:
		for (unsigned b = 0; !ret && b < 64; b++)
			if (k->value & (1ULL << b))
				ret = push(parts, n,
					   (struct part){.op = CMP_MASKED_EQ,
							 .arg = k->arg,
							 .a = 1ULL << b,
							 .b = 1ULL << b});
		return ret ? ret : (*n ? 0 : -EINVAL);
	case SANDBOX_NOT_IN:
		if (!k->nset || k->set[k->nset - 1] >= 64)
			return -EINVAL;
		top = k->set[k->nset - 1];
		for (uint64_t v = 0, i = 0; !ret && v < top; v++) {
			if (i < k->nset && k->set[i] == v) {
				i++;
				continue;
			}
			ret = push(parts, n, (struct part){.op = CMP_EQ, .arg = k->arg, .a = v});
		}
		return ret ? ret
			   : push(parts, n, (struct part){.op = CMP_GT, .arg = k->arg, .a = top});
	case SANDBOX_PERSONA:
		return persona_parts(k, parts, n);
	}
	return -EINVAL;
}

/* a JSON integer for @v: jansson's integers are signed 64-bit */
static json_t *uint_json(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? NULL : json_integer((json_int_t)v);
}

static json_t *arg_json(const struct part *p)
{
	json_t *o = json_object(), *a = uint_json(p->a), *b = uint_json(p->b);

	if (!o || !a || !b || json_object_set_new(o, "index", json_integer(p->arg)) ||
	    json_object_set_new(o, "value", a) || json_object_set_new(o, "valueTwo", b) ||
	    json_object_set_new(o, "op", json_string(op_name(p->op)))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* the entry's comment: the condition as --print-seccomp writes it, the why on the first one */
static int comment(const struct sandbox_rule *r, size_t i, size_t n, struct wd_buf *out)
{
	int ret;

	if (r->cond.kind == SANDBOX_ALWAYS)
		ret = wd_buf_printf(out, "warden: %s always refused", r->syscall);
	else if (!(ret = wd_buf_printf(out, "warden: %s refused when ", r->syscall)))
		ret = sandbox_rule_text(r, out);
	if (!ret && n > 1)
		ret = wd_buf_printf(out, " [comparison %zu of %zu]", i + 1, n);
	if (!ret && i == 0)
		ret = wd_buf_printf(out, ": %s", r->why);
	return ret;
}

static json_t *entry_json(const struct sandbox_rule *r, const struct part *p, size_t i, size_t n)
{
	struct wd_buf text = WD_BUF_INIT;
	json_t *o = json_object(), *names = json_array(), *args = json_array();
	bool ok = o && names && args && !comment(r, i, n, &text);

	ok = ok && !json_array_append_new(names, json_string(r->syscall));
	ok = ok && !json_object_set(o, "names", names);
	ok = ok && !json_object_set_new(o, "action", json_string("SCMP_ACT_ERRNO"));
	ok = ok && !json_object_set_new(o, "errnoRet", json_integer(r->err));
	if (ok && p->op != CMP_NONE)
		ok = !json_array_append_new(args, arg_json(p));
	ok = ok && !json_object_set(o, "args", args);
	ok = ok && !json_object_set_new(o, "comment", json_string(wd_buf_cstr(&text)));
	wd_buf_free(&text);
	json_decref(names);
	json_decref(args);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int row_json(const struct sandbox_rule *r, json_t *syscalls, struct wd_err *err)
{
	struct part parts[MAX_PARTS];
	size_t n = 0;

	if (!r->syscall || !r->syscall[0] || r->err <= 0 || r->err > MAX_ERRNO)
		return wd_err_set(err, -EINVAL, "seccomp profile: a row with no call or errno %d",
				  r->err);
	if (row_parts(r, parts, &n))
		return wd_err_set(err, -EINVAL,
				  "seccomp profile: %s: a condition it cannot express", r->syscall);
	for (size_t i = 0; i < n; i++) {
		if (parts[i].a > (uint64_t)INT64_MAX || parts[i].b > (uint64_t)INT64_MAX)
			return wd_err_set(err, -ERANGE,
					  "seccomp profile: %s: a value above 2^63 (no JSON "
					  "integer in jansson)",
					  r->syscall);
		if (json_array_append_new(syscalls, entry_json(r, &parts[i], i, n)))
			return wd_err_set(err, -ENOMEM, "seccomp profile: out of memory");
	}
	return 0;
}

/* archMap: each native architecture alone, so the other ABIs meet the bad-arch action */
static json_t *arch_map(void)
{
	static const char *const natives[] = {"SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"};
	json_t *map = json_array();

	for (size_t i = 0; map && i < WD_ARRAY_SIZE(natives); i++) {
		json_t *a = json_object();

		if (!a || json_object_set_new(a, "architecture", json_string(natives[i])) ||
		    json_object_set_new(a, "subArchitectures", json_array()) ||
		    json_array_append_new(map, a)) {
			json_decref(map);
			return NULL;
		}
	}
	return map;
}

int sandbox_seccomp_docker_render(const struct sandbox_rule *rules, size_t nrules, unsigned allow,
				  struct wd_buf *out, struct wd_err *err)
{
	json_t *root = NULL, *syscalls = NULL;
	char *text = NULL;
	int ret = 0;

	if (allow & ~SANDBOX_ALLOW_ALL)
		return wd_err_set(err, -EINVAL, "seccomp profile: unknown sandbox.allow bits 0x%x",
				  allow & ~SANDBOX_ALLOW_ALL);
	root = json_object();
	syscalls = json_array();
	if (!root || !syscalls ||
	    json_object_set_new(root, "defaultAction", json_string("SCMP_ACT_ALLOW")) ||
	    json_object_set_new(root, "archMap", arch_map())) {
		ret = wd_err_set(err, -ENOMEM, "seccomp profile: out of memory");
		goto out;
	}
	for (size_t i = 0; !ret && i < nrules; i++)
		if (!(rules[i].loosened_by & allow))
			ret = row_json(&rules[i], syscalls, err);
	if (ret)
		goto out;
	if (!json_array_size(syscalls)) { /* an empty profile refuses nothing: never hand one out */
		ret = wd_err_set(err, -EINVAL, "seccomp profile: no rule to write");
		goto out;
	}
	text = json_object_set(root, "syscalls", syscalls)
		   ? NULL
		   : json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	if (!text || wd_buf_puts(out, text) || wd_buf_puts(out, "\n"))
		ret = wd_err_set(err, -ENOMEM, "seccomp profile: out of memory");
out:
	free(text);
	json_decref(syscalls);
	json_decref(root);
	return ret;
}

int sandbox_seccomp_docker_json(unsigned allow, struct wd_buf *out, struct wd_err *err)
{
	return sandbox_seccomp_docker_render(sandbox_rules, sandbox_nrules, allow, out, err);
}
