/* win.h - Windows only (x86_64-w64-mingw32): what the portable core needs of POSIX that Windows
 * names otherwise or lacks. common/common.h includes it in place of <sys/socket.h> under _WIN32;
 * the Windows cross build's compat headers (tests/cross/windows/compat/: arpa/inet.h,
 * netinet/in.h, sys/socket.h ...) include it too, so the core's #include lines stay as they are
 * and the Linux and macOS builds never see this file. Winsock comes before <windows.h> (which
 * would pull the old winsock.h in), without the min/max macros and the rarely used APIs.
 * What Windows cannot promise is refused in common/win.c, never imitated (docs/platforms.md).
 */
#ifndef WARDEN_COMMON_WIN_H
#define WARDEN_COMMON_WIN_H

#ifdef _WIN32

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <winsock2.h>
#include <ws2tcpip.h>

#include <direct.h>
#include <fcntl.h>
#include <io.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>
#include <sys/types.h>
/* <windows.h>'s 16-bit leftovers, empty macros that would eat names the core uses */
#undef near
#undef far

/* ids Windows does not have (a SID is no number): the types the prototypes name, as Cygwin's;
 * msvcrt's stat() says st_uid 0, so the effective uid is 0 too (docs/platforms.md: the audit
 * log's owner check says nothing on Windows) */
typedef unsigned int uid_t;
typedef unsigned int gid_t;
#define geteuid() ((uid_t)0)
#define getuid() ((uid_t)0)

/* open(2) flags. Every open() of the core passes O_CLOEXEC: on Windows that is a handle no
 * child inherits (_O_NOINHERIT) and bytes as they are (_O_BINARY, never the text mode's CR LF).
 * O_NOFOLLOW is a bit of Warden's own that wd_win_open() (open() here) honours: the last
 * component may not be a reparse point (a symbolic link or a junction), or -1 with ELOOP.
 * O_NOCTTY and O_NONBLOCK mean nothing for files on Windows (no terminal to acquire, no FIFO). */
#undef O_CLOEXEC
#define O_CLOEXEC (_O_NOINHERIT | _O_BINARY)
#define O_NOFOLLOW 0x01000000
#define O_NOCTTY 0
#define O_NONBLOCK 0
#define O_DIRECTORY 0
#define AT_FDCWD (-100) /* the only folder wd_atomic_open() takes on Windows */
#ifndef O_ACCMODE
#define O_ACCMODE (O_RDONLY | O_WRONLY | O_RDWR)
#endif
#define open wd_win_open
#define S_ISVTX 01000
#ifndef S_IWGRP
#define S_IWGRP 0020
#define S_IWOTH 0002
#endif

/* errno values Windows' C runtime lacks that the gateway and the audit return as their own codes
 * (-EDQUOT: an upload budget spent; -EUSERS: too many control clients; -ESTALE: a log position
 * in a file that was rotated away): Winsock's numbers for the same conditions, far from the C
 * runtime's (1 to 140) */
#ifndef EDQUOT
#define EDQUOT WSAEDQUOT
#endif
#ifndef EUSERS
#define EUSERS WSAEUSERS
#endif
#ifndef ESTALE
#define ESTALE WSAESTALE
#endif

/* mkdir(2) without a mode: a new folder takes its DACL from its parent's inheritable entries */
#define mkdir(path, mode) ((void)(mode), _mkdir(path))
/* the C runtime's names for timegm(3) and the program's name; getentropy(2) from BCrypt */
#define timegm _mkgmtime
/* gmtime_r(3) over the C runtime's gmtime_s(), which takes its arguments the other way round */
#define gmtime_r wd_win_gmtime_r
struct tm *wd_win_gmtime_r(const time_t *t, struct tm *tm);
/* getline(3) (mingw-w64 has none) */
#define getline wd_win_getline
ssize_t wd_win_getline(char **line, size_t *cap, FILE *f);
#define getprogname wd_win_progname
#define getentropy(buf, len) wd_win_random(buf, len)
#define strndup wd_win_strndup
#define strerror wd_win_strerror

