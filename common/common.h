/* common.h - tiny helpers every Warden module shares: error values with
 * context, growable buffers, file-descriptor helpers and clocks.
 *
 * Nothing here prints except wd_log(), which only the edges (launcher/ and the
 * gateway main) call: libraries return errors and let the caller speak.
 */
#ifndef WARDEN_COMMON_H
#define WARDEN_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#ifdef _WIN32
#include "common/win.h" /* Winsock, uid_t: the Windows cross build */
#else
#include <sys/socket.h>
#endif
#include <sys/types.h>
#include <time.h>

#define WD_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#ifdef __MINGW32__
/* mingw-w64: "printf" would check msvcrt's formats; the build uses its C99 printf
 * (__USE_MINGW_ANSI_STDIO), which knows %zu and %llu */
#define WD_PRINTF(f, a) __attribute__((format(gnu_printf, f, a)))
#else
#define WD_PRINTF(f, a) __attribute__((format(printf, f, a)))
#endif

/**
 * struct wd_err - an error a person will read
 * @code:	negative errno (0 when no error was recorded)
 * @file:	file the error is about, or "" when none
 * @line:	1-based line in @file, 0 when unknown
 * @col:	1-based column in @file, 0 when unknown
 * @msg:	what went wrong, with context, no trailing newline
 */
struct wd_err {
	int code;
	char file[256];
	int line;
	int col;
	char msg[1024];
};

/**
 * wd_err_clear() - reset @e to "no error"
 * @e:	error to reset; may be NULL
 */
void wd_err_clear(struct wd_err *e);

/**
 * wd_err_set() - record an error message
 * @e:		where to record it; may be NULL (then only @code is returned)
 * @code:	negative errno to record and return
 * @fmt:	printf-style message
 *
 * Return: @code, so callers can write `return wd_err_set(e, -EINVAL, ...)`.
 */
int wd_err_set(struct wd_err *e, int code, const char *fmt, ...) WD_PRINTF(3, 4);

/**
 * wd_err_setpos() - record an error about a position in a file
 * @e:		where to record it; may be NULL
 * @code:	negative errno to record and return
 * @file:	file name (copied, truncated if very long)
 * @line:	1-based line
 * @col:	1-based column
 * @fmt:	printf-style message
 *
 * Return: @code.
 */
int wd_err_setpos(struct wd_err *e, int code, const char *file, int line, int col, const char *fmt,
		  ...) WD_PRINTF(6, 7);

/**
 * wd_err_prefix() - prepend context ("creating veth: ") to an existing message
 * @e:		error to amend; may be NULL
 * @fmt:	printf-style prefix
 */
void wd_err_prefix(struct wd_err *e, const char *fmt, ...) WD_PRINTF(2, 3);

/**
 * struct wd_buf - a growable byte buffer, always NUL-terminated when non-empty
 * @data:	the bytes (NULL until something is appended)
 * @len:	bytes used, not counting the terminating NUL
 * @cap:	bytes allocated
 */
struct wd_buf {
	char *data;
	size_t len;
	size_t cap;
};

#define WD_BUF_INIT                                                                                \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

/** wd_buf_reserve() - make room for @extra more bytes. Return: 0 or -ENOMEM. */
int wd_buf_reserve(struct wd_buf *b, size_t extra);
/** wd_buf_append() - append @n bytes from @p. Return: 0 or -ENOMEM. */
int wd_buf_append(struct wd_buf *b, const void *p, size_t n);
/** wd_buf_puts() - append the string @s. Return: 0 or -ENOMEM. */
int wd_buf_puts(struct wd_buf *b, const char *s);
/** wd_buf_printf() - append formatted text. Return: 0 or -ENOMEM. */
int wd_buf_printf(struct wd_buf *b, const char *fmt, ...) WD_PRINTF(2, 3);
/** wd_buf_vprintf() - append formatted text from a va_list. Return: 0 or -ENOMEM. */
int wd_buf_vprintf(struct wd_buf *b, const char *fmt, va_list ap);
/** wd_buf_reset() - forget the contents but keep the allocation. */
void wd_buf_reset(struct wd_buf *b);
/** wd_buf_free() - release the buffer; @b may be NULL. */
void wd_buf_free(struct wd_buf *b);
/** wd_buf_cstr() - the contents as a string ("" when empty). */
const char *wd_buf_cstr(const struct wd_buf *b);

