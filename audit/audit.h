/* audit.h - the audit log: one JSON object per line (JSONL), appended with a
 * lock by every Warden process, read back (tail, follow) by `warden logs`.
 *
 * Three parts:
 *   - struct audit_event and its line codec (audit_event_encode/decode), pure;
 *   - struct audit_log, the writer: one locked write() per event, fdatasync
 *     for durable events, fails closed (symlinks, foreign or shared files);
 *   - struct audit_reader: sequential reading that skips torn or corrupt
 *     lines, seeking to the last N lines, and following a growing,
 *     truncated or replaced file with inotify.
 *
 * docs/audit.md describes the format and docs/audit-event.schema.json is its
 * JSON Schema.
 */
#ifndef WARDEN_AUDIT_H
#define WARDEN_AUDIT_H

#include "common/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* ----------------------------------------------------- audit shipping sinks (sink.c) */

/** Where journald's native protocol listens (systemd.journal-fields(7), sd_journal_send). */
#define AUDIT_SINK_JOURNALD_SOCKET "/run/systemd/journal/socket"
/** Syslog facility of shipped audit events when none is configured (RFC 5424: authpriv). */
#define AUDIT_SINK_FACILITY_DEFAULT 10

/**
 * enum audit_sink_kind - how a copy of the audit log is shipped (docs/audit.md, "Shipping")
 * @AUDIT_SINK_NONE:	not shipped
 * @AUDIT_SINK_UNIX:	RFC 5424 datagrams to an AF_UNIX datagram socket (/dev/log)
 * @AUDIT_SINK_UDP:	RFC 5424 datagrams over UDP (RFC 5426)
 * @AUDIT_SINK_TCP:	RFC 5424 messages over TCP, octet-counted (RFC 6587, 3.4.1)
 * @AUDIT_SINK_JOURNALD:	journald's native protocol (datagrams of FIELD=value lines)
 */
enum audit_sink_kind {
	AUDIT_SINK_NONE,
	AUDIT_SINK_UNIX,
	AUDIT_SINK_UDP,
	AUDIT_SINK_TCP,
	AUDIT_SINK_JOURNALD,
};

/**
 * struct audit_sink - one audit shipping destination
 * @kind:	the transport
 * @family:	udp/tcp: AF_INET or AF_INET6
 * @addr:	udp/tcp: the address (4 or 16 bytes, network order)
 * @port:	udp/tcp: the port
 * @path:	unix/journald: the socket's path
 * @facility:	the syslog facility, 0..23 (AUDIT_SINK_FACILITY_DEFAULT)
 */
struct audit_sink {
	enum audit_sink_kind kind;
	int family;
	uint8_t addr[16];
	uint16_t port;
	char path[108];
	int facility;
};

/**
 * audit_sink_parse() - "unix:PATH", "udp:ADDR:PORT", "tcp:ADDR:PORT", "journald" or
 * "journald:PATH", strictly
 * @spec:	the text; ADDR is an IPv4 address or an IPv6 one in brackets (names are not
 *		resolved), PORT 1..65535, PATH absolute and shorter than 108 bytes
 * @out:	on success the sink (its @facility kept as it was)
 * @ret_off:	on error, the offset in @spec where the problem is
 * @ret_why:	on error, what was expected (a static string)
 *
 * Pure: no I/O, no allocation.
 * Return: 0, or -EINVAL with @ret_off and @ret_why set.
 */
int audit_sink_parse(const char *spec, struct audit_sink *out, size_t *ret_off,
		     const char **ret_why);

/**
 * audit_sink_format() - the text audit_sink_parse() reads back to @s
 * @s:		the sink
 * @out:	the text ("" for AUDIT_SINK_NONE)
 * @outlen:	its size (128 always suffices)
 * Return: 0, -EINVAL (a bad sink), or -ENOSPC.
 */
int audit_sink_format(const struct audit_sink *s, char *out, size_t outlen);

/** audit_sink_facility() - a syslog facility's number by name ("authpriv", "local0", ...).
 * Return: 0..23, or -EINVAL for a name RFC 5424 does not list. */
int audit_sink_facility(const char *name);

/** audit_sink_facility_name() - the name of facility 0..23. Return: it, or NULL. */
const char *audit_sink_facility_name(int facility);

/* Longest line (with its newline) the writer writes and the reader accepts. */
#define AUDIT_LINE_MAX (1u << 20)

/**
 * enum audit_type - what an event is about (the "type" field)
 * @AUDIT_TYPE_OTHER:	a type this build does not know (decoded from a newer
 *			writer); its name is in &audit_event.type_name
 * @AUDIT_TYPE_RUN:	a run's lifecycle (run.start, run.exit, ...)
 * @AUDIT_TYPE_DNS:	a DNS query answered by the gateway
 * @AUDIT_TYPE_NET:	a connection (net.connect, net.close, ...)
 * @AUDIT_TYPE_FILE:	a file access decision
 * @AUDIT_TYPE_LIMIT:	a resource limit hit (limit.memory, limit.time, ...)
 */
enum audit_type {
	AUDIT_TYPE_OTHER = 0,
	AUDIT_TYPE_RUN,
	AUDIT_TYPE_DNS,
	AUDIT_TYPE_NET,
	AUDIT_TYPE_FILE,
	AUDIT_TYPE_LIMIT,
};

