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

/* In a child: load the program, then the refused calls fail and the others work. */
static void test_kernel_enforces(void **state)
{
	struct prog p;
	pid_t pid;
	int st;

	(void)state;
	build(&p, 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sock_fprog fp = {.len = (unsigned short)p.n, .filter = p.v};
		long r;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp))
			_exit(10);
		r = syscall(SYS_keyctl, 0L, -3L, 0L);
		if (r != -1 || errno != EPERM)
			_exit(11);
		if (syscall(SYS_unshare, (long)CLONE_NEWUSER) != -1 || errno != EPERM)
			_exit(12);
		if (syscall(SYS_clone3, NULL, 0L) != -1 || errno != ENOSYS)
			_exit(13);
		if (syscall(SYS_personality, 0x0400000L) != -1 || errno != EPERM)
			_exit(14);
		if (syscall(SYS_personality, 0xffffffffL) < 0)
			_exit(15);
		if (syscall(SYS_socket, 40L, 1L, 0L) != -1 || errno != EAFNOSUPPORT)
			_exit(16);
		r = syscall(SYS_socket, 1L, 1L, 0L);
		if (r < 0)
			_exit(17);
		close((int)r);
		if (syscall(SYS_ioctl, 0L, 0x100005412L, "x") != -1 || errno != EPERM)
			_exit(18);
#if defined(__x86_64__)
		{
			long ret;

			/* getpid through the i386 ABI */
			__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
			if (ret != -EPERM)
				_exit(19);
		}
#endif
		_exit(syscall(SYS_getppid) > 0 ? 0 : 20);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	free(p.v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table_lists_refusals), cmocka_unit_test(test_table_numbers),
	    cmocka_unit_test(test_allow_names),		 cmocka_unit_test(test_program_rows),
	    cmocka_unit_test(test_program_abis),	 cmocka_unit_test(test_program_userns),
	    cmocka_unit_test(test_unknown_allow_bits),	 cmocka_unit_test(test_memfd),
	    cmocka_unit_test(test_bpf_run_malformed),	 cmocka_unit_test(test_describe),
	    cmocka_unit_test(test_kernel_enforces),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
