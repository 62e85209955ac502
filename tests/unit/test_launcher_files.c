/* test_launcher_files.c - the file-access recorder (launcher/run_files.c, sandbox/notify.c,
 * docs/files.md): the notify filter watches exactly its table's calls (fstat-like forms and
 * other ABIs pass), stacked under the refusing filter it loosens nothing, a recorder that goes
 * away makes the watched calls fail with ENOSYS instead of hanging (in a child, on the real
 * kernel), a notification names the caller and its call; the table of entries dedupes and
 * counts, keeps only what the mode records and is bounded; paths are joined and folded;
 * audit.files parses with its errors; the `file` event's new fields round-trip. */
#include "audit/audit.h"
#include "recorder/recorder.h"
#include "policy/policy.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

/* ------------------------------------------------------------ the filter */

static uint32_t verdict(const struct sock_filter *p, size_t n, uint32_t arch, int nr, uint64_t a1,
			uint64_t a2, uint64_t a3)
{
	struct seccomp_data d = {.nr = nr, .arch = arch, .args = {0, a1, a2, a3}};
	uint32_t action = 0xdead;

	assert_int_equal(sandbox_bpf_run(p, n, &d, &action, NULL), 0);
	return action;
}

static void test_filter_watches_its_table(void **state)
{
	struct sock_filter *p = NULL;
	struct wd_err err;
	size_t n = 0;

	(void)state;
	wd_err_clear(&err);
	assert_int_equal(sandbox_notify_bpf(&p, &n, &err), 0);
	assert_true(n > 4);
	for (size_t i = 0; i < sandbox_nwatched; i++) {
		const struct sandbox_watch *w = &sandbox_watched[i];

		assert_int_equal(verdict(p, n, AUDIT_ARCH_X86_64, w->nr_x86_64, 0, 0, 0),
				 SECCOMP_RET_USER_NOTIF);
		assert_ptr_equal(sandbox_watch_find(w->nr_x86_64), w);
	}
	/* fstat() through newfstatat/statx with AT_EMPTY_PATH names no path: not watched */
	assert_int_equal(verdict(p, n, AUDIT_ARCH_X86_64, 262, 0, 0, AT_EMPTY_PATH),
			 SECCOMP_RET_ALLOW);
	assert_int_equal(verdict(p, n, AUDIT_ARCH_X86_64, 332, 0, AT_EMPTY_PATH, 0),
			 SECCOMP_RET_ALLOW);
	assert_int_equal(verdict(p, n, AUDIT_ARCH_X86_64, 262, 0, 0, AT_SYMLINK_NOFOLLOW),
			 SECCOMP_RET_USER_NOTIF);
	/* what is not in the table passes: read, write, close, getpid */
	assert_int_equal(verdict(p, n, AUDIT_ARCH_X86_64, 0, 0, 0, 0), SECCOMP_RET_ALLOW);
	assert_int_equal(verdict(p, n, AUDIT_ARCH_X86_64, 1, 0, 0, 0), SECCOMP_RET_ALLOW);
	assert_int_equal(verdict(p, n, AUDIT_ARCH_X86_64, 3, 0, 0, 0), SECCOMP_RET_ALLOW);
	assert_null(sandbox_watch_find(39));
	/* another ABI: allowed here, so that the refusing filter's EPERM is what it gets (KILL
	 * would outrank it) */
	assert_int_equal(verdict(p, n, AUDIT_ARCH_I386, 5, 0, 0, 0), SECCOMP_RET_ALLOW);
	free(p);
}