/*
 * Presence bits for the optional numeric fields of struct audit_event (its
 * @has member). Optional strings need no bit: NULL means absent.
 */
enum audit_has {
	AUDIT_HAS_PID = 1u << 0,
	AUDIT_HAS_UID = 1u << 1,
	AUDIT_HAS_PORT = 1u << 2,
	AUDIT_HAS_BYTES_UP = 1u << 3,
	AUDIT_HAS_BYTES_DOWN = 1u << 4,
	AUDIT_HAS_DURATION = 1u << 5,
	AUDIT_HAS_EXIT = 1u << 6,
	AUDIT_HAS_SIGNAL = 1u << 7,
	AUDIT_HAS_DENIALS = 1u << 8,
	AUDIT_HAS_LIMIT = 1u << 9,
	AUDIT_HAS_USAGE = 1u << 10,
	AUDIT_HAS_COUNTS_INCOMPLETE = 1u << 11,
	AUDIT_HAS_COUNT = 1u << 12,
	AUDIT_HAS_PROC_PID = 1u << 13,
	AUDIT_HAS_CRASHED = 1u << 14,
	AUDIT_HAS_EVENTS = 1u << 15,
	AUDIT_HAS_LINES = 1u << 16,
};

/**
 * struct audit_count - one name and how many times it occurred
 * @name:	the name
 * @count:	how many (>= 0)
 */
struct audit_count {
	const char *name;
	int64_t count;
};

/* The one value of struct audit_event's @decision: a shadow run's policy denial let through. */
#define AUDIT_WOULD_DENY "would_deny"

/**
 * struct audit_event - one audit record, cheap to build on the stack
 * @ts:		when it happened (CLOCK_REALTIME); all-zero means "now" to
 *		audit_log_write(), which stamps it
 * @run:	run id (required; "" for events that belong to no run)
 * @type:	what the event is about
 * @type_name:	the type's name when @type is AUDIT_TYPE_OTHER (decoded
 *		from a newer writer); ignored otherwise
 * @action:	what happened, "<type>.<verb>": run.start, dns.query, ... (required)
 * @resource:	what was acted on: hostname, path, command (NULL is written as "")
 * @allowed:	the decision
 * @reason:	why, for a person (NULL is written as "")
 * @rule:	the policy rule that decided, as text
 * @policy:	policy file path
 * @policy_hash: "sha256:<hex>" of the policy file
 * @isolation:	how the run is isolated ("netns+bwrap", "cgroup2", ...)
 * @mode:	how `warden run` built the run: "root" or "rootless" (warden(1) --mode)
 * @dst:	destination address as text (IPv4 or IPv6)
 * @proto:	how the destination was named: "tcp", "tls", "http", "connect", ...
 * @sni:	TLS server name the client sent
 * @host:	HTTP Host the client sent
 * @qtype:	DNS query type ("A", "AAAA", "HTTPS", ...)
 * @ech:	the TLS ClientHello carried an Encrypted Client Hello extension
 *		(written only when true)
 * @denial_id:	id a person can quote to allow this denial later
 * @decision:	"would_deny": a shadow run (`warden run --shadow`) let through what its policy
 *		denies (@allowed is true; @reason, @rule and @denial_id are the denial's that
 *		would have been); NULL otherwise
 * @command:	argv of the run (@command_len strings); NULL when absent
 * @command_len: number of strings in @command
 * @has:	AUDIT_HAS_* bits saying which numeric fields below are present
 * @pid:	process id
 * @uid:	user id
 * @port:	destination port (0..65535)
 * @bytes_up:	bytes sent by the sandbox
 * @bytes_down:	bytes received by the sandbox
 * @duration_ms: how long it took, in milliseconds
 * @exit:	exit status (0..255)
 * @signal:	signal that ended the program
 * @denials:	number of denials during a run
 * @count:	how many events this one stands for (a summary of events not
 *		written one by one); absent means one
 * @names:	counts by name (a summary of events not written one by one):
 *		@names_len entries, each name valid UTF-8, non-empty and given
 *		once; NULL when absent
 * @names_len:	number of entries in @names
 * @limit:	the limit that was hit (bytes, ms, count: per action)
 * @usage:	the measured value
 * @counts_incomplete: run.exit: the gateway died or lost the run during it, so its
 *		denial and byte counts are incomplete or absent (written with its bit)
 * @crashed:	run.exit: the launcher died without writing run.exit (SIGKILL, a crash);
 *		a later `warden` wrote it from the run's record (written with its bit)
 * @mcp:	the MCP tool calls in flight (net, dns events), the relay's state (run.start)
 *		or the per-tool counts (run.exit), as one compact JSON object's text
 *		(docs/audit.md "mcp"); written as given: it must be valid UTF-8 JSON text
 *		of an object on one line (jansson's compact dump); NULL when absent
 * @op:		file: what the access did ("read", "write", "create", "exec", "stat",
 *		"access", "readlink")
 * @proc_pid:	file: the process of the run that made it, as the launcher's pid
 *		namespace numbers it (AUDIT_HAS_PROC_PID)
 * @comm:	file: that process's name (/proc/PID/comm, at most 15 bytes)
 * @learn:	the event is of a run in learn mode (`warden trace`'s gateway: any name
 *		allowed and recorded); written only when true
 * @shadow:	the event is of a shadow run (`warden run --shadow`: policy denials of the
 *		network let through as "would_deny"); written only when true
 * @root:	run.exit: "sha256:<hex>", the Merkle root of the run's events in this log
 *		(docs/audit.md, "The signed run record")
 * @events:	run.exit: how many events @root covers (AUDIT_HAS_EVENTS)
 * @key:	run.exit: the id of the key that signed the record ("ed25519:<hex>")
 * @lines:	audit.anchor: how many lines the file before had when this one began
 *		(AUDIT_HAS_LINES)
 * @last_line:	audit.anchor: "sha256:<hex>" of that file's last line then
 * @priv:	storage owned by a decoded event; NULL when built by a caller.
 *		Release with audit_event_clear().
 *
 * Strings need not be UTF-8: the encoder keeps any bytes (see docs/audit.md).
 * A number is written only when its bit is set in @has, and must be >= 0.
 */
