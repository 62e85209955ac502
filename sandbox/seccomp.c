/* seccomp.c - sandbox_rules[] -> a seccomp BPF program with libseccomp, exported into a memfd
 * for bubblewrap's `--seccomp FD`; and the same table as text.
 *
 * Stages of a build: a context whose default action is ALLOW and whose action for a call of
 * another architecture is ERRNO(EPERM) (libseccomp also sends x32 numbers, nr >=
 * __X32_SYSCALL_BIT, to that action on x86_64); each row of the table that @allow does not
 * loosen becomes one or more libseccomp rules (a rule takes one comparison per argument, so
 * "any of these bits" is one rule per bit, see add_rows()); the rules are laid out as a
 * binary tree of syscall numbers (SCMP_FLTATR_CTL_OPTIMIZE = 2: an allowed call walks
 * ~log2(n) comparisons, not n); the program is exported into a sealed memfd.
 */
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOW32 0xffffffffULL

void sandbox_allow_text(unsigned allow, char *out, size_t size)
{
	size_t off = 0;

	if (!size)
		return;
	out[0] = '\0';
	for (unsigned bit = 1; bit && off < size; bit <<= 1) {
		const char *name = (allow & bit) ? sandbox_allow_name(bit) : NULL;
		int w;

		if (!name)
			continue;
		w = snprintf(out + off, size - off, "%s%s", off ? "," : "", name);
		if (w < 0)
			break;
		off += (size_t)w;
	}
	if (!off)
		snprintf(out, size, "none");
}

/*
 * The number of @r's call on the native architecture: libseccomp's (a negative pseudo number
 * for a call this architecture lacks, which libseccomp then leaves out), else the table's.
 */
static int rule_nr(const struct sandbox_rule *r, int *ret_nr, struct wd_err *err)
{
	int nr = seccomp_syscall_resolve_name(r->syscall);

	if (nr != __NR_SCMP_ERROR) {
		*ret_nr = nr;
		return 0;
	}
#if defined(__x86_64__)
	if (r->nr_x86_64 > 0) {
		*ret_nr = r->nr_x86_64;
		return 0;
	}
#endif
	return wd_err_set(err, -EINVAL,
			  "seccomp: this libseccomp does not know the system call `%s` and the "
			  "table has no number for it here",
			  r->syscall);
}

static int add1(scmp_filter_ctx ctx, const struct sandbox_rule *r, int nr, unsigned n,
		const struct scmp_arg_cmp *cmp, struct wd_err *err)
{
	int ret = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO((uint32_t)r->err), nr, n, cmp);

	if (ret)
		return wd_err_set(err, ret < 0 ? ret : -EINVAL, "seccomp: rule for %s: %s",
				  r->syscall, strerror(ret < 0 ? -ret : EINVAL));
	return 0;
}

static struct scmp_arg_cmp masked(unsigned arg, uint64_t mask, uint64_t value)
{
	return (struct scmp_arg_cmp){
	    .arg = arg, .op = SCMP_CMP_MASKED_EQ, .datum_a = mask, .datum_b = value};
}

/*
 * personality(): refuse x unless x is made of the bits in @allowed only (PER_LINUX, ...) or x
 * is the query 0xffffffff. A libseccomp rule compares an argument once, so the complement is
 * a union of single comparisons:
 *   - x > 0xffffffff;
 *   - with M the low 32 bits outside @allowed, in ascending order m0 .. mk, and cyclically
 *     next(mi) = m(i+1), one rule per i: bit mi set and bit next(mi) clear;
 *   - for each bit a of @allowed: bit m0 set and bit a clear.
 * Why this is exact: an allowed x has no bit of M set, and 0xffffffff has no bit clear, so no
 * rule matches either. Any other 32-bit x has some bit of M set; if not every bit of M is set,
 * walking the cycle from a set bit reaches a clear one, and the rule of the step between them
 * matches; if every bit of M is set, some bit a of @allowed is clear (x is not 0xffffffff) and
 * the last kind matches. tests/unit/test_sandbox.c runs the exported program on the edges.
 */
