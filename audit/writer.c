/* writer.c - the audit log writer: safe open (or adoption of a passed descriptor), one locked
 * write() per event or per batch of deferred events, durable events. */
#include "audit/audit.h"
#include "audit/chain_internal.h"
#include "audit/ship_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Theory of operation
 *
 * Every Warden process that audits (launchers, gateways) opens the same file
 * with O_APPEND and, per event, takes flock(LOCK_EX), writes the whole line
 * with one write(), optionally fdatasync()s, and unlocks. The lock makes the
 * line atomic with respect to every other writer on any file system, and lets
 * us look at the end of the file safely:
 *
 *  - the file size under the lock is where our line will land, so a short
 *    write can be cut off again with ftruncate() instead of leaving a torn
 *    line behind;
 *  - if the file does not end in '\n' (a writer died mid-line, a crash left a
 *    fragment), our line is preceded by '\n' so that it stays whole; the
 *    fragment becomes one corrupt line that readers skip and count.
 *
 * With a shipper (audit_log_ship()), each line also goes to syslog or journald once the
 * local write() of its batch succeeded (ship.c): the file stays the record, and a sink
 * that is away costs no local line; its outages are written into the file.
 *
 * A writer opened by path follows that path: under the lock it checks that the path still
 * names the file its descriptor holds, and opens the path again when it does not (another
 * writer rotated the log, see audit_log_set_max()), so no writer keeps appending to the
 * rotated ".1" file; with a size cap it rotates the file itself (rename to ".1", under the
 * old file's lock, then the same reopening).
 *
 * A chained writer (audit_log_chain()) ends every line with "prev", the SHA-256 of the line
 * before it in the file. It learns that line under the same lock: when the file still ends
 * where its own last line ended, from the digest it kept; otherwise it reads the file's last
 * line back (one pread() for a line of a few hundred bytes). An empty file links to the last
 * line of "<path>.1" (the rotated file), or to 64 zeros when there is none. The members are
 * added to the batch as it is written (chain_batch()), so a deferred batch is chained whole.
 * A signing writer (audit_log_sign_anchors()) begins such a file with a signed anchor.
 *
 * Opening fails closed: a log we cannot trust (a symlink, a FIFO, a file or
 * folder others can write, a file owned by someone else) is refused with a
 * message that says how to fix it, and the caller does not run unaudited.
 */

struct audit_log {
	int fd;			      /* O_WRONLY|O_APPEND, for the lines */
	int rfd;		      /* O_RDONLY on the same inode, to look at the last byte */
	off_t end;		      /* where our last line ended, -1 when unknown */
	struct wd_buf buf;	      /* one encoded line (scratch) */
	struct wd_buf queue;	      /* '\n' + the lines not written yet (AUDIT_WRITE_DEFER) */
	size_t nqueued;		      /* events in @queue */
	struct audit_shipper *ship;   /* a copy of each line for syslog/journald; NULL: none */
	bool by_path;		      /* opened by audit_log_open(): may follow @path (rotate.c) */
	uint64_t max_bytes;	      /* rotate past this size; 0: never (audit_log_set_max()) */
	char *rotated;		      /* @path + ".1" */
	audit_digest_fn digest;	      /* chained: the line digest (chain.c); NULL: not chained */
	uint8_t last[AUDIT_HASH_LEN]; /* chained: the digest of our last line, valid at @end */
	struct wd_buf chained;	      /* chained: '\n' + the batch with its "prev" members */
	audit_anchor_fn anchor;	      /* a new file's signed first line (anchor.c); NULL: none */
	const void *anchor_ctx;	      /* its key */
	ssize_t next_hole;	      /* ship_queue()'s hole for the line queued next, or -1 */
	ssize_t *holes;		      /* per queued line: its shipped copy's hole, or -1 */
	size_t capholes;
	char path[];
};

/* data_sync() - the log's bytes on stable storage: fdatasync(2); on macOS, where fsync does not
 * flush the drive's cache and fdatasync is not declared, F_FULLFSYNC. Return: 0, or -1 (errno) */
static int data_sync(int fd)
{
#ifdef F_FULLFSYNC
	return fcntl(fd, F_FULLFSYNC);
#else
	return fdatasync(fd);
#endif
}

static int check_folder(const char *path, struct wd_err *err)
{
	char copy[PATH_MAX];
	struct stat st;
	const char *dir;
	int ret;

	if (strlen(path) >= sizeof(copy))
		return wd_err_set(err, -ENAMETOOLONG, "audit log path is too long: %s", path);
	strcpy(copy, path);
	dir = dirname(copy);
	if (stat(dir, &st) < 0) {
		if (errno != ENOENT)
			return wd_err_set(err, -errno, "cannot use audit log folder %s: %s", dir,
					  strerror(errno));
		ret = wd_mkdir_p(dir, 0700);
		if (ret < 0)
			return wd_err_set(err, ret, "cannot create audit log folder %s: %s", dir,
					  strerror(-ret));
		if (stat(dir, &st) < 0)
			return wd_err_set(err, -errno, "cannot use audit log folder %s: %s", dir,
					  strerror(errno));
	}
	if (!S_ISDIR(st.st_mode))
		return wd_err_set(err, -ENOTDIR, "audit log folder %s is not a folder", dir);
	if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
		return wd_err_set(
		    err, -EPERM,
		    "audit log folder %s is writable by anyone (mode %04o), so anyone "
		    "could replace the log; fix: chmod o-w %s, or choose another "
		    "path with --audit-log",
		    dir, (unsigned)(st.st_mode & 07777), dir);
	return 0;
}

static int check_file(const char *path, const struct stat *st, struct wd_err *err)
{
	uid_t me = geteuid();

	if (!S_ISREG(st->st_mode))
		return wd_err_set(err, -EINVAL,
				  "audit log %s is not a regular file; refusing to write to it "
				  "(remove it, or choose another path with --audit-log)",
				  path);
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return wd_err_set(
		    err, -EPERM,
		    "audit log %s is writable by %s (mode %04o), so its records could "
		    "be forged; fix: chmod 600 %s",
		    path, st->st_mode & S_IWOTH ? "anyone" : "its group",
		    (unsigned)(st->st_mode & 07777), path);
	if ((uid_t)st->st_uid != me && st->st_uid != 0)
		return wd_err_set(err, -EPERM,
				  "audit log %s belongs to uid %u, not to you (uid %u) or root; "
				  "refusing to write to it (fix: chown %u %s, or choose another "
				  "path with --audit-log)",
				  path, (unsigned)st->st_uid, (unsigned)me, (unsigned)me, path);
	return 0;
}

static int open_error(const char *path, int e, struct wd_err *err)
{
	switch (e) {
	case ELOOP:
		return wd_err_set(err, -ELOOP,
				  "audit log %s is a symbolic link; refusing to follow it (replace "
				  "it with a regular file, or point --audit-log at the real file)",
				  path);
	case EISDIR:
	case ENXIO:
		return wd_err_set(err, -EINVAL,
				  "audit log %s is not a regular file; refusing to write to it",
				  path);
	default:
		return wd_err_set(err, -e, "cannot open audit log %s: %s", path, strerror(e));
	}
}

int audit_log_open(const char *path, struct audit_log **ret_log, struct wd_err *err)
{
	struct audit_log *log = NULL;
	struct stat st, rst;
	int fd = -1, rfd = -1, fl, ret;

	if (!path || !*path)
		return wd_err_set(err, -EINVAL, "no audit log path");
	ret = check_folder(path, err);
	if (ret < 0)
		return ret;
	/* O_NONBLOCK so that a FIFO planted at @path cannot hang us; cleared below. */
	fd = open(path,
		  O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK,
		  0600);
	if (fd < 0)
		return open_error(path, errno, err);
	if (fstat(fd, &st) < 0) {
		ret =
		    wd_err_set(err, -errno, "cannot stat audit log %s: %s", path, strerror(errno));
		goto out;
	}
	ret = check_file(path, &st, err);
	if (ret < 0)
		goto out;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		ret = wd_err_set(err, -errno, "audit log %s: fcntl: %s", path, strerror(errno));
		goto out;
	}
	rfd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
	if (rfd < 0) {
		ret = open_error(path, errno, err);
		goto out;
	}
	if (fstat(rfd, &rst) < 0 || rst.st_dev != st.st_dev || rst.st_ino != st.st_ino) {
		ret = wd_err_set(err, -EAGAIN,
				 "audit log %s was replaced while it was being opened", path);
		goto out;
	}
	log = calloc(1, sizeof(*log) + strlen(path) + 1);
	if (!log) {
		ret = wd_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	log->fd = fd;
	log->rfd = rfd;
	log->end = -1;
	log->next_hole = -1;
	log->by_path = true;
	strcpy(log->path, path);
	if (asprintf(&log->rotated, "%s" AUDIT_ROTATED_SUFFIX, path) < 0) {
		free(log);
		ret = wd_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	*ret_log = log;
	return 0;
out:
	wd_closep(&fd);
	wd_closep(&rfd);
	return ret;
}

const char *audit_log_path(const struct audit_log *log)
{
	return log->path;
}

/* ends_torn() - true when the file of @size bytes does not end in '\n'. */
static bool ends_torn(struct audit_log *log, off_t size)
{
	char c;

	if (size == 0 || size == log->end)
		return false;
	if (pread(log->rfd, &c, 1, size - 1) != 1)
		return false; /* cannot tell: write as usual */
	return c != '\n';
}

/* prev_of() - the digest the next line of the file (@size bytes) links to. Return: 0, or
 * -errno when the last line cannot be read (the link is then zeros: a verifier reports it) */
static int prev_of(struct audit_log *log, off_t size, uint8_t out[AUDIT_HASH_LEN])
{
	struct wd_buf line = WD_BUF_INIT;
	struct stat st;
	int fd, ret = 0;

	memset(out, 0, AUDIT_HASH_LEN);
	if (size > 0 && size == log->end) {
		memcpy(out, log->last, AUDIT_HASH_LEN);
		return 0;
	}
	if (size > 0) {
		ret = audit_read_last_line(log->rfd, size, &line);
	} else if (log->by_path) {
		/* a new file: it goes on from the rotated one */
		fd = open(log->rotated, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
		if (fd < 0) {
			wd_buf_free(&line);
			return 0; /* none: the chain begins here */
		}
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
			ret = audit_read_last_line(fd, st.st_size, &line);
		close(fd);
		if (ret == 0 && !line.len) {
			wd_buf_free(&line);
			return 0;
		}
	} else {
		wd_buf_free(&line);
		return 0;
	}
	if (ret == 0)
		log->digest(line.data ? line.data : "", line.len, out);
	wd_buf_free(&line);
	return ret;
}

/*
 * chain_batch() - with the file (@size bytes) locked: copy the batch at *@p (*@n bytes, one
 * or more lines ending in "}\n", a byte reserved before it) into log->chained with
 * ,"prev":"HEX" before each closing brace, each line linked to the one before; *@p and *@n
 * then describe the chained batch (still with a reserved byte in front).
 * Return: 0, or -errno (nothing changed).
 */
static int chain_batch(struct audit_log *log, off_t size, const char **p, size_t *n)
{
	uint8_t prev[AUDIT_HASH_LEN];
	const char *at = *p, *end = *p + *n;
	struct wd_buf *c = &log->chained;
	char *hex;
	size_t k = 0;

	(void)prev_of(log, size, prev);
	wd_buf_reset(c);
	if (wd_buf_append(c, "\n", 1) < 0)
		return -ENOMEM;
	while (at < end) {
		const char *nl = memchr(at, '\n', (size_t)(end - at));
		size_t start = c->len, len;

		if (!nl || nl - at < 2 || nl[-1] != '}')
			return -EINVAL;
		len = (size_t)(nl - at) - 1; /* without "}"; written in place below */
		if (wd_buf_reserve(c, len + 9 + 2 * AUDIT_HASH_LEN + 3) < 0)
			return -ENOMEM;
		memcpy(c->data + c->len, at, len);
		hex = (char *)memcpy(c->data + c->len + len, ",\"prev\":\"", 9) + 9;
		for (size_t i = 0; i < sizeof(prev); i++) {
			hex[2 * i] = "0123456789abcdef"[prev[i] >> 4];
			hex[2 * i + 1] = "0123456789abcdef"[prev[i] & 15];
		}
		memcpy(hex + 2 * AUDIT_HASH_LEN, "\"}\n", 4); /* with the buffer's NUL */
		c->len += len + 9 + 2 * AUDIT_HASH_LEN + 3;
		if (log->ship && k < log->nqueued)
			ship_fill(log->ship, log->holes[k], hex);
		k++;
		log->digest(c->data + start, c->len - start - 1, prev);
		at = nl + 1;
	}
	memcpy(log->last, prev, sizeof(prev));
	*p = c->data + 1;
	*n = c->len - 1;
	return 0;
}

/* write_anchor() - with the file locked and empty: the signed anchor (anchor.c) that links it
 * to the rotated file, when one is due. Return: 0, or -errno in @err (nothing written) */
static int write_anchor(struct audit_log *log, struct wd_err *err)
{
	struct wd_buf line = WD_BUF_INIT;
	int ret = log->anchor(log->anchor_ctx, log->rotated, &line);

	if (ret > 0 && (ret = wd_write_all(log->fd, line.data, line.len)) == 0) {
		log->digest(line.data, line.len - 1, log->last);
		log->end = (off_t)line.len;
	} else if (ret < 0 && ftruncate(log->fd, 0) < 0) {
		ret = -EIO;
	}
	wd_buf_free(&line);
	if (ret < 0)
		return wd_err_set(err, ret, "audit log %s: its signed anchor: %s", log->path,
				  strerror(-ret));
	return 0;
}

/* write_line() - the locked part of audit_log_write(). */
static int write_line(struct audit_log *log, const char *p, size_t n, unsigned flags,
		      struct wd_err *err)
{
	struct stat st;
	ssize_t w;
	int ret;

	if (fstat(log->fd, &st) < 0)
		return wd_err_set(err, -errno, "audit log %s: %s", log->path, strerror(errno));
	if (st.st_size == 0 && log->anchor) {
		ret = write_anchor(log, err);
		if (ret < 0)
			return ret;
		if (fstat(log->fd, &st) < 0)
			return wd_err_set(err, -errno, "audit log %s: %s", log->path,
					  strerror(errno));
	}
	if (log->digest) {
		ret = chain_batch(log, st.st_size, &p, &n);
		if (ret < 0)
			return wd_err_set(err, ret, "audit log %s: chaining the lines: %s",
					  log->path, strerror(-ret));
	}
	if (ends_torn(log, st.st_size)) {
		p--; /* the '\n' reserved in front of the line */
		n++;
	}
	do
		w = write(log->fd, p, n);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return wd_err_set(err, -errno, "cannot write to audit log %s: %s", log->path,
				  strerror(errno));
	if ((size_t)w < n) {
		/* Short: try to finish the line, else take the fragment back. */
		ret = wd_write_all(log->fd, p + w, n - (size_t)w);
		if (ret < 0) {
			if (ftruncate(log->fd, st.st_size) < 0)
				return wd_err_set(
				    err, ret,
				    "short write to audit log %s (%s); it now ends in "
				    "a torn line",
				    log->path, strerror(-ret));
			return wd_err_set(err, ret, "short write to audit log %s: %s", log->path,
					  strerror(-ret));
		}
	}
	if ((flags & AUDIT_WRITE_DURABLE) && data_sync(log->fd) < 0)
		return wd_err_set(err, -errno, "cannot sync audit log %s: %s", log->path,
				  strerror(errno));
	log->end = st.st_size + (off_t)n;
	return 0;
}

/* queue_buf() - append the encoded line in @b to the queue. */
static int queue_buf(struct audit_log *log, const struct wd_buf *b, struct wd_err *err)
{
	ssize_t hole = log->next_hole;
	int ret = 0;

	log->next_hole = -1;
	if (log->nqueued == log->capholes) {
		size_t cap = log->capholes ? 2 * log->capholes : 16;
		ssize_t *h = realloc(log->holes, cap * sizeof(*h));

		if (!h)
			return wd_err_set(err, -ENOMEM, "out of memory");
		log->holes = h;
		log->capholes = cap;
	}
	if (!log->queue.len)
		ret = wd_buf_append(&log->queue, "\n", 1); /* room for a repair newline */
	if (!ret)
		ret = wd_buf_append(&log->queue, b->data, b->len);
	if (ret < 0)
		return wd_err_set(err, ret, "out of memory");
	log->holes[log->nqueued++] = hole;
	return 0;
}

/* queue_line() - append the encoded line in log->buf to the queue. */
static int queue_line(struct audit_log *log, struct wd_err *err)
{
	return queue_buf(log, &log->buf, err);
}

/* queue_ship_notices() - the shipper's "audit.ship" events (an outage began or ended) join
 * the queue: they go with the next batch (best effort: they are about the copy, the file
 * keeps every event either way) */
static void queue_ship_notices(struct audit_log *log)
{
	struct wd_buf b = WD_BUF_INIT; /* not log->buf: it holds the caller's last line */
	struct audit_event ev;
	char reason[512];
	bool ship;

	while (ship_notice(log->ship, &ev, reason, sizeof(reason), &ship) == 1) {
		ev.reason = reason;
		clock_gettime(CLOCK_REALTIME, &ev.ts);
		wd_buf_reset(&b);
		if (audit_event_encode(&ev, &b, NULL) < 0)
			continue;
		if (ship) /* first: queue_buf() takes its hole */
			log->next_hole = ship_queue(log->ship, &ev, b.data, b.len, log->digest);
		(void)queue_buf(log, &b, NULL);
	}
	wd_buf_free(&b);
}

/* same_file() - whether @st is the file @fd holds */
static bool same_file(int fd, const struct stat *st)
{
	struct stat fst;

	return fstat(fd, &fst) == 0 && fst.st_dev == st->st_dev && fst.st_ino == st->st_ino;
}

/*
 * follow_path() - with @log's file locked: when the path names another file now (rotated
 * by another writer, removed, replaced), or when @n more bytes would take a non-empty file
 * past the cap (then it is renamed to ".1" first, under this lock), open the path again
 * with audit_log_open()'s checks and drop the old lock. A path that cannot be opened again
 * (or renamed) leaves the writer on its old file: a line in the ".1" file is better than a
 * line lost. Return: 1 when the writer switched (nothing locked now), 0 when it stays (the
 * lock held).
 */
static int follow_path(struct audit_log *log, size_t n)
{
	struct audit_log *fresh = NULL;
	bool rotated = false;
	struct stat st;

	if (stat(log->path, &st) < 0) {
		if (errno != ENOENT)
			return 0;
	} else if (same_file(log->fd, &st)) {
		if (!log->max_bytes || st.st_size == 0 ||
		    (uint64_t)st.st_size + n <= log->max_bytes)
			return 0;
		if (rename(log->path, log->rotated) < 0)
			return 0;
		rotated = true;
	}
	if (audit_log_open(log->path, &fresh, NULL) < 0 || !fresh)
		return 0;
	if (rotated) /* the new file before the old is let go: the anchor goes first */
		(void)flock(fresh->fd, LOCK_EX | LOCK_NB);
	flock(log->fd, LOCK_UN);
	wd_closep(&log->fd);
	wd_closep(&log->rfd);
	log->fd = fresh->fd;
	log->rfd = fresh->rfd;
	log->end = -1;
	/* only its descriptors were wanted: nothing queued, nothing shipped, nothing to flush */
	wd_buf_free(&fresh->buf);
	wd_buf_free(&fresh->queue);
	wd_buf_free(&fresh->chained);
	free(fresh->rotated);
	free(fresh);
	return 1;
}

/* lock_one() - flock(LOCK_EX) the writer's descriptor. Return: 0 or -errno (in @err). */
static int lock_one(struct audit_log *log, struct wd_err *err)
{
	while (flock(log->fd, LOCK_EX) < 0) {
		if (errno != EINTR)
			return wd_err_set(err, -errno, "cannot lock audit log %s: %s", log->path,
					  strerror(errno));
	}
	return 0;
}

/*
 * lock_current() - lock the file @n more bytes go to: the one the path names now (a writer
 * opened by path follows a rotation, and rotates past its cap). Bounded: after a few
 * switches (a path replaced over and over) the last file locked takes the line.
 * Return: 0 with the lock held, or -errno (in @err).
 */
static int lock_current(struct audit_log *log, size_t n, struct wd_err *err)
{
	int ret;

	for (int tries = 0;; tries++) {
		ret = lock_one(log, err);
		if (ret < 0 || !log->by_path || tries == 4)
			return ret;
		if (follow_path(log, n) <= 0)
			return 0;
	}
}

/* flush_queue() - write the queue in one locked write(); empties it. */
static int flush_queue(struct audit_log *log, unsigned flags, struct wd_err *err)
{
	size_t n = log->nqueued;
	int ret;

	if (!n)
		return 0;
	ret = lock_current(log, log->queue.len - 1, err);
	if (ret < 0)
		goto out;
	ret = write_line(log, log->queue.data + 1, log->queue.len - 1, flags, err);
	flock(log->fd, LOCK_UN);
	if (ret < 0)
		log->end = -1;
out:
	wd_buf_reset(&log->queue);
	log->nqueued = 0;
	log->next_hole = -1;
	if (log->ship) {
		ship_commit(log->ship, ret >= 0);
		queue_ship_notices(log);
	}
	return ret < 0 ? ret : (int)(n > INT32_MAX ? INT32_MAX : n);
}

int audit_log_write(struct audit_log *log, const struct audit_event *ev, unsigned flags,
		    struct wd_err *err)
{
	struct audit_event stamped;
	int ret;

	if (ev->ts.tv_sec == 0 && ev->ts.tv_nsec == 0) {
		stamped = *ev;
		clock_gettime(CLOCK_REALTIME, &stamped.ts);
		ev = &stamped;
	}
	wd_buf_reset(&log->buf);
	ret = audit_event_encode(ev, &log->buf, err);
	if (ret < 0)
		return ret;
	if ((flags & AUDIT_WRITE_DEFER) && !(flags & AUDIT_WRITE_DURABLE)) {
		/* a batch stays within AUDIT_LINE_MAX: flush what is queued first */
		if (log->nqueued && log->queue.len - 1 + log->buf.len > AUDIT_LINE_MAX) {
			ret = flush_queue(log, 0, err);
			if (ret < 0)
				return ret;
		}
		if (log->ship) /* after that flush: the sink gets it with its own batch */
			log->next_hole =
			    ship_queue(log->ship, ev, log->buf.data, log->buf.len, log->digest);
		return queue_line(log, err);
	}
	/* an immediate write carries the queued lines with it, in order */
	if (log->ship)
		log->next_hole =
		    ship_queue(log->ship, ev, log->buf.data, log->buf.len, log->digest);
	ret = queue_line(log, err);
	if (ret < 0)
		return ret;
	ret = flush_queue(log, flags & AUDIT_WRITE_DURABLE, err);
	return ret < 0 ? ret : 0;
}

size_t audit_log_last_len(const struct audit_log *log)
{
	return log->buf.len;
}

const char *audit_log_last_line(const struct audit_log *log, size_t *ret_len)
{
	*ret_len = log->buf.len;
	return log->buf.len ? log->buf.data : NULL;
}

void audit_log_set_max(struct audit_log *log, uint64_t max_bytes)
{
	log->max_bytes = max_bytes;
}

int audit_log_where(const struct audit_log *log, struct audit_log_pos *ret_pos)
{
	struct stat st;

	if (log->end < 0)
		return -ENODATA;
	if (fstat(log->fd, &st) < 0)
		return -errno;
	ret_pos->dev = st.st_dev;
	ret_pos->ino = st.st_ino;
	ret_pos->end = log->end;
	return 0;
}

int audit_log_flush(struct audit_log *log, struct wd_err *err)
{
	return flush_queue(log, 0, err);
}

int audit_log_sync(struct audit_log *log)
{
	int ret = flush_queue(log, 0, NULL);

	if (ret < 0)
		return ret;
	return data_sync(log->fd) < 0 ? -errno : 0;
}

size_t audit_log_pending(const struct audit_log *log)
{
	return log->nqueued;
}

int audit_log_from_fd(int fd, const char *label, struct audit_log **ret_log, struct wd_err *err)
{
	struct audit_log *log;
	struct stat st;
	int fl, rfd = -1, ret;

	if (fd < 0)
		return wd_err_set(err, -EBADF, "no audit log descriptor");
	if (!label)
		label = "(descriptor)";
	if (fstat(fd, &st) < 0)
		return wd_err_set(err, -errno, "cannot stat audit log %s: %s", label,
				  strerror(errno));
	ret = check_file(label, &st, err);
	if (ret < 0)
		return ret;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return wd_err_set(err, -errno, "audit log %s: fcntl: %s", label, strerror(errno));
	if (!(fl & O_APPEND) || (fl & O_ACCMODE) == O_RDONLY)
		return wd_err_set(err, -EBADF,
				  "audit log %s: the descriptor is not open for appending", label);
	if (fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return wd_err_set(err, -errno, "audit log %s: fcntl: %s", label, strerror(errno));
	if ((fl & O_ACCMODE) == O_RDWR) {
		rfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (rfd < 0)
			return wd_err_set(err, -errno, "audit log %s: dup: %s", label,
					  strerror(errno));
	}
	log = calloc(1, sizeof(*log) + strlen(label) + 1);
	if (!log) {
		wd_closep(&rfd);
		return wd_err_set(err, -ENOMEM, "out of memory");
	}
	log->fd = fd;
	log->rfd = rfd;
	log->end = -1;
	log->next_hole = -1;
	strcpy(log->path, label);
	*ret_log = log;
	return 0;
}

int audit_log_ship(struct audit_log *log, const struct audit_sink *sink, const char *app,
		   struct wd_err *err)
{
	struct audit_shipper *sh = NULL;
	int ret;

	if (log->ship)
		return wd_err_set(err, -EALREADY, "audit log %s is shipped already", log->path);
	ret = ship_open(sink, app, &sh, err);
	if (ret < 0)
		return ret;
	log->ship = sh;
	return 0;
}

void audit_log_ship_stats(const struct audit_log *log, uint64_t *ret_sent, uint64_t *ret_dropped)
{
	*ret_sent = *ret_dropped = 0;
	if (log->ship)
		ship_stats(log->ship, ret_sent, ret_dropped);
}

void audit_log_close(struct audit_log *log)
{
	if (!log)
		return;
	(void)flush_queue(log, 0, NULL);
	if (log->nqueued) /* the shipper's last notices */
		(void)flush_queue(log, 0, NULL);
	ship_close(log->ship);
	wd_closep(&log->fd);
	wd_closep(&log->rfd);
	wd_buf_free(&log->buf);
	wd_buf_free(&log->queue);
	wd_buf_free(&log->chained);
	free(log->holes);
	free(log->rotated);
	free(log);
}

void audit_writer_set_digest(struct audit_log *log, audit_digest_fn fn)
{
	log->digest = fn;
	log->end = -1; /* the kept digest is of no line yet */
}

int audit_writer_set_anchor(struct audit_log *log, audit_anchor_fn fn, const void *ctx,
			    struct wd_err *err)
{
	struct stat st;
	int ret;

	log->anchor = log->by_path && log->digest ? fn : NULL; /* else never due */
	log->anchor_ctx = ctx;
	if (!log->anchor)
		return 0;
	ret = lock_current(log, 0, err);
	if (ret < 0)
		return ret;
	if (fstat(log->fd, &st) < 0)
		ret = wd_err_set(err, -errno, "audit log %s: %s", log->path, strerror(errno));
	else if (st.st_size == 0)
		ret = write_anchor(log, err);
	flock(log->fd, LOCK_UN);
	return ret;
}

int audit_log_last_hash(const struct audit_log *log, uint8_t out[AUDIT_HASH_LEN])
{
	if (!log->digest || log->end < 0)
		return -ENODATA;
	memcpy(out, log->last, AUDIT_HASH_LEN);
	return 0;
}

int audit_log_write_encoded(struct audit_log *log, const struct audit_event *ev, const char *line,
			    size_t len, unsigned flags, struct wd_err *err)
{
	int ret;

	if (len < 3 || line[0] != '{' || line[len - 2] != '}' || line[len - 1] != '\n' ||
	    memchr(line, '\n', len - 1))
		return wd_err_set(err, -EINVAL, "audit log %s: not one line", log->path);
	wd_buf_reset(&log->buf);
	ret = wd_buf_append(&log->buf, line, len);
	if (ret < 0)
		return wd_err_set(err, ret, "out of memory");
	if (log->ship)
		log->next_hole =
		    ship_queue(log->ship, ev, log->buf.data, log->buf.len, log->digest);
	ret = queue_line(log, err);
	if (ret < 0)
		return ret;
	ret = flush_queue(log, flags & AUDIT_WRITE_DURABLE, err);
	return ret < 0 ? ret : 0;
}
