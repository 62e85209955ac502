/* reader.c - reading the audit log: skip corrupt lines, seek to the last N, follow with inotify
 * (Linux; elsewhere follow mode looks again every second). */
#include "audit/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/inotify.h>
#endif
#ifndef _WIN32
#include <poll.h>
#endif

/*
 * Theory of operation
 *
 * The reader keeps one descriptor on the log and a buffer of bytes read but
 * not yet consumed. audit_reader_next() cuts complete lines off the buffer
 * and decodes them; a line that does not decode is counted and skipped, a
 * line longer than AUDIT_LINE_MAX is discarded up to its newline.
 *
 * Follow mode adds an inotify watch on the log's folder (not on the file, so
 * that a file that is created, renamed over or removed is seen as well; off
 * Linux there is no watch and the reader looks again every second). At
 * the end of the data the reader compares the path with its descriptor:
 *   - same file, smaller than what was read: truncated, start again at 0;
 *   - another file (or none): the old one is finished (writers append to the
 *     path), so switch to the new one from its start, or wait for it.
 * A partial last line is kept until its newline arrives; when its file is
 * truncated or replaced first, it is counted as a torn line.
 */

#define READ_CHUNK 65536
#define TAIL_BLOCK 65536

struct audit_reader {
	unsigned flags;
	int fd; /* the log, -1 while it does not exist (follow) */
	dev_t dev;
	ino_t ino;
	off_t off;	   /* bytes read from @fd so far */
	struct wd_buf buf; /* bytes read, not yet consumed: [pos, len) */
	size_t pos;
	bool discarding;  /* inside an over-long line, dropping up to '\n' */
	const char *line; /* the line of the last event returned */
	size_t line_len;
	unsigned long skipped;
	int ifd; /* inotify, follow mode only */
	int wd;
	const char *base; /* points into @path */
	char path[];
};

