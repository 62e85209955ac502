/* ship.c - a copy of every audit line for the log stacks operators run: RFC 5424 syslog
 * (unix datagram, UDP, octet-counted TCP) or journald's native protocol. */
#include "audit/ship_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/*
 * Theory of operation
 *
 * The local log is the record; the sink gets a copy. audit_log_write() hands each encoded
 * line to ship_queue(), which frames it at once (the event's time, severity and action are
 * at hand there) into @pending; once the local write() of the batch succeeded,
 * ship_commit() sends what is pending, and a batch the local log did not take is dropped
 * (the sink never has an event the log lacks). Nothing here blocks the caller:
 *
 *  - datagram sinks (unix, udp, journald) send each message with MSG_DONTWAIT; a message
 *    the socket does not take (no listener, a full buffer, ICMP unreachable seen on the
 *    next send) is not shipped and is counted;
 *  - the TCP sink connects without blocking and keeps unsent frames in @out, up to
 *    SHIP_TCP_BUF bytes: a short outage loses nothing, and a frame cut by a broken
 *    connection is sent again whole on the next one (the receiver drops the torn one:
 *    octet counting tells it where frames end). Past the bound, new messages are counted
 *    and not shipped.
 *
 * A broken sink is reconnected at most once a second, at the next event. The writer learns
 * of an outage and of its end through ship_notice(): it writes them into the local log as
 * "audit.ship" events, and the end (with how many events were not shipped) is shipped too.
 */

#define SHIP_TCP_BUF (4u << 20)	    /* unsent TCP frames kept while the sink is away */
#define SHIP_RETRY_NS 1000000000ull /* a broken sink is tried again after this */
#define SHIP_DGRAM_MAX 65000u	    /* the largest datagram we send (UDP's limit) */
#define SHIP_CLOSE_MS 1000	    /* audit_log_close() waits this long for the TCP sink */

enum ship_state {
	SHIP_DOWN,	 /* no socket (or a broken one, closed) */
	SHIP_CONNECTING, /* TCP: connect() in progress */
	SHIP_UP,
};

struct audit_shipper {
	struct audit_sink sink;
	char name[160]; /* the sink as text, for messages */
	char host[256]; /* RFC 5424 HOSTNAME */
	char app[49];	/* APP-NAME / SYSLOG_IDENTIFIER */
	long pid;	/* PROCID */
	int fd;
	enum ship_state state;
	uint64_t next_try;     /* CLOCK_MONOTONIC ns: earliest reconnect */
	struct wd_buf pending; /* framed messages of the batch not yet written locally */
	size_t npending;
	struct wd_buf out; /* TCP: frames not sent yet */
	size_t out_off;	   /* TCP: bytes of @out already sent */
	/* what the writer reports */
	uint64_t sent, dropped;
	uint64_t gap; /* events not shipped since the outage began */
	struct timespec gap_since;
	int gap_errno;	  /* why the outage began */
	bool outage;	  /* the sink failed and has not worked since */
	bool notice_down; /* the outage is not reported yet */
	bool notice_up;	  /* its end is not reported yet */
};

/* the sink failed with @e: a new outage unless one is under way */
static void outage(struct audit_shipper *sh, int e)
{
	if (sh->outage)
		return;
	sh->outage = true;
	clock_gettime(CLOCK_REALTIME, &sh->gap_since);
	sh->gap_errno = e;
	sh->notice_down = true;
}

/* the sink took something: an outage is over */
static void worked(struct audit_shipper *sh)
{
	if (!sh->outage)
		return;
	sh->outage = false;
	sh->notice_up = true;
}

/* ------------------------------------------------------------------ framing */

/* RFC 5424 PRINTUSASCII (33..126) field of at most @max bytes, "-" when empty */
static int put_field(struct wd_buf *b, const char *s, size_t max)
{
	size_t n = 0;
	int ret = 0;

	for (; s && n < max && s[n]; n++)
		if ((unsigned char)s[n] < 33 || (unsigned char)s[n] > 126)
			break;
	if (!n || (n < max && s[n]))
		return wd_buf_append(b, "-", 1); /* empty, or something RFC 5424 cannot carry */
	ret = wd_buf_append(b, s, n);
	return ret;
}

