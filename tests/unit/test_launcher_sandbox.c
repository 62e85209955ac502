/* test_launcher_sandbox.c - unit tests of the sandbox backend interface's bubblewrap
 * implementation (launcher/run_sandbox_bwrap.c) and the parked child (launcher/run_child.c).
 *
 * Without root: probe, describe, bwrap's --info-fd, the signals for the program, its tree and
 * the sandbox's init (on processes of this test), the messages of the child's stages. As root
 * (skipped otherwise): prepare + spawn with a stand-in for bwrap that records its options, the
 * uid it runs as and says a pid on the info pipe; the refusals of a grant the program's user
 * cannot read and of a grant replaced by a link; cancel.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "run/bwrap.h"
#include "run/run.h"
#include "run/child.h"
#include "run/sandbox.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct sandbox_backend *const be = &sandbox_backend_bwrap;

static void test_probe(void **state)
{
	struct sandbox sb = SANDBOX_INIT(be);
	struct sandbox_err e = {0};

	(void)state;
	setenv("WARDEN_BWRAP", "/nonexistent/bwrap", 1);
	assert_int_equal(be->probe(&sb, &e), -ENOENT);
	assert_string_equal(e.step, "prerequisites");
	assert_string_equal(e.fix, "apt-get install bubblewrap");
	assert_string_equal(e.msg, "bubblewrap not found at /nonexistent/bwrap");
	/* a file that is not executable, a folder: refused alike */
	setenv("WARDEN_BWRAP", "/etc/passwd", 1);
	assert_int_equal(be->probe(&sb, &e), -ENOENT);
	setenv("WARDEN_BWRAP", "/usr", 1);
	assert_int_equal(be->probe(&sb, &e), -ENOENT);
	setenv("WARDEN_BWRAP", "/bin/true", 1);
	assert_int_equal(be->probe(&sb, &e), 0);
	unsetenv("WARDEN_BWRAP");
	/* released before it prepared anything: it closes nothing of ours (fd 0 stays) */
	if (fcntl(STDIN_FILENO, F_GETFD) < 0)
		assert_int_equal(open("/dev/null", O_RDONLY), STDIN_FILENO);
	be->release(&sb);
	assert_true(fcntl(STDIN_FILENO, F_GETFD) >= 0);
	assert_null(sb.priv);
	be->release(&sb); /* harmless twice */
	assert_int_equal(sb.event_fd, -1);
}

/* run.start's words: the namespaces, the filter and its allowances, nested namespaces. */
static void test_describe(void **state)
{
	struct sandbox_spec s = {.allow = 0, .seccomp = true};
	char out[192];

	(void)state;
	be->describe(&s, out, sizeof(out));
	assert_string_equal(out, "bwrap(user,pid,ipc,uts,cgroup,mount),seccomp=on,userns=refused");
	s.allow = SANDBOX_ALLOW_USERNS;
	be->describe(&s, out, sizeof(out));
	assert_string_equal(
	    out, "bwrap(user,pid,ipc,uts,cgroup,mount),seccomp=on(allow=userns),userns=allowed");
	s.allow = 0;
	s.seccomp = false;
	be->describe(&s, out, sizeof(out));
	assert_string_equal(out, "bwrap(user,pid,ipc,uts,cgroup,mount),"
				 "seccomp=off(WARDEN_UNSAFE_NO_SECCOMP),userns=refused");
}

static void test_info_pid(void **state)
{
	pid_t pid = 0;

	(void)state;
	assert_false(sandbox_bwrap_info_pid("", &pid));
	assert_false(sandbox_bwrap_info_pid("{\n  \"child-pid\": 4", &pid)); /* a piece */
	assert_true(sandbox_bwrap_info_pid("{\n  \"child-pid\": 4242\n}", &pid));
	assert_int_equal(pid, 4242);
	/* more after the object is fine (bwrap 0.8 writes one object, then closes) */
	assert_true(sandbox_bwrap_info_pid("{\"child-pid\": 17}\n{\"x\": 1}", &pid));
	assert_int_equal(pid, 17);
	pid = 0;
	assert_false(sandbox_bwrap_info_pid("{\"child-pid\": \"17\"}", &pid));
	assert_false(sandbox_bwrap_info_pid("{\"child-pid\": 0}", &pid));
	assert_false(sandbox_bwrap_info_pid("{\"cgroup-namespace\": 4026531835}", &pid));
	assert_false(sandbox_bwrap_info_pid("not json", &pid));
	assert_int_equal(pid, 0);
}