/**
 * wd_read_file() - read a whole (regular) file into memory
 * @path:	file to read
 * @max:	refuse files larger than this many bytes (-EFBIG)
 * @ret_data:	on success, a malloc'd buffer with a terminating NUL
 * @ret_len:	on success, the number of bytes read (not counting the NUL)
 *
 * Return: 0, or a negative errno.
 */
int wd_read_file(const char *path, size_t max, char **ret_data, size_t *ret_len);

/**
 * wd_write_all() - write all of @n bytes, retrying on EINTR and short writes
 * Return: 0, or a negative errno.
 */
int wd_write_all(int fd, const void *p, size_t n);

/**
 * wd_write_at() - write the string @val to the existing file @dir/@name, all of it, in one
 * open (a cgroup's control files: no O_CREAT, no O_TRUNC, no O_APPEND)
 * @dir:	the folder
 * @name:	the file in it
 * @val:	what to write (a kernel interface file takes one write(2) of it)
 *
 * Return: 0, or a negative errno (-ENAMETOOLONG: the path does not fit PATH_MAX).
 */
int wd_write_at(const char *dir, const char *name, const char *val);

/* most descriptors wd_send_fds() attaches */
#define WD_SEND_FDS_MAX 16

/**
 * wd_send_fds() - send @len bytes of @buf on the socket @sock in one message, with the
 * descriptors @fds attached (one SCM_RIGHTS control message, in order)
 * @sock:	a unix socket
 * @buf:	the bytes
 * @len:	how many
 * @fds:	the descriptors (the caller keeps its own)
 * @nfds:	how many (1..WD_SEND_FDS_MAX)
 * @flags:	sendmsg(2) flags (MSG_NOSIGNAL is always added)
 *
 * Return: the bytes sent (fewer than @len only on a stream socket; the descriptors went with
 * the first of them), or a negative errno (-EINVAL: @nfds out of range).
 */
ssize_t wd_send_fds(int sock, const void *buf, size_t len, const int *fds, size_t nfds, int flags);

/** wd_closep() - close *@fd if it is open and set it to -1. */
void wd_closep(int *fd);

/**
 * wd_close_all_except() - close every descriptor above 2 except @keep (close_range(2),
 * else one by one from /proc/self/fd)
 * @keep:	descriptors to keep open (negative entries and 0-2 are ignored); may be NULL
 *		when @n is 0
 * @n:		number of @keep entries
 *
 * For a freshly forked child, before it execs something that must inherit only what the
 * caller chose.
 *
 * Return: 0, -ENOMEM, or a negative errno from the fallback.
 */
int wd_close_all_except(const int *keep, size_t n);

/**
 * wd_errno_name() - the symbolic name of errno value @e ("EINVAL"): glibc's
 * strerrorname_np(), elsewhere the names of a fixed table
 * Return: the name, or NULL when it has none.
 */
const char *wd_errno_name(int e);

/**
 * wd_peer_cred() - who is at the other end of the AF_UNIX stream socket @fd, fixed when it
 * connected (Linux: SO_PEERCRED; macOS and the BSDs: getpeereid, and macOS's LOCAL_PEERPID)
 * @fd:		the socket
 * @uid:	its uid
 * @gid:	its gid
 * @pid:	its pid (-1 where the system does not say)
 * Return: 0, or a negative errno.
 */
int wd_peer_cred(int fd, uid_t *uid, gid_t *gid, pid_t *pid);

/**
 * wd_socket_nb() - a new socket, non-blocking and CLOEXEC from birth (Linux: by its type's
 * flags; macOS, which has neither flag: set at once with fcntl)
 * @family:	the address family
 * @type:	SOCK_STREAM, SOCK_DGRAM, ...
 * Return: the descriptor, or a negative errno.
 */
int wd_socket_nb(int family, int type);

