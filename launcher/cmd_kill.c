/* cmd_kill.c - `warden kill RUN`: ask a live run's launcher to end it (SIGTERM with
 * RUN_KILL_SIGVAL: the launcher sends the program SIGTERM, SIGKILL RUN_KILL_GRACE_MS later,
 * audits run.kill with the sender the kernel names, and exits 128 + the signal), then wait
 * until the launcher is gone. A launcher that does not end in time is killed itself (its
 * leftovers are `warden gc`'s). Only the run's owner or root may: the kernel refuses the
 * signal to anyone else, and another user's run is not even found. */
#include "launcher/cli.h"
#include "run/live.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How long the launcher gets to end the run and hand off its teardown after the grace. */
#define KILL_WAIT_MS (RUN_KILL_GRACE_MS + 5000)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: warden kill RUN\n"
		"\n"
		"End live run RUN (its id from `warden status`, or a unique prefix of it): the\n"
		"program gets SIGTERM, SIGKILL %d ms later; the run exits 143 (137 when it\n"
		"needed SIGKILL) and run.kill / run.exit in its audit log name who killed it.\n",
		RUN_KILL_GRACE_MS);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* whether the recorded launcher still lives */
static bool alive(const struct live_run *lr)
{
	return run_proc_start(lr->rec.pid) == lr->rec.start;
}

int cmd_kill(int argc, char **argv)
{
	union sigval sv = {.sival_int = RUN_KILL_SIGVAL};
	struct live_run lr;
	struct wd_err err;
	unsigned waited = 0;
	int ret;

	if (cli_wants_help(argc, argv)) {
		usage(stdout);
		return WD_EXIT_OK;
	}
	if (argc != 2 || argv[1][0] == '-') {
		usage(stderr);
		return WD_EXIT_USAGE;
	}
	wd_err_clear(&err);
	ret = live_run_get(argv[1], &lr, &err);
	if (ret) {
		wd_say(stderr, "warden kill: %s", err.msg);
		return ret == -ENOENT || ret == -EINVAL ? WD_EXIT_USAGE : WD_EXIT_INTERNAL;
	}
	if (lr.state == LIVE_ENDING) {
		wd_say(stdout, "warden kill: run %s has ended already (its teardown is running)",
		       lr.rec.id);
		return WD_EXIT_OK;
	}
	if (sigqueue(lr.rec.pid, SIGTERM, sv) < 0) {
		wd_say(stderr, "warden kill: run %s (launcher pid %d): %s", lr.rec.id,
		       (int)lr.rec.pid,
		       errno == EPERM ? "not yours: only its owner and root may end it"
				      : strerror(errno));
		return errno == ESRCH ? WD_EXIT_OK : WD_EXIT_FOUND;
	}
	/* the launcher ends the program (TERM, then KILL after the grace) and exits */
	while (alive(&lr) && waited < KILL_WAIT_MS) {
		struct live_run now;

		/* its teardown child took the record over: the run is over */
		if (!live_run_get(lr.rec.id, &now, &err) && now.state == LIVE_ENDING)
			break;
		sleep_ms(20);
		waited += 20;
	}
	if (waited >= KILL_WAIT_MS && alive(&lr)) {
		/* fail closed: the run must end; what it leaves, `warden gc` removes */
		kill(lr.rec.pid, SIGKILL);
		wd_say(stderr,
		       "warden kill: run %s: its launcher (pid %d) did not end within %d ms: "
		       "killed it (SIGKILL); `warden gc` removes what it left",
		       lr.rec.id, (int)lr.rec.pid, KILL_WAIT_MS);
		return WD_EXIT_FOUND;
	}
	wd_say(stdout, "warden kill: run %s ended", lr.rec.id);
	return WD_EXIT_OK;
}
