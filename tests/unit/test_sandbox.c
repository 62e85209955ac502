/* test_sandbox.c - the seccomp filter (sandbox/): the table lists exactly what it refuses, the
 * exported BPF program answers what the table says for every row and its edges (run by the
 * module's BPF interpreter, on x86_64 numbers), the foreign ABIs are refused, `userns` loosens
 * only its rows, the memfd is what bwrap reads, the text names every rule, and the kernel
 * enforces the program in a child. */
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <sched.h>
#include <seccomp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define ALLOW SECCOMP_RET_ALLOW
#define ERR(e) (SECCOMP_RET_ERRNO | (uint32_t)(e))

/* ------------------------------------------------------------ the table */

/* What the filter refuses, spelled out: a change to the table must change this list too. */
static const struct {
	const char *syscall;
	int err;
	unsigned loosened_by;
} expected[] = {
    {"keyctl", EPERM, 0},
    {"add_key", EPERM, 0},
    {"request_key", EPERM, 0},
    {"bpf", EPERM, 0},
    {"userfaultfd", EPERM, 0},
    {"io_uring_setup", EPERM, 0},
    {"io_uring_enter", EPERM, 0},
    {"io_uring_register", EPERM, 0},
    {"perf_event_open", EPERM, 0},
    {"open_by_handle_at", EPERM, 0},
    {"name_to_handle_at", EPERM, 0},
    {"fanotify_init", EPERM, 0},
    {"kexec_load", EPERM, 0},
    {"kexec_file_load", EPERM, 0},
    {"init_module", EPERM, 0},
    {"finit_module", EPERM, 0},
    {"delete_module", EPERM, 0},
    {"mount", EPERM, SANDBOX_ALLOW_USERNS},
    {"umount2", EPERM, SANDBOX_ALLOW_USERNS},
    {"pivot_root", EPERM, SANDBOX_ALLOW_USERNS},
    {"fsopen", EPERM, SANDBOX_ALLOW_USERNS},
    {"fsconfig", EPERM, SANDBOX_ALLOW_USERNS},
    {"fsmount", EPERM, SANDBOX_ALLOW_USERNS},
    {"fspick", EPERM, SANDBOX_ALLOW_USERNS},
    {"move_mount", EPERM, SANDBOX_ALLOW_USERNS},
    {"open_tree", EPERM, SANDBOX_ALLOW_USERNS},
    {"mount_setattr", EPERM, SANDBOX_ALLOW_USERNS},
    {"open_tree_attr", EPERM, SANDBOX_ALLOW_USERNS},
    {"setns", EPERM, SANDBOX_ALLOW_USERNS},
    {"unshare", EPERM, SANDBOX_ALLOW_USERNS},
    {"clone", EPERM, SANDBOX_ALLOW_USERNS},
    {"clone3", ENOSYS, 0},
    {"personality", EPERM, 0},
    {"ioctl", EPERM, 0}, /* TIOCSTI */
    {"ioctl", EPERM, 0}, /* TIOCLINUX */
    {"chmod", EPERM, 0},
    {"fchmod", EPERM, 0},
    {"fchmodat", EPERM, 0},
    {"fchmodat2", EPERM, 0},
    {"socket", EAFNOSUPPORT, 0},
};

static void test_table_lists_refusals(void **state)
{
	(void)state;
	assert_int_equal(sandbox_nrules, sizeof(expected) / sizeof(expected[0]));
	for (size_t i = 0; i < sandbox_nrules; i++) {
		const struct sandbox_rule *r = &sandbox_rules[i];

		assert_string_equal(r->syscall, expected[i].syscall);
		assert_int_equal(r->err, expected[i].err);
		assert_int_equal(r->loosened_by, expected[i].loosened_by);
		assert_non_null(r->why);
		assert_true(strlen(r->why) > 10);
		assert_true(r->cond.arg <= 5);
	}
	/* the ioctl requests, the mode bits, the families, the namespace flags */
	assert_int_equal(sandbox_rules[33].cond.value, 0x5412);
	assert_int_equal(sandbox_rules[34].cond.value, 0x541c);
	assert_int_equal(sandbox_rules[35].cond.value, 06000);
	assert_int_equal(sandbox_rules[29].cond.value, 0x7e020080); /* unshare, with NEWTIME */
	assert_int_equal(sandbox_rules[30].cond.value, 0x7e020000); /* clone: no exit signal bit */
	assert_int_equal(sandbox_rules[39].cond.nset, 4);
}