/**
 * wd_socket_adopt() - a socket this process was handed (inherited, or made from another's on
 * Windows), made non-blocking and not inherited by children; on failure it is left open
 * @fd:		the socket
 * Return: 0, or a negative errno.
 */
int wd_socket_adopt(int fd);

/**
 * wd_accept_nb() - accept a connection on @lfd, non-blocking and CLOEXEC (Linux: accept4;
 * elsewhere accept, then fcntl)
 * @lfd:	a listening socket
 * @sa:		the peer's address (may be NULL)
 * @len:	in: room at @sa, out: its length (NULL with @sa NULL)
 * Return: the descriptor, or a negative errno (-EAGAIN: nothing waits).
 */
int wd_accept_nb(int lfd, struct sockaddr *sa, socklen_t *len);

/**
 * wd_socket_bound() - a socket bound at @addr:@port, listening (backlog 4096) when @type is
 * SOCK_STREAM; SO_REUSEADDR, and for IPv6 V6ONLY and FREEBIND (an address that is a local
 * route, not one of an interface)
 * @family:	AF_INET or AF_INET6
 * @addr:	4 or 16 bytes, network order
 * @port:	host order (0: any)
 * @type:	SOCK_STREAM or SOCK_DGRAM
 *
 * Return: the descriptor (CLOEXEC), or a negative errno.
 */
int wd_socket_bound(int family, const void *addr, uint16_t port, int type);

/**
 * wd_open_nofollow() - open @path (absolute) without following any symbolic link on the way
 * (openat2(2) with RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
 * @path:	absolute path
 * @flags:	open flags (O_CLOEXEC is added)
 *
 * Return: the descriptor, or a negative errno (-ELOOP: a link is in the way; -ENOSYS: the
 * kernel has no openat2).
 */
int wd_open_nofollow(const char *path, int flags);

/* ------------------------------------------------------- replacing a file whole (atomic.c) */

/* wd_atomic_open() flags */
#define WD_ATOMIC_SYNC 0x1u /* fsync the new content before the rename */

/**
 * struct wd_atomic - a file being written beside the name it will replace
 * @fd:		the new content goes here (0600; fchmod/fchown/futimens it before the commit)
 * @dfd:	the folder of the name (O_PATH), -1 once committed or aborted
 * @flags:	WD_ATOMIC_*
 * @dir:	the folder part of the path given
 * @name:	the final name in it
 * @tmp:	the hidden temporary name beside it: ".NAME.PID.tmp"
 */
struct wd_atomic {
	int fd;
	int dfd;
	unsigned flags;
	char dir[4096];
	char name[256];
	char tmp[320];
};

/**
 * wd_atomic_open() - start replacing @path (relative to @dfd, or AT_FDCWD) whole
 * @a:		filled in; write to @a->fd, then wd_atomic_commit() or wd_atomic_abort()
 * @dfd:	the folder @path is relative to (ignored when @path is absolute)
 * @path:	the file to replace or create; its folder must exist
 * @flags:	WD_ATOMIC_*
 *
 * The temporary file is made with O_EXCL|O_NOFOLLOW, mode 0600, beside the final name.
 * Return: 0, or a negative errno (nothing is left behind).
 */
int wd_atomic_open(struct wd_atomic *a, int dfd, const char *path, unsigned flags);
/**
 * wd_atomic_commit() - close the new content and rename it onto the final name
 * Return: 0, or a negative errno (the old file stays and the temporary one is removed).
 */
int wd_atomic_commit(struct wd_atomic *a);
/** wd_atomic_abort() - drop the new content: close and remove the temporary file. */
void wd_atomic_abort(struct wd_atomic *a);
/**
 * wd_write_file_atomic() - replace @path (relative to @dfd) with @len bytes of @data, whole
 * Return: 0, or a negative errno (the old file, if any, is unchanged).
 */
int wd_write_file_atomic(int dfd, const char *path, const void *data, size_t len, unsigned flags);

/**
 * wd_mkdir_p() - create @path and its missing parents with @mode
 * Return: 0 (also when it already exists as a directory), or a negative errno.
 */
int wd_mkdir_p(const char *path, mode_t mode);

/* ------------------------------------------------------------ processes (proc.c) */