struct audit_event {
	struct timespec ts;
	const char *run;
	enum audit_type type;
	const char *type_name;
	const char *action;
	const char *resource;
	bool allowed;
	const char *reason;

	const char *rule;
	const char *policy;
	const char *policy_hash;
	const char *isolation;
	const char *mode;
	const char *user; /* the uid's user name, when it has one */
	const char *dst;
	const char *proto;
	const char *sni;
	const char *host;
	const char *qtype;
	const char *denial_id;
	const char *decision;
	bool ech;
	const char *const *command;
	size_t command_len;

	uint32_t has;
	int64_t pid;
	int64_t uid;
	int64_t port;
	int64_t bytes_up;
	int64_t bytes_down;
	int64_t duration_ms;
	int64_t exit;
	int64_t signal;
	int64_t denials;
	int64_t limit;
	int64_t usage;
	bool counts_incomplete;
	bool crashed;
	int64_t count;
	const struct audit_count *names;
	size_t names_len;
	const char *mcp;
	const char *op;
	int64_t proc_pid;
	const char *comm;
	bool learn;
	bool shadow;
	const char *root;
	int64_t events;
	const char *key;
	int64_t lines;
	const char *last_line;

	void *priv;
};

/**
 * audit_type_name() - the "type" string for @type
 * Return: "run", "dns", "net", "file", "limit", or NULL for AUDIT_TYPE_OTHER
 * and values out of range.
 */
const char *audit_type_name(enum audit_type type);

/**
 * audit_event_type() - the type of an event, as text
 * @ev:	event
 * Return: audit_type_name(@ev->type), else @ev->type_name, else "?".
 */
const char *audit_event_type(const struct audit_event *ev);

/**
 * audit_event_encode() - append @ev to @out as one JSON line, '\n' included
 * @ev:		event to encode; @ev->ts is written as given
 * @out:	buffer to append to (left as it was on error)
 * @err:	filled on error; may be NULL
 *
 * Keys come in a fixed order (docs/audit.md). A string that is not valid
 * UTF-8 is written with U+FFFD for each bad byte and its exact bytes are kept
 * in hex under "raw", so the line is always valid JSON and decodes back to
 * the same bytes.
 *
 * Pure and allocation-free once @out has grown: the line is written by hand
 * (no JSON tree), byte for byte as jansson's compact dump would write it.
 *
 * Return: 0; -EINVAL when @ev lacks @run or @action, has no known type, a
 * number is negative or out of range, or @ev->ts is not a valid time in the
 * years 0000-9999; -E2BIG when the line would exceed AUDIT_LINE_MAX; -ENOMEM.
 */
int audit_event_encode(const struct audit_event *ev, struct wd_buf *out, struct wd_err *err);

/**
 * audit_event_decode() - parse one line of the log
 * @line:	the bytes (no NUL needed); a trailing "\n" or "\r\n" is allowed
 * @len:	number of bytes
 * @ret_ev:	on success, the event; its strings live in storage the event
 *		owns: release it with audit_event_clear()
 * @err:	filled on error; may be NULL
 *
 * Pure: no I/O; allocates only the storage @ret_ev owns. Fields this build
 * does not know are ignored; an unknown "type" gives AUDIT_TYPE_OTHER.
 * Required: ts, run, type, action, allowed. Duplicate keys are refused.
 *
 * Return: 0; -EBADMSG when the line is not a valid event (torn, corrupt,
 * wrong types); -ENOMEM.
 */
int audit_event_decode(const char *line, size_t len, struct audit_event *ret_ev,
		       struct wd_err *err);

/**
 * audit_event_clear() - release what a decoded event owns and zero it
 * @ev:	event; may be NULL; safe on caller-built events (does not free
 *	their strings)
 */
void audit_event_clear(struct audit_event *ev);

/* Flags for audit_log_write(). */
enum audit_write_flags {
	AUDIT_WRITE_DURABLE = 1u << 0, /* fdatasync before returning */
	AUDIT_WRITE_DEFER = 1u << 1,   /* queue the line; audit_log_flush() writes the batch */
};

