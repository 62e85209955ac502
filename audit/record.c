/* record.c - the gateway daemon's signed run record for its central log: a run's lines read
 * back from the log (its ".1" file first), their Merkle root and count, a `run.record` line
 * signed with the daemon's key and appended (docs/audit.md, "The daemon's run record"). */
#include "audit/audit.h"
#include "audit/record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* still_there() - whether @from is still a line's end in @path, the same file: not rotated
 * away, not truncated (copytruncate) below it, a newline before it */
static bool still_there(const char *path, const struct audit_log_pos *from)
{
	struct stat st;
	char c = 0;
	bool ok;
	int fd;

	if (from->end == 0)
		return stat(path, &st) == 0 && st.st_dev == from->dev && st.st_ino == from->ino;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return false;
	ok = fstat(fd, &st) == 0 && st.st_dev == from->dev && st.st_ino == from->ino &&
	     st.st_size >= from->end && pread(fd, &c, 1, from->end - 1) == 1 && c == '\n';
	close(fd);
	return ok;
}

/* record_leaves() - every line of run @run from @from on when it still holds, else in
 * "PATH.1" (when there) then PATH. Return: 0 or -errno */
static int record_leaves(const char *path, const char *run, const struct audit_log_pos *from,
			 struct audit_leaves *l)
{
	char *old = NULL;
	int ret;

	if (from && still_there(path, from))
		return audit_run_leaves(path, from, run, l);
	if (asprintf(&old, "%s" AUDIT_ROTATED_SUFFIX, path) < 0)
		return -ENOMEM;
	ret = access(old, F_OK) == 0 ? audit_run_leaves(old, NULL, run, l) : 0;
	free(old);
	if (ret == 0)
		ret = audit_run_leaves(path, NULL, run, l);
	/* renamed away (logrotate) and no line in a new one yet: the record is the first */
	return ret == -ENOENT && l->n ? 0 : ret;
}

int audit_write_run_record(struct audit_log *log, const struct audit_event *tmpl,
			   const struct audit_key *k, const struct audit_log_pos *from,
			   struct wd_err *err)
{
	struct audit_leaves l = {0};
	uint8_t root[AUDIT_HASH_LEN];
	char hex[8 + 2 * AUDIT_HASH_LEN];
	struct audit_event ev = *tmpl;
	int ret;

	if (!k || !audit_key_can_sign(k))
		return wd_err_set(err, -ENOKEY, "run %s: no private key to sign its record",
				  tmpl->run);
	ret = record_leaves(audit_log_path(log), tmpl->run, from, &l);
	if (ret < 0) {
		wd_err_set(err, ret, "run %s: its lines could not be read back from %s: %s",
			   tmpl->run, audit_log_path(log), strerror(-ret));
		goto out;
	}
	audit_merkle_root((const uint8_t(*)[AUDIT_HASH_LEN])l.v, l.n, root);
	memcpy(hex, "sha256:", 7);
	audit_hex(root, sizeof(root), hex + 7);
	ev.type = AUDIT_TYPE_RUN;
	ev.action = AUDIT_RUN_RECORD;
	ev.root = hex;
	ev.has |= AUDIT_HAS_EVENTS;
	ev.events = (int64_t)l.n;
	ev.key = audit_key_id(k);
	ret = audit_log_write_signed(log, &ev, k, 0, err);
out:
	audit_leaves_free(&l);
	return ret;
}

int audit_log_end(const struct audit_log *log, struct audit_log_pos *ret_pos)
{
	struct stat st;

	if (stat(audit_log_path(log), &st) < 0)
		return -errno;
	ret_pos->dev = st.st_dev;
	ret_pos->ino = st.st_ino;
	ret_pos->end = st.st_size;
	return 0;
}
