/* run_teardown.c - undoing a run: each stage's undo in the reverse order of its making, in the
 * foreground (a run that failed before its program started), or in a detached child that
 * owns the run once the program has ended, so that the caller of `warden run` gets the
 * program's status at once (docs/run.md, "Teardown after the status"). */
#include "run/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* The run's state folder and what the run put in it. */
static void state_remove(struct run *r)
{
	static const char *const files[] = {"state",	      "state.tmp", "gateway.yaml",
					    "gateway.log",    "gw.sock",   RUN_POLICY_FILE,
					    "policy.yaml.tmp"};
	char p[PATH_MAX + 16];

	if (!r->rec_saved)
		return;
	for (size_t i = 0; i < WD_ARRAY_SIZE(files); i++) {
		snprintf(p, sizeof(p), "%s/%s", r->state_dir, files[i]);
		unlink(p);
	}
	rmdir(r->state_dir);
	r->rec_saved = false;
}

void run_teardown(struct run *r)
{
	run_ask_end(r); /* network.ask's requests still pending: no one waits for them now */
	run_gwclient_unregister(r);
	/* the embedded gateway stops while the rest is torn down; reaped below */
	if (r->gateway.gw.embedded && r->gateway.gw.pid > 0)
		kill(r->gateway.gw.pid, SIGTERM);
	run_stamp("t.unreg");
	if (r->mode->by_daemon)
		memset(&r->limits.lim, 0, sizeof(r->limits.lim)); /* the daemon's to remove */
	limits_destroy(&r->limits.lim);
	run_stamp("t.cgroups");
	r->mode->net_down(r);
	run_stamp("t.net");
	run_gw_stop(&r->gateway.gw);
	run_stamp("t.gateway");
	fw_conn_close(r->network.fw);
	r->network.fw = NULL;
	conf_free(&r->input.gwc); /* its ceiling (the embedded gateway has its own copy) */
	run_stamp("t.nftclose");
	state_remove(r);
}

/* In the detached child: stdio on /dev/null, and every fd it inherited from the caller of
 * `warden run` closed (those are the ones without FD_CLOEXEC: ours all have it), so that
 * nobody waits for it; signals back to their defaults. */
static void detach_fds(void)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	sigset_t none;
	DIR *d;

	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		close(null);
	}
	d = opendir("/proc/self/fd");
	if (d) {
		struct dirent *de;

		while ((de = readdir(d))) {
			unsigned long long v;
			int fd, fl;

			if (wd_parse_uint(de->d_name, INT_MAX, &v)) /* ".", ".." */
				continue;
			fd = (int)v;
			if (fd <= STDERR_FILENO || fd == dirfd(d))
				continue;
			fl = fcntl(fd, F_GETFD);
			if (fl >= 0 && !(fl & FD_CLOEXEC))
				close(fd);
		}
		closedir(d);
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
}

/*
 * Hand the teardown to a detached child so that the caller gets the program's status now.
 * Right after the fork the launcher makes the child the owner of the run's state record and
 * of its address slot (so a `warden gc` meanwhile sees a live run, and one after the child
 * died reclaims everything), tells the child so, and returns. The child (setsid, stdio on
 * /dev/null, no fd of the caller) waits for that word, or for the launcher's end, before it
 * touches anything. If the records cannot be written the child is told to exit and the
 * launcher tears down itself. Return: true when the child took over.
 */
bool run_teardown_detached(struct run *r)
{
	int go[2];
	pid_t pid;
	char c = 0;

	if (pipe2(go, O_CLOEXEC) < 0)
		return false;
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		close(go[0]);
		close(go[1]);
		return false;
	}
	if (pid == 0) {
		struct wd_err err;
		ssize_t n;

		close(go[1]);
		setsid();
		prctl(PR_SET_NAME, "warden-teardown", 0, 0, 0);
		detach_fds();
		do
			n = read(go[0], &c, 1);
		while (n < 0 && errno == EINTR);
		if (n == 1 && c == 'x')
			_exit(0); /* the launcher does it itself */
		close(go[0]);
		r->rec.pid = getpid(); /* what the launcher recorded */
		/* run.exit durable first: a teardown that hangs or dies must not keep it
		 * from the disk (the teardown writes no event of its own) */
		run_audit_sync(r);
		run_teardown(r);
		wd_err_clear(&err);
		if (r->network.pool_size)
			run_pool_fill(RUN_POOL_DIR, &r->network.ncfg, &r->network.fcfg,
				      r->network.pool_size, NULL, &err);
		fw_conn_close(r->network.fw);
		_exit(0);
	}
	close(go[0]);
	r->rec.pid = pid;
	r->rec.start = run_proc_start(pid);
	r->rec.gw_pid = 0;
	r->rec.gw_start = 0;
	r->rec.ending = 1; /* `warden status` and `kill`: the program is done */
	if (!r->rec.start || run_state_save(r) ||
	    (r->network.net.live && netns_run_set_owner(&r->network.ncfg, &r->network.net, pid))) {
		int st;

		if (write(go[1], "x", 1) != 1)
			kill(pid, SIGKILL);
		close(go[1]);
		waitpid(pid, &st, 0);
		r->rec.pid = getpid();
		r->rec.start = run_proc_start(r->rec.pid);
		r->rec.ending = 0;
		run_state_save(r);
		if (r->network.net.live)
			netns_run_set_owner(&r->network.ncfg, &r->network.net, getpid());
		return false;
	}
	if (write(go[1], "k", 1) != 1) {
		/* cannot happen with the read end open; the child proceeds at our exit anyway */
	}
	close(go[1]);
	/* the child holds the run now: nothing of it is ours to undo. Our copy of the nft
	 * socket goes at once: the child's keeps it open, so this close waits for nothing */
	fw_conn_close(r->network.fw);
	r->network.fw = NULL;
	r->gateway.registered = false;
	r->network.fw_added = false;
	r->network.net.live = false;
	memset(&r->limits.lim, 0, sizeof(r->limits.lim));
	r->rec_saved = false;
	return true;
}