/**
 * wd_proc_stat_parse() - state and start time of a /proc/<pid>/stat line (pure)
 * @buf:	the bytes read (not NUL-terminated)
 * @len:	their number
 * @ret_start:	on success, field 22: start time in clock ticks after boot
 * @ret_state:	on success, field 3: the state letter (R, S, Z, ...); may be NULL
 *
 * Return: 0, or -EIO when @buf is not such a line.
 */
int wd_proc_stat_parse(const char *buf, size_t len, unsigned long long *ret_start, char *ret_state);

/**
 * wd_proc_stat() - a process's start time and state, from /proc/<pid>/stat
 * @pid:	the process (0: the caller)
 * @ret_start:	on success, start time in clock ticks after boot (with @pid, the process's
 *		identity across pid reuse)
 * @ret_state:	on success, the state letter; may be NULL
 *
 * Return: 0, -ENOENT (no such process), -EIO (unreadable line), -EINVAL (negative @pid),
 * or another negative errno.
 */
int wd_proc_stat(pid_t pid, unsigned long long *ret_start, char *ret_state);

/**
 * wd_proc_status_parse() - the value of line @key of a /proc/<pid>/status text (pure)
 * @text:	the text, NUL-terminated
 * @key:	the field's name without its colon ("Uid", "NSpid", "Umask")
 * @out:	on success, the value: what follows "@key:" and the blanks after it, up to the
 *		end of that line
 * @size:	@out's size
 *
 * Only a whole name at the start of a line matches ("Uid" is not "Ruid", nor "Uidx").
 * Return: 0, -ENOENT (no such line), -EIO (a line without its colon), or -ERANGE (the value
 * does not fit in @size).
 */
int wd_proc_status_parse(const char *text, const char *key, char *out, size_t size);

/**
 * wd_proc_status_num_parse() - a status value that is one number ("0022", "4242") (pure)
 * @value:	the value (wd_proc_status_parse())
 * @base:	8 for Umask, 10 for Tgid, PPid and the like
 * @ret:	on success, the number
 *
 * Return: 0, or -EIO (empty, a sign, anything after the digits, out of range).
 */
int wd_proc_status_num_parse(const char *value, int base, unsigned long *ret);

/**
 * wd_proc_status_ids_parse() - the four ids of a Uid or Gid value (pure)
 * @value:	the value: real, effective, saved and file system id, tab-separated
 * @ret:	on success, those four, in that order
 *
 * Return: 0, or -EIO (not exactly four decimal ids).
 */
int wd_proc_status_ids_parse(const char *value, unsigned long ret[4]);

/**
 * wd_proc_status_field() - the value of line @key of /proc/<@pid>/status: the one reader of
 * that file (the recorder's callers' umask, thread group, ids and pid namespaces; a
 * sandbox's parent pids)
 * @pid:	the process (0: the caller)
 * @key:	the field's name without its colon
 * @out:	on success, the value (wd_proc_status_parse())
 * @size:	@out's size
 *
 * Return: 0, -ENOENT (no such process, or no such line), -EINVAL (negative @pid), -EIO
 * (malformed, or a file too long to hold that line), -ERANGE, or another negative errno.
 */
int wd_proc_status_field(pid_t pid, const char *key, char *out, size_t size);

/**
 * wd_proc_status_field_at() - wd_proc_status_field() of the process whose /proc folder
 * @procfd is (opened by the caller, who checked whose it is)
 * @procfd:	an O_DIRECTORY descriptor of /proc/<pid>
 * @key:	the field's name
 * @out:	on success, the value
 * @size:	@out's size
 *
 * Return: as wd_proc_status_field().
 */
int wd_proc_status_field_at(int procfd, const char *key, char *out, size_t size);

/**
 * wd_proc_status_num() - a status field that is one number, of /proc/<@pid>/status
 * @pid:	the process (0: the caller)
 * @key:	"Umask", "Tgid", "PPid", ...
 * @base:	its base (8 for Umask)
 * @ret:	on success, the number
 *
 * Return: 0, or a negative errno as wd_proc_status_field() and wd_proc_status_num_parse().
 */
int wd_proc_status_num(pid_t pid, const char *key, int base, unsigned long *ret);

