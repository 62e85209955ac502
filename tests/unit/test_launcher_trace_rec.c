/* test_launcher_trace_rec.c - the recorder's trace mode (launcher/run_files.c with
 * POLICY_FILES_TRACE, sandbox/notify.c's trace filter, docs/files.md "Trace mode"): the trace
 * filter watches exactly its tables and the normal filter is unchanged; a real child under the
 * trace filter, supervised by the recorder, has its opens carried out by the recorder (read,
 * write, create, missing, a folder listed), each recorded with its enum trace_op; a created file
 * is the user's and honours the caller's umask; O_CLOEXEC is honoured; /proc paths are the
 * kernel's (CONTINUE) and unrecorded; exec is recorded from /proc/PID/exe. The spoof tests: a
 * thread flipping a path between two existing files while another opens it thousands of times,
 * and an exec of a flipped path: the trace never holds the forged path more often than the
 * child really reached it (opens: exactly as often).
 *
 * WD_TEST_SPOOF_MODE=all runs the spoof tests on the recorder's old design (mode all: read the
 * path, answer CONTINUE): there they fail, which is why trace mode carries the calls out. */
#include "recorder/recorder.h"
#include "trace/file.h"
#include "policy/policy.h"
#include "sandbox/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

/* ------------------------------------------------------------ the filters */

static uint32_t verdict(const struct sock_filter *p, size_t n, uint32_t arch, int nr, uint64_t a1,
			uint64_t a2, uint64_t a3)
{
	struct seccomp_data d = {.nr = nr, .arch = arch, .args = {0, a1, a2, a3}};
	uint32_t action = 0xdead;

	assert_int_equal(sandbox_bpf_run(p, n, &d, &action, NULL), 0);
	return action;
}

static void test_trace_filter_watches_its_tables(void **state)
{
	struct sock_filter *p = NULL, *normal = NULL;
	size_t n = 0, nn = 0;
	struct wd_err err;

	(void)state;
	wd_err_clear(&err);
	assert_int_equal(sandbox_notify_bpf_trace(&p, &n, &err), 0);
	assert_int_equal(sandbox_notify_bpf(&normal, &nn, &err), 0);
	for (size_t i = 0; i < sandbox_nwatched; i++) {
		int nr = sandbox_watched[i].nr_x86_64;

		assert_int_equal(verdict(p, n, AUDIT_ARCH_X86_64, nr, 0, 0, 0),
				 SECCOMP_RET_USER_NOTIF);
		assert_ptr_equal(sandbox_watch_find_trace(nr), &sandbox_watched[i]);
	}
	assert_int_equal(sandbox_nwatched_trace, 16);
	for (size_t i = 0; i < sandbox_nwatched_trace; i++) {
		int nr = sandbox_watched_trace[i].nr_x86_64;

		assert_int_equal(verdict(p, n, AUDIT_ARCH_X86_64, nr, 0, 0, 0),
				 SECCOMP_RET_USER_NOTIF);
		assert_ptr_equal(sandbox_watch_find_trace(nr), &sandbox_watched_trace[i]);
		/* the normal filter stays as it was: none of these */
		assert_int_equal(verdict(normal, nn, AUDIT_ARCH_X86_64, nr, 0, 0, 0),
				 SECCOMP_RET_ALLOW);
		assert_null(sandbox_watch_find(nr));
	}
	/* fstat() by a descriptor stays unwatched */
	assert_int_equal(verdict(p, n, AUDIT_ARCH_X86_64, 262, 0, 0, AT_EMPTY_PATH),
			 SECCOMP_RET_ALLOW);
	assert_int_equal(verdict(p, n, AUDIT_ARCH_X86_64, 332, 0, AT_EMPTY_PATH, 0),
			 SECCOMP_RET_ALLOW);
	/* read, write, close, getpid, socket, bind: not watched; another ABI passes */
	for (int nr = 0; nr < 460; nr++)
		if (!sandbox_watch_find_trace(nr))
			assert_int_equal(verdict(p, n, AUDIT_ARCH_X86_64, nr, 0, 0, 0),
					 SECCOMP_RET_ALLOW);
	assert_int_equal(verdict(p, n, AUDIT_ARCH_I386, 5, 0, 0, 0), SECCOMP_RET_ALLOW);
	free(p);
	free(normal);
}