/* fcntl(2), flock(2), pread(2), fdatasync(2) on C runtime descriptors (common/win.c) */
#define F_GETFL 3
#define F_SETFL 4
#define F_SETFD 2
#define F_DUPFD_CLOEXEC 1030
#define FD_CLOEXEC 1
#define fcntl wd_win_fcntl
#define LOCK_SH 1
#define LOCK_EX 2
#define LOCK_NB 4
#define LOCK_UN 8
#define flock wd_win_flock
#define pread wd_win_pread
#define fdatasync wd_win_fsync
#define fsync wd_win_fsync

/**
 * wd_win_open() - open(2) on Windows: _open() but for O_NOFOLLOW
 * @path:	the file
 * @flags:	O_* flags; with O_NOFOLLOW the file is opened with FILE_FLAG_OPEN_REPARSE_POINT
 *		(the link itself, never its target) and refused when it is a reparse point
 * @...:	the mode, with O_CREAT
 *
 * Return: a descriptor, or -1 with errno (ELOOP: the last component is a reparse point).
 */
int wd_win_open(const char *path, int flags, ...);

/**
 * wd_win_fcntl() - the fcntl(2) commands the core uses
 * @fd:		a C runtime descriptor
 * @cmd:	F_GETFL: 0, since the C runtime does not tell a descriptor's flags (a caller that
 *		needs O_APPEND seen refuses: audit_log_from_fd()); F_SETFL: only O_NONBLOCK, which
 *		means nothing for a file (0); F_SETFD FD_CLOEXEC: the handle made not inheritable;
 *		F_DUPFD_CLOEXEC: _dup(), not inheritable
 * @...:	the command's argument
 *
 * Return: as fcntl(2); -1 with EINVAL for any other command.
 */
int wd_win_fcntl(int fd, int cmd, ...);

/**
 * wd_win_flock() - flock(2) by LockFileEx() on one byte at the far end of the file's range
 * @fd:	a C runtime descriptor
 * @op:	LOCK_SH or LOCK_EX (with LOCK_NB: do not wait), or LOCK_UN; unlike flock(2) a lock
 *	held is not converted (a second one stacks) and LOCK_SH | LOCK_EX is LOCK_EX
 *
 * Windows' byte-range locks are mandatory: a lock on the data would fail every other reader's
 * read. The byte locked is at offset 2^63 - 2, past any file's end, so the lock excludes other
 * lockers and nothing else, as flock(2) does between processes.
 *
 * Return: 0, or -1 with errno (EWOULDBLOCK with LOCK_NB when another holds it).
 */
int wd_win_flock(int fd, int op);

/**
 * wd_win_pread() - pread(2): ReadFile() at @off, the descriptor's position untouched
 * @fd:		a C runtime descriptor
 * @buf:	where to read
 * @n:		at most this many bytes
 * @off:	from this offset
 *
 * Return: bytes read (0 at the end), or -1 with errno.
 */
ssize_t wd_win_pread(int fd, void *buf, size_t n, off_t off);

/**
 * wd_win_random() - fill @buf with @len bytes from the system's random number generator
 * @buf:	where to write
 * @len:	how many bytes
 *
 * BCryptGenRandom() with the system's preferred generator (what getrandom(2) is on Linux).
 *
 * Return: 0, or -EIO when Windows gave none (the caller must not go on without them).
 */
int wd_win_random(void *buf, size_t len);

/**
 * wd_win_wsa_errno() - the POSIX errno for Winsock's error @e (WSAGetLastError())
 * @e:	a WSAE* value
 *
 * WSAEWOULDBLOCK is EAGAIN, WSAEINPROGRESS EINPROGRESS, WSAECONNRESET ECONNRESET and so on, so
 * that callers written for POSIX read a Winsock failure the same way.
 *
 * Return: the errno value; EIO for one the gateway does not tell apart.
 */
int wd_win_wsa_errno(int e);

/**
 * wd_win_close_any() - close @fd, a Winsock socket or a C runtime descriptor
 * @fd:	the socket or descriptor
 *
 * wd_closep() is called on both (the gateway's sockets and its files): closesocket() first,
 * the C runtime's _close() when Winsock says it is not a socket.
 *
 * Return: 0, or -1 with errno.
 */
int wd_win_close_any(int fd);

/* symbolic links: lstat() says S_IFLNK for any reparse point; readlink() and realpath() are
 * refused (ENOSYS), so a path check that meets a link fails instead of trusting it */