/* The table's x86_64 numbers are the kernel's (as far as this libseccomp knows them). */
static void test_table_numbers(void **state)
{
	(void)state;
	for (size_t i = 0; i < sandbox_nrules; i++) {
		const struct sandbox_rule *r = &sandbox_rules[i];
		int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, r->syscall);

		assert_true(r->nr_x86_64 > 0);
		if (nr != __NR_SCMP_ERROR)
			assert_int_equal(nr, r->nr_x86_64);
	}
}

static void test_allow_names(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(sandbox_allow_name(SANDBOX_ALLOW_USERNS), "userns");
	assert_null(sandbox_allow_name(1u << 20));
	sandbox_allow_text(0, buf, sizeof(buf));
	assert_string_equal(buf, "none");
	sandbox_allow_text(SANDBOX_ALLOW_USERNS, buf, sizeof(buf));
	assert_string_equal(buf, "userns");
}

/* ------------------------------------------------------------ the program */

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
	assert_true(p->n > 10);
}

/* The verdict for x86_64 call @nr with @args (the rest 0). */
static uint32_t verdict_arch(const struct prog *p, uint32_t arch, int nr, uint64_t a0, uint64_t a1,
			     uint64_t a2, size_t *steps)
{
	struct seccomp_data d = {.nr = nr, .arch = arch, .args = {a0, a1, a2}};
	uint32_t action = 0xdead;

	assert_int_equal(sandbox_bpf_run(p->v, p->n, &d, &action, steps), 0);
	return action;
}

static uint32_t verdict(const struct prog *p, int nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
	return verdict_arch(p, AUDIT_ARCH_X86_64, nr, a0, a1, a2, NULL);
}

/* @r refuses (@args[@arg] = @v, the others 0)? */
static uint32_t row_verdict(const struct prog *p, const struct sandbox_rule *r, uint64_t v)
{
	uint64_t a[3] = {0, 0, 0};

	a[r->cond.arg] = v;
	return verdict(p, r->nr_x86_64, a[0], a[1], a[2]);
}

