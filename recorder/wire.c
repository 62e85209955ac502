/* wire.c - the pipe of records from the recorder's process to the launcher: fixed-size
 * records, each checked on arrival; anything malformed, or an end that does not add up, and
 * the launcher keeps nothing (recorder_lost()). */
#include "recorder/internal.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

/*
 * The recorder's results, from its process to the launcher over a pipe: one struct recorder_wire
 * per entry (RECORDER_WIRE_ENTRY, @len bytes of path after it), then one RECORDER_WIRE_END with the
 * counters and how many entries came. Anything else, or an end that does not add up, is malformed:
 * the launcher keeps nothing of it (recorder_lost()).
 */
enum { RECORDER_WIRE_ENTRY = 0x52460001, RECORDER_WIRE_END = 0x52460002 };

struct recorder_wire {
	uint32_t kind;
	uint32_t len;
	int32_t op;
	int32_t verdict;
	int32_t pid;	/* 4 bytes of padding follow: memset() before each use */
	uint64_t count; /* ENTRY: the entry's count; END: the entries sent */
	uint64_t seen, dropped, unreadable; /* END */
	char comm[16];
};

static int wire_write(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int recorder_wire_send(const struct recorder *rf, int fd)
{
	struct recorder_wire w;

	for (size_t i = 0; i < rf->nent; i++) {
		const struct recorder_entry *e = &rf->ent[i];

		memset(&w, 0, sizeof(w));
		w.kind = RECORDER_WIRE_ENTRY;
		w.len = (uint32_t)strlen(e->path);
		w.op = e->op;
		w.verdict = (int32_t)e->verdict;
		w.pid = e->pid;
		w.count = e->count;
		memcpy(w.comm, e->comm, sizeof(w.comm));
		if (wire_write(fd, &w, sizeof(w)) || wire_write(fd, e->path, w.len))
			return -EIO;
	}
	memset(&w, 0, sizeof(w));
	w.kind = RECORDER_WIRE_END;
	w.count = rf->nent;
	w.seen = rf->seen;
	w.dropped = rf->dropped;
	w.unreadable = rf->unreadable;
	return wire_write(fd, &w, sizeof(w));
}

/* Exactly @len bytes, or 0 at a clean end of file before the first byte. Return: 1, 0, or
 * -EPROTO (an end inside a message, a read error). */
static int wire_read(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -EPROTO;
		if (n == 0)
			return got ? -EPROTO : 0;
		got += (size_t)n;
	}
	return 1;
}

int recorder_wire_recv(struct recorder *rf, int fd)
{
	char path[PATH_MAX];
	struct recorder_wire w;
	uint64_t n = 0;
	int r;

	for (;;) {
		r = wire_read(fd, &w, sizeof(w));
		if (r <= 0)
			return -EPROTO; /* no end */
		if (w.kind == RECORDER_WIRE_END)
			break;
		if (w.kind != RECORDER_WIRE_ENTRY || !w.len || w.len >= sizeof(path) || !w.count ||
		    w.op < 0 || w.op > 255 || w.verdict < RECORDER_GRANTED ||
		    w.verdict > RECORDER_MISSING ||
		    !recorder_keeps(rf->mode, (enum recorder_verdict)w.verdict))
			return -EPROTO;
		if (wire_read(fd, path, w.len) != 1)
			return -EPROTO;
		path[w.len] = '\0';
		w.comm[sizeof(w.comm) - 1] = '\0';
		if (path[0] != '/' || strlen(path) != w.len)
			return -EPROTO;
		/* a new entry each time: the recorder sends none twice, and no more than a run
		 * keeps */
		r = recorder_record(rf, w.op, path, (enum recorder_verdict)w.verdict, w.pid,
				    w.comm);
		if (r != 1)
			return r < 0 ? r : -EPROTO;
		rf->ent[rf->nent - 1].count = w.count;
		n++;
	}
	if (w.count != n || w.dropped > w.seen || w.unreadable > w.seen || n > w.seen)
		return -EPROTO;
	/* nothing after the end */
	if (wire_read(fd, &w, 1) != 0)
		return -EPROTO;
	rf->seen = w.seen;
	rf->dropped = w.dropped;
	rf->unreadable = w.unreadable;
	return 0;
}