static void test_follows(void **state)
{
	uint64_t a[6] = {0};

	(void)state;
	assert_true(sandbox_watch_follows(sandbox_watch_find(257), a)); /* openat */
	a[2] = O_NOFOLLOW;
	assert_false(sandbox_watch_follows(sandbox_watch_find(257), a));
	assert_false(sandbox_watch_follows(sandbox_watch_find(6), a));	/* lstat */
	assert_false(sandbox_watch_follows(sandbox_watch_find(89), a)); /* readlink */
	memset(a, 0, sizeof(a));
	assert_true(sandbox_watch_follows(sandbox_watch_find(4), a)); /* stat */
	assert_true(sandbox_watch_follows(sandbox_watch_find(262), a));
	a[3] = AT_SYMLINK_NOFOLLOW; /* newfstatat's flags */
	assert_false(sandbox_watch_follows(sandbox_watch_find(262), a));
	memset(a, 0, sizeof(a));
	a[4] = AT_SYMLINK_NOFOLLOW; /* execveat's */
	assert_false(sandbox_watch_follows(sandbox_watch_find(322), a));
	assert_true(sandbox_watch_follows(sandbox_watch_find(59), a));
}

static void test_open_ops(void **state)
{
	(void)state;
	assert_int_equal(sandbox_open_op(O_RDONLY), SANDBOX_OP_READ);
	assert_int_equal(sandbox_open_op(O_RDONLY | O_CLOEXEC | O_DIRECTORY), SANDBOX_OP_READ);
	assert_int_equal(sandbox_open_op(O_WRONLY), SANDBOX_OP_WRITE);
	assert_int_equal(sandbox_open_op(O_RDWR), SANDBOX_OP_WRITE);
	assert_int_equal(sandbox_open_op(O_RDONLY | O_TRUNC), SANDBOX_OP_WRITE);
	assert_int_equal(sandbox_open_op(O_WRONLY | O_CREAT), SANDBOX_OP_CREATE);
	assert_string_equal(sandbox_op_name(SANDBOX_OP_READ), "read");
	assert_string_equal(sandbox_op_name(SANDBOX_OP_EXEC), "exec");
	assert_string_equal(sandbox_op_name((enum sandbox_op)99), "?");
}

/* In a child: the refusing filter and the notify filter with a listener, stacked as a run has
 * them; the listener goes to the parent over @sock. Then @probe runs; its result is the exit
 * status. */
static _Noreturn void child_stacked(int sock, int (*probe)(void))
{
	struct sock_filter *deny = NULL, *watch = NULL;
	size_t ndeny = 0, nwatch = 0;
	struct sock_fprog fp;
	struct wd_err err;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {"l", 1};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *cm;
	int lfd;

	wd_err_clear(&err);
	if (sandbox_seccomp_bpf(0, &deny, &ndeny, &err) ||
	    sandbox_notify_bpf(&watch, &nwatch, &err))
		_exit(100);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		_exit(101);
	fp = (struct sock_fprog){(unsigned short)nwatch, watch};
	lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			   &fp);
	if (lfd < 0)
		_exit(102);
	memset(&u, 0, sizeof(u));
	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof(u.buf);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &lfd, sizeof(int));
	if (sendmsg(sock, &mh, 0) != 1)
		_exit(103);
	close(lfd);
	close(sock);
	fp = (struct sock_fprog){(unsigned short)ndeny, deny};
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp) < 0)
		_exit(104);
	_exit(probe());
}

static int recv_listener(int sock)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char b;
	struct iovec iov = {&b, 1};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *cm;
	int fd = -1;

	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof(u.buf);
	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&mh);
	if (cm && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* the watched openat fails with ENOSYS once nobody supervises: 0 */
static int probe_enosys(void)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/", O_RDONLY | O_DIRECTORY);

	return fd < 0 && errno == ENOSYS ? 0 : 1;
}

/* keyctl, refused by the other filter, stays refused with EPERM (not sent to the recorder,
 * not allowed); then one watched openat that the parent answers with CONTINUE: 0 */
static int probe_stacked(void)
{
	long k = syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0);
	int fd;

	if (k >= 0 || errno != EPERM)
		return 1;
	fd = (int)syscall(SYS_openat, AT_FDCWD, "/", O_RDONLY | O_DIRECTORY);
	return fd >= 0 ? 0 : 2;
}