/* A stand-in for a sandbox: the init (this test's child) forks the "program" when @program,
 * which sleeps; the init waits for it and exits with the signal that ended it (0 when it
 * exited). Without a program the init sleeps itself (nothing is left behind once it is
 * killed: there is no pid namespace here to end a program with its init). */
static pid_t fake_sandbox(bool program)
{
	pid_t init = fork();

	assert_true(init >= 0);
	if (init == 0 && !program) {
		pause();
		_exit(0);
	}
	if (init == 0) {
		pid_t prog = fork();
		int st;

		if (prog == 0) {
			pause();
			_exit(0);
		}
		if (prog < 0 || waitpid(prog, &st, 0) != prog)
			_exit(100);
		_exit(WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	}
	return init;
}

/* Wait (bounded) until @pid has a child: the program exists. */
static void wait_for_child_of(pid_t pid)
{
	char p[96], buf[64];

	snprintf(p, sizeof(p), "/proc/%d/task/%d/children", pid, pid);
	for (int i = 0; i < 2000; i++) {
		int fd = open(p, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;

		if (fd >= 0)
			close(fd);
		if (n > 0)
			return;
		usleep(1000);
	}
	fail_msg("%d never had a child", (int)pid);
}

/* A probed sandbox whose info pipe says @text (all of it when @close, else the pipe's write
 * end is returned open in *@ret_w). */
static void with_info(struct sandbox *sb, const char *text, bool close_it, int *ret_w)
{
	struct sandbox_err e = {0};
	int p[2];

	*sb = SANDBOX_INIT(be);
	setenv("WARDEN_BWRAP", "/bin/true", 1);
	assert_int_equal(be->probe(sb, &e), 0);
	unsetenv("WARDEN_BWRAP");
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	sb->event_fd = p[0];
	assert_int_equal(write(p[1], text, strlen(text)), (ssize_t)strlen(text));
	if (close_it)
		close(p[1]);
	else
		*ret_w = p[1];
}

/* bwrap's info pipe in pieces; then the signals reach the program, its tree, the init. */
static void test_event_signal(void **state)
{
	struct sandbox sb;
	char text[64];
	pid_t init;
	int w, st;

	(void)state;
	/* nothing is known yet: no signal goes anywhere (sb.pid is 0) */
	with_info(&sb, "", true, NULL);
	be->signal(&sb, SANDBOX_INSIDE, SIGKILL);
	be->signal(&sb, SANDBOX_TREE, SIGKILL);
	be->signal(&sb, SANDBOX_PROGRAM, SIGKILL);
	/* EOF without a pid: done with the fd all the same */
	assert_true(be->event(&sb));
	be->release(&sb);
	assert_int_equal(sb.event_fd, -1);

	/* the pid in two pieces; a forwarded signal reaches the program (the init's first
	 * child), not the init */
	init = fake_sandbox(true);
	wait_for_child_of(init);
	snprintf(text, sizeof(text), "{\n  \"child-pid\": %d", (int)init);
	with_info(&sb, text, false, &w);
	assert_false(be->event(&sb)); /* a piece: go on polling */
	assert_int_equal(write(w, "\n}", 2), 2);
	assert_true(be->event(&sb)); /* the pid is known */
	be->signal(&sb, SANDBOX_PROGRAM, SIGTERM);
	assert_int_equal(waitpid(init, &st, 0), init);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), SIGTERM);
	close(w);
	be->release(&sb);

	/* the timeout's SIGTERM goes to the tree below the init */
	init = fake_sandbox(true);
	wait_for_child_of(init);
	snprintf(text, sizeof(text), "{\"child-pid\": %d}", (int)init);
	with_info(&sb, text, true, NULL);
	assert_true(be->event(&sb));
	be->signal(&sb, SANDBOX_TREE, SIGUSR1);
	assert_int_equal(waitpid(init, &st, 0), init);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), SIGUSR1);
	be->release(&sb);

	/* the kill goes to the init (the kernel ends a pid namespace with it) */
	init = fake_sandbox(false);
	snprintf(text, sizeof(text), "{\"child-pid\": %d}", (int)init);
	with_info(&sb, text, true, NULL);
	assert_true(be->event(&sb));
	be->signal(&sb, SANDBOX_INSIDE, SIGKILL);
	assert_int_equal(waitpid(init, &st, 0), init);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGKILL);
	be->release(&sb);
}