static int severity(const struct audit_event *ev)
{
	if (ev->type == AUDIT_TYPE_OTHER && ev->type_name && !strcmp(ev->type_name, "audit"))
		return 4;	    /* warning: the audit trail itself has a gap */
	return ev->allowed ? 6 : 5; /* informational; a denial is a notice */
}

/* one RFC 5424 message: <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID - BOM MSG */
static int frame_syslog(struct audit_shipper *sh, const struct audit_event *ev, const char *line,
			size_t len, struct wd_buf *b)
{
	char ts[32];
	int ret;

	if (wd_rfc3339(&ev->ts, ts, sizeof(ts)) < 0)
		return -EINVAL;
	ret = wd_buf_printf(b, "<%d>1 %s ", sh->sink.facility * 8 + severity(ev), ts);
	ret |= put_field(b, sh->host, 255);
	ret |= wd_buf_append(b, " ", 1);
	ret |= put_field(b, sh->app, 48);
	ret |= wd_buf_printf(b, " %ld ", sh->pid);
	ret |= put_field(b, ev->action, 32);
	/* no structured data; MSG is UTF-8 (the encoder guarantees it), so it starts with BOM */
	ret |= wd_buf_append(b, " - \xef\xbb\xbf", 6);
	ret |= wd_buf_append(b, line, len);
	return ret ? -ENOMEM : 0;
}

/* journald: a value with no newline may be sent as FIELD=value\n */
static bool simple_value(const char *s)
{
	for (; s && *s; s++)
		if (*s == '\n' || (unsigned char)*s < 32)
			return false;
	return s != NULL;
}

static int frame_journald(struct audit_shipper *sh, const struct audit_event *ev, const char *line,
			  size_t len, struct wd_buf *b)
{
	int ret;

	ret = wd_buf_puts(b, "MESSAGE=");
	ret |= wd_buf_append(b, line, len); /* one JSON line: no raw newline inside */
	ret |= wd_buf_printf(b, "\nPRIORITY=%d\nSYSLOG_FACILITY=%d\nSYSLOG_IDENTIFIER=%s\n",
			     severity(ev), sh->sink.facility, sh->app);
	ret |= wd_buf_printf(b, "WARDEN_ALLOWED=%d\n", ev->allowed ? 1 : 0);
	if (simple_value(ev->action))
		ret |= wd_buf_printf(b, "WARDEN_ACTION=%s\n", ev->action);
	if (simple_value(ev->run) && ev->run[0])
		ret |= wd_buf_printf(b, "WARDEN_RUN=%s\n", ev->run);
	if (ev->has & AUDIT_HAS_UID)
		ret |= wd_buf_printf(b, "WARDEN_UID=%lld\n", (long long)ev->uid);
	return ret ? -ENOMEM : 0;
}