struct audit_log;

/**
 * audit_log_open() - open (creating if needed) an audit log for appending
 * @path:	the log file; its folder is created 0700 if missing
 * @ret_log:	on success, the writer
 * @err:	on error, says what is wrong and how to fix it; may be NULL
 *
 * The file is created 0600 and opened O_WRONLY|O_APPEND|O_CLOEXEC. Fails
 * closed: refuses a symbolic link (-ELOOP), anything but a regular file
 * (-EINVAL), a file writable by group or others or owned by someone other
 * than the caller or root (-EPERM), and a folder writable by others without
 * the sticky bit (-EPERM).
 *
 * Return: 0, or a negative errno (open/mkdir errors as they come).
 */
int audit_log_open(const char *path, struct audit_log **ret_log, struct wd_err *err);

/**
 * audit_log_from_fd() - adopt an already open descriptor as an audit log writer
 * @fd:		a regular file opened for appending (O_APPEND, write-only or
 *		read-write), e.g. received from a privileged parent over SCM_RIGHTS
 * @label:	what to call the log in messages (its path, as the opener knew it)
 * @ret_log:	on success, the writer; it owns @fd from then on
 * @err:	on error, says what is wrong; may be NULL
 *
 * Applies the checks of audit_log_open() that a descriptor allows: a regular
 * file (-EINVAL), not writable by group or others and owned by the caller or
 * root (-EPERM), opened with O_APPEND for writing (-EBADF). The descriptor is
 * made close-on-exec and blocking. When it is also readable, a torn last line
 * is repaired as audit_log_write() describes; a write-only descriptor cannot
 * look at the file's last byte, so that repair is skipped.
 *
 * Return: 0, or a negative errno; on error the caller still owns @fd.
 */
int audit_log_from_fd(int fd, const char *label, struct audit_log **ret_log, struct wd_err *err);

/**
 * audit_log_write() - append one event as one line
 * @log:	writer from audit_log_open()
 * @ev:		event; an all-zero @ev->ts is stamped with the current time
 * @flags:	AUDIT_WRITE_* bits; AUDIT_WRITE_DURABLE syncs the data to disk
 *		before returning (use it for run.start: audit before execute)
 * @err:	filled on error; may be NULL
 *
 * The line goes out in a single write() under flock(LOCK_EX), so concurrent
 * writers never interleave. If the file ends in a torn line (a writer died
 * mid-way), a newline is written first so this event stays intact. A short
 * write is undone (ftruncate) and reported.
 *
 * With AUDIT_WRITE_DEFER the encoded line is only queued in @log (after the
 * lines queued before it) and goes out with the next audit_log_flush() or
 * non-deferred write, which write the whole batch in one write() under the
 * lock; a batch never exceeds AUDIT_LINE_MAX (a line that would make it
 * larger first flushes the queue). A durable write flushes the queue first.
 *
 * Return: 0; a negative errno from encoding, locking, writing (-ENOSPC,
 * -EFBIG, -EIO, ...) or syncing. The event is then not (durably) logged.
 * A deferred write only reports encoding errors and the errors of a flush it
 * caused; audit_log_flush() reports the rest.
 */
int audit_log_write(struct audit_log *log, const struct audit_event *ev, unsigned flags,
		    struct wd_err *err);

/**
 * audit_log_ship() - also send every line this writer writes to syslog or journald
 * @log:	writer
 * @sink:	where (struct audit_sink from audit_sink_parse(): unix, udp, tcp, journald) and
 *		the syslog facility
 * @app:	the sender's name in each message (RFC 5424 APP-NAME, SYSLOG_IDENTIFIER)
 * @err:	filled on error; may be NULL
 *
 * A line is sent once the local write() of its batch succeeded; a line the file did not
 * take is never sent. Sending never blocks and never fails a write: a message the sink
 * does not take is counted as not shipped (the TCP sink first keeps up to 4 MiB of
 * frames while it is away). When shipping fails and when it works again, an
 * "audit.ship" event (type "audit") saying so, and how many events were not shipped, is
 * written into the file (the second one is shipped too). docs/audit.md, "Shipping".
 *
 * Return: 0 (also when the sink cannot be reached now: that is an outage, retried once a
 * second at the next event); -EALREADY, -EINVAL (no sink) or -ENOMEM.
 */
int audit_log_ship(struct audit_log *log, const struct audit_sink *sink, const char *app,
		   struct wd_err *err);

/**
 * audit_log_ship_stats() - how many events went to the sink, and how many did not
 * @log:	writer
 * @ret_sent:	sent (TCP: sent or waiting in the writer's buffer); 0 when not shipped
 * @ret_dropped: not shipped (the sink was away or full, a datagram too long)
 */
void audit_log_ship_stats(const struct audit_log *log, uint64_t *ret_sent, uint64_t *ret_dropped);

/* The one older file a capped log keeps: "<path>.1" (audit_log_set_max()). */
#define AUDIT_ROTATED_SUFFIX ".1"

/* The action of the signed first line of a file that goes on from "<path>.1" (anchor.c). */
#define AUDIT_ANCHOR "audit.anchor"

/* The default cap of a person's own audit log (docs/audit.md, "Rotation"). */
#define AUDIT_DEFAULT_MAX_BYTES (64ull << 20)