#define S_IFLNK 0xA000
#define S_ISLNK(m) (((m)&S_IFMT) == S_IFLNK)
/* no stat() on Windows says socket (an AF_UNIX socket's file is a reparse point: S_IFLNK) */
#define S_ISSOCK(m) ((void)(m), 0)
#define lstat wd_win_lstat
#define readlink wd_win_readlink
#define realpath wd_win_realpath
struct stat;

/**
 * wd_win_lstat() - lstat(2): stat() of the name itself; a reparse point (symbolic link,
 * junction) is S_IFLNK and is not followed
 * @path:	the name
 * @st:		filled in
 *
 * Return: 0, or -1 with errno.
 */
int wd_win_lstat(const char *path, struct stat *st);

/**
 * wd_win_readlink() - readlink(2), refused: a link's target is not read on Windows
 * @path:	the link
 * @buf:	unused
 * @size:	unused
 *
 * Return: -1 with errno ENOSYS.
 */
ssize_t wd_win_readlink(const char *path, char *buf, size_t size);

/**
 * wd_win_realpath() - realpath(3), refused: links are not resolved on Windows
 * @path:	the name
 * @out:	unused
 *
 * Return: NULL with errno ENOSYS (callers fall back to the name as written).
 */
char *wd_win_realpath(const char *path, char *out);

/**
 * wd_win_strerror() - strerror(3) that knows the POSIX errno values mingw-w64 adds (100 to
 * 140: ECONNREFUSED, ETIMEDOUT, EINPROGRESS ... which the socket layer maps Winsock's errors
 * to) and EDQUOT/EUSERS above, for which msvcrt's says "Unknown error"; the C runtime's text
 * for the rest
 */
const char *wd_win_strerror(int e);

/**
 * wd_win_utf8_args() - whether this process's arguments reached it unchanged: its code page is
 * UTF-8 (common/win_utf8.manifest, honoured by Windows 10 1903 and later), or its command line
 * after the program's own path is all ASCII. Elsewhere the C runtime converts the arguments to the
 * system's legacy code page, where a character it lacks becomes '?': a path or an argument that
 * would not be the one given. Return: 0, or -EILSEQ.
 */
int wd_win_utf8_args(void);

/**
 * wd_win_strndup() - strndup(3), which msvcrt lacks
 * @s:	the string
 * @n:	at most this many bytes of it
 *
 * Return: a NUL-terminated copy to free(), or NULL (ENOMEM).
 */
char *wd_win_strndup(const char *s, size_t n);

/**
 * wd_win_progname() - this program's file name without its folder and ".exe"
 *
 * Return: a static string, "warden" when Windows does not say (never NULL).
 */
const char *wd_win_progname(void);

/**
 * wd_win_fsync() - flush a file's data to the drive (fsync(2), fdatasync(2))
 * @fd:	a C runtime descriptor of a file open for writing
 *
 * _commit(), which is FlushFileBuffers() on the file's handle.
 *
 * Return: 0 or -errno.
 */
int wd_win_fsync(int fd);

/* stat(2), fstat(2): the C runtime copies the owner's bits into the group's and others' (a
 * folder is 0777 under wine), which would make every folder "writable by anyone" to the audit
 * writer's checks; Windows says who may write in the DACL, which is not read (the gap
 * docs/platforms.md states): the group's and others' write bits are cleared */
#include <sys/stat.h>	/* first: its inline stat() and fstat() keep their names */
#ifndef WD_WIN_CRT_STAT /* common/win.c: the C runtime's own, wrapped */
#define stat(path, st) wd_win_stat(path, st)
#define fstat(fd, st) wd_win_fstat(fd, st)
#endif

/**
 * wd_win_stat() - stat(2) with the group's and others' write bits cleared (above)
 * @path:	the name
 * @st:		filled in
 *
 * Return: 0, or -1 with errno.
 */
int wd_win_stat(const char *path, struct stat *st);

/**
 * wd_win_fstat() - fstat(2) with the group's and others' write bits cleared (above)
 * @fd:		a C runtime descriptor
 * @st:		filled in
 *
 * Return: 0, or -1 with errno.
 */
int wd_win_fstat(int fd, struct stat *st);

#endif /* _WIN32 */
#endif