static int add_persona(scmp_filter_ctx ctx, const struct sandbox_rule *r, int nr,
		       struct wd_err *err)
{
	struct scmp_arg_cmp c = {.arg = r->cond.arg, .op = SCMP_CMP_GT, .datum_a = LOW32};
	uint64_t m = LOW32 & ~r->cond.value;
	unsigned bits[32], n = 0;
	int ret = add1(ctx, r, nr, 1, &c, err);

	for (unsigned b = 0; b < 32; b++)
		if (m & (1ULL << b))
			bits[n++] = b;
	if (!n)
		return wd_err_set(err, -EINVAL, "seccomp: %s: nothing to refuse", r->syscall);
	for (unsigned i = 0; !ret && i < n; i++) {
		uint64_t set = 1ULL << bits[i], clear = 1ULL << bits[(i + 1) % n];

		c = masked(r->cond.arg, set | clear, set);
		ret = add1(ctx, r, nr, 1, &c, err);
	}
	for (unsigned b = 0; !ret && b < 32; b++) {
		uint64_t set = 1ULL << bits[0], clear = 1ULL << b;

		if (!(r->cond.value & clear))
			continue;
		c = masked(r->cond.arg, set | clear, set);
		ret = add1(ctx, r, nr, 1, &c, err);
	}
	return ret;
}

/* One row of the table as libseccomp rules. */
static int add_rows(scmp_filter_ctx ctx, const struct sandbox_rule *r, struct wd_err *err)
{
	const struct sandbox_cond *k = &r->cond;
	struct scmp_arg_cmp c;
	int nr = 0, ret = rule_nr(r, &nr, err);
	uint64_t top;

	if (ret)
		return ret;
	if (k->arg > 5)
		return wd_err_set(err, -EINVAL, "seccomp: %s: argument %u", r->syscall, k->arg);
	switch (k->kind) {
	case SANDBOX_ALWAYS:
		return add1(ctx, r, nr, 0, NULL, err);
	case SANDBOX_LOW32_EQ:
		c = masked(k->arg, LOW32, k->value & LOW32);
		return add1(ctx, r, nr, 1, &c, err);
	case SANDBOX_ANY_BIT:
		for (unsigned b = 0; !ret && b < 64; b++) {
			if (!(k->value & (1ULL << b)))
				continue;
			c = masked(k->arg, 1ULL << b, 1ULL << b);
			ret = add1(ctx, r, nr, 1, &c, err);
		}
		return ret;
	case SANDBOX_NOT_IN:
		if (!k->nset || k->set[k->nset - 1] >= 64)
			return wd_err_set(err, -EINVAL, "seccomp: %s: the allowed set", r->syscall);
		top = k->set[k->nset - 1];
		for (uint64_t v = 0, i = 0; !ret && v < top; v++) {
			if (i < k->nset && k->set[i] == v) {
				i++;
				continue;
			}
			c = (struct scmp_arg_cmp){.arg = k->arg, .op = SCMP_CMP_EQ, .datum_a = v};
			ret = add1(ctx, r, nr, 1, &c, err);
		}
		c = (struct scmp_arg_cmp){.arg = k->arg, .op = SCMP_CMP_GT, .datum_a = top};
		return ret ? ret : add1(ctx, r, nr, 1, &c, err);
	case SANDBOX_PERSONA:
		return add_persona(ctx, r, nr, err);
	}
	return wd_err_set(err, -EINVAL, "seccomp: %s: unknown condition", r->syscall);
}