static pid_t fork_stacked(int (*probe)(void), int *ret_listener)
{
	int sv[2];
	pid_t pid;

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(sv[0]);
		child_stacked(sv[1], probe);
	}
	close(sv[1]);
	*ret_listener = recv_listener(sv[0]);
	close(sv[0]);
	return pid;
}

static void test_recorder_gone_fails_closed(void **state)
{
	int lfd = -1, st = 0;
	pid_t pid;

	(void)state;
	pid = fork_stacked(probe_enosys, &lfd);
	assert_true(lfd >= 0);
	/* the recorder goes away before the program's first watched call */
	close(lfd);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static void test_stacked_loosens_nothing(void **state)
{
	struct seccomp_notif_sizes sz = {0};
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	int lfd = -1, st = 0;
	pid_t pid;

	(void)state;
	assert_int_equal(syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz), 0);
	req = calloc(1, sz.seccomp_notif + 64);
	resp = calloc(1, sz.seccomp_notif_resp + 64);
	assert_non_null(req);
	assert_non_null(resp);
	pid = fork_stacked(probe_stacked, &lfd);
	assert_true(lfd >= 0);
	/* the first notification is the openat (keyctl never comes here), from the child */
	assert_int_equal(ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, req), 0);
	assert_int_equal((pid_t)req->pid, pid);
	assert_int_equal(req->data.nr, SYS_openat);
	resp->id = req->id;
	resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	assert_int_equal(ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, resp), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	close(lfd);
	free(req);
	free(resp);
}

/* ------------------------------------------------------------ the entries */

static void test_record_dedupes_and_counts(void **state)
{
	struct recorder *rf = NULL;
	const struct recorder_entry *e;

	(void)state;
	assert_int_equal(recorder_new(POLICY_FILES_OFF, NULL, 0, &rf), -EINVAL);
	assert_int_equal(recorder_new(POLICY_FILES_DENIED, NULL, 0, &rf), 0);
	assert_int_equal(
	    recorder_record(rf, SANDBOX_OP_READ, "/h/.ssh/id", RECORDER_DENIED, 7, "cat"), 1);
	for (int i = 0; i < 499; i++)
		assert_int_equal(
		    recorder_record(rf, SANDBOX_OP_READ, "/h/.ssh/id", RECORDER_DENIED, 8, "cat"),
		    0);
	/* another operation on the same path is another entry */
	assert_int_equal(
	    recorder_record(rf, SANDBOX_OP_STAT, "/h/.ssh/id", RECORDER_DENIED, 7, "ls"), 1);
	/* denied mode keeps no granted access, and nothing missing or ignored */
	assert_int_equal(recorder_record(rf, SANDBOX_OP_READ, "/g", RECORDER_GRANTED, 7, "cat"), 0);
	assert_int_equal(recorder_record(rf, SANDBOX_OP_READ, "/m", RECORDER_MISSING, 7, "cat"), 0);
	assert_int_equal(recorder_record(rf, SANDBOX_OP_READ, "/i", RECORDER_IGNORED, 7, "cat"), 0);
	assert_int_equal(recorder_count(rf), 2);
	e = recorder_get(rf, 0);
	assert_string_equal(e->path, "/h/.ssh/id");
	assert_int_equal(e->count, 500);
	assert_int_equal(e->pid, 7);
	assert_string_equal(e->comm, "cat");
	assert_int_equal(recorder_get(rf, 1)->op, SANDBOX_OP_STAT);
	assert_null(recorder_get(rf, 2));
	recorder_free(rf);

	assert_int_equal(recorder_new(POLICY_FILES_ALL, NULL, 0, &rf), 0);
	assert_int_equal(recorder_record(rf, SANDBOX_OP_READ, "/g", RECORDER_GRANTED, 7, NULL), 1);
	assert_int_equal(recorder_get(rf, 0)->verdict, RECORDER_GRANTED);
	assert_string_equal(recorder_get(rf, 0)->comm, "");
	recorder_free(rf);
	recorder_free(NULL);
	assert_int_equal(recorder_count(NULL), 0);
}