static void test_trace_not_from_yaml(void **state)
{
	static const char y[] = "version: 1\naudit:\n  files: trace\n";
	struct policy_diags d;
	struct wd_policy *p = NULL;

	(void)state;
	policy_diags_init(&d);
	assert_int_not_equal(policy_parse(y, sizeof(y) - 1, "t.yaml", &p, &d), 0);
	assert_true(d.errors > 0);
	assert_non_null(strstr(d.v[0].msg, "off, denied, all"));
	assert_string_equal(policy_audit_files_name(POLICY_FILES_TRACE), "trace");
	policy_diags_free(&d);
	policy_free(p);
}

/* ------------------------------------------------------------ a child under the recorder */

static enum policy_audit_files spoof_mode(void)
{
	const char *m = getenv("WD_TEST_SPOOF_MODE");

	return m && !strcmp(m, "all") ? POLICY_FILES_ALL : POLICY_FILES_TRACE;
}

/* The user the traced child becomes (0: it stays who the test is). */
static uid_t g_child_uid;

/* In a child: the trace filter (or the normal one for mode all) with a listener sent to the
 * parent over @sock; then @probe(@arg) is the exit status. */
static _Noreturn void child_traced(int sock, bool trace, int (*probe)(void *), void *arg)
{
	struct sock_filter *watch = NULL;
	size_t nwatch = 0;
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

	/* root mode: the program runs as the user the recorder becomes (and is dumpable, as
	 * after its exec) */
	if (g_child_uid &&
	    (setgroups(0, NULL) < 0 || setresgid(g_child_uid, g_child_uid, g_child_uid) < 0 ||
	     setresuid(g_child_uid, g_child_uid, g_child_uid) < 0 ||
	     prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0))
		_exit(104);
	wd_err_clear(&err);
	if (trace ? sandbox_notify_bpf_trace(&watch, &nwatch, &err)
		  : sandbox_notify_bpf(&watch, &nwatch, &err))
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
	_exit(probe(arg));
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

/* Run @probe(@arg) in a child supervised by @rf; its exit status. */
static int run_traced(struct recorder *rf, bool trace, int (*probe)(void *), void *arg)
{
	int sv[2], lfd, st = 0;
	pid_t pid;

	/* as root: root mode, the program and the recorder both nobody (a recorder without
	 * capabilities may not read the memory of a process that has them) */
	g_child_uid = getuid() == 0 ? 65534 : 0;
	if (g_child_uid)
		assert_int_equal(recorder_set_user(rf, 65534, 65534, NULL, 0), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(sv[0]);
		child_traced(sv[1], trace, probe, arg);
	}
	close(sv[1]);
	lfd = recv_listener(sv[0]);
	close(sv[0]);
	assert_true(lfd >= 0);
	/* outer: nobody (the child is the program) */
	assert_int_equal(recorder_start(rf, lfd, 0), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	recorder_stop(rf);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* The entry (@op, @path), or NULL; @op -1: the sum over every op of @path into *@count. */
static const struct recorder_entry *find(const struct recorder *rf, int op, const char *path,
					 uint64_t *count)
{
	const struct recorder_entry *hit = NULL;

	if (count)
		*count = 0;
	for (size_t i = 0; i < recorder_count(rf); i++) {
		const struct recorder_entry *e = recorder_get(rf, i);

		if (strcmp(e->path, path) || (op >= 0 && e->op != op))
			continue;
		if (count)
			*count += e->count;
		hit = e;
	}
	return hit;
}

/* A fresh folder for a test's files (0777: the user of root mode creates in it). */
static void tmpdir(char *dir, size_t size)
{
	snprintf(dir, size, "/tmp/wd-trace-rec-XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0777), 0);
}

static void rmtree(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* ------------------------------------------------------------ opens, exec, /proc */

struct ops_arg {
	char dir[PATH_MAX];
};

/* Each step's own exit code: 0 when all is as the kernel would have done it. */
static int probe_ops(void *p)
{
	const struct ops_arg *a = p;
	char path[PATH_MAX + 32], buf[256];
	struct stat st;
	DIR *d;
	int fd, n = 0;
	ssize_t k;
	pid_t kid;

	/* read: the bytes of the file */
	snprintf(path, sizeof(path), "%s/read.txt", a->dir);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 10;
	k = read(fd, buf, 5);
	/* not O_CLOEXEC: the descriptor stays across exec */
	n = fcntl(fd, F_GETFD);
	close(fd);
	if (k != 5 || memcmp(buf, "hello", 5))
		return 10;
	if (n != 0)
		return 11;
	/* write (an existing file) through a relative path from the current folder */
	if (chdir(a->dir) < 0)
		return 12;
	fd = openat(AT_FDCWD, "write.txt", O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return 13;
	k = write(fd, "x", 1);
	n = fcntl(fd, F_GETFD);
	close(fd);
	if (k != 1)
		return 13;
	if (n != FD_CLOEXEC)
		return 14;
	n = 0;
	/* create, with this umask */
	umask(027);
	fd = open("new.txt", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0)
		return 15;
	close(fd);
	/* missing */
	fd = open("nowhere.txt", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 16;
	}
	if (errno != ENOENT)
		return 16;
	/* a folder listed */
	snprintf(path, sizeof(path), "%s/sub", a->dir);
	d = opendir(path);
	if (!d)
		return 17;
	while (readdir(d))
		n++;
	closedir(d);
	if (n != 3) /* ., .., one file */
		return 18;
	/* /proc: the kernel's, so /proc/self is this process */
	fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 19;
	k = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (k <= 0)
		return 20;
	buf[k] = '\0';
	if (atoi(buf) != getpid())
		return 21;
	/* an existing file's O_CREAT without O_EXCL is a write of it, not a create */
	fd = open("write.txt", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return 22;
	k = fstat(fd, &st);
	close(fd);
	if (k < 0 || st.st_size != 1)
		return 22;
	/* exec: a child runs /bin/true (its next watched call shows its exe) */
	kid = fork();
	if (kid == 0) {
		execl("/usr/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (kid < 0 || waitpid(kid, &n, 0) != kid || !WIFEXITED(n) || WEXITSTATUS(n))
		return 23;
	return 0;
}

static void test_trace_ops(void **state)
{
	struct recorder *rf = NULL;
	struct ops_arg a;
	char path[PATH_MAX + 32];
	uid_t uid = getuid() == 0 ? 65534 : getuid();
	struct stat st;

	(void)state;
	tmpdir(a.dir, sizeof(a.dir));
	snprintf(path, sizeof(path), "%s/read.txt", a.dir);
	write_file(path, "hello");
	snprintf(path, sizeof(path), "%s/write.txt", a.dir);
	write_file(path, "old contents");
	assert_int_equal(chmod(path, 0666), 0);
	snprintf(path, sizeof(path), "%s/sub", a.dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/sub/f", a.dir);
	write_file(path, "");

	assert_int_equal(recorder_new(POLICY_FILES_TRACE, NULL, 0, &rf), 0);
	/* as root (run_traced()): the files it creates are the user's (nobody here) */
	assert_int_equal(run_traced(rf, true, probe_ops, &a), 0);

	snprintf(path, sizeof(path), "%s/read.txt", a.dir);
	assert_non_null(find(rf, TRACE_READ, path, NULL));
	snprintf(path, sizeof(path), "%s/write.txt", a.dir);
	assert_non_null(find(rf, TRACE_WRITE, path, NULL));
	assert_null(find(rf, TRACE_CREATE, path, NULL));
	snprintf(path, sizeof(path), "%s/new.txt", a.dir);
	assert_non_null(find(rf, TRACE_CREATE, path, NULL));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_uid, uid);
	assert_int_equal(st.st_mode & 0777, 0640);
	snprintf(path, sizeof(path), "%s/nowhere.txt", a.dir);
	{
		const struct recorder_entry *e = find(rf, TRACE_MISSING, path, NULL);

		assert_non_null(e);
		assert_int_equal(e->verdict, RECORDER_MISSING);
	}
	snprintf(path, sizeof(path), "%s/sub", a.dir);
	assert_non_null(find(rf, TRACE_READ, path, NULL));
	assert_non_null(find(rf, TRACE_EXEC, "/usr/bin/true", NULL));
	/* every entry: an enum trace_op, GRANTED (MISSING for missing), a count, a comm; nothing
	 * of /proc */
	for (size_t i = 0; i < recorder_count(rf); i++) {
		const struct recorder_entry *e = recorder_get(rf, i);

		assert_true(e->op >= 0 && e->op < TRACE_OP_N);
		assert_int_equal(e->verdict,
				 e->op == TRACE_MISSING ? RECORDER_MISSING : RECORDER_GRANTED);
		assert_true(e->count >= 1);
		assert_true(e->comm[0] != '\0');
		assert_false(recorder_sandbox_own(e->path));
	}
	/* the recorder's results came whole */
	assert_false(recorder_lost(rf));
	recorder_free(rf);
	rmtree(a.dir);
}

/* ------------------------------------------------------------ the recorder's process */

/* In the traced child: find the recorder (the test's other child), kill it, wait until it is
 * gone; then a watched call fails with ENOSYS (the listener closed with it). */
static int probe_kill_recorder(void *p)
{
	pid_t self = getpid(), parent = getppid(), rec = 0;
	char path[96], buf[512];

	(void)p;
	/* the parent starts the recorder after it has the listener: until it is there */
	for (int tries = 0; !rec && tries < 5000; tries++) {
		int fd;
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", parent, parent);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return 30;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		for (char *s = buf, *e; *s; s = e) {
			long c = strtol(s, &e, 10);

			if (e == s)
				break;
			if (c != self)
				rec = (pid_t)c;
		}
		if (!rec)
			usleep(1000);
	}
	if (!rec)
		return 31;
	if (kill(rec, SIGKILL) < 0)
		return 32;
	/* the listener closes when the recorder is gone (reaped or not: its files are) */
	for (int tries = 0; tries < 5000; tries++) {
		int fd = open("/etc/hostname", O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			close(fd);
			usleep(1000);
			continue;
		}
		return errno == ENOSYS ? 0 : 33;
	}
	return 34;
}

/* A recorder that dies before it reports: nothing of it is kept, and recorder_lost() says so;
 * the program's watched calls fail closed (ENOSYS) meanwhile. */
static void test_recorder_lost(void **state)
{
	struct recorder *rf = NULL;

	(void)state;
	assert_int_equal(recorder_new(POLICY_FILES_TRACE, NULL, 0, &rf), 0);
	assert_int_equal(run_traced(rf, true, probe_kill_recorder, NULL), 0);
	assert_true(recorder_lost(rf));
	assert_int_equal(recorder_count(rf), 0);
	recorder_free(rf);
}

/* ------------------------------------------------------------ spoofing */

#define SPOOF_OPENS 20000

struct spoof {
	char real[PATH_MAX];
	char forged[PATH_MAX];
	char buf[PATH_MAX]; /* flipped between the two */
	ino_t real_ino, forged_ino;
	atomic_bool stop;
	int report; /* a pipe: what the child really got */
	const char *bin_a, *bin_b;
};

static void *flipper(void *p)
{
	struct spoof *s = p;
	volatile char *b = s->buf;
	size_t n = strlen(s->real) + 1;

	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		for (size_t i = 0; i < n; i++)
			b[i] = s->forged[i];
		for (size_t i = 0; i < n; i++)
			b[i] = s->real[i];
	}
	return NULL;
}

/* Open the flipped buffer SPOOF_OPENS times; report how often the forged file was opened. */
static int probe_spoof_open(void *p)
{
	struct spoof *s = p;
	uint64_t got[2] = {0, 0};
	pthread_t t;

	memcpy(s->buf, s->real, strlen(s->real) + 1);
	if (pthread_create(&t, NULL, flipper, s))
		return 10;
	for (int i = 0; i < SPOOF_OPENS; i++) {
		struct stat st;
		int fd = open(s->buf, O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			continue; /* a half-flipped name: nowhere */
		if (fstat(fd, &st) == 0)
			got[st.st_ino == s->forged_ino] +=
			    st.st_ino == s->forged_ino || st.st_ino == s->real_ino;
		close(fd);
	}
	atomic_store(&s->stop, true);
	pthread_join(t, NULL);
	return write(s->report, got, sizeof(got)) == (ssize_t)sizeof(got) ? 0 : 11;
}

static void test_spoof_open(void **state)
{
	enum policy_audit_files mode = spoof_mode();
	struct recorder *rf = NULL;
	struct spoof *s = calloc(1, sizeof(*s));
	uint64_t got[2] = {0, 0}, rec_forged = 0, rec_real = 0;
	char dir[256];
	struct stat st;
	int pfd[2];

	(void)state;
	assert_non_null(s);
	tmpdir(dir, sizeof(dir));
	/* two existing files, names of one length */
	snprintf(s->real, sizeof(s->real), "%s/real", dir);
	snprintf(s->forged, sizeof(s->forged), "%s/fake", dir);
	write_file(s->real, "real");
	write_file(s->forged, "fake");
	assert_int_equal(stat(s->real, &st), 0);
	s->real_ino = st.st_ino;
	assert_int_equal(stat(s->forged, &st), 0);
	s->forged_ino = st.st_ino;
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	s->report = pfd[1];

	assert_int_equal(recorder_new(mode, NULL, 0, &rf), 0);
	assert_int_equal(run_traced(rf, mode == POLICY_FILES_TRACE, probe_spoof_open, s), 0);
	close(pfd[1]);
	assert_int_equal(read(pfd[0], got, sizeof(got)), (ssize_t)sizeof(got));
	close(pfd[0]);
	find(rf, -1, s->forged, &rec_forged);
	find(rf, -1, s->real, &rec_real);
	print_message("spoof open (%s): child got real %llu forged %llu; recorded real %llu forged "
		      "%llu\n",
		      policy_audit_files_name(mode), (unsigned long long)got[0],
		      (unsigned long long)got[1], (unsigned long long)rec_real,
		      (unsigned long long)rec_forged);
	/* positive control: the flipping reached both files */
	assert_true(got[0] > 0);
	/* the trace never holds the forged file more often than the child opened it; trace mode
	 * carries the opens out, so it is exact */
	assert_true(rec_forged <= got[1]);
	assert_true(rec_real <= got[0]);
	assert_int_equal(rec_forged, got[1]);
	assert_int_equal(rec_real, got[0]);
	recorder_free(rf);
	rmtree(dir);
	free(s);
}

/* A grandchild execs the flipped buffer; each run's binary is told by its exit status. */
static void *exec_flipper(void *p)
{
	struct spoof *s = p;
	volatile char *b = s->buf;
	size_t na = strlen(s->bin_a) + 1, nb = strlen(s->bin_b) + 1;

	for (;;) {
		for (size_t i = 0; i < nb; i++)
			b[i] = s->bin_b[i];
		for (size_t i = 0; i < na; i++)
			b[i] = s->bin_a[i];
	}
	return NULL;
}

#define SPOOF_EXECS 300

static int probe_spoof_exec(void *p)
{
	struct spoof *s = p;
	uint64_t ran[2] = {0, 0}; /* true, false */

	for (int i = 0; i < SPOOF_EXECS; i++) {
		int st = 0;
		pid_t kid = fork();

		if (kid == 0) {
			pthread_t t;

			memcpy(s->buf, s->bin_a, strlen(s->bin_a) + 1);
			if (pthread_create(&t, NULL, exec_flipper, s))
				_exit(98);
			/* give the flipper a start */
			for (volatile int k = 0; k < 20000; k++)
				;
			execl(s->buf, "x", (char *)NULL);
			_exit(99);
		}
		if (kid < 0 || waitpid(kid, &st, 0) != kid || !WIFEXITED(st))
			return 10;
		if (WEXITSTATUS(st) <= 1)
			ran[WEXITSTATUS(st)]++;
	}
	return write(s->report, ran, sizeof(ran)) == (ssize_t)sizeof(ran) ? 0 : 11;
}

static void test_spoof_exec(void **state)
{
	enum policy_audit_files mode = spoof_mode();
	struct recorder *rf = NULL;
	struct spoof *s = calloc(1, sizeof(*s));
	uint64_t ran[2] = {0, 0}, rec_b = 0, rec_a = 0;
	int pfd[2];

	(void)state;
	assert_non_null(s);
	s->bin_a = "/usr/bin/true";
	s->bin_b = "/usr/bin/false";
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	s->report = pfd[1];
	assert_int_equal(recorder_new(mode, NULL, 0, &rf), 0);
	assert_int_equal(run_traced(rf, mode == POLICY_FILES_TRACE, probe_spoof_exec, s), 0);
	close(pfd[1]);
	assert_int_equal(read(pfd[0], ran, sizeof(ran)), (ssize_t)sizeof(ran));
	close(pfd[0]);
	for (size_t i = 0; i < recorder_count(rf); i++) {
		const struct recorder_entry *e = recorder_get(rf, i);
		int exec_op = mode == POLICY_FILES_TRACE ? TRACE_EXEC : SANDBOX_OP_EXEC;

		if (e->op != exec_op)
			continue;
		if (!strcmp(e->path, s->bin_b))
			rec_b += e->count;
		if (!strcmp(e->path, s->bin_a))
			rec_a += e->count;
	}
	print_message("spoof exec (%s): ran true %llu false %llu; recorded true %llu false %llu\n",
		      policy_audit_files_name(mode), (unsigned long long)ran[0],
		      (unsigned long long)ran[1], (unsigned long long)rec_a,
		      (unsigned long long)rec_b);
	/* positive control: the first binary ran and is recorded */
	assert_true(ran[0] > 0);
	assert_true(rec_a > 0);
	/* never a binary more often than it ran */
	assert_true(rec_b <= ran[1]);
	assert_true(rec_a <= ran[0]);
	recorder_free(rf);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_trace_filter_watches_its_tables),
	    cmocka_unit_test(test_trace_not_from_yaml),
	    cmocka_unit_test(test_trace_ops),
	    cmocka_unit_test(test_recorder_lost),
	    cmocka_unit_test(test_spoof_open),
	    cmocka_unit_test(test_spoof_exec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