static int build_ctx(unsigned allow, scmp_filter_ctx *ret_ctx, struct wd_err *err)
{
	scmp_filter_ctx ctx;
	int ret;

	if (allow & ~SANDBOX_ALLOW_ALL)
		return wd_err_set(err, -EINVAL, "seccomp: unknown sandbox.allow bits 0x%x",
				  allow & ~SANDBOX_ALLOW_ALL);
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return wd_err_set(err, -ENOMEM, "seccomp: seccomp_init failed");
	/* a call of another ABI (i386 through int 0x80; x32 numbers) is refused, whatever it is */
	ret = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM));
	if (!ret)
		ret = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (ret) {
		seccomp_release(ctx);
		return wd_err_set(err, ret, "seccomp: filter attributes: %s", strerror(-ret));
	}
	for (size_t i = 0; i < sandbox_nrules; i++) {
		if (sandbox_rules[i].loosened_by & allow)
			continue;
		ret = add_rows(ctx, &sandbox_rules[i], err);
		if (ret) {
			seccomp_release(ctx);
			return ret;
		}
	}
	*ret_ctx = ctx;
	return 0;
}

int sandbox_seccomp_fd(unsigned allow, int *ret_fd, size_t *ret_insns, struct wd_err *err)
{
	scmp_filter_ctx ctx = NULL;
	struct stat st;
	int fd, ret = build_ctx(allow, &ctx, err);

	if (ret)
		return ret;
	fd = memfd_create("warden-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		ret = wd_err_set(err, -errno, "seccomp: memfd_create: %s", strerror(errno));
		goto out;
	}
	ret = seccomp_export_bpf(ctx, fd);
	if (ret) {
		wd_err_set(err, ret, "seccomp: seccomp_export_bpf: %s", strerror(-ret));
		goto out;
	}
	/* what bwrap reads is what was built: no later write can change it */
	if (fstat(fd, &st) < 0 || st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0 ||
	    lseek(fd, 0, SEEK_SET) < 0) {
		ret = wd_err_set(err, -EIO, "seccomp: the exported program is unusable");
		goto out;
	}
	if (ret_insns)
		*ret_insns = (size_t)st.st_size / sizeof(struct sock_filter);
	*ret_fd = fd;
	fd = -1;
out:
	if (fd >= 0)
		close(fd);
	seccomp_release(ctx);
	return ret;
}

int sandbox_seccomp_bpf(unsigned allow, struct sock_filter **ret_prog, size_t *ret_len,
			struct wd_err *err)
{
	struct sock_filter *prog;
	size_t n = 0;
	ssize_t got;
	int fd = -1, ret = sandbox_seccomp_fd(allow, &fd, &n, err);

	if (ret)
		return ret;
	if (n == 0) { /* an empty filter allows everything: never hand one out */
		close(fd);
		return wd_err_set(err, -EINVAL, "seccomp: the filter has no instructions");
	}
	prog = calloc(n, sizeof(*prog));
	if (!prog) {
		close(fd);
		return wd_err_set(err, -ENOMEM, "seccomp: out of memory");
	}
	got = pread(fd, prog, n * sizeof(*prog), 0);
	close(fd);
	if (got != (ssize_t)(n * sizeof(*prog))) {
		free(prog);
		return wd_err_set(err, -EIO, "seccomp: reading the program back");
	}
	*ret_prog = prog;
	*ret_len = n;
	return 0;
}

/* ------------------------------------------------------------ text */

static const struct {
	int err;
	const char *name;
} errno_names[] = {
    {EPERM, "EPERM"},
    {ENOSYS, "ENOSYS"},
    {EAFNOSUPPORT, "EAFNOSUPPORT"},
};

static const char *errno_name(int e)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(errno_names); i++)
		if (errno_names[i].err == e)
			return errno_names[i].name;
	return "an errno";
}