/* every row, its edges, and a value it lets through */
static void check_rows(const struct prog *p, unsigned allow)
{
	for (size_t i = 0; i < sandbox_nrules; i++) {
		const struct sandbox_rule *r = &sandbox_rules[i];
		const struct sandbox_cond *k = &r->cond;
		uint32_t no = (r->loosened_by & allow) ? ALLOW : ERR(r->err);

		switch (k->kind) {
		case SANDBOX_ALWAYS:
			assert_int_equal(row_verdict(p, r, 0), no);
			assert_int_equal(row_verdict(p, r, ~0ULL), no);
			break;
		case SANDBOX_LOW32_EQ:
			assert_int_equal(row_verdict(p, r, k->value), no);
			/* the kernel reads 32 bits: the upper ones change nothing */
			assert_int_equal(row_verdict(p, r, k->value | (1ULL << 32)), no);
			assert_int_equal(row_verdict(p, r, k->value | 0xffffffff00000000ULL), no);
			assert_int_equal(row_verdict(p, r, k->value ^ 1), ALLOW);
			assert_int_equal(row_verdict(p, r, 0x5401), ALLOW); /* TCGETS */
			assert_int_equal(row_verdict(p, r, 0x5401 | (1ULL << 40)), ALLOW);
			break;
		case SANDBOX_ANY_BIT:
			for (unsigned b = 0; b < 64; b++) {
				uint64_t bit = 1ULL << b;

				assert_int_equal(row_verdict(p, r, bit),
						 (k->value & bit) ? no : ALLOW);
				assert_int_equal(row_verdict(p, r, bit | (0755 & ~k->value)),
						 (k->value & bit) ? no : ALLOW);
			}
			assert_int_equal(row_verdict(p, r, 0), ALLOW);
			assert_int_equal(row_verdict(p, r, ~k->value), ALLOW);
			assert_int_equal(row_verdict(p, r, k->value), no);
			break;
		case SANDBOX_NOT_IN:
			for (uint64_t v = 0; v < 200; v++) {
				bool in = false;

				for (size_t s = 0; s < k->nset; s++)
					in |= k->set[s] == v;
				assert_int_equal(row_verdict(p, r, v), in ? ALLOW : no);
				/* an allowed value with upper bits set is another value */
				assert_int_equal(row_verdict(p, r, v | (1ULL << 32)), no);
			}
			assert_int_equal(row_verdict(p, r, ~0ULL), no);
			break;
		case SANDBOX_PERSONA: {
			const uint64_t ok[] = {0, 0x8, 0x20000, 0x20008, 0xffffffff};
			uint64_t x = 0x9e3779b97f4a7c15ULL;

			for (size_t j = 0; j < sizeof(ok) / sizeof(ok[0]); j++)
				assert_int_equal(row_verdict(p, r, ok[j]), ALLOW);
			for (unsigned b = 0; b < 64; b++) {
				uint64_t bit = 1ULL << b;

				assert_int_equal(row_verdict(p, r, bit),
						 (k->value & bit) ? ALLOW : no);
				/* the query with one bit missing, or one more */
				assert_int_equal(row_verdict(p, r, 0xffffffffULL ^ bit), no);
			}
			assert_int_equal(row_verdict(p, r, 0x0400000), no); /* READ_IMPLIES_EXEC */
			assert_int_equal(row_verdict(p, r, 0x0040000), no); /* ADDR_NO_RANDOMIZE */
			assert_int_equal(row_verdict(p, r, 0x0100000 | 0x8),
					 no); /* MMAP_PAGE_ZERO */
			for (int j = 0; j < 20000; j++) {
				uint64_t v;

				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				v = (j & 1) ? x : (x & 0xffffffff);
				if (j % 3 == 0)
					v &= 0x0fe20008; /* mostly harmless bits */
				if (v == 0 || v == 0x8 || v == 0x20000 || v == 0x20008 ||
				    v == 0xffffffff)
					continue;
				assert_int_equal(row_verdict(p, r, v), no);
			}
			break;
		}
		}
	}
}

static void test_program_rows(void **state)
{
	struct prog p;

	(void)state;
	build(&p, 0);
	check_rows(&p, 0);
	free(p.v);
}

static void test_program_abis(void **state)
{
	struct prog p;
	size_t steps = 0;

	(void)state;
	build(&p, 0);
	/* i386 (int $0x80): every call, even getpid */
	assert_int_equal(verdict_arch(&p, AUDIT_ARCH_I386, 20, 0, 0, 0, NULL), ERR(EPERM));
	assert_int_equal(verdict_arch(&p, AUDIT_ARCH_I386, 3, 0, 0, 0, NULL), ERR(EPERM));
	/* another architecture altogether */
	assert_int_equal(verdict_arch(&p, AUDIT_ARCH_AARCH64, 172, 0, 0, 0, NULL), ERR(EPERM));
	/* x32: x86_64's arch with __X32_SYSCALL_BIT in the number */
	assert_int_equal(verdict(&p, 0x40000000 | 39, 0, 0, 0), ERR(EPERM));
	assert_int_equal(verdict(&p, 0x40000000 | 250, 0, 0, 0), ERR(EPERM));
	assert_int_equal(verdict(&p, 0x40000000 | 0x3fffffff, 0, 0, 0), ERR(EPERM));
	/* ordinary calls pass, in a few steps (a binary tree, not a list of 40 tests) */
	for (int nr = 0; nr < 460; nr++) {
		bool listed = false;

		for (size_t i = 0; i < sandbox_nrules; i++)
			listed |= sandbox_rules[i].nr_x86_64 == nr;
		if (listed)
			continue;
		assert_int_equal(verdict_arch(&p, AUDIT_ARCH_X86_64, nr, 0, 0, 0, &steps), ALLOW);
		assert_true(steps <= 16);
	}
	/* syscall(-1), which ptrace uses to skip a call, reaches the kernel (ENOSYS) */
	assert_int_equal(verdict(&p, -1, 0, 0, 0), ALLOW);
	/* fork through clone: SIGCHLD in the exit-signal byte, no namespace flag */
	assert_int_equal(verdict(&p, 56, 17, 0, 0), ALLOW);
	assert_int_equal(verdict(&p, 56, 0x01200011, 0, 0), ALLOW); /* glibc's fork() */
	assert_int_equal(verdict(&p, 56, 0x003d0f00, 0, 0), ALLOW); /* pthread_create */
	free(p.v);
}