/**
 * audit_log_set_max() - rotate the log before it grows past @max_bytes
 * @log:	writer from audit_log_open() (a writer adopted from a descriptor cannot rotate)
 * @max_bytes:	the cap; 0: never rotate
 *
 * When a batch would take a non-empty file past the cap, the writer renames the file to
 * "<path>.1" (replacing the older one) under the file's lock and goes on in a new file at
 * the path. Every writer opened by path, capped or not, checks under the lock that the path
 * still names its file and opens it again when not, so writers that hold the old file
 * follow; a writer adopted from a descriptor (the gateway's worker) cannot and finishes in
 * the ".1" file. A single batch larger than the cap still goes into one file.
 */
void audit_log_set_max(struct audit_log *log, uint64_t max_bytes);

/**
 * struct audit_log_pos - where a writer's last line ended: the file and the offset
 * @dev, @ino:	the file (a rotation renames it to "<path>.1")
 * @end:	the offset just past the line
 */
struct audit_log_pos {
	dev_t dev;
	ino_t ino;
	off_t end;
};

/**
 * audit_log_where() - where the last line this writer wrote ended
 * @log:	writer
 * @ret_pos:	the file and offset, set on success
 *
 * Return: 0; -ENODATA before the first line was written (or after a failed write); -errno
 * from fstat().
 */
int audit_log_where(const struct audit_log *log, struct audit_log_pos *ret_pos);

/**
 * audit_log_flush() - write the lines queued with AUDIT_WRITE_DEFER
 * @log:	writer
 * @err:	filled on error; may be NULL
 *
 * One write() under flock(LOCK_EX) for the whole batch (repaired and undone
 * like a single line). The queue is empty afterwards, also on error.
 *
 * Return: the number of events written (0 when none were queued), or a
 * negative errno: then none of the queued events is logged.
 */
int audit_log_flush(struct audit_log *log, struct wd_err *err);

/**
 * audit_log_sync() - write what is queued, then fdatasync the file the lines went to
 * (through the writer's own descriptor: the path is not opened again, so a log renamed
 * or replaced since still gets its lines synced)
 * @log:	writer
 *
 * Return: 0, or a negative errno from the write or fdatasync.
 */
int audit_log_sync(struct audit_log *log);

/**
 * audit_log_last_len() - bytes of the line the last successful audit_log_write()
 * encoded (its newline included), whether written or queued
 * @log:	the writer
 *
 * Return: the length; 0 before the first write.
 */
size_t audit_log_last_len(const struct audit_log *log);

/**
 * audit_log_last_line() - the line the last successful audit_log_write() encoded (its
 * newline included), whether written or queued: the bytes the log gets, but for the chain's
 * "prev" a chained writer adds when it writes the line (audit_log_chain())
 * @log:	the writer
 * @ret_len:	its length (0 before the first write)
 *
 * Return: the line (valid until the next write on @log), or NULL before the first write.
 */
const char *audit_log_last_line(const struct audit_log *log, size_t *ret_len);

/**
 * audit_log_pending() - how many events are queued (AUDIT_WRITE_DEFER)
 */
size_t audit_log_pending(const struct audit_log *log);

/**
 * audit_log_path() - the path @log was opened with
 */
const char *audit_log_path(const struct audit_log *log);

/**
 * audit_log_close() - close the writer (queued lines are written first, best effort)
 * @log:	writer; may be NULL
 */
void audit_log_close(struct audit_log *log);

/* Flags for audit_reader_open(). */
enum audit_reader_flags {
	/* Keep reading as the file grows; a missing file is waited for. */
	AUDIT_READER_FOLLOW = 1u << 0,
};

struct audit_reader;

/**
 * audit_reader_open() - open a log for reading from its start
 * @path:	the log file
 * @flags:	AUDIT_READER_* bits
 * @ret_reader:	on success, the reader
 * @err:	filled on error; may be NULL
 *
 * Return: 0; -ENOENT when the file does not exist (only without
 * AUDIT_READER_FOLLOW); -EINVAL when it is not a regular file; another
 * negative errno when it cannot be opened.
 */
int audit_reader_open(const char *path, unsigned flags, struct audit_reader **ret_reader,
		      struct wd_err *err);

/**
 * audit_reader_tail() - position @r so the next reads return the last @n lines
 * @r:	reader
 * @n:	number of lines (corrupt lines count too)
 *
 * Reads backwards from the end in blocks; cost grows with @n, not with the file.
 * Return: 0, or a negative errno.
 */
int audit_reader_tail(struct audit_reader *r, size_t n);

/**
 * audit_reader_seek() - continue reading @r at @pos, when @r reads that file
 * @r:		reader
 * @pos:	a place from audit_log_where()
 *
 * Return: 0; -ESTALE when @r reads another file (the log was rotated since: @pos is in
 * the ".1" file, or gone); -errno from lseek().
 */
int audit_reader_seek(struct audit_reader *r, const struct audit_log_pos *pos);