/**
 * wd_proc_status_ids() - the real, effective, saved and file system uid ("Uid") or gid
 * ("Gid") of @pid, as this process's user namespace sees them
 * @pid:	the process (0: the caller)
 * @key:	"Uid" or "Gid"
 * @ret:	on success, the four ids in that order
 *
 * Return: 0, or a negative errno as wd_proc_status_field() and wd_proc_status_ids_parse().
 */
int wd_proc_status_ids(pid_t pid, const char *key, unsigned long ret[4]);

/**
 * wd_parse_uint() - a decimal number as the kernel or sudo writes one (a pid, a uid, an fd)
 * @s:		the text: digits only, no sign, no space, no leading zero but "0" itself
 * @max:	the largest value accepted
 * @ret:	on success, the value
 *
 * Unlike atoi(3), nothing is ignored and nothing wraps: "12x", "", "-1" and 2^32 for a
 * uid are errors (pure).
 * Return: 0, -EINVAL when @s is not such a number, or -ERANGE when it is over @max.
 */
int wd_parse_uint(const char *s, unsigned long long max, unsigned long long *ret);

/* ------------------------------------------------------------ terminal text (esc.c) */

/**
 * wd_utf8_seqlen() - length of the valid UTF-8 sequence at @p
 * @p:	bytes
 * @n:	bytes available (> 0)
 *
 * Strict: no overlong forms, no surrogates, nothing above U+10FFFF (pure).
 * Return: 1..4, or 0 when the bytes at @p are not valid UTF-8.
 */
int wd_utf8_seqlen(const char *p, size_t n);

/**
 * wd_esc_append() - append @s to @b as a person's terminal may be sent it: the one escaper
 * for text a run controls (command words, policy names and paths, file paths, host names,
 * tool names, and error messages that quote them)
 * @b:		the buffer
 * @s:		the text, NUL-terminated
 * @width:	at most this many columns (3 or more), cut with "..." past it (one per
 *		character shown as it is, one per byte of an escape); 0: no limit
 *
 * C0 controls (ESC, BEL, CR, BS, tab, newline, ...), DEL and bytes that are not UTF-8
 * become "\xNN", a backslash "\\", and C1 controls written as UTF-8 (U+0080..U+009F), the
 * bidi controls (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069) and the line and
 * paragraph separators (U+2028, U+2029) "\u{NNNN}"; a raw C1 byte is not UTF-8, so "\x9b".
 * Nothing else changes. Pure but for @b's allocation.
 *
 * Return: the columns appended, or -ENOMEM (then @b is as it was).
 */
int wd_esc_append(struct wd_buf *b, const char *s, size_t width);

/**
 * wd_esc() - @s escaped by wd_esc_append(), in @b (emptied first), for a printf argument
 * @b:	scratch buffer the caller owns and frees; one per argument printed together
 * @s:	the text; NULL reads "(null)"
 *
 * Return: the escaped text (valid until @b changes), or "(out of memory)".
 */
const char *wd_esc(struct wd_buf *b, const char *s);

/**
 * wd_say() - print one line to @f: @fmt formatted, the whole of it escaped (wd_esc_append():
 * what an argument quotes, a run's command word, a path, a host name, cannot drive the
 * terminal), then a newline
 * @f:		stdout or stderr
 * @fmt:	printf-style message without the trailing newline; ours, so it holds no
 *		control character of its own
 *
 * Every message of a verb that may quote text a run or an argument chose goes through this
 * (warden(1), "Text from runs").
 */
void wd_say(FILE *f, const char *fmt, ...) WD_PRINTF(2, 3);

/** wd_vsay() - wd_say() with a va_list. */
void wd_vsay(FILE *f, const char *fmt, va_list ap) WD_PRINTF(2, 0);

/* ---------------------------------------------------------------- hashing (hash.c) */

/**
 * wd_siphash24() - SipHash-2-4 of @len bytes at @data under @key (the reference algorithm;
 * test vectors in tests/unit/test_common_hash.c)
 */
uint64_t wd_siphash24(const uint8_t key[16], const void *data, size_t len);