static void test_record_is_bounded(void **state)
{
	struct recorder *rf = NULL;
	char p[64];
	uint64_t seen = 1;

	(void)state;
	assert_int_equal(recorder_new(POLICY_FILES_DENIED, NULL, 0, &rf), 0);
	for (int i = 0; i < RECORDER_MAX_DENIED + 100; i++) {
		snprintf(p, sizeof(p), "/x/%d", i);
		assert_true(recorder_record(rf, SANDBOX_OP_READ, p, RECORDER_DENIED, 1, "a") >= 0);
	}
	assert_int_equal(recorder_count(rf), RECORDER_MAX_DENIED);
	assert_int_equal(recorder_dropped(rf, &seen), 100);
	assert_int_equal(seen, 0); /* no notification was received: these came from the test */
	/* a kept path is still counted when the table is full */
	assert_int_equal(recorder_record(rf, SANDBOX_OP_READ, "/x/0", RECORDER_DENIED, 1, "a"), 0);
	assert_int_equal(recorder_get(rf, 0)->count, 2);
	recorder_free(rf);

	/* and in bytes: 65,536 paths of 4 KiB would be 256 MiB */
	{
		static char big[4000];
		size_t kept;

		memset(big, 'a', sizeof(big) - 1);
		big[0] = '/';
		assert_int_equal(recorder_new(POLICY_FILES_ALL, NULL, 0, &rf), 0);
		for (int i = 0; i < 4000; i++) {
			snprintf(big + 1, 12, "%010d", i);
			big[11] = 'a';
			assert_true(recorder_record(rf, SANDBOX_OP_READ, big, RECORDER_GRANTED, 1,
						    "a") >= 0);
		}
		kept = recorder_count(rf);
		assert_true(kept < 4000);
		assert_true(kept * sizeof(big) <= RECORDER_MAX_BYTES);
		assert_int_equal(recorder_dropped(rf, NULL), 4000 - kept);
		recorder_free(rf);
	}
}

static void join_is(const char *base, const char *rel, const char *want)
{
	char out[256];

	assert_int_equal(recorder_join(base, rel, out, sizeof(out)), 0);
	assert_string_equal(out, want);
}

static void test_join(void **state)
{
	char out[8];

	(void)state;
	join_is("/w", "/etc/passwd", "/etc/passwd");
	join_is("/home/u/proj", "src/a.c", "/home/u/proj/src/a.c");
	join_is("/home/u/proj", "./../.ssh//id_ed25519", "/home/u/.ssh/id_ed25519");
	join_is("/", "..", "/");
	join_is("/a", "../../..//b/./", "/b");
	join_is("/a/b", ".", "/a/b");
	assert_int_equal(recorder_join("/a", "", out, sizeof(out)), -EINVAL);
	assert_int_equal(recorder_join("rel", "x", out, sizeof(out)), -EINVAL);
	assert_int_equal(recorder_join("/", "/a-long-name", out, sizeof(out)), -ENAMETOOLONG);
	assert_true(recorder_sandbox_own("/proc/self/maps"));
	assert_true(recorder_sandbox_own("/dev"));
	assert_true(recorder_sandbox_own("/dev/null"));
	assert_false(recorder_sandbox_own("/devices"));
	assert_false(recorder_sandbox_own("/sys/devices"));
	assert_false(recorder_sandbox_own("/home/u/proc"));
	assert_true(recorder_in_base("/usr/lib/python3.11/sitecustomize.py"));
	assert_true(recorder_in_base("/etc/ssl/certs"));
	assert_true(recorder_in_base("/lib"));
	assert_false(recorder_in_base("/library"));
	assert_false(recorder_in_base("/etc/gitconfig"));
	assert_false(recorder_in_base("/home/u/.ssh/id_ed25519"));
}

/* ------------------------------------------------------------ the policy key, the event */

static int parse(const char *yaml, struct wd_policy **p, struct policy_diags *d)
{
	policy_diags_init(d);
	return policy_parse(yaml, strlen(yaml), "t.yaml", p, d);
}