static void test_program_userns(void **state)
{
	struct prog p;

	(void)state;
	build(&p, SANDBOX_ALLOW_USERNS);
	check_rows(&p, SANDBOX_ALLOW_USERNS);
	assert_int_equal(verdict(&p, 272, 0x10000000, 0, 0), ALLOW); /* unshare(NEWUSER) */
	assert_int_equal(verdict(&p, 165, 0, 0, 0), ALLOW);	     /* mount */
	assert_int_equal(verdict(&p, 250, 0, 0, 0), ERR(EPERM));     /* keyctl stays */
	assert_int_equal(verdict(&p, 16, 0, 0x5412, 0), ERR(EPERM)); /* TIOCSTI stays */
	assert_int_equal(verdict(&p, 435, 0, 0, 0), ERR(ENOSYS));    /* clone3 stays */
	assert_int_equal(verdict_arch(&p, AUDIT_ARCH_I386, 20, 0, 0, 0, NULL), ERR(EPERM));
	free(p.v);
}

static void test_unknown_allow_bits(void **state)
{
	struct wd_err err;
	int fd = -1;

	(void)state;
	wd_err_clear(&err);
	assert_int_equal(sandbox_seccomp_fd(1u << 7, &fd, NULL, &err), -EINVAL);
	assert_int_equal(fd, -1);
	assert_non_null(strstr(err.msg, "unknown sandbox.allow"));
}

/* The memfd: sealed, at offset 0, whole instructions, the same program. */
static void test_memfd(void **state)
{
	struct sock_filter buf[BPF_MAXINSNS];
	struct wd_err err;
	struct prog p;
	struct stat st;
	size_t n = 0;
	ssize_t got;
	int fd = -1;

	(void)state;
	wd_err_clear(&err);
	assert_int_equal(sandbox_seccomp_fd(0, &fd, &n, &err), 0);
	assert_true(fd > 2);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal((size_t)st.st_size, n * sizeof(struct sock_filter));
	assert_true(fcntl(fd, F_GET_SEALS) & F_SEAL_WRITE);
	assert_int_equal(write(fd, "x", 1), -1);
	got = read(fd, buf, sizeof(buf));
	assert_int_equal(got, (ssize_t)(n * sizeof(struct sock_filter)));
	build(&p, 0);
	assert_int_equal(p.n, n);
	assert_memory_equal(p.v, buf, n * sizeof(struct sock_filter));
	free(p.v);
	close(fd);
}

/* The interpreter refuses what the kernel's checker would. */
static void test_bpf_run_malformed(void **state)
{
	struct seccomp_data d = {.nr = 1, .arch = AUDIT_ARCH_X86_64};
	const struct sock_filter past_end[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 64)};
	const struct sock_filter no_ret[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0)};
	const struct sock_filter far_jump[] = {BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 5, 0),
					       BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
	const struct sock_filter odd_load[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2),
					       BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
	const struct sock_filter ok[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
					 BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1),
					 BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1),
					 BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
	uint32_t a = 0;
	size_t steps = 0;

	(void)state;
	assert_int_equal(sandbox_bpf_run(past_end, 1, &d, &a, NULL), -EINVAL);
	assert_int_equal(sandbox_bpf_run(no_ret, 1, &d, &a, NULL), -EINVAL);
	assert_int_equal(sandbox_bpf_run(far_jump, 2, &d, &a, NULL), -EINVAL);
	assert_int_equal(sandbox_bpf_run(odd_load, 2, &d, &a, NULL), -EINVAL);
	assert_int_equal(sandbox_bpf_run(ok, 0, &d, &a, NULL), -EINVAL);
	assert_int_equal(sandbox_bpf_run(ok, 4, &d, &a, &steps), 0);
	assert_int_equal(a, SECCOMP_RET_ERRNO | 1);
	assert_int_equal(steps, 3);
	d.nr = 2;
	assert_int_equal(sandbox_bpf_run(ok, 4, &d, &a, &steps), 0);
	assert_int_equal(a, SECCOMP_RET_ALLOW);
}