/**
 * audit_reader_next() - the next valid event
 * @r:		reader
 * @ret_ev:	on 1, the event (release with audit_event_clear())
 *
 * Corrupt, torn and over-long lines are skipped and counted; blank lines are
 * ignored. Without AUDIT_READER_FOLLOW a last line without its newline is
 * still decoded. With it, such a line is held until its newline arrives, and
 * at the end of the data the file is checked: when it was truncated the
 * reader starts again from its beginning; when it was replaced (renamed,
 * recreated) the reader finishes the old file and moves to the new one.
 *
 * Return: 1 with an event; 0 at the end of the data for now; -errno.
 */
int audit_reader_next(struct audit_reader *r, struct audit_event *ret_ev);

/**
 * audit_reader_line() - the raw bytes of the event audit_reader_next() last returned
 * @r:		reader
 * @ret_len:	length, without the newline
 * Return: the line (valid until the next call on @r), or NULL before any event.
 */
const char *audit_reader_line(const struct audit_reader *r, size_t *ret_len);

/**
 * audit_reader_skipped() - how many corrupt or torn lines were skipped so far
 */
unsigned long audit_reader_skipped(const struct audit_reader *r);

/**
 * audit_reader_wait() - wait until the log may have changed (follow mode)
 * @r:		reader opened with AUDIT_READER_FOLLOW
 * @timeout_ms:	longest wait, -1 for no limit
 *
 * Uses inotify on the log's folder (the file changing, appearing, being
 * renamed or removed). Spurious wake-ups are possible: call
 * audit_reader_next() until it returns 0, then wait again.
 *
 * Return: 1 when something changed, 0 on timeout, -EINVAL without follow
 * mode, another negative errno.
 */
int audit_reader_wait(struct audit_reader *r, int timeout_ms);

/**
 * audit_reader_close() - close the reader
 * @r:	reader; may be NULL
 */
void audit_reader_close(struct audit_reader *r);

/* ------------------------------------- the hash chain and signed run records (chain.c, sign.c) */

/* Bytes of a SHA-256 digest. */
#define AUDIT_HASH_LEN 32

/**
 * audit_crypto_init() - set libcrypto up without reading any OpenSSL configuration file
 *
 * Called first thing by every program of Warden's that links libcrypto, before any other
 * OpenSSL call. OpenSSL otherwise reads openssl.cnf (or the file $OPENSSL_CONF names), which
 * may load provider modules into the process or break its digests (a provider that fails to
 * load fails every EVP call), and costs each start-up ~1.9 M instructions. Warden's hashes and
 * signatures (SHA-256, ed25519) are the default provider's either way. Idempotent.
 */
void audit_crypto_init(void);

/**
 * audit_crypto_init_brief() - audit_crypto_init() for a program that exits soon after its
 * work (`warden`): also without OpenSSL's clean-up at exit (OPENSSL_INIT_NO_ATEXIT), which
 * frees what the process's exit frees anyway. Private keys are not left to it: audit_key_free()
 * clears them. Called in audit_crypto_init()'s place, first.
 */
void audit_crypto_init_brief(void);

/**
 * audit_log_chain() - make @log a chained writer: every line it writes ends with
 * "prev":"<hex>", the SHA-256 of the line before it in the file (docs/audit.md, "The chain")
 * @log:	writer (by path or from a descriptor opened for reading too)
 *
 * The writer reads the file's last line under the lock it already takes, so any number of
 * chained writers may append to one file. The first line of a file links to the last line
 * of "<path>.1" when the writer was opened by path and that file exists, else to 64 zeros.
 * A writer without the chain makes a line a verifier reports as a break: every writer of a
 * file must be chained.
 */
void audit_log_chain(struct audit_log *log);

/**
 * audit_log_last_hash() - the SHA-256 of the last line this writer wrote (as in the file,
 * without its newline): the next line's "prev"
 * @log:	a chained writer
 * @out:	the digest
 * Return: 0; -ENODATA when no line was written since the last failure or file change.
 */
int audit_log_last_hash(const struct audit_log *log, uint8_t out[AUDIT_HASH_LEN]);

/**
 * audit_log_write_encoded() - write a line encoded (and signed) by the caller
 * @log:	writer
 * @ev:		the event the line encodes (for the shipper)
 * @line:	the line, ending in "}\n", one JSON object (audit_sign_line()'s output)
 * @len:	its length
 * @flags:	AUDIT_WRITE_* (as audit_log_write())
 * @err:	filled on error; may be NULL
 * Return: 0, or a negative errno (-EINVAL: not one object line).
 */
int audit_log_write_encoded(struct audit_log *log, const struct audit_event *ev, const char *line,
			    size_t len, unsigned flags, struct wd_err *err);

/**
 * audit_sha256() - SHA-256 of @len bytes at @p (libcrypto)
 * @p:		bytes
 * @len:	their length
 * @out:	the digest
 */
void audit_sha256(const void *p, size_t len, uint8_t out[AUDIT_HASH_LEN]);

/**
 * audit_hex() - @n bytes as lowercase hex, NUL-terminated
 * @p:		bytes
 * @n:		their number
 * @out:	2 * @n + 1 bytes
 */
void audit_hex(const uint8_t *p, size_t n, char *out);