ssize_t ship_queue(struct audit_shipper *sh, const struct audit_event *ev, const char *line,
		   size_t len, bool chained)
{
	static const char zeros[SHIP_HOLE_LEN] = {0};
	struct wd_buf msg = WD_BUF_INIT, tmp = WD_BUF_INIT;
	ssize_t hole = -1;
	size_t at;
	int ret = 0;

	if (len && line[len - 1] == '\n')
		len--;
	if (chained && len && line[len - 1] == '}') {
		/* the line as the file gets it: its "prev" digits come later (ship_fill()) */
		ret = wd_buf_append(&tmp, line, len - 1);
		if (!ret)
			ret = wd_buf_puts(&tmp, ",\"prev\":\"");
		if (!ret)
			ret = wd_buf_append(&tmp, zeros, sizeof(zeros));
		if (!ret)
			ret = wd_buf_puts(&tmp, "\"}");
		line = tmp.data;
		len = tmp.len;
	}
	if (!ret)
		ret = sh->sink.kind == AUDIT_SINK_JOURNALD ? frame_journald(sh, ev, line, len, &msg)
							   : frame_syslog(sh, ev, line, len, &msg);
	if (!ret && tmp.len) {
		/* journald's MESSAGE= comes first, syslog's MSG last */
		at = sh->sink.kind == AUDIT_SINK_JOURNALD ? 8 : msg.len - len;
		hole = (ssize_t)(sh->pending.len + sizeof(msg.len) + at + len - 2 - SHIP_HOLE_LEN);
	}
	wd_buf_free(&tmp);
	/* pending holds [size_t length][bytes] records */
	if (!ret)
		ret = wd_buf_append(&sh->pending, &msg.len, sizeof(msg.len));
	if (!ret)
		ret = wd_buf_append(&sh->pending, msg.data, msg.len);
	wd_buf_free(&msg);
	if (ret < 0) {
		sh->dropped++; /* out of memory: the local line is what counts */
		sh->gap++;
		outage(sh, -ret);
		return -1;
	}
	sh->npending++;
	return hole;
}

void ship_fill(struct audit_shipper *sh, ssize_t hole, const char *hex)
{
	if (hole >= 0 && (size_t)hole + SHIP_HOLE_LEN <= sh->pending.len)
		memcpy(sh->pending.data + hole, hex, SHIP_HOLE_LEN);
}

/* ------------------------------------------------------------------ sockets */

static socklen_t sink_addr(const struct audit_sink *s, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	switch (s->kind) {
	case AUDIT_SINK_UNIX:
	case AUDIT_SINK_JOURNALD: {
		struct sockaddr_un *un = (struct sockaddr_un *)ss;

		un->sun_family = AF_UNIX;
		memcpy(un->sun_path, s->path, strlen(s->path) + 1);
		return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(s->path) + 1);
	}
	case AUDIT_SINK_UDP:
	case AUDIT_SINK_TCP:
		if (s->family == AF_INET6) {
			struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

			in6->sin6_family = AF_INET6;
			in6->sin6_port = htons(s->port);
			memcpy(&in6->sin6_addr, s->addr, 16);
			return sizeof(*in6);
		} else {
			struct sockaddr_in *in = (struct sockaddr_in *)ss;

			in->sin_family = AF_INET;
			in->sin_port = htons(s->port);
			memcpy(&in->sin_addr, s->addr, 4);
			return sizeof(*in);
		}
	case AUDIT_SINK_NONE:
		break;
	}
	return 0;
}

static void ship_down(struct audit_shipper *sh, int e, uint64_t now)
{
	if (sh->fd >= 0)
		close(sh->fd);
	sh->fd = -1;
	sh->state = SHIP_DOWN;
	sh->next_try = now + SHIP_RETRY_NS;
	outage(sh, e);
}

/* (re)open the socket; Return: 0 (also when a TCP connect is under way), or -errno */
static int ship_connect(struct audit_shipper *sh, uint64_t now)
{
	struct sockaddr_storage ss;
	socklen_t len = sink_addr(&sh->sink, &ss);
	int type = sh->sink.kind == AUDIT_SINK_TCP ? SOCK_STREAM : SOCK_DGRAM;
#ifdef SOCK_CLOEXEC
	int fd = socket(ss.ss_family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), r;
#else
	/* macOS: no SOCK_CLOEXEC or SOCK_NONBLOCK; set both at once, or give up on the socket */
	int fd = socket(ss.ss_family, type, 0), r;

	if (fd >= 0 && (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 || fcntl(fd, F_SETFL, O_NONBLOCK) < 0)) {
		r = errno;
		close(fd);
		fd = -1;
		errno = r;
	}
#endif

	if (fd < 0) {
		r = -errno;
		sh->next_try = now + SHIP_RETRY_NS;
		outage(sh, -r);
		return r;
	}
	sh->fd = fd;
	if (connect(fd, (struct sockaddr *)&ss, len) == 0) {
		sh->state = SHIP_UP;
		return 0;
	}
	if (errno == EINPROGRESS && type == SOCK_STREAM) {
		sh->state = SHIP_CONNECTING;
		return 0;
	}
	r = -errno;
	ship_down(sh, errno, now);
	return r;
}