/* ------------------------------------------------------------ the text */

static void test_describe(void **state)
{
	struct wd_buf b = WD_BUF_INIT;
	const char *t;

	(void)state;
	assert_int_equal(sandbox_describe(0, &b), 0);
	t = wd_buf_cstr(&b);
	for (size_t i = 0; i < sandbox_nrules; i++) {
		char name[64];

		snprintf(name, sizeof(name), "\n%s ", sandbox_rules[i].syscall);
		assert_non_null(strstr(t, name));
		assert_non_null(strstr(t, sandbox_rules[i].why));
	}
	assert_non_null(strstr(t, "request & 0xffffffff == 0x5412 (TIOCSTI)"));
	assert_non_null(strstr(t, "domain not in {1, 2, 10, 16}"));
	assert_non_null(strstr(t, "persona not in {0x0, 0x8, 0x20000, 0x20008, 0xffffffff}"));
	assert_non_null(strstr(t, "EAFNOSUPPORT"));
	assert_non_null(strstr(t, "ENOSYS"));
	assert_non_null(strstr(t, "i386"));
	assert_non_null(strstr(t, "x32"));
	assert_non_null(strstr(t, "--disable-userns --assert-userns-disabled"));
	assert_null(strstr(t, "# loosened by"));
	wd_buf_reset(&b);
	assert_int_equal(sandbox_describe(SANDBOX_ALLOW_USERNS, &b), 0);
	t = wd_buf_cstr(&b);
	assert_non_null(strstr(t, "(sandbox.allow: userns)"));
	assert_non_null(strstr(t, "# loosened by sandbox.allow: userns (not in this filter):\n"));
	assert_non_null(strstr(t, "#   unshare "));
	assert_non_null(strstr(t, "#   mount "));
	assert_null(strstr(t, "#   keyctl"));
	assert_non_null(strstr(t, "no --disable-userns"));
	wd_buf_free(&b);
}

/* ------------------------------------------------------------ the kernel */

/*
 * Each probe runs in a child of its own, twice: once without any filter (the control: what
 * this kernel answers by itself) and once under the program. One kernel difference (an i386
 * entry that is absent, keyrings compiled out, TIOCSTI refused by sysctl) then cannot hide the
 * probes after it, and a refusal is credited to the filter only where the kernel alone would
 * have answered something else; where the kernel refuses the same way, the test says so and
 * still asserts that the call cannot succeed under the filter (the filter's own answer is
 * proved on every kernel by the BPF runs above, test_program_abis among them).
 */

/* What one probe did in its child: the call's return and errno, or the signal that ended it. */
struct outcome {
	bool ran; /* the child reported (else: it died or could not load the filter) */
	int sig;  /* the signal that ended the child, or 0 */
	long ret;
	int err;
};

static long probe_keyctl(void)
{
	return syscall(SYS_keyctl, 0L, -3L, 0L); /* KEYCTL_GET_KEYRING_ID, @s */
}

static long probe_unshare_user(void)
{
	return syscall(SYS_unshare, (long)CLONE_NEWUSER);
}

static long probe_clone3(void)
{
	return syscall(SYS_clone3, NULL, 0L);
}

static long probe_personality_rie(void)
{
	return syscall(SYS_personality, 0x0400000L); /* READ_IMPLIES_EXEC */
}

static long probe_personality_query(void)
{
	return syscall(SYS_personality, 0xffffffffL);
}

static long probe_vsock(void)
{
	long r = syscall(SYS_socket, 40L, 1L, 0L); /* AF_VSOCK */

	if (r < 0)
		return r;
	close((int)r);
	return 0;
}

static long probe_unix(void)
{
	long r = syscall(SYS_socket, 1L, 1L, 0L);

	if (r < 0)
		return r;
	close((int)r);
	return 0;
}

static long probe_tiocsti_high(void)
{
	return syscall(SYS_ioctl, 0L, 0x100005412L, "x");
}

