/* table.c - the entries of a run: one per (operation, path) with a count, first-seen order,
 * bounded in entries and in bytes (a hash table of slots into them); what each mode keeps;
 * trace mode's note of one thing done. The recorder's process fills it; the launcher refills
 * it from the pipe (wire.c). */
#include "recorder/internal.h"
#include "trace/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t key_hash(int op, const char *path)
{
	return wd_hash_str(path) ^ ((uint64_t)(unsigned)op * 0x9e3779b97f4a7c15ull);
}

bool recorder_keeps(enum policy_audit_files mode, enum recorder_verdict v)
{
	switch (mode) {
	case POLICY_FILES_DENIED:
		return v == RECORDER_DENIED;
	case POLICY_FILES_ALL:
		return v == RECORDER_GRANTED || v == RECORDER_DENIED;
	case POLICY_FILES_TRACE:
		return v == RECORDER_GRANTED || v == RECORDER_MISSING || v == RECORDER_DENIED;
	case POLICY_FILES_UNSET:
	case POLICY_FILES_OFF:
		break;
	}
	return false;
}

int recorder_record(struct recorder *rf, int op, const char *path, enum recorder_verdict verdict,
		    pid_t pid, const char *comm)
{
	struct recorder_entry *e;
	size_t i, mask = rf->nslot - 1;

	if (!recorder_keeps(rf->mode, verdict))
		return 0;
	for (i = key_hash(op, path) & mask; rf->slot[i]; i = (i + 1) & mask) {
		e = &rf->ent[rf->slot[i] - 1];
		if (e->op == op && !strcmp(e->path, path)) {
			e->count++;
			return 0;
		}
	}
	/* bounded in entries and in bytes: a program naming 65,536 long paths on purpose does
	 * not make the launcher hold 256 MiB */
	if (rf->nent >= rf->max || rf->bytes + strlen(path) + 1 > RECORDER_MAX_BYTES) {
		rf->dropped++;
		return 0;
	}
	if (!rf->ent) {
		rf->ent = calloc(rf->max, sizeof(*rf->ent));
		if (!rf->ent)
			return -ENOMEM;
	}
	e = &rf->ent[rf->nent];
	e->path = strdup(path);
	if (!e->path)
		return -ENOMEM;
	rf->bytes += strlen(path) + 1;
	e->op = op;
	e->verdict = verdict;
	e->count = 1;
	e->pid = pid;
	snprintf(e->comm, sizeof(e->comm), "%s", comm ? comm : "");
	rf->slot[i] = (uint32_t)++rf->nent;
	return 1;
}

size_t recorder_count(const struct recorder *rf)
{
	return rf ? rf->nent : 0;
}

const struct recorder_entry *recorder_get(const struct recorder *rf, size_t i)
{
	return i < rf->nent ? &rf->ent[i] : NULL;
}

uint64_t recorder_dropped(const struct recorder *rf, uint64_t *ret_seen)
{
	if (ret_seen)
		*ret_seen = rf->seen;
	return rf->dropped;
}

uint64_t recorder_unreadable(const struct recorder *rf)
{
	return rf->unreadable;
}

/* Count (@op, @path) in its entry if it has one. */
static bool count_existing(struct recorder *rf, int op, const char *path)
{
	size_t mask = rf->nslot - 1;

	for (size_t i = key_hash(op, path) & mask; rf->slot[i]; i = (i + 1) & mask) {
		struct recorder_entry *e = &rf->ent[rf->slot[i] - 1];

		if (e->op == op && !strcmp(e->path, path)) {
			e->count++;
			return true;
		}
	}
	return false;
}

void recorder_trace_note(struct recorder *rf, int op, const char *path, bool refused, pid_t pid)
{
	enum recorder_verdict v = refused		? RECORDER_DENIED
				  : op == TRACE_MISSING ? RECORDER_MISSING
							: RECORDER_GRANTED;
	char comm[16];

	if (op < 0 || op >= TRACE_OP_N || path[0] != '/' || recorder_sandbox_own(path))
		return;
	if (refused)
		op = RECORDER_REFUSED_CONNECT;
	if (count_existing(rf, op, path))
		return;
	recorder_caller_comm(pid, comm, sizeof(comm));
	(void)recorder_record(rf, op, path, v, pid, comm);
}

void recorder_forget(struct recorder *rf)
{
	for (size_t i = 0; i < rf->nent; i++)
		free(rf->ent[i].path);
	memset(rf->slot, 0, rf->nslot * sizeof(*rf->slot));
	rf->nent = 0;
	rf->bytes = 0;
}