/* a TCP connect under way: finished? */
static void ship_check_connect(struct audit_shipper *sh, uint64_t now, int wait_ms)
{
	struct pollfd p = {.fd = sh->fd, .events = POLLOUT};
	socklen_t l = sizeof(int);
	int e = 0;

	if (poll(&p, 1, wait_ms) <= 0)
		return;
	if (getsockopt(sh->fd, SOL_SOCKET, SO_ERROR, &e, &l) < 0)
		e = errno;
	if (e)
		ship_down(sh, e, now);
	else
		sh->state = SHIP_UP;
}

/* TCP: send what @out holds; drop the frames sent. A frame a broken connection cut goes
 * again whole on the next one. */
static void ship_tcp_drain(struct audit_shipper *sh, uint64_t now)
{
	size_t pos = 0;

	while (sh->state == SHIP_UP && sh->out_off < sh->out.len) {
		ssize_t w = send(sh->fd, sh->out.data + sh->out_off, sh->out.len - sh->out_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (w <= 0) {
			ship_down(sh, w < 0 ? errno : EPIPE, now);
			break;
		}
		sh->out_off += (size_t)w;
		worked(sh);
	}
	/* the frames sent whole: walk the octet counts ("LEN SP MSG") */
	while (pos < sh->out_off) {
		char *sp;
		unsigned long n = strtoul(sh->out.data + pos, &sp, 10);
		size_t end = (size_t)(sp - sh->out.data) + 1 + n;

		if (end > sh->out_off)
			break;
		pos = end;
	}
	memmove(sh->out.data, sh->out.data + pos, sh->out.len - pos);
	sh->out.len -= pos;
	sh->out_off = sh->state == SHIP_UP ? sh->out_off - pos : 0;
}

/* one framed message to the sink; Return: true when it was sent or (TCP) kept */
static bool ship_one(struct audit_shipper *sh, const char *m, size_t n, uint64_t now)
{
	ssize_t w;

	if (sh->sink.kind == AUDIT_SINK_TCP) {
		size_t was = sh->out.len;

		if (sh->out.len + n + 16 > SHIP_TCP_BUF) {
			outage(sh, ENOBUFS); /* the receiver is away too long, or too slow */
			return false;
		}
		if (wd_buf_printf(&sh->out, "%zu ", n) || wd_buf_append(&sh->out, m, n)) {
			sh->out.len = was; /* no half frame */
			return false;
		}
		return true;
	}
	if (sh->state != SHIP_UP)
		return false;
	if (n > SHIP_DGRAM_MAX) {
		outage(sh, EMSGSIZE);
		return false;
	}
	do
		w = send(sh->fd, m, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w == (ssize_t)n) {
		worked(sh);
		return true;
	}
	if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS &&
	    errno != EMSGSIZE)
		ship_down(sh, errno, now); /* no listener: reconnect later */
	else
		outage(sh, w < 0 ? errno : EMSGSIZE); /* full: this one is lost */
	return false;
}

void ship_commit(struct audit_shipper *sh, bool written)
{
	uint64_t now = wd_mono_ns();
	size_t pos = 0;

	if (!written || !sh->npending)
		goto out;
	if (sh->state == SHIP_DOWN && now >= sh->next_try)
		(void)ship_connect(sh, now);
	if (sh->state == SHIP_CONNECTING)
		ship_check_connect(sh, now, 0);
	while (pos + sizeof(size_t) <= sh->pending.len) {
		size_t n;

		memcpy(&n, sh->pending.data + pos, sizeof(n));
		pos += sizeof(n);
		if (ship_one(sh, sh->pending.data + pos, n, now)) {
			sh->sent++;
		} else {
			sh->dropped++;
			sh->gap++;
		}
		pos += n;
	}
	if (sh->sink.kind == AUDIT_SINK_TCP)
		ship_tcp_drain(sh, now);
out:
	wd_buf_reset(&sh->pending);
	sh->npending = 0;
}