/**
 * wd_hash() - the keyed hash every table uses: SipHash-2-4 under a key drawn from
 * getrandom(2) once per process, so a sandbox cannot choose names that collide
 * @data:	the bytes
 * @len:	their number
 */
uint64_t wd_hash(const void *data, size_t len);

/** wd_hash_str() - wd_hash() of a NUL-terminated string (without the NUL). */
uint64_t wd_hash_str(const char *s);

struct wd_hslot;

/**
 * struct wd_htable - open addressing, linear probing, at most half full; it holds the
 * caller's item pointers (never NULL) and their hashes and never looks inside an item
 * @slots:	the array (internal; NULL in a zeroed table, which is an empty one)
 * @mask:	its size - 1 (a power of two)
 * @n:		number of items
 * @probes:	slots looked at by lookups since init (for tests: bounded work per lookup);
 *		lookups write it, so one table belongs to one thread at a time
 */
struct wd_htable {
	struct wd_hslot *slots;
	size_t mask;
	size_t n;
	uint64_t probes;
};

/**
 * wd_htable_init() - an empty table for about @hint items (it grows past that); a zeroed
 * struct is an empty table too, allocated by its first insert
 * Return: 0, or -ENOMEM.
 */
int wd_htable_init(struct wd_htable *t, size_t hint);

/** wd_htable_free() - release the slots (not the items); @t may be NULL. */
void wd_htable_free(struct wd_htable *t);

/**
 * wd_htable_insert() - add @item under @hash (duplicates of a key are allowed)
 * Return: 0, -EINVAL for a NULL @item, or -ENOMEM (the table is unchanged).
 */
int wd_htable_insert(struct wd_htable *t, uint64_t hash, void *item);

/**
 * wd_htable_find() - the first item under @hash for which @eq(item, @key) is true
 * @eq:		NULL: the hash alone decides
 * Return: the item, or NULL.
 */
void *wd_htable_find(struct wd_htable *t, uint64_t hash,
		     bool (*eq)(const void *item, const void *key), const void *key);

/**
 * wd_htable_next() - walk every item under @hash for which @eq(item, @key) is true
 * @cursor:	0 before the first call; the table must not change during the walk
 * Return: the next such item, or NULL at the end.
 */
void *wd_htable_next(struct wd_htable *t, size_t *cursor, uint64_t hash,
		     bool (*eq)(const void *item, const void *key), const void *key);

/**
 * wd_htable_remove() - remove @item (by identity) stored under @hash
 * Return: 0, or -ENOENT.
 */
int wd_htable_remove(struct wd_htable *t, uint64_t hash, const void *item);

/**
 * wd_htable_sweep() - remove every item for which @drop(item, @ctx) is true, in one pass
 * @drop:	asked once about each item; it may free an item it drops
 * Return: the number of items removed.
 */
size_t wd_htable_sweep(struct wd_htable *t, bool (*drop)(void *item, void *ctx), void *ctx);

/**
 * wd_htable_each() - every item, in no particular order
 * @cursor:	0 before the first call; the table must not change during the walk
 * Return: the next item, or NULL at the end.
 */
void *wd_htable_each(const struct wd_htable *t, size_t *cursor);

/* ------------------------------------------------------- address ranges (net.c) */

/**
 * struct wd_cidr - an address range
 * @family:	AF_INET or AF_INET6
 * @addr:	the network, in network byte order (4 bytes used for IPv4, the rest zero)
 * @prefix:	its length in bits
 */
struct wd_cidr {
	int family;
	uint8_t addr[16];
	unsigned prefix;
};

/**
 * enum wd_cidr_result - what wd_cidr_parse() found
 * @WD_CIDR_OK:		a range
 * @WD_CIDR_MALFORMED:	not an address and a prefix length (see wd_cidr_parse())
 * @WD_CIDR_HOST_BITS:	well-formed, but bits past the prefix are set
 */
enum wd_cidr_result {
	WD_CIDR_OK,
	WD_CIDR_MALFORMED,
	WD_CIDR_HOST_BITS,
};

/* wd_cidr_parse() flag: a bare address is a range of one (/32 or /128) */
#define WD_CIDR_BARE 0x1u

