/* cmd_allowlist_approve.c - `warden allowlist approve|deny REQUEST-ID` and `warden allowlist
 * pending`: a person at a terminal decides the requests `warden mcp`'s agent made to add names
 * (the approval store, approval.h). The server that asked notices the decision, applies it and
 * audits it; this verb only writes the decision into the store. */
#include "mcp/approval.h"
#include "launcher/cli.h"
#include "run/run.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: warden allowlist pending\n"
		"       warden allowlist approve REQUEST-ID\n"
		"       warden allowlist deny REQUEST-ID\n"
		"\n"
		"Decide the requests of `warden mcp`'s tool set_egress_allowlist to add names to\n"
		"its allowlist: nothing is added until a person approves. `pending` lists them\n"
		"(id, name, run, the asking server's pid, age).\n");
}

static int print_one(const struct approval_req *req, void *arg)
{
	unsigned *n = arg;
	bool live = req->server_pid > 0 && kill(req->server_pid, 0) == 0;

	if (req->state != APPROVAL_PENDING)
		return 0;
	if (!(*n)++)
		wd_say(stdout, "%-32s  %-30s  %-12s  %-8s  %s", "REQUEST", "NAME", "RUN", "SERVER",
		       "AGE");
	wd_say(stdout, "%-32s  %-30s  %-12s  %-8d  %llds%s", req->id, req->name,
	       req->run[0] ? req->run : "(new runs)", (int)req->server_pid,
	       (long long)time(NULL) - req->created, live ? "" : "  (its server is gone)");
	return 0;
}

int cmd_allowlist_approval(int argc, char **argv)
{
	char dir[4096], by[64];
	struct approval_req req;
	struct wd_err err;
	bool approve;
	int fd, ret;

	if (argc < 1 || cli_wants_help(argc, argv)) {
		usage(argc < 1 ? stderr : stdout);
		return argc < 1 ? WD_EXIT_USAGE : WD_EXIT_OK;
	}
	if (approval_dir(dir, sizeof(dir))) {
		fprintf(stderr, "warden allowlist: no state folder: set HOME or XDG_STATE_HOME\n");
		return WD_EXIT_USAGE;
	}
	wd_err_clear(&err);
	ret = approval_open(dir, &fd, &err);
	if (ret) {
		wd_say(stderr, "warden allowlist: %s", err.msg);
		return WD_EXIT_INTERNAL;
	}
	if (!strcmp(argv[0], "pending") && argc == 1) {
		unsigned n = 0;

		ret = approval_list(fd, print_one, &n);
		close(fd);
		if (ret) {
			wd_say(stderr, "warden allowlist: %s: %s", dir, strerror(-ret));
			return WD_EXIT_INTERNAL;
		}
		if (!n)
			printf("no request is pending\n");
		return WD_EXIT_OK;
	}
	if ((strcmp(argv[0], "approve") && strcmp(argv[0], "deny")) || argc != 2) {
		close(fd);
		usage(stderr);
		return WD_EXIT_USAGE;
	}
	approve = !strcmp(argv[0], "approve");
	if (!approval_id_valid(argv[1])) {
		close(fd);
		wd_say(stderr,
		       "warden allowlist: `%s` is not a request id (32 hex digits; "
		       "`warden allowlist pending` lists them)",
		       argv[1]);
		return WD_EXIT_USAGE;
	}
	snprintf(by, sizeof(by), "a terminal (uid %u, pid %d)", (unsigned)getuid(), (int)getpid());
	ret = approval_read(fd, argv[1], &req);
	if (!ret)
		ret = approval_decide(fd, argv[1], approve, by);
	close(fd);
	if (ret == -ENOENT) {
		wd_say(stderr,
		       "warden allowlist: no request %s is pending (decided already, or "
		       "its server ended)",
		       argv[1]);
		return WD_EXIT_FOUND;
	}
	if (ret == -EALREADY) {
		wd_say(stderr, "warden allowlist: request %s was decided already", argv[1]);
		return WD_EXIT_FOUND;
	}
	if (ret) {
		wd_say(stderr, "warden allowlist: request %s: %s", argv[1], strerror(-ret));
		return WD_EXIT_INTERNAL;
	}
	if (req.server_pid > 0) {
		wd_say(stdout, "%s %s for %s; the server applies it within a second",
		       approve ? "approved" : "denied", req.name,
		       req.run[0] ? req.run : "new runs of its warden mcp");
		return WD_EXIT_OK;
	}
	/* asked by `warden allowlist RUN add` (no server): the decision is applied here */
	ret = WD_EXIT_OK;
	if (approve && req.run[0]) {
		char *args[] = {"allowlist", req.run, "add", req.name, "--approved", req.id, NULL};

		ret = cmd_allowlist(6, args);
		if (!ret)
			wd_say(stdout, "approved %s: run %s may reach it now", req.name, req.run);
	} else {
		wd_say(stdout, "denied %s for run %s", req.name, req.run);
	}
	if (approval_dir(dir, sizeof(dir)) == 0 && approval_open(dir, &fd, &err) == 0) {
		approval_remove(fd, req.id);
		close(fd);
	}
	return ret;
}
