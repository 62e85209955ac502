/* crashed.c - the run.exit that a dead launcher did not write: a launcher killed with SIGKILL
 * (or crashed) leaves its audit log ending at run.start or run.liveness. The next `warden`
 * (any verb, launcher/main.c) or `warden gc` writes the missing "run.exit" with
 * "crashed": true from the run's state record, exactly once.
 *
 * Theory of operation. A record (state.c) exists from the `state` stage on, so run.start was
 * written. Its launcher is gone when its pid no longer runs with the recorded start time. A
 * record marked `ending` belongs to a teardown child: the launcher wrote run.exit before it
 * handed over, so nothing is missing. Otherwise, with the run's folder locked (flock on the
 * folder: the record itself is replaced by rename on every save, so it cannot carry a lock),
 * the record is read again and, unless it is marked `exit_logged` or the folder was removed
 * meanwhile, run.exit is written durably to the record's audit log, then the mark saved.
 * Two invocations at once serialize on the lock; the second finds the mark (or no folder).
 * A crash between the write and the mark would write it twice: the only window left.
 */
#include "run/run.h"
#include "run/state.h"
#include "audit/audit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* the program of @rec: the first word of its recorded command line, or "" */
static void record_program(const struct run_record *rec, char *out, size_t size)
{
	json_t *cmd = json_loads(rec->command, 0, NULL);
	const char *s = json_string_value(json_array_get(cmd, 0));

	snprintf(out, size, "%s", s ? s : "");
	json_decref(cmd);
}

/* write run.exit ("crashed": true) of @rec to its audit log. Return: 0 or a negative errno */
static int write_crashed(const struct run_record *rec, struct wd_err *err)
{
	struct audit_event ev = {0};
	struct audit_log *log = NULL;
	struct passwd pw, *pwr = NULL;
	char prog[PATH_MAX], reason[512], pwbuf[1024];
	int ret;

	if (!rec->audit[0])
		return wd_err_set(err, -ENOENT, "run %s: its record names no audit log", rec->id);
	ret = audit_log_open(rec->audit, &log, err);
	if (ret)
		return ret;
	audit_log_chain(log);
	record_program(rec, prog, sizeof(prog));
	snprintf(reason, sizeof(reason),
		 "the launcher (pid %d) ended without writing run.exit (killed with SIGKILL, or "
		 "crashed); the program's exit status is unknown; written by warden (pid %d) "
		 "from the run's record",
		 (int)rec->pid, (int)getpid());
	ev.type = AUDIT_TYPE_RUN;
	ev.action = "run.exit";
	ev.run = rec->id;
	ev.resource = prog;
	ev.allowed = false;
	ev.reason = reason;
	ev.policy = rec->policy;
	ev.mode = rec->mode[0] ? rec->mode : NULL;
	ev.has = AUDIT_HAS_PID | AUDIT_HAS_UID | AUDIT_HAS_CRASHED;
	ev.pid = rec->pid;
	ev.uid = rec->uid;
	ev.crashed = true;
	if (!getpwuid_r(rec->uid, &pw, pwbuf, sizeof(pwbuf), &pwr) && pwr)
		ev.user = pw.pw_name;
	ret = audit_log_write(log, &ev, AUDIT_WRITE_DURABLE, err);
	audit_log_close(log);
	return ret;
}

/* the run in @dir/@name, locked: its run.exit written when its launcher died without it.
 * Return: 1 written, 0 nothing to do, or a negative errno */
static int log_one(const char *dir, const char *name, struct wd_err *err)
{
	char d[PATH_MAX], sp[PATH_MAX + 8], *text = NULL;
	struct run_record rec;
	struct stat st;
	size_t len;
	int fd, ret = 0;

	if (snprintf(d, sizeof(d), "%s/%s", dir, name) >= (int)sizeof(d))
		return 0;
	snprintf(sp, sizeof(sp), "%s/state", d);
	fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR) {
			ret = wd_err_set(err, -errno, "run %s: lock: %s", name, strerror(errno));
			goto out;
		}
	/* removed while we waited (gc reclaimed it): nothing is missing any more */
	if (fstat(fd, &st) < 0 || st.st_nlink == 0)
		goto out;
	if (wd_read_file(sp, 65536, &text, &len))
		goto out;
	if (run_record_parse(text, &rec) || strcmp(rec.id, name))
		goto out;
	if (rec.ending || rec.exit_logged || run_proc_start(rec.pid) == rec.start)
		goto out;
	ret = write_crashed(&rec, err);
	if (ret)
		goto out;
	rec.exit_logged = 1;
	ret = run_record_save(dir, &rec);
	if (ret)
		ret = wd_err_set(err, ret, "run %s: run.exit written, but not marked in %s: %s",
				 name, sp, strerror(-ret));
	else
		ret = 1;
out:
	free(text);
	close(fd); /* the lock with it */
	return ret;
}

int run_crashed_log(const char *dir, unsigned *ret_n, struct wd_err *err)
{
	DIR *dd = opendir(dir);
	struct dirent *de;
	unsigned n = 0;
	int ret = 0, x;

	if (ret_n)
		*ret_n = 0;
	if (!dd)
		return errno == ENOENT ? 0
				       : wd_err_set(err, -errno, "%s: %s", dir, strerror(errno));
	while ((de = readdir(dd))) {
		if (de->d_name[0] == '.')
			continue;
		x = log_one(dir, de->d_name, err);
		if (x > 0)
			n++;
		else if (x < 0 && !ret)
			ret = x;
	}
	closedir(dd);
	if (ret_n)
		*ret_n = n;
	return ret;
}

int run_crashed_check(void)
{
	char dir[200], runs[256];
	struct wd_err err;
	struct stat st;

	wd_err_clear(&err);
	if (geteuid() == 0)
		return run_crashed_log(RUN_STATE_DIR, NULL, &err);
	/* a user's own folder, only when it is there and theirs (run_rootless_dir() checks it
	 * the same way, but makes it when missing: a check makes nothing) */
	if (run_rootless_dir_path(dir, sizeof(dir)) || lstat(dir, &st) || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return 0;
	snprintf(runs, sizeof(runs), "%s/runs", dir);
	return run_crashed_log(runs, NULL, &err);
}
