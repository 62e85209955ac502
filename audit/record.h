/* record.h - the gateway daemon's signed run record for its central log (record.c): the
 * run.record line written when a daemon-mode run ends, and where the log ended before it began.
 * Included by the gateway's privileged parent, verify.c and the tests. */
#ifndef WARDEN_AUDIT_RECORD_H
#define WARDEN_AUDIT_RECORD_H

#include "audit/audit.h"

/* the action of the gateway daemon's signed run record in its central log (record.c) */
#define AUDIT_RUN_RECORD "run.record"

/**
 * audit_write_run_record() - the gateway daemon's signed record of a run that ended: the
 * Merkle root of every line of the run in @log's file ("PATH.1" first, when there), their
 * count and @k's id, as a run.record line signed with @k and appended to @log
 * @log:	the central log (a chained writer)
 * @tmpl:	the record's other fields (run, ts, uid, mode...; type, action, root, events
 *		and key are set here)
 * @k:		the daemon's private key
 * @from:	where the file ended before the run's first line (audit_log_end()), or
 *		NULL: read the files whole. The lines are read from there when it is still
 *		a line's end in the same file; else (rotated, truncated) the files whole.
 * @err:	filled on error; may be NULL
 * Return: 0, or a negative errno (-ENOKEY: @k cannot sign; a read or write error).
 */
int audit_write_run_record(struct audit_log *log, const struct audit_event *tmpl,
			   const struct audit_key *k, const struct audit_log_pos *from,
			   struct wd_err *err);

/**
 * audit_log_end() - where @log's file ends now (its path's file, as stat(2) sees it)
 * @log:	writer
 * @ret_pos:	the file and its size
 * Return: 0, or a negative errno from stat().
 */
int audit_log_end(const struct audit_log *log, struct audit_log_pos *ret_pos);

#endif /* WARDEN_AUDIT_RECORD_H */