static int open_log(struct audit_reader *r, struct wd_err *err)
{
	struct stat st;
	int fd;

	fd = open(r->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return wd_err_set(err, -errno, "cannot open audit log %s: %s", r->path,
				  strerror(errno));
	if (fstat(fd, &st) < 0) {
		int e = errno;

		close(fd);
		return wd_err_set(err, -e, "cannot stat audit log %s: %s", r->path, strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return wd_err_set(err, -EINVAL, "audit log %s is not a regular file", r->path);
	}
	r->fd = fd;
	r->dev = st.st_dev;
	r->ino = st.st_ino;
	r->off = 0;
	return 0;
}

static void drop_buffer(struct audit_reader *r, bool count_partial)
{
	if (count_partial && r->buf.len > r->pos && !r->discarding)
		r->skipped++;
	wd_buf_reset(&r->buf);
	r->pos = 0;
	r->discarding = false;
	r->line = NULL;
}

#ifdef __linux__
static int watch_folder(struct audit_reader *r)
{
	char dir[PATH_MAX];
	size_t dlen = (size_t)(r->base - r->path);

	if (dlen == 0) {
		strcpy(dir, ".");
	} else {
		if (dlen >= sizeof(dir))
			return -ENAMETOOLONG;
		memcpy(dir, r->path, dlen);
		dir[dlen == 1 ? 1 : dlen - 1] = '\0'; /* drop the '/', keep a lone "/" */
	}
	r->ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (r->ifd < 0)
		return -errno;
	r->wd = inotify_add_watch(r->ifd, dir,
				  IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
				      IN_ATTRIB | IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF);
	return 0; /* without a watch (no folder yet), audit_reader_wait() polls */
}
#else
/* no inotify: audit_reader_wait() looks again every second */
static int watch_folder(struct audit_reader *r)
{
	(void)r;
	return 0;
}
#endif

/* nap() - sleep @ms milliseconds (a signal may end it early). Return: 0 or -errno */
static int nap(int ms)
{
#ifdef _WIN32
	Sleep((DWORD)ms);
#else
	if (poll(NULL, 0, ms) < 0 && errno != EINTR)
		return -errno;
#endif
	return 0;
}

int audit_reader_open(const char *path, unsigned flags, struct audit_reader **ret_reader,
		      struct wd_err *err)
{
	struct audit_reader *r;
	const char *slash;
	int ret;

	if (!path || !*path)
		return wd_err_set(err, -EINVAL, "no audit log path");
	r = calloc(1, sizeof(*r) + strlen(path) + 1);
	if (!r)
		return wd_err_set(err, -ENOMEM, "out of memory");
	strcpy(r->path, path);
	slash = strrchr(r->path, '/');
	r->base = slash ? slash + 1 : r->path;
	r->flags = flags;
	r->fd = r->ifd = r->wd = -1;
	ret = wd_buf_reserve(&r->buf, READ_CHUNK);
	if (ret < 0) {
		wd_err_set(err, ret, "out of memory");
		goto out;
	}
#ifdef _WIN32
	/* following needs to tell the file at the path from the one read (a rotation), and the
	 * C runtime gives every file st_ino 0 and fstat() st_dev 0: refused, not looped */
	if (flags & AUDIT_READER_FOLLOW) {
		ret = wd_err_set(err, -ENOTSUP,
				 "following the audit log is not available on Windows yet (the C "
				 "runtime gives files no identity to tell a rotated log by)");
		goto out;
	}
#endif
	if (flags & AUDIT_READER_FOLLOW) {
		ret = watch_folder(r);
		if (ret < 0) {
			wd_err_set(err, ret, "cannot watch audit log %s: %s", path, strerror(-ret));
			goto out;
		}
	}
	ret = open_log(r, err);
	if (ret == -ENOENT && (flags & AUDIT_READER_FOLLOW))
		ret = 0;
	if (ret < 0)
		goto out;
	*ret_reader = r;
	return 0;
out:
	audit_reader_close(r);
	return ret;
}

int audit_reader_tail(struct audit_reader *r, size_t n)
{
	char *block = NULL;
	struct stat st;
	off_t end, start = 0;
	size_t seen = 0;
	int ret = 0;

	if (r->fd < 0)
		return 0;
	if (fstat(r->fd, &st) < 0)
		return -errno;
	end = st.st_size;
	if (n == 0) {
		start = end;
		goto seek;
	}
	block = malloc(TAIL_BLOCK);
	if (!block)
		return -ENOMEM;
	/* A newline at the very end closes the last line; it does not start one. */
	for (off_t hi = end; hi > 0;) {
		off_t lo = hi > TAIL_BLOCK ? hi - TAIL_BLOCK : 0;
		ssize_t got = pread(r->fd, block, (size_t)(hi - lo), lo);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			goto out;
		}
		if (got != hi - lo) {
			ret = -EIO; /* shrank under us */
			goto out;
		}
		for (off_t i = hi - 1; i >= lo; i--) {
			if (block[i - lo] != '\n' || i == end - 1)
				continue;
			if (++seen == n) {
				start = i + 1;
				goto seek;
			}
		}
		hi = lo;
	}
seek:
	if (lseek(r->fd, start, SEEK_SET) < 0) {
		ret = -errno;
		goto out;
	}
	r->off = start;
	drop_buffer(r, false);
out:
	free(block);
	return ret;
}

int audit_reader_seek(struct audit_reader *r, const struct audit_log_pos *pos)
{
	if (r->fd < 0 || r->dev != pos->dev || r->ino != pos->ino)
		return -ESTALE;
	if (lseek(r->fd, pos->end, SEEK_SET) < 0)
		return -errno;
	r->off = pos->end;
	drop_buffer(r, false);
	return 0;
}

/* take_line() - decode the line [p, p+len); 1 with an event, 0 when skipped. */
static int take_line(struct audit_reader *r, const char *p, size_t len, struct audit_event *ev)
{
	size_t i;
	int ret;

	for (i = 0; i < len; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
			break;
	if (i == len)
		return 0; /* blank */
	ret = audit_event_decode(p, len, ev, NULL);
	if (ret == -ENOMEM)
		return ret;
	if (ret < 0) {
		r->skipped++;
		return 0;
	}
	r->line = p;
	r->line_len = len;
	return 1;
}

/*
 * check_file() - at the end of the data in follow mode: was the file truncated
 * or replaced? Return: 1 when there may be more to read now, 0 when not, -errno.
 */
static int check_file(struct audit_reader *r)
{
	struct stat st;
	int ret;

	if (stat(r->path, &st) < 0) {
		if (errno != ENOENT)
			return -errno;
		if (r->fd >= 0) { /* removed: finish it, wait for a new one */
			drop_buffer(r, true);
			wd_closep(&r->fd);
		}
		return 0;
	}
	if (r->fd >= 0 && st.st_dev == r->dev && st.st_ino == r->ino) {
		if (st.st_size >= r->off)
			return 0;
		drop_buffer(r, true); /* truncated: start again */
		if (lseek(r->fd, 0, SEEK_SET) < 0)
			return -errno;
		r->off = 0;
		return 1;
	}
	drop_buffer(r, true);
	wd_closep(&r->fd);
	ret = open_log(r, NULL);
	if (ret == -ENOENT)
		return 0;
	return ret < 0 ? ret : 1;
}

int audit_reader_next(struct audit_reader *r, struct audit_event *ret_ev)
{
	bool follow = r->flags & AUDIT_READER_FOLLOW;
	int ret;

	r->line = NULL;
	for (;;) {
		char *start = r->buf.data + r->pos;
		size_t avail = r->buf.len - r->pos;
		char *nl = avail ? memchr(start, '\n', avail) : NULL;
		ssize_t got;

		if (nl) {
			size_t len = (size_t)(nl - start);

			r->pos += len + 1;
			if (r->discarding) {
				r->discarding = false;
				continue;
			}
			ret = take_line(r, start, len, ret_ev);
			if (ret != 0)
				return ret;
			continue;
		}
		if (avail > AUDIT_LINE_MAX && !r->discarding) {
			r->skipped++; /* over-long: drop it up to its newline */
			r->discarding = true;
		}
		if (r->discarding) {
			r->buf.len = r->pos = 0;
		} else if (r->pos) { /* compact: keep only the partial line */
			memmove(r->buf.data, start, avail);
			r->buf.len = avail;
			r->buf.data[avail] = '\0';
			r->pos = 0;
		}
		if (r->fd < 0) {
			ret = follow ? check_file(r) : 0;
			if (ret <= 0)
				return ret;
			continue;
		}
		ret = wd_buf_reserve(&r->buf, READ_CHUNK);
		if (ret < 0)
			return ret;
		got = read(r->fd, r->buf.data + r->buf.len, READ_CHUNK);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (got > 0) {
			r->buf.len += (size_t)got;
			r->buf.data[r->buf.len] = '\0';
			r->off += got;
			continue;
		}
		if (!follow) {
			/* The end: a last line without its newline is still a line. */
			avail = r->buf.len - r->pos;
			if (!avail || r->discarding) {
				drop_buffer(r, false);
				return 0;
			}
			r->pos = r->buf.len;
			return take_line(r, r->buf.data, avail, ret_ev);
		}
		ret = check_file(r);
		if (ret <= 0)
			return ret;
	}
}

const char *audit_reader_line(const struct audit_reader *r, size_t *ret_len)
{
	if (!r->line)
		return NULL;
	*ret_len = r->line_len;
	return r->line;
}

unsigned long audit_reader_skipped(const struct audit_reader *r)
{
	return r->skipped;
}

#ifdef __linux__
/* relevant() - drain inotify; true when an event may concern the log. */
static bool relevant(struct audit_reader *r)
{
	char evbuf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool hit = false;
	ssize_t n;

	while ((n = read(r->ifd, evbuf, sizeof(evbuf))) > 0) {
		for (char *p = evbuf; p < evbuf + n;) {
			const struct inotify_event *ie = (const struct inotify_event *)p;

			if (!ie->len || !strcmp(ie->name, r->base) || (ie->mask & IN_Q_OVERFLOW))
				hit = true;
			p += sizeof(*ie) + ie->len;
		}
	}
	return hit;
}
#endif

int audit_reader_wait(struct audit_reader *r, int timeout_ms)
{
	uint64_t deadline = timeout_ms < 0 ? 0 : wd_mono_ns() + (uint64_t)timeout_ms * 1000000u;

	if (!(r->flags & AUDIT_READER_FOLLOW))
		return -EINVAL;
	if (r->wd < 0) {
		/* No folder to watch yet (or no inotify): look again every second. */
		int ms = timeout_ms < 0 || timeout_ms > 1000 ? 1000 : timeout_ms;
		int ret = nap(ms);

		if (ret < 0)
			return ret;
		wd_closep(&r->ifd);
		watch_folder(r); /* the folder may exist now */
		return 1;
	}
#ifdef __linux__
	for (;;) {
		struct pollfd pfd = {.fd = r->ifd, .events = POLLIN};
		int ms = -1, n;

		if (timeout_ms >= 0) {
			uint64_t now = wd_mono_ns();

			if (now >= deadline)
				return 0;
			ms = (int)((deadline - now + 999999u) / 1000000u);
		}
		n = poll(&pfd, 1, ms);
		if (n < 0) {
			if (errno == EINTR)
				return 1;
			return -errno;
		}
		if (n == 0)
			return 0;
		if (relevant(r))
			return 1;
	}
#else
	(void)deadline;
	return 1;
#endif
}

void audit_reader_close(struct audit_reader *r)
{
	if (!r)
		return;
	wd_closep(&r->fd);
	wd_closep(&r->ifd);
	wd_buf_free(&r->buf);
	free(r);
}