/* The messages of the child's generic stages, as `warden run` prints them. */
static void test_child_explain(void **state)
{
	static const struct {
		int stage;
		const char *step, *fix, *msg;
	} cases[] = {
	    {RUN_CHILD_NETNS, "exec", "check `warden doctor`",
	     "entering the run's namespace: Operation not permitted"},
	    {RUN_CHILD_CGROUP, "exec", "check `warden doctor`",
	     "joining the run's cgroups: Operation not permitted"},
	    {RUN_CHILD_USER, "exec", NULL, "becoming uid 65534 (nobody): Operation not permitted"},
	    {RUN_CHILD_KEYRING, "exec", NULL,
	     "joining a session keyring of the run's own: Operation not permitted"},
	    {RUN_CHILD_FDS, "exec", NULL,
	     "preparing bwrap's arguments and descriptors: Operation not permitted"},
	    {RUN_CHILD_LIMIT, "limits", NULL,
	     "setting the file size limit: Operation not permitted"},
	    {RUN_CHILD_EXEC, "exec", "check `warden doctor`",
	     "starting /usr/bin/bwrap: Operation not permitted"},
	    {9, "exec", NULL, "the child failed: Operation not permitted"},
	};
	struct sandbox_err e;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct run_child_report rep = {EPERM, cases[i].stage, 0};

		memset(&e, 0, sizeof(e));
		assert_true(
		    run_child_explain(&rep, "bwrap", "/usr/bin/bwrap", 65534, "nobody", &e));
		assert_string_equal(e.step, cases[i].step);
		if (cases[i].fix)
			assert_string_equal(e.fix, cases[i].fix);
		else
			assert_null(e.fix);
		assert_string_equal(e.msg, cases[i].msg);
	}
	{
		struct run_child_report rep = {EPERM, RUN_CHILD_USER, 0};

		assert_true(run_child_explain(&rep, "bwrap", "/usr/bin/bwrap", 65534, NULL, &e));
		assert_string_equal(
		    e.msg, "becoming uid 65534 (the sandbox user): Operation not permitted");
		rep.stage = RUN_CHILD_BACKEND; /* the backend's own: not explained here */
		assert_false(run_child_explain(&rep, "bwrap", "/usr/bin/bwrap", 65534, NULL, &e));
	}
}

static void test_memfd(void **state)
{
	char buf[16] = {0};
	int fd;

	(void)state;
	fd = run_child_memfd("t", "hello", 5);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(read(fd, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "hello");
	close(fd);
	fd = run_child_memfd("t", NULL, 0);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 0);
	close(fd);
}

/* ------------------------------------------------------------ as root: a whole spawn */

struct world {
	char dir[PATH_MAX];	  /* 0755: the stand-in and the grants */
	char out[PATH_MAX + 8];	  /* 0777: what the stand-in records */
	char fake[PATH_MAX + 16]; /* the stand-in for bwrap */
	char ro[PATH_MAX + 8], rw[PATH_MAX + 8];
	struct wd_policy *pol;
	int netns_fd;
	struct limits lim;
	struct sandbox_spec spec;
	char *argv[2];
	char *env[1];
};

static int world_setup(void **state)
{
	struct world *w;
	FILE *f;

	if (geteuid() != 0)
		return 0; /* the tests skip */
	w = calloc(1, sizeof(*w));
	assert_non_null(w);
	snprintf(w->dir, sizeof(w->dir), "/tmp/wd-test-sandbox-XXXXXX");
	assert_non_null(mkdtemp(w->dir));
	assert_int_equal(chmod(w->dir, 0755), 0);
	snprintf(w->out, sizeof(w->out), "%s/out", w->dir);
	assert_int_equal(mkdir(w->out, 0777), 0);
	assert_int_equal(chmod(w->out, 0777), 0);
	snprintf(w->ro, sizeof(w->ro), "%s/ro", w->dir);
	assert_int_equal(mkdir(w->ro, 0755), 0);
	snprintf(w->rw, sizeof(w->rw), "%s/rw", w->dir);
	assert_int_equal(mkdir(w->rw, 0777), 0);
	assert_int_equal(chmod(w->rw, 0777), 0);
	snprintf(w->fake, sizeof(w->fake), "%s/fake-bwrap", w->dir);
	f = fopen(w->fake, "w");
	assert_non_null(f);
	/* bwrap --args FD -- COMMAND: record the options, the uid and the environment, say our
	 * pid on the info fd (exit 9 if it cannot), exit 7 (the environment is empty: absolute
	 * paths) */
	fprintf(f,
		"#!/bin/bash\n"
		"/usr/bin/tr '\\0' '\\n' </proc/self/fd/$2 >%s/args || exit 8\n"
		"/usr/bin/id -u >%s/uid\n"
		"/usr/bin/env >%s/env\n"
		"echo \"$@\" >%s/argv\n"
		"fd=$(/usr/bin/sed -n '/^--info-fd$/{n;p;}' %s/args)\n"
		"printf '{\"child-pid\": %%d}' $$ >&\"$fd\" || exit 9\n"
		"exit 7\n",
		w->out, w->out, w->out, w->out, w->out);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(w->fake, 0755), 0);
	w->netns_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	assert_true(w->netns_fd >= 0);
	w->argv[0] = "/bin/true";
	w->env[0] = NULL;
	*state = w;
	return 0;
}