static long probe_getppid(void)
{
	return syscall(SYS_getppid);
}

#if defined(__x86_64__)
/* getpid through the i386 entry (int $0x80): on a kernel without that entry (ia32_emulation=0,
 * some FRED machines) the instruction faults and the child dies of SIGSEGV, filter or not. */
static long probe_i386_getpid(void)
{
	long ret;

	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
	if (ret < 0 && ret > -4096) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}
#endif

/* Runs @fn in a child, under @fp when it is not NULL. */
static struct outcome run_probe(long (*fn)(void), const struct sock_fprog *fp)
{
	struct outcome o = {0};
	struct {
		long ret;
		int err;
	} msg = {0};
	int fds[2], st;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		/* cmocka catches these in the test process: a probe's fault must end its child */
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		signal(SIGILL, SIG_DFL);
		if (fp && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
			   prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, fp)))
			_exit(10);
		errno = 0;
		msg.ret = fn();
		msg.err = errno;
		_exit(write(fds[1], &msg, sizeof(msg)) == (ssize_t)sizeof(msg) ? 0 : 11);
	}
	close(fds[1]);
	o.ran = read(fds[0], &msg, sizeof(msg)) == (ssize_t)sizeof(msg);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st))
		o.sig = WTERMSIG(st);
	o.ran = o.ran && WIFEXITED(st) && WEXITSTATUS(st) == 0;
	o.ret = msg.ret;
	o.err = msg.err;
	return o;
}

/* "ok", "EPERM", "killed by signal 11", ... for a test's own output. */
static const char *outcome_str(const struct outcome *o, char *buf, size_t len)
{
	if (o->sig)
		snprintf(buf, len, "killed by signal %d", o->sig);
	else if (!o->ran)
		snprintf(buf, len, "the child failed");
	else if (o->ret >= 0)
		snprintf(buf, len, "ok (%ld)", o->ret);
	else
		snprintf(buf, len, "%s", strerrorname_np(o->err) ? strerrorname_np(o->err) : "?");
	return buf;
}

static bool refused_with(const struct outcome *o, int err)
{
	return o->ran && !o->sig && o->ret == -1 && o->err == err;
}

/* A call the filter refuses with @err: checked against the kernel's own answer first.
 * @absent_sig: a signal that, without the filter, means "this kernel has no such entry"
 * (SIGSEGV for int $0x80), or 0. Returns false (and says why) when the check fails. */
static bool check_refused(const struct sock_fprog *fp, const char *name, long (*fn)(void), int err,
			  int absent_sig)
{
	struct outcome out = run_probe(fn, NULL), in = run_probe(fn, fp);
	char a[64], b[64];

	outcome_str(&out, a, sizeof(a));
	outcome_str(&in, b, sizeof(b));
	if (absent_sig && out.sig == absent_sig) {
		/* no entry at all: under the filter it must not succeed either */
		printf("# %s: this kernel has no such entry (without a filter: %s): the refusal is "
		       "the kernel's; under the filter: %s\n",
		       name, a, b);
		if (in.sig == absent_sig || refused_with(&in, err))
			return true;
		printf("# FAIL %s: under the filter: %s\n", name, b);
		return false;
	}
	if (!out.ran) {
		printf("# FAIL %s: the control without a filter could not run (%s)\n", name, a);
		return false;
	}
	if (refused_with(&out, err))
		printf("# %s: this kernel refuses it by itself (%s): the filter's own %s is proved "
		       "by the BPF runs; under the filter: %s\n",
		       name, a, strerrorname_np(err), b);
	else
		printf("# %s: without a filter %s, under the filter %s\n", name, a, b);
	if (refused_with(&in, err))
		return true;
	printf("# FAIL %s: wanted %s under the filter, got %s\n", name, strerrorname_np(err), b);
	return false;
}

/* A call the filter lets through: it works under the filter as it does without. */
static bool check_allowed(const struct sock_fprog *fp, const char *name, long (*fn)(void))
{
	struct outcome out = run_probe(fn, NULL), in = run_probe(fn, fp);
	char a[64], b[64];

	if (in.ran && !in.sig && in.ret >= 0)
		return true;
	printf("# FAIL control %s: without a filter %s, under the filter %s\n", name,
	       outcome_str(&out, a, sizeof(a)), outcome_str(&in, b, sizeof(b)));
	return false;
}