static void test_policy_audit_files(void **state)
{
	static const struct {
		const char *word;
		enum policy_audit_files v;
	} ok[] = {
	    {"off", POLICY_FILES_OFF}, {"denied", POLICY_FILES_DENIED}, {"all", POLICY_FILES_ALL}};
	struct policy_diags d;
	struct wd_policy *p = NULL;
	char yaml[128];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		snprintf(yaml, sizeof(yaml), "version: 1\naudit:\n  files: %s\n", ok[i].word);
		assert_int_equal(parse(yaml, &p, &d), 0);
		assert_int_equal(policy_audit_files(p), ok[i].v);
		assert_string_equal(policy_audit_files_name(ok[i].v), ok[i].word);
		policy_free(p);
		policy_diags_free(&d);
	}
	/* absent: the default */
	assert_int_equal(parse("version: 1\n", &p, &d), 0);
	assert_int_equal(p->audit_files, POLICY_FILES_UNSET);
	assert_int_equal(policy_audit_files(p), POLICY_FILES_OFF);
	assert_int_equal(policy_audit_files(NULL), POLICY_FILES_OFF);
	policy_free(p);
	policy_diags_free(&d);
	/* a wrong word, a wrong key: errors with line and column */
	p = NULL;
	assert_int_equal(parse("version: 1\naudit:\n  files: sometimes\n", &p, &d), -EINVAL);
	assert_null(p);
	assert_int_equal(d.errors, 1);
	assert_int_equal(d.v[0].line, 3);
	assert_int_equal(d.v[0].col, 10);
	assert_non_null(strstr(d.v[0].msg, "off, denied, all"));
	policy_diags_free(&d);
	assert_int_equal(parse("version: 1\naudit:\n  file: all\n", &p, &d), -EINVAL);
	assert_int_equal(d.v[0].line, 3);
	policy_diags_free(&d);
	assert_null(policy_audit_files_name((enum policy_audit_files)9));
}

static void test_event_fields_round_trip(void **state)
{
	struct audit_event ev = {0}, back;
	struct wd_buf b = WD_BUF_INIT;

	(void)state;
	ev.ts.tv_sec = 1800000000;
	ev.run = "r1";
	ev.type = AUDIT_TYPE_FILE;
	ev.action = "file.open";
	ev.resource = "/h/evil\n{\"run\":\"x\"}\xff";
	ev.op = "read";
	ev.has = AUDIT_HAS_PROC_PID | AUDIT_HAS_COUNT;
	ev.proc_pid = 4242;
	ev.count = 3;
	ev.comm = "cat";
	assert_int_equal(audit_event_encode(&ev, &b, NULL), 0);
	/* one line: the newline in the path is escaped */
	assert_non_null(memchr(b.data, '\n', b.len));
	assert_ptr_equal(memchr(b.data, '\n', b.len), b.data + b.len - 1);
	assert_non_null(
	    strstr(wd_buf_cstr(&b), "\"op\":\"read\",\"proc_pid\":4242,\"comm\":\"cat\""));
	assert_int_equal(audit_event_decode(b.data, b.len, &back, NULL), 0);
	assert_int_equal(back.type, AUDIT_TYPE_FILE);
	assert_string_equal(back.resource, ev.resource);
	assert_string_equal(back.op, "read");
	assert_string_equal(back.comm, "cat");
	assert_true(back.has & AUDIT_HAS_PROC_PID);
	assert_int_equal(back.proc_pid, 4242);
	assert_int_equal(back.count, 3);
	audit_event_clear(&back);
	wd_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_filter_watches_its_table),
	    cmocka_unit_test(test_open_ops),
	    cmocka_unit_test(test_follows),
	    cmocka_unit_test(test_recorder_gone_fails_closed),
	    cmocka_unit_test(test_stacked_loosens_nothing),
	    cmocka_unit_test(test_record_dedupes_and_counts),
	    cmocka_unit_test(test_record_is_bounded),
	    cmocka_unit_test(test_join),
	    cmocka_unit_test(test_policy_audit_files),
	    cmocka_unit_test(test_event_fields_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