static void rm_rf(const char *path)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	assert_int_equal(system(cmd), 0);
}

static int world_teardown(void **state)
{
	struct world *w = *state;

	if (!w)
		return 0;
	policy_free(w->pol);
	close(w->netns_fd);
	rm_rf(w->dir);
	free(w);
	return 0;
}

/* The policy of read grant @ro and write grant @rw, validated now. */
static void world_policy(struct world *w, const char *ro, const char *rw)
{
	struct policy_diags d;
	struct wd_buf y = WD_BUF_INIT;

	/* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): callers skip() without a world */
	policy_free(w->pol);
	w->pol = NULL;
	wd_buf_printf(&y, "version: 1\nfilesystem:\n  read: [\"%s\"]\n  write: [\"%s\"]\n", ro, rw);
	policy_diags_init(&d);
	assert_int_equal(policy_parse(y.data, y.len, "t.yaml", &w->pol, &d), 0);
	assert_int_equal(
	    policy_validate(w->pol, &(struct policy_ctx){.home = "/nonexistent-home"}, &d), 0);
	policy_diags_free(&d);
	wd_buf_free(&y);
	w->spec = (struct sandbox_spec){
	    .policy = w->pol,
	    .argv = w->argv,
	    .environ = w->env,
	    .cwd = "/",
	    .tty = false,
	    .host4 = "10.213.0.1",
	    .host6 = "",
	    .proxy_port = 15080,
	    .uid = 65534,
	    .gid = 65534,
	    .groups = NULL,
	    .ngroups = 0,
	    .user = "nobody",
	    .netns_fd = w->netns_fd,
	    .limits = &w->lim,
	    .allow = 0,
	    .seccomp = true,
	};
}

static char *slurp(const char *dir, const char *name)
{
	char p[PATH_MAX + 16], *data = NULL;
	size_t len = 0;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	assert_int_equal(wd_read_file(p, 1 << 20, &data, &len), 0);
	return data;
}

static void test_spawn(void **state)
{
	struct world *w = *state;
	struct sandbox sb = SANDBOX_INIT(be);
	struct sandbox_err e = {0};
	char *args, *uid, *env, *argv, want[PATH_MAX + 64];
	int st;

	if (!w)
		skip();
	world_policy(w, w->ro, w->rw);
	setenv("WARDEN_BWRAP", w->fake, 1);
	assert_int_equal(be->probe(&sb, &e), 0);
	unsetenv("WARDEN_BWRAP");
	assert_int_equal(be->prepare(&sb, &w->spec, &e), 0);
	assert_true(sb.pid > 0);
	assert_true(sb.event_fd >= 0);
	assert_int_equal(be->spawn(&sb, &e), 0);
	while (!be->event(&sb))
		;
	assert_int_equal(waitpid(sb.pid, &st, 0), sb.pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 7);
	args = slurp(w->out, "args");
	uid = slurp(w->out, "uid");
	env = slurp(w->out, "env");
	argv = slurp(w->out, "argv");
	/* the program's user; bwrap's own environment is empty (sh adds PWD and the like) */
	assert_string_equal(uid, "65534\n");
	assert_null(strstr(env, "HOME="));
	assert_null(strstr(env, "WARDEN"));
	/* bwrap --args FD -- /bin/true: the options are in the memfd, not in the argv */
	assert_non_null(strstr(argv, "--args "));
	assert_non_null(strstr(argv, " -- /bin/true"));
	assert_null(strstr(argv, "--ro-bind"));
	/* the grants bound from descriptors opened without following links */
	snprintf(want, sizeof(want), "\n%s\n", w->ro);
	assert_non_null(strstr(args, "--ro-bind-fd\n"));
	assert_non_null(strstr(args, want));
	assert_non_null(strstr(args, "--bind-fd\n"));
	assert_non_null(strstr(args, "--seccomp\n"));
	assert_non_null(strstr(args, "--disable-userns\n"));
	assert_non_null(strstr(args, "--new-session\n"));
	/* the generated files come from descriptors too */
	assert_null(strstr(args, "nameserver"));
	assert_non_null(strstr(args, "--ro-bind-data\n"));
	assert_non_null(strstr(args, "/etc/resolv.conf\n"));
	free(args);
	free(uid);
	free(env);
	free(argv);
	be->release(&sb);
}