/* Stand-ins for kernels this machine is not: they tell an outside run (no filter) from one
 * under the filter by PR_GET_SECCOMP, so the checker's verdicts can be seen on any kernel. */
static long fake_absent_entry(void)
{
	raise(SIGSEGV); /* what int $0x80 does where the kernel has no i386 entry */
	return 0;
}

static long fake_absent_but_leaks(void)
{
	if (prctl(PR_GET_SECCOMP) != 2)
		raise(SIGSEGV);
	return 1; /* a filter that let the call through, where the entry exists */
}

static long fake_kernel_refuses(void)
{
	errno = EPERM;
	return -1;
}

static long fake_filter_misses(void)
{
	return 0;
}

/* The checker itself: an absent entry and a kernel that refuses by itself are said and pass;
 * a call that succeeds under the filter fails, whatever the kernel answered outside. */
static void test_kernel_checker(void **state)
{
	struct prog p;
	struct sock_fprog fp;

	(void)state;
	build(&p, 0);
	fp = (struct sock_fprog){.len = (unsigned short)p.n, .filter = p.v};
	assert_true(check_refused(&fp, "fake: no entry", fake_absent_entry, EPERM, SIGSEGV));
	assert_false(
	    check_refused(&fp, "fake: no entry, leaks", fake_absent_but_leaks, EPERM, SIGSEGV));
	assert_true(check_refused(&fp, "fake: the kernel refuses", fake_kernel_refuses, EPERM, 0));
	assert_false(check_refused(&fp, "fake: the filter misses", fake_filter_misses, EPERM, 0));
	/* a signal that is not the "absent" one is a failure, never a pass */
	assert_false(check_refused(&fp, "fake: dies", fake_absent_entry, EPERM, 0));
	assert_false(check_allowed(&fp, "fake: refused control", fake_kernel_refuses));
	free(p.v);
}

/* In children: the kernel enforces the program; each refusal beside the kernel's own answer. */
static void test_kernel_enforces(void **state)
{
	struct prog p;
	struct sock_fprog fp;
	bool ok = true;

	(void)state;
	build(&p, 0);
	fp = (struct sock_fprog){.len = (unsigned short)p.n, .filter = p.v};
	ok &= check_refused(&fp, "keyctl(KEYCTL_GET_KEYRING_ID)", probe_keyctl, EPERM, 0);
	ok &= check_refused(&fp, "unshare(CLONE_NEWUSER)", probe_unshare_user, EPERM, 0);
	ok &= check_refused(&fp, "clone3", probe_clone3, ENOSYS, 0);
	ok &= check_refused(&fp, "personality(READ_IMPLIES_EXEC)", probe_personality_rie, EPERM, 0);
	ok &= check_refused(&fp, "socket(AF_VSOCK)", probe_vsock, EAFNOSUPPORT, 0);
	ok &= check_refused(&fp, "ioctl(TIOCSTI, high bits)", probe_tiocsti_high, EPERM, 0);
#if defined(__x86_64__)
	ok &= check_refused(&fp, "i386 getpid (int $0x80)", probe_i386_getpid, EPERM, SIGSEGV);
#endif
	ok &= check_allowed(&fp, "personality(query)", probe_personality_query);
	ok &= check_allowed(&fp, "socket(AF_UNIX)", probe_unix);
	ok &= check_allowed(&fp, "getppid", probe_getppid);
	free(p.v);
	assert_true(ok);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table_lists_refusals), cmocka_unit_test(test_table_numbers),
	    cmocka_unit_test(test_allow_names),		 cmocka_unit_test(test_program_rows),
	    cmocka_unit_test(test_program_abis),	 cmocka_unit_test(test_program_userns),
	    cmocka_unit_test(test_unknown_allow_bits),	 cmocka_unit_test(test_memfd),
	    cmocka_unit_test(test_bpf_run_malformed),	 cmocka_unit_test(test_describe),
	    cmocka_unit_test(test_kernel_enforces),	 cmocka_unit_test(test_kernel_checker),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