int sandbox_rule_text(const struct sandbox_rule *r, struct wd_buf *out)
{
	const struct sandbox_cond *k = &r->cond;
	int ret = 0;

	switch (k->kind) {
	case SANDBOX_ALWAYS:
		return wd_buf_puts(out, "always");
	case SANDBOX_LOW32_EQ:
		return wd_buf_printf(out, "%s & 0xffffffff == 0x%llx (%s)", k->arg_name,
				     (unsigned long long)k->value, k->names);
	case SANDBOX_ANY_BIT:
		return wd_buf_printf(out, "%s & 0x%llx != 0 (%s)", k->arg_name,
				     (unsigned long long)k->value, k->names);
	case SANDBOX_NOT_IN:
		ret |= wd_buf_printf(out, "%s not in {", k->arg_name);
		for (size_t i = 0; i < k->nset; i++)
			ret |= wd_buf_printf(out, "%s%llu", i ? ", " : "",
					     (unsigned long long)k->set[i]);
		ret |= wd_buf_printf(out, "} (%s)", k->names);
		return ret ? -ENOMEM : 0;
	case SANDBOX_PERSONA: {
		/* the allowed values: every combination of the bits (a few), and the query */
		unsigned bits[8], n = 0;

		for (unsigned b = 0; b < 32 && n < WD_ARRAY_SIZE(bits); b++)
			if (k->value & (1ULL << b))
				bits[n++] = b;
		ret |= wd_buf_printf(out, "%s not in {", k->arg_name);
		for (unsigned m = 0; m < (1u << n); m++) {
			uint64_t v = 0;

			for (unsigned i = 0; i < n; i++)
				if (m & (1u << i))
					v |= 1ULL << bits[i];
			ret |= wd_buf_printf(out, "%s0x%llx", m ? ", " : "", (unsigned long long)v);
		}
		ret |= wd_buf_printf(out, ", 0xffffffff} (%s)", k->names);
		return ret ? -ENOMEM : 0;
	}
	}
	return wd_buf_puts(out, "?");
}

#define COND_WIDTH 46

/* "syscall  condition  errno  why"; a condition wider than its column gets a line of its own */
static int row(struct wd_buf *out, const struct sandbox_rule *r)
{
	struct wd_buf cond = WD_BUF_INIT;
	int ret = sandbox_rule_text(r, &cond);

	if (!ret && cond.len > COND_WIDTH)
		ret = wd_buf_printf(out, "%-18s %s\n%-18s %-*s", r->syscall, wd_buf_cstr(&cond), "",
				    COND_WIDTH, "");
	else if (!ret)
		ret = wd_buf_printf(out, "%-18s %-*s", r->syscall, COND_WIDTH, wd_buf_cstr(&cond));
	if (!ret)
		ret = wd_buf_printf(out, " %-13s %s\n", errno_name(r->err), r->why);
	wd_buf_free(&cond);
	return ret;
}

int sandbox_describe(unsigned allow, struct wd_buf *out)
{
	char names[64];
	bool loosened = false;
	int ret = 0;

	sandbox_allow_text(allow, names, sizeof(names));
	ret |= wd_buf_printf(out,
			     "# the seccomp filter of every process of the run (sandbox.allow: "
			     "%s)\n# default: allow; a refused call returns its errno without "
			     "reaching the kernel\n",
			     names);
	ret |= wd_buf_printf(out, "%-18s %-*s %-13s %s\n", "syscall", COND_WIDTH, "refused when",
			     "returns", "why");
	for (size_t i = 0; !ret && i < sandbox_nrules; i++)
		if (!(sandbox_rules[i].loosened_by & allow))
			ret = row(out, &sandbox_rules[i]);
	for (size_t i = 0; !ret && i < sandbox_nrules; i++) {
		const struct sandbox_rule *r = &sandbox_rules[i];

		if (!(r->loosened_by & allow))
			continue;
		if (!loosened)
			ret = wd_buf_printf(out,
					    "# loosened by sandbox.allow: %s (not in this "
					    "filter):\n",
					    names);
		loosened = true;
		if (!ret)
			ret = wd_buf_puts(out, "#   ");
		if (!ret)
			ret = row(out, r);
	}
	ret |= wd_buf_puts(out, "# foreign ABIs: every call of i386 (int $0x80) and x32 (numbers "
				"with __X32_SYSCALL_BIT) returns EPERM\n");
	if (allow & SANDBOX_ALLOW_USERNS)
		ret |= wd_buf_puts(out, "# bubblewrap: nested user namespaces allowed (no "
					"--disable-userns)\n");
	else
		ret |= wd_buf_puts(out, "# bubblewrap: --disable-userns --assert-userns-disabled "
					"(a second layer: no nested user namespace)\n");
	return ret ? -ENOMEM : 0;
}