/* A grant the program's user cannot read stops the run and says which and why. */
static void test_spawn_refused(void **state)
{
	struct world *w = *state;
	struct sandbox sb = SANDBOX_INIT(be);
	struct sandbox_err e = {0};
	char closed[PATH_MAX + 16], link_to[PATH_MAX + 16], want[PATH_MAX * 2];

	if (!w)
		skip();
	snprintf(closed, sizeof(closed), "%s/closed", w->dir);
	assert_int_equal(mkdir(closed, 0700), 0);
	world_policy(w, closed, w->rw);
	setenv("WARDEN_BWRAP", w->fake, 1);
	assert_int_equal(be->probe(&sb, &e), 0);
	assert_int_equal(be->prepare(&sb, &w->spec, &e), 0);
	assert_int_equal(be->spawn(&sb, &e), -ECHILD);
	assert_int_equal(sb.pid, 0); /* reaped */
	assert_string_equal(e.step, "filesystem");
	snprintf(want, sizeof(want),
		 "read grant %s is not readable by uid 65534 (nobody), whom the program runs as: "
		 "Permission denied",
		 closed);
	assert_string_equal(e.msg, want);
	assert_non_null(strstr(e.fix, "chown, chmod, or an ACL"));

	/* a link planted where a grant was, after the policy was checked */
	snprintf(link_to, sizeof(link_to), "%s/elsewhere", w->dir);
	assert_int_equal(mkdir(link_to, 0755), 0);
	world_policy(w, w->ro, w->rw);
	assert_int_equal(rmdir(w->ro), 0);
	assert_int_equal(symlink(link_to, w->ro), 0);
	assert_int_equal(be->prepare(&sb, &w->spec, &e), 0);
	assert_int_equal(be->spawn(&sb, &e), -ECHILD);
	assert_string_equal(e.step, "filesystem");
	snprintf(want, sizeof(want),
		 "grant %s: a symbolic link appeared on its path after the policy was checked; "
		 "a grant is never bound through a link",
		 w->ro);
	assert_string_equal(e.msg, want);
	assert_string_equal(e.fix, "check what replaced it, then run again");
	assert_int_equal(unlink(w->ro), 0);
	assert_int_equal(mkdir(w->ro, 0755), 0);

	/* cancel: the parked child goes away, reaped, and spawn is not needed */
	world_policy(w, w->ro, w->rw);
	assert_int_equal(be->prepare(&sb, &w->spec, &e), 0);
	assert_true(sb.pid > 0);
	be->cancel(&sb);
	assert_int_equal(sb.pid, 0);
	assert_int_equal(sb.event_fd, -1);
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1); /* no child left */
	assert_int_equal(errno, ECHILD);
	unsetenv("WARDEN_BWRAP");
	be->release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_probe),	  cmocka_unit_test(test_describe),
	    cmocka_unit_test(test_info_pid),	  cmocka_unit_test(test_event_signal),
	    cmocka_unit_test(test_child_explain), cmocka_unit_test(test_memfd),
	    cmocka_unit_test(test_spawn),	  cmocka_unit_test(test_spawn_refused),
	};

	/* as `warden run` does (cmd_run.c): run_child_go() writes "go" to a child that may
	 * have failed and exited already, and EPIPE, not SIGPIPE, is the answer it expects
	 * (without this, test_spawn_refused died of SIGPIPE about one run in ten) */
	signal(SIGPIPE, SIG_IGN);

	return cmocka_run_group_tests(tests, world_setup, world_teardown);
}