/**
 * wd_cidr_parse() - parse "a.b.c.d/n" or "x:y::/n" strictly
 * @s:		the text: an address inet_pton(3) reads, "/", and a decimal length of 1 to 3
 *		digits (no sign, no spaces, no leading zero) of at most 32 or 128
 * @flags:	0, or WD_CIDR_BARE
 * @ret:	on WD_CIDR_OK the range; on WD_CIDR_HOST_BITS the range with its host bits
 *		cleared (what the text likely meant, for a diagnostic); untouched otherwise
 *
 * Pure: no I/O, no allocation.
 *
 * Return: the outcome.
 */
enum wd_cidr_result wd_cidr_parse(const char *s, unsigned flags, struct wd_cidr *ret);

/**
 * wd_cidr_format() - "network/prefix" text of a range
 * @family:	AF_INET or AF_INET6
 * @addr:	4 or 16 bytes
 * @prefix:	the length
 * @out:	the text ("" on error when @outlen > 0)
 * @outlen:	its size (INET6_ADDRSTRLEN + 4 always suffices)
 *
 * Return: 0, -EINVAL (not an address family), or -ENOSPC.
 */
int wd_cidr_format(int family, const uint8_t *addr, unsigned prefix, char *out, size_t outlen);

/** wd_addr_len() - 4 for AF_INET, 16 for AF_INET6, 0 for anything else. */
size_t wd_addr_len(int family);

/** wd_prefix_mask() - clear the bits of @addr past @prefix. */
void wd_prefix_mask(int family, uint8_t *addr, unsigned prefix);

/** wd_prefix_is_network() - no bit of @addr past @prefix is set. */
bool wd_prefix_is_network(int family, const uint8_t *addr, unsigned prefix);

/**
 * wd_prefix_contains() - whether @addr lies in @net/@prefix
 * Return: false also for an unknown @family or a @prefix longer than its addresses.
 */
bool wd_prefix_contains(int family, const uint8_t *net, unsigned prefix, const uint8_t *addr);

/** wd_mono_ns() - CLOCK_MONOTONIC in nanoseconds. */
uint64_t wd_mono_ns(void);

/**
 * wd_rfc3339() - format @ts as UTC RFC 3339 with microseconds (what the audit log writes)
 * @ts:		time to format (CLOCK_REALTIME; the microseconds are truncated)
 * @out:	at least 28 bytes: "2026-11-29T10:14:15.123456Z" (27) and a NUL
 * @outlen:	size of @out
 *
 * Return: 0, or -EINVAL when @outlen is under 28, @ts->tv_nsec is not in [0, 1e9), or the
 * year is outside 0000-9999 (which no RFC 3339 reader takes back).
 */
int wd_rfc3339(const struct timespec *ts, char *out, size_t outlen);

/**
 * wd_rfc3339_parse() - an RFC 3339 time back to a timespec (what the audit decoder reads)
 * @s:		"YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)", NUL-terminated; "T" and "Z" may be
 *		lower case; digits of the fraction past nanoseconds are read and dropped
 * @out:	the time, in UTC
 *
 * Return: 0, or -EINVAL when @s is not that form or a field is out of range (month, day,
 * hour, minute; a second of 60, a leap second, is taken and folds into the next minute).
 */
int wd_rfc3339_parse(const char *s, struct timespec *out);

/**
 * wd_levenshtein() - edit distance between two short strings (for "did you mean")
 * Return: the distance, capped at 255.
 */
unsigned wd_levenshtein(const char *a, const char *b);

/* --------------------------------------------------------- host names (name.c) */

/** Longest host name (no trailing dot), and longest label. */
#define WD_NAME_MAX 253
#define WD_NAME_LABEL_MAX 63

/* flags for wd_name_fold() */
/* a name read off the wire (DNS question, TLS SNI, HTTP Host): `_` is a label character and a
 * label may start or end with `-` (what resolvers take); without it, the strict syntax of a
 * name a person writes in a policy (RFC 1123 labels) */
#define WD_NAME_WIRE 0x1u