/**
 * audit_merkle_root() - the Merkle tree hash of @n leaves (RFC 6962 section 2.1 shape: a
 * node is SHA-256(0x01 || left || right), the split at the largest power of two below @n;
 * a leaf is given: the SHA-256 of one line)
 * @leaves:	the leaf digests, in file order
 * @n:		their number; 0 gives SHA-256 of nothing
 * @out:	the root
 */
void audit_merkle_root(const uint8_t (*leaves)[AUDIT_HASH_LEN], size_t n,
		       uint8_t out[AUDIT_HASH_LEN]);

/**
 * struct audit_leaves - a growing list of leaf digests (audit_run_leaves())
 * @v:		the digests
 * @n:		how many
 * @cap:	room for
 */
struct audit_leaves {
	uint8_t (*v)[AUDIT_HASH_LEN];
	size_t n, cap;
};

/**
 * audit_leaves_add() - append one digest
 * Return: 0 or -ENOMEM.
 */
int audit_leaves_add(struct audit_leaves *l, const uint8_t d[AUDIT_HASH_LEN]);

/** audit_leaves_free() - release @l's storage (it is empty afterwards) */
void audit_leaves_free(struct audit_leaves *l);

/**
 * audit_run_leaves() - add the SHA-256 of each line of run @run in @path to @l, from @pos
 * @path:	the log (or its ".1" file)
 * @pos:	where run.start ended (audit_log_where()), or NULL for the file's start
 * @run:	the run id
 * @l:		the list
 * Return: 0; -ESTALE when @path is not the file @pos is in; another negative errno.
 */
int audit_run_leaves(const char *path, const struct audit_log_pos *pos, const char *run,
		     struct audit_leaves *l);

/**
 * audit_run_root() - run.exit's `root` and `events`: the Merkle root of run @run's lines,
 * run.start's first, then every later line of the run (in "<path>.1" first when the log was
 * rotated since run.start)
 * @path:	the log
 * @start:	where run.start ended (audit_log_where())
 * @start_hash:	run.start's SHA-256 (audit_log_last_hash() after writing it)
 * @run:	the run id
 * @root:	"sha256:<hex>"
 * @count:	how many lines
 * Return: 0, or a negative errno (the run's lines could not be read back).
 */
int audit_run_root(const char *path, const struct audit_log_pos *start,
		   const uint8_t start_hash[AUDIT_HASH_LEN], const char *run,
		   char root[8 + 2 * AUDIT_HASH_LEN], int64_t *count);

struct audit_key;

/**
 * audit_key_load() - an ed25519 key from a PEM file (PKCS#8 private key, or a public key)
 * @path:	the file
 * @create:	when the file does not exist, make a new private key there (0600, its folder
 *		0700, never following a link)
 * @ret_key:	on success, the key
 * @err:	filled on error; may be NULL
 *
 * A private key file must be a regular file not readable or writable by group or others.
 * Return: 0, or a negative errno.
 */
int audit_key_load(const char *path, bool create, struct audit_key **ret_key, struct wd_err *err);

/** audit_key_free() - release @k (NULL is fine) */
void audit_key_free(struct audit_key *k);

/** audit_key_id() - "ed25519:<hex of SHA-256 of the 32-byte public key>" */
const char *audit_key_id(const struct audit_key *k);

/** audit_key_can_sign() - whether @k holds the private half */
bool audit_key_can_sign(const struct audit_key *k);

/**
 * audit_key_public_pem() - the public key as PEM (SubjectPublicKeyInfo), appended to @out
 * Return: 0 or a negative errno.
 */
int audit_key_public_pem(const struct audit_key *k, struct wd_buf *out);

/**
 * audit_key_sign() - ed25519 signature of @len bytes at @msg
 * @k:		a private key
 * @msg:	the bytes
 * @len:	their length
 * @sig:	the 64-byte signature
 * Return: 0, or a negative errno (-EINVAL: a public key).
 */
int audit_key_sign(const struct audit_key *k, const void *msg, size_t len, uint8_t sig[64]);

/**
 * audit_key_verify() - check an ed25519 signature
 * Return: 0 when @sig signs @msg under @k, -EBADMSG when not.
 */
int audit_key_verify(const struct audit_key *k, const void *msg, size_t len, const uint8_t sig[64]);

/**
 * audit_sign_line() - sign an encoded line: @line minus its "}\n" plus
 * ,"sig":"<base64>"}\n goes to @out, the signature over @line without its newline
 * @k:		a private key
 * @line:	one line from audit_event_encode(), ending in "}\n"
 * @len:	its length
 * @out:	the signed line is appended
 * Return: 0, or a negative errno.
 */
int audit_sign_line(const struct audit_key *k, const char *line, size_t len, struct wd_buf *out);

/**
 * audit_log_write_signed() - write @ev as a signed line: stamped with the time when it has
 * none (as audit_log_write() stamps), encoded, signed with @k (audit_sign_line()) and written
 * (audit_log_write_encoded())
 * @log:	writer
 * @ev:		the event (not changed)
 * @k:		a private key
 * @flags:	AUDIT_WRITE_*
 * @err:	why, on failure
 * Return: 0, or a negative errno.
 */
int audit_log_write_signed(struct audit_log *log, const struct audit_event *ev,
			   const struct audit_key *k, unsigned flags, struct wd_err *err);

