/* anchor.c - the signed anchor a writer puts first in a new log file after a rotation: the
 * rotated file's name, line count and last line's hash, signed with the writer's key and
 * chained to that last line (docs/audit.md, "The anchor after a rotation"). */
#include "audit/audit.h"
#include "audit/chain_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* count_lines() - the lines of the file on @fd (@size bytes) as a verifier numbers them: its
 * newlines, and a torn last line. Return: 0 or -errno */
static int count_lines(int fd, off_t size, int64_t *ret_n)
{
	char block[1 << 15];
	int64_t n = 0;
	char lastc = '\n';
	ssize_t r;

	for (off_t at = 0; at < size; at += r) {
		size_t want =
		    (size_t)(size - at) < sizeof(block) ? (size_t)(size - at) : sizeof(block);

		r = pread(fd, block, want, at);
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		for (ssize_t i = 0; i < r; i++)
			n += block[i] == '\n';
		lastc = block[r - 1];
	}
	*ret_n = n + (lastc != '\n');
	return 0;
}

/* facts() - the line count of the rotated file on @fd and the digest of its last line, read
 * under a shared lock (a writer adopted from a descriptor may still append to it).
 * Return: 1 with them, 0 for an empty file, or -errno */
static int facts(int fd, int64_t *ret_n, uint8_t last[AUDIT_HASH_LEN])
{
	struct wd_buf line = WD_BUF_INIT;
	struct stat st;
	int ret;

	while (flock(fd, LOCK_SH) < 0)
		if (errno != EINTR)
			return -errno;
	if (fstat(fd, &st) < 0)
		ret = -errno;
	else if (!S_ISREG(st.st_mode))
		ret = -EINVAL;
	else if (st.st_size == 0)
		ret = 0;
	else if ((ret = count_lines(fd, st.st_size, ret_n)) == 0 &&
		 (ret = audit_read_last_line(fd, st.st_size, &line)) == 0) {
		audit_sha256(line.data ? line.data : "", line.len, last);
		ret = 1;
	}
	flock(fd, LOCK_UN);
	wd_buf_free(&line);
	return ret;
}

/* make_anchor() - audit_anchor_fn: the signed, chained anchor for the file after @rotated */
static int make_anchor(const void *ctx, const char *rotated, struct wd_buf *out)
{
	const struct audit_key *k = ctx;
	const char *name = strrchr(rotated, '/');
	struct wd_buf line = WD_BUF_INIT, signed_line = WD_BUF_INIT;
	uint8_t last[AUDIT_HASH_LEN];
	char hex[8 + 2 * AUDIT_HASH_LEN], reason[160];
	struct audit_event ev = {0};
	int64_t n = 0;
	int fd, ret;

	fd = open(rotated, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	ret = facts(fd, &n, last);
	close(fd);
	if (ret <= 0)
		return ret;
	name = name ? name + 1 : rotated;
	memcpy(hex, "sha256:", 7);
	audit_hex(last, sizeof(last), hex + 7);
	snprintf(reason, sizeof(reason),
		 "this file goes on from line %lld of the file before it (rotated), signed",
		 (long long)n);
	ev.run = "";
	ev.type = AUDIT_TYPE_OTHER;
	ev.type_name = "audit";
	ev.action = AUDIT_ANCHOR;
	ev.allowed = true;
	ev.resource = name;
	ev.reason = reason;
	ev.has = AUDIT_HAS_LINES;
	ev.lines = n;
	ev.last_line = hex;
	ev.key = audit_key_id(k);
	clock_gettime(CLOCK_REALTIME, &ev.ts);
	ret = audit_event_encode(&ev, &line, NULL);
	if (ret == 0)
		ret = audit_sign_line(k, line.data, line.len, &signed_line);
	/* the chain member goes where the signed line closes: ...,"sig":"…","prev":"HEX"} */
	if (ret == 0 && (wd_buf_append(out, signed_line.data, signed_line.len - 2) < 0 ||
			 wd_buf_append(out, ",\"prev\":\"", 9) < 0 ||
			 wd_buf_append(out, hex + 7, 2 * AUDIT_HASH_LEN) < 0 ||
			 wd_buf_append(out, "\"}\n", 3) < 0))
		ret = -ENOMEM;
	wd_buf_free(&line);
	wd_buf_free(&signed_line);
	return ret < 0 ? ret : 1;
}

int audit_log_sign_anchors(struct audit_log *log, const struct audit_key *k, struct wd_err *err)
{
	if (!k || !audit_key_can_sign(k))
		return wd_err_set(err, -EPERM, "audit log %s: no private key to sign its anchors",
				  audit_log_path(log));
	return audit_writer_set_anchor(log, make_anchor, k, err);
}