enum wd_name_check {
	WD_NAME_OK,
	WD_NAME_EMPTY,
	WD_NAME_TOO_LONG,
	WD_NAME_LABEL_EMPTY,
	WD_NAME_LABEL_TOO_LONG,
	WD_NAME_BAD_CHAR,
	WD_NAME_HYPHEN_EDGE,
};

/**
 * wd_name_fold() - check a host name's syntax and write its lower-case form (pure)
 * @in:		the name as read (need not be NUL-terminated)
 * @len:	its length in bytes
 * @flags:	0 or WD_NAME_WIRE
 * @out:	the name lower-cased, one trailing dot dropped, NUL-terminated; "" on failure
 * @outlen:	size of @out (WD_NAME_MAX + 1 holds every valid name)
 * @ret_last:	when non-NULL and the name is valid: the offset in @out of its last label
 *		(callers decide what an all-numeric last label means)
 *
 * Checks, in one pass from the left: empty, longer than WD_NAME_MAX (or than @outlen - 1),
 * and per label: empty, longer than WD_NAME_LABEL_MAX, a character other than a letter, digit
 * or `-` (and `_` with WD_NAME_WIRE), `-` at either end (not with WD_NAME_WIRE).
 *
 * Return: WD_NAME_OK or the first problem found.
 */
enum wd_name_check wd_name_fold(const char *in, size_t len, unsigned flags, char *out,
				size_t outlen, size_t *ret_last);

/** wd_name_check_text() - a person's description of a wd_name_fold() result. */
const char *wd_name_check_text(enum wd_name_check c);

/** wd_name_is_ip_literal() - true for a dotted-quad IPv4 or any IPv6 text (brackets allowed). */
bool wd_name_is_ip_literal(const char *s);

/* ------------------------------------------------------------- paths (path.c) */

/**
 * wd_path_absolute() - whether @p is an absolute path of this system: "/..." on Linux and
 * macOS; on Windows a drive's ("C:\\..." or "C:/...") or a UNC path ("\\\\server\\share...",
 * "\\\\?\\..."). A drive-relative "C:x" or a rooted "\\x" without a drive is not.
 */
bool wd_path_absolute(const char *p);

/**
 * wd_path_fold() - fold an absolute path lexically (pure: symbolic links are not looked at)
 * @in:		an absolute path, NUL-terminated
 * @out:	the folded path; may be @in itself (folding in place), not otherwise overlapping
 * @outlen:	size of @out: at least strlen(@in) + 1 (the folded path is never longer)
 *
 * Runs of `/` become one, `.` components go, `..` drops the component before it (at the
 * root it stays the root: "/../a" is "/a"), a trailing `/` goes; "/" stays "/". Names such as
 * `...` or `..a` are kept as they are.
 *
 * Return: 0; -EINVAL when @in is NULL, empty or relative; -ENAMETOOLONG when @outlen is
 * under strlen(@in) + 1 (@out untouched in both cases).
 */
int wd_path_fold(const char *in, char *out, size_t outlen);

/* ----------------------------------------------------------- quoting (quote.c) */

/**
 * wd_yaml_quote() - append @s as one double-quoted string that is valid YAML and valid JSON
 * @out:	buffer to append to
 * @s:		the text (NUL-terminated; bytes from 0x80 up pass unchanged)
 *
 * `"` and `\` are escaped with a backslash, newline, CR and tab as \n \r \t, every other
 * control character and DEL as \u00XX. A reader of either format gets @s back.
 *
 * Return: 0, or -ENOMEM (@out then holds a partial string).
 */
int wd_yaml_quote(struct wd_buf *out, const char *s);

enum wd_log_level { WD_LOG_ERR, WD_LOG_WARN, WD_LOG_INFO, WD_LOG_DEBUG };

/**
 * wd_log() - print one diagnostic line to stderr, prefixed with the program name
 *
 * Only the edges (launcher/, gateway main) call this; libraries never do.
 */
void wd_log(enum wd_log_level level, const char *fmt, ...) WD_PRINTF(2, 3);

/** wd_log_set_level() - lines above @level are dropped (default WD_LOG_INFO). */
void wd_log_set_level(enum wd_log_level level);

#endif /* WARDEN_COMMON_H */