/**
 * audit_line_signed_part() - the bytes a run record's signature covers: @line (no newline)
 * with its trailing ,"prev":"…" and ,"sig":"…" members removed and "}" put back
 * @line:	a line as in the file, without its newline
 * @len:	its length
 * @out:	the signed bytes are written here (reset first)
 * @sig:	the signature decoded from "sig"
 * Return: 0; -ENOENT when the line has no "sig"; -EBADMSG when it is malformed.
 */
int audit_line_signed_part(const char *line, size_t len, struct wd_buf *out, uint8_t sig[64]);

/**
 * audit_base64() - @n bytes at @p in standard base64 (with padding), appended to @out
 * Return: 0 or -ENOMEM.
 */
int audit_base64(const void *p, size_t n, struct wd_buf *out);

/**
 * audit_unbase64() - standard base64 text (with padding) decoded, appended to @out
 * Return: 0; -EINVAL when @s is not base64; -ENOMEM.
 */
int audit_unbase64(const char *s, size_t n, struct wd_buf *out);

/**
 * audit_log_sign_anchors() - make @log write a signed anchor as the first line of every new
 * file that goes on from "<path>.1" (docs/audit.md, "The anchor after a rotation"): an
 * audit.anchor event with the ".1" file's name, line count and last line's hash, @k's id and
 * an ed25519 signature, chained to that last line. Written when the writer (opened by path,
 * chained: audit_log_chain() first) finds its file empty under the lock and "<path>.1" is
 * there and not empty: after its own rotation (it locks the new file before it lets go of
 * the old one), or another's, or at once when the file is empty now.
 * @log:	a chained writer opened by path (from a descriptor: nothing happens)
 * @k:		a private key; must outlive @log
 * @err:	filled on error; may be NULL
 * Return: 0, or a negative errno (the anchor due now could not be made or written; a later
 * write that needs one fails the same way: a file that should begin with an anchor gets none
 * of its own lines without it).
 */
int audit_log_sign_anchors(struct audit_log *log, const struct audit_key *k, struct wd_err *err);

/* ------------------------------------------------------------------ verify (verify.c) */

/**
 * enum audit_verify_status - what audit_verify() found
 * @AUDIT_VERIFY_OK:		every link holds, every signed record checks out
 * @AUDIT_VERIFY_BROKEN:	a line does not link to the one before it (edited, removed,
 *				reordered), or is not an event
 * @AUDIT_VERIFY_UNCHAINED:	a line without "prev" after the chain began, or no chain
 * @AUDIT_VERIFY_BAD_SIG:	a run.exit's signature does not verify
 * @AUDIT_VERIFY_UNKNOWN_KEY:	a run.exit signed by a key not given
 * @AUDIT_VERIFY_BAD_ROOT:	a run.exit's root or count does not match the run's events
 * @AUDIT_VERIFY_NO_ANCHOR:	a file that goes on from the one before does not begin with a
 *				signed audit.anchor
 * @AUDIT_VERIFY_BAD_ANCHOR:	an anchor's line count or last line does not match the file
 *				before it (lines cut from its end, or changed)
 */
enum audit_verify_status {
	AUDIT_VERIFY_OK,
	AUDIT_VERIFY_BROKEN,
	AUDIT_VERIFY_UNCHAINED,
	AUDIT_VERIFY_BAD_SIG,
	AUDIT_VERIFY_UNKNOWN_KEY,
	AUDIT_VERIFY_BAD_ROOT,
	AUDIT_VERIFY_NO_ANCHOR,
	AUDIT_VERIFY_BAD_ANCHOR,
};

/**
 * struct audit_verify_result - the outcome of audit_verify()
 * @status:	the first problem, or AUDIT_VERIFY_OK
 * @file:	the file of the problem (one of the paths given)
 * @line:	its line number (1-based)
 * @why:	what is wrong, for a person
 * @lines:	lines checked
 * @runs:	signed run records checked
 * @unsigned_exits: run.exit records without a signature (crashed runs, older writers)
 * @unchained:	lines before the first chained line of the first file (an older writer)
 * @partial:	signed run records whose run.start is in an earlier file: signature
 *		checked, root not
 * @anchors:	signed anchors verified (their signature; at a file that goes on from one
 *		read, also its line count and last line)
 */
struct audit_verify_result {
	enum audit_verify_status status;
	const char *file;
	uint64_t line;
	char why[512];
	uint64_t lines, runs, unsigned_exits, unchained, partial, anchors;
};

/**
 * audit_verify() - check the chain through @paths (in order: "<path>.1" before the path)
 * and each signed run.exit (its signature under one of @keys, its root and count against the
 * run's events before it in these files)
 * @paths:	the files, oldest first; a missing one is an error
 * @npaths:	their number
 * @keys:	the keys a signature may be from
 * @nkeys:	their number
 * @res:	the outcome
 * @err:	filled on an I/O error; may be NULL
 * Return: 0 (see @res->status), or a negative errno (a file could not be read).
 */
int audit_verify(const char *const *paths, size_t npaths, struct audit_key *const *keys,
		 size_t nkeys, struct audit_verify_result *res, struct wd_err *err);

#endif /* WARDEN_AUDIT_H */