int ship_notice(struct audit_shipper *sh, struct audit_event *ev, char *reason, size_t size,
		bool *ret_ship)
{
	char since[32];

	if (!sh->notice_down && !sh->notice_up)
		return 0;
	*ev = (struct audit_event){
	    .run = "",
	    .type = AUDIT_TYPE_OTHER,
	    .type_name = "audit",
	    .action = "audit.ship",
	    .resource = sh->name,
	    .allowed = false,
	};
	if (wd_rfc3339(&sh->gap_since, since, sizeof(since)) < 0)
		snprintf(since, sizeof(since), "?");
	if (sh->notice_down) {
		sh->notice_down = false;
		snprintf(reason, size,
			 "shipping the audit log to %s failed (%s); from %s on, events are in "
			 "this log only until it works again",
			 sh->name, strerror(sh->gap_errno), since);
		*ret_ship = false;
		return 1;
	}
	sh->notice_up = false;
	ev->has = AUDIT_HAS_COUNT;
	ev->count = (int64_t)sh->gap;
	snprintf(reason, size,
		 "shipping the audit log to %s works again: %llu events since %s were not "
		 "shipped (%s); they are in the local log",
		 sh->name, (unsigned long long)sh->gap, since, strerror(sh->gap_errno));
	sh->gap = 0;
	*ret_ship = true;
	return 1;
}

int ship_open(const struct audit_sink *sink, const char *app, struct audit_shipper **ret,
	      struct wd_err *err)
{
	struct audit_shipper *sh;

	if (sink->kind == AUDIT_SINK_NONE || sink->facility < 0 || sink->facility > 23)
		return wd_err_set(err, -EINVAL, "no audit shipping sink");
	sh = calloc(1, sizeof(*sh));
	if (!sh)
		return wd_err_set(err, -ENOMEM, "out of memory");
	sh->sink = *sink;
	sh->fd = -1;
	if (audit_sink_format(sink, sh->name, sizeof(sh->name)) < 0)
		snprintf(sh->name, sizeof(sh->name), "(sink)");
	if (gethostname(sh->host, sizeof(sh->host) - 1) < 0)
		sh->host[0] = '\0';
	snprintf(sh->app, sizeof(sh->app), "%s", app && *app ? app : "warden");
	sh->pid = (long)getpid();
	/* a sink that cannot be reached now is an outage like a later one: the first events
	 * written report it in the local log */
	(void)ship_connect(sh, wd_mono_ns());
	*ret = sh;
	return 0;
}

void ship_stats(const struct audit_shipper *sh, uint64_t *ret_sent, uint64_t *ret_dropped)
{
	*ret_sent = sh->sent;
	*ret_dropped = sh->dropped;
}

void ship_close(struct audit_shipper *sh)
{
	uint64_t until;

	if (!sh)
		return;
	/* TCP: give what is left a moment to go */
	until = wd_mono_ns() + SHIP_CLOSE_MS * 1000000ull;
	while (sh->sink.kind == AUDIT_SINK_TCP && sh->out.len && sh->state != SHIP_DOWN) {
		uint64_t now = wd_mono_ns();
		struct pollfd p = {.fd = sh->fd, .events = POLLOUT};

		if (now >= until)
			break;
		if (sh->state == SHIP_CONNECTING) {
			ship_check_connect(sh, now, (int)((until - now) / 1000000));
			continue;
		}
		if (poll(&p, 1, (int)((until - now) / 1000000)) <= 0)
			break;
		ship_tcp_drain(sh, now);
	}
	if (sh->fd >= 0)
		close(sh->fd);
	wd_buf_free(&sh->pending);
	wd_buf_free(&sh->out);
	free(sh);
}
