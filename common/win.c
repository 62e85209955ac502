/* win.c - Windows only: the POSIX calls of the portable core that Windows names otherwise or lacks
 * (common/win.h), and common/fd.c's descriptor and socket helpers that have no honest Windows
 * form, refused. Compiled empty on every other system. */
/* stat() and fstat() here are the C runtime's (win.h wraps them for the rest of the core) */
#define WD_WIN_CRT_STAT
#include "common/common.h"

#ifdef _WIN32
#include <bcrypt.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#undef open

int wd_win_random(void *buf, size_t len)
{
	if (len > ULONG_MAX)
		return -EINVAL;
	return BCryptGenRandom(NULL, buf, (ULONG)len, BCRYPT_USE_SYSTEM_PREFERRED_RNG) == 0 ? 0
											    : -EIO;
}

char *wd_win_strndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *d = malloc(len + 1);

	if (!d) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

const char *wd_win_progname(void)
{
	static char name[MAX_PATH];
	char full[MAX_PATH];
	DWORD n = GetModuleFileNameA(NULL, full, sizeof(full));
	const char *base = full;
	char *dot;

	if (name[0])
		return name;
	if (n == 0 || n >= sizeof(full))
		return "warden";
	for (const char *p = full; *p; p++)
		if (*p == '\\' || *p == '/')
			base = p + 1;
	snprintf(name, sizeof(name), "%s", base);
	dot = strrchr(name, '.');
	if (dot && !_stricmp(dot, ".exe"))
		*dot = '\0';
	return name[0] ? name : "warden";
}

int wd_win_fsync(int fd)
{
	return _commit(fd) < 0 ? -1 : 0;
}

/* errno for GetLastError()'s @e */
static int errno_of(DWORD e)
{
	switch (e) {
	case ERROR_FILE_NOT_FOUND:
	case ERROR_PATH_NOT_FOUND:
		return ENOENT;
	case ERROR_ACCESS_DENIED:
	case ERROR_SHARING_VIOLATION:
		return EACCES;
	case ERROR_FILE_EXISTS:
	case ERROR_ALREADY_EXISTS:
		return EEXIST;
	case ERROR_LOCK_VIOLATION:
		return EWOULDBLOCK;
	case ERROR_HANDLE_EOF:
		return 0;
	case ERROR_INVALID_HANDLE:
		return EBADF;
	default:
		return EIO;
	}
}

/* open with O_NOFOLLOW: CreateFileA on the last component itself, refused when it is a
 * reparse point, then handed to the C runtime */
static int open_nofollow(const char *path, int flags, int mode)
{
	DWORD access = 0, disp, attrs = FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT;
	BY_HANDLE_FILE_INFORMATION bi;
	HANDLE h;
	int fd, acc = flags & O_ACCMODE;

	if (acc == O_RDONLY || acc == O_RDWR)
		access |= GENERIC_READ;
	/* O_APPEND: append data alone, so that each write lands at the end, as O_APPEND's does */
	if (acc == O_WRONLY || acc == O_RDWR)
		access |=
		    (flags & O_APPEND) ? FILE_APPEND_DATA | FILE_WRITE_ATTRIBUTES : GENERIC_WRITE;
	if ((flags & O_CREAT) && (flags & O_EXCL))
		disp = CREATE_NEW;
	else if ((flags & O_CREAT) && (flags & O_TRUNC))
		disp = CREATE_ALWAYS;
	else if (flags & O_CREAT)
		disp = OPEN_ALWAYS;
	else if (flags & O_TRUNC)
		disp = TRUNCATE_EXISTING;
	else
		disp = OPEN_EXISTING;
	if ((flags & O_CREAT) && !(mode & _S_IWRITE))
		attrs |= FILE_ATTRIBUTE_READONLY;
	h = CreateFileA(path, access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
			disp, attrs, NULL);
	if (h == INVALID_HANDLE_VALUE) {
		errno = errno_of(GetLastError());
		return -1;
	}
	if (!GetFileInformationByHandle(h, &bi)) {
		errno = errno_of(GetLastError());
		CloseHandle(h);
		return -1;
	}
	if (bi.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) {
		CloseHandle(h);
		errno = ELOOP;
		return -1;
	}
	if (bi.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) {
		CloseHandle(h);
		errno = EISDIR;
		return -1;
	}
	fd = _open_osfhandle((intptr_t)h, flags & (O_ACCMODE | O_APPEND | _O_NOINHERIT));
	if (fd < 0) {
		CloseHandle(h);
		errno = EMFILE;
		return -1;
	}
	/* the C runtime's descriptors are binary when the program says so; this one always */
	_setmode(fd, _O_BINARY);
	if (flags & _O_NOINHERIT)
		SetHandleInformation(h, HANDLE_FLAG_INHERIT, 0);
	return fd;
}

int wd_win_open(const char *path, int flags, ...)
{
	int mode = 0;

	if (flags & O_CREAT) {
		va_list ap;

		va_start(ap, flags);
		mode = va_arg(ap, int);
		va_end(ap);
	}
	if (flags & O_NOFOLLOW)
		return open_nofollow(path, flags & ~O_NOFOLLOW, mode);
	return _open(path, flags, mode);
}

int wd_win_fcntl(int fd, int cmd, ...)
{
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	va_list ap;
	int arg;

	if (h == INVALID_HANDLE_VALUE) {
		errno = EBADF;
		return -1;
	}
	va_start(ap, cmd);
	arg = cmd == F_GETFL ? 0 : va_arg(ap, int);
	va_end(ap);
	switch (cmd) {
	case F_GETFL:
		return 0;
	case F_SETFL:
		if (arg & ~O_NONBLOCK)
			break;
		return 0;
	case F_SETFD:
		if (arg != FD_CLOEXEC)
			break;
		return SetHandleInformation(h, HANDLE_FLAG_INHERIT, 0) ? 0 : (errno = EIO, -1);
	case F_DUPFD_CLOEXEC: {
		int d = _dup(fd);

		if (d >= 0)
			SetHandleInformation((HANDLE)_get_osfhandle(d), HANDLE_FLAG_INHERIT, 0);
		return d;
	}
	default:
		break;
	}
	errno = EINVAL;
	return -1;
}

int wd_win_flock(int fd, int op)
{
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	OVERLAPPED ov = {0};
	DWORD fl = LOCKFILE_EXCLUSIVE_LOCK;

	if (h == INVALID_HANDLE_VALUE) {
		errno = EBADF;
		return -1;
	}
	/* the byte at 2^63 - 2: past any file's data */
	ov.Offset = 0xFFFFFFFEu;
	ov.OffsetHigh = 0x7FFFFFFFu;
	if (op & LOCK_UN) {
		if (UnlockFileEx(h, 0, 1, 0, &ov))
			return 0;
		errno = errno_of(GetLastError());
		return -1;
	}
	if (!(op & (LOCK_EX | LOCK_SH))) {
		errno = EINVAL;
		return -1;
	}
	if (!(op & LOCK_EX))
		fl = 0; /* shared: other shared lockers may hold the byte too */
	if (op & LOCK_NB)
		fl |= LOCKFILE_FAIL_IMMEDIATELY;
	if (LockFileEx(h, fl, 0, 1, 0, &ov))
		return 0;
	errno = errno_of(GetLastError());
	return -1;
}

ssize_t wd_win_pread(int fd, void *buf, size_t n, off_t off)
{
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	OVERLAPPED ov = {0};
	DWORD got = 0;
	uint64_t o = (uint64_t)off;

	if (h == INVALID_HANDLE_VALUE || off < 0) {
		errno = off < 0 ? EINVAL : EBADF;
		return -1;
	}
	ov.Offset = (DWORD)o;
	ov.OffsetHigh = (DWORD)(o >> 32);
	if (!ReadFile(h, buf, n > 0x7FFFFFFF ? 0x7FFFFFFF : (DWORD)n, &got, &ov)) {
		DWORD e = GetLastError();

		if (e == ERROR_HANDLE_EOF)
			return 0;
		errno = errno_of(e);
		return -1;
	}
	return (ssize_t)got;
}

/* policy/'s form of a Windows path, "/X:/rest" (policy/validate.c: its paths are '/'-rooted),
 * as Windows takes it, "X:/rest" ("/X:" is the drive's root, "X:/"); any other path as it is.
 * Return: @path, or @buf holding the native form */
static const char *native_path(const char *path, char *buf, size_t size)
{
	char d = path[0] == '/' ? path[1] : 0;

	if (!((d >= 'A' && d <= 'Z') || (d >= 'a' && d <= 'z')) || path[2] != ':' ||
	    (path[3] && path[3] != '/' && path[3] != '\\'))
		return path;
	if (snprintf(buf, size, "%s%s", path + 1, path[3] ? "" : "/") >= (int)size)
		return path; /* too long for the buffer: as it is, and the call fails */
	return buf;
}

/* @path is a drive's root: "X:/", "X:\\", or the current drive's, "/" or "\\" */
static bool drive_root(const char *path)
{
	if ((path[0] == '/' || path[0] == '\\') && !path[1])
		return true;
	return ((path[0] >= 'A' && path[0] <= 'Z') || (path[0] >= 'a' && path[0] <= 'z')) &&
	       path[1] == ':' && (path[2] == '/' || path[2] == '\\') && !path[3];
}

int wd_win_lstat(const char *path, struct stat *st)
{
	char buf[MAX_PATH + 8];
	DWORD a;

	path = native_path(path, buf, sizeof(buf));
	a = GetFileAttributesA(path);

	if (a == INVALID_FILE_ATTRIBUTES) {
		errno = errno_of(GetLastError());
		return -1;
	}
	/* a drive's root is where a path starts, never a link to follow (wine marks Z:\\, its
	 * link to the Unix root, as a reparse point) */
	if ((a & FILE_ATTRIBUTE_REPARSE_POINT) && !drive_root(path)) {
		memset(st, 0, sizeof(*st));
		st->st_mode = S_IFLNK | 0777;
		return 0;
	}
	return wd_win_stat(path, st);
}

ssize_t wd_win_readlink(const char *path, char *buf, size_t size)
{
	(void)path, (void)buf, (void)size;
	errno = ENOSYS;
	return -1;
}

char *wd_win_realpath(const char *path, char *out)
{
	(void)path, (void)out;
	errno = ENOSYS;
	return NULL;
}

/* common/fd.c's helpers that have no honest Windows form: refused (-ENOSYS), never imitated */

ssize_t wd_send_fds(int sock, const void *buf, size_t len, const int *fds, size_t nfds, int flags)
{
	(void)sock, (void)buf, (void)len, (void)fds, (void)nfds, (void)flags;
	return -ENOSYS; /* no SCM_RIGHTS: Windows duplicates handles into a process by its id */
}

int wd_close_all_except(const int *keep, size_t n)
{
	(void)keep, (void)n;
	return -ENOSYS; /* a child inherits only handles marked inheritable and listed */
}

int wd_peer_cred(int fd, uid_t *uid, gid_t *gid, pid_t *pid)
{
	(void)fd, (void)uid, (void)gid, (void)pid;
	return -ENOSYS; /* no numeric ids of a socket's peer */
}

int wd_win_wsa_errno(int e)
{
	switch (e) {
	case WSAEWOULDBLOCK:
		return EAGAIN;
	case WSAEINTR:
		return EINTR;
	case WSAEINPROGRESS:
	case WSAEALREADY:
		return EINPROGRESS;
	case WSAECONNRESET:
		return ECONNRESET;
	case WSAECONNABORTED:
		return ECONNABORTED;
	case WSAECONNREFUSED:
		return ECONNREFUSED;
	case WSAENOTCONN:
		return ENOTCONN;
	case WSAESHUTDOWN:
		return EPIPE;
	case WSAETIMEDOUT:
		return ETIMEDOUT;
	case WSAENETUNREACH:
	case WSAENETDOWN:
		return ENETUNREACH;
	case WSAEHOSTUNREACH:
		return EHOSTUNREACH;
	case WSAEMSGSIZE:
		return EMSGSIZE;
	case WSAENOBUFS:
		return ENOBUFS;
	case WSAEMFILE:
		return EMFILE;
	case WSAEADDRINUSE:
		return EADDRINUSE;
	case WSAEADDRNOTAVAIL:
		return EADDRNOTAVAIL;
	case WSAEAFNOSUPPORT:
	case WSAEPFNOSUPPORT:
		return EAFNOSUPPORT;
	case WSAEACCES:
		return EACCES;
	case WSAEFAULT:
		return EFAULT;
	case WSAEINVAL:
		return EINVAL;
	case WSAENOTSOCK:
		return EBADF;
	case WSAENOPROTOOPT:
		return ENOPROTOOPT;
	case WSANOTINITIALISED:
		return ENOTSUP;
	default:
		return EIO;
	}
}

/* -errno of the last Winsock failure */
static int wsa_err(void)
{
	return -wd_win_wsa_errno(WSAGetLastError());
}

/* @s made non-blocking (FIONBIO) and not inheritable by any child; the socket as an int (the
 * gateway's descriptors are ints: a SOCKET is a small handle value), or -errno with it closed */
static int nb_noinherit(SOCKET s)
{
	u_long on = 1;
	int ret;

	if (s == INVALID_SOCKET)
		return wsa_err();
	if (ioctlsocket(s, FIONBIO, &on) == SOCKET_ERROR) {
		ret = wsa_err();
		closesocket(s);
		return ret;
	}
	if (!SetHandleInformation((HANDLE)s, HANDLE_FLAG_INHERIT, 0)) {
		ret = -errno_of(GetLastError());
		closesocket(s);
		return ret;
	}
	if (s > INT_MAX) {
		closesocket(s);
		return -EMFILE; /* not an int: the gateway cannot hold it */
	}
	return (int)s;
}

int wd_socket_adopt(int fd)
{
	u_long on = 1;

	if (ioctlsocket((SOCKET)fd, FIONBIO, &on) == SOCKET_ERROR)
		return wsa_err();
	if (!SetHandleInformation((HANDLE)(uintptr_t)fd, HANDLE_FLAG_INHERIT, 0))
		return -errno_of(GetLastError());
	return 0;
}

int wd_socket_nb(int family, int type)
{
	return nb_noinherit(socket(family, type, 0));
}

int wd_accept_nb(int lfd, struct sockaddr *sa, socklen_t *len)
{
	return nb_noinherit(accept((SOCKET)lfd, sa, len));
}

int wd_socket_bound(int family, const void *addr, uint16_t port, int type)
{
	struct sockaddr_storage ss = {0};
	SOCKET s = socket(family, type, 0);
	int one = 1, sl, ret;

	if (s == INVALID_SOCKET)
		return wsa_err();
	if (!SetHandleInformation((HANDLE)s, HANDLE_FLAG_INHERIT, 0) || s > INT_MAX) {
		closesocket(s);
		return -EMFILE;
	}
	/* no SO_REUSEADDR: on Windows it lets another socket take a port that is in use;
	 * SO_EXCLUSIVEADDRUSE keeps it ours */
	setsockopt(s, SOL_SOCKET, SO_EXCLUSIVEADDRUSE, (const char *)&one, sizeof(one));
	if (family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		memcpy(&s4->sin_addr, addr, 4);
		sl = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, (const char *)&one, sizeof(one));
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		memcpy(&s6->sin6_addr, addr, 16);
		sl = sizeof(*s6);
	}
	if (bind(s, (struct sockaddr *)&ss, sl) == SOCKET_ERROR ||
	    (type == SOCK_STREAM && listen(s, 4096) == SOCKET_ERROR)) {
		ret = wsa_err();
		closesocket(s);
		return ret;
	}
	return (int)s;
}

int wd_win_close_any(int fd)
{
	if (closesocket((SOCKET)fd) == 0)
		return 0;
	if (WSAGetLastError() != WSAENOTSOCK) {
		errno = wd_win_wsa_errno(WSAGetLastError());
		return -1;
	}
	return _close(fd);
}

/* the C runtime's own stat() and fstat() (WD_WIN_CRT_STAT keeps win.h's macros out here) */
int wd_win_stat(const char *path, struct stat *st)
{
	char buf[MAX_PATH + 8];
	int r = stat(native_path(path, buf, sizeof(buf)), st);

	if (!r)
		st->st_mode &= (unsigned short)~(S_IWGRP | S_IWOTH);
	return r;
}

int wd_win_fstat(int fd, struct stat *st)
{
	int r = fstat(fd, st);

	if (!r)
		st->st_mode &= (unsigned short)~(S_IWGRP | S_IWOTH);
	return r;
}

#undef strerror
const char *wd_win_strerror(int e)
{
	static const struct {
		int e;
		const char *text;
	} posix[] = {
	    {EADDRINUSE, "Address already in use"},
	    {EADDRNOTAVAIL, "Cannot assign requested address"},
	    {EAFNOSUPPORT, "Address family not supported by protocol"},
	    {EALREADY, "Operation already in progress"},
	    {ECONNABORTED, "Software caused connection abort"},
	    {ECONNREFUSED, "Connection refused"},
	    {ECONNRESET, "Connection reset by peer"},
	    {EHOSTUNREACH, "No route to host"},
	    {EINPROGRESS, "Operation now in progress"},
	    {EISCONN, "Transport endpoint is already connected"},
	    {EMSGSIZE, "Message too long"},
	    {ENETDOWN, "Network is down"},
	    {ENETUNREACH, "Network is unreachable"},
	    {ENOBUFS, "No buffer space available"},
	    {ENOPROTOOPT, "Protocol not available"},
	    {ENOTCONN, "Transport endpoint is not connected"},
	    {ENOTSOCK, "Socket operation on non-socket"},
	    {ENOTSUP, "Operation not supported"},
	    {EOPNOTSUPP, "Operation not supported"},
	    {EOVERFLOW, "Value too large for defined data type"},
	    {EPROTO, "Protocol error"},
	    {ETIMEDOUT, "Connection timed out"},
	    {EWOULDBLOCK, "Resource temporarily unavailable"},
	    {EDQUOT, "Disk quota exceeded"},
	    {EUSERS, "Too many users"},
	    {ESTALE, "Stale file handle"},
	};

	for (size_t i = 0; i < sizeof(posix) / sizeof(posix[0]); i++)
		if (posix[i].e == e)
			return posix[i].text;
	return strerror(e);
}

int wd_win_utf8_args(void)
{
	const wchar_t *line = GetCommandLineW();

	if (GetACP() == CP_UTF8 || !line)
		return 0;
	/* the program's own path first (quoted, or to the first blank, as the C runtime splits
	 * it): a folder named outside ASCII is the system's to open, not an argument to check */
	if (*line == '"') {
		for (line++; *line && *line != '"'; line++)
			;
		if (*line)
			line++;
	} else {
		while (*line && *line != ' ' && *line != '\t')
			line++;
	}
	for (; *line; line++)
		if (*line > 0x7f)
			return -EILSEQ;
	return 0;
}

ssize_t wd_win_getline(char **line, size_t *cap, FILE *f)
{
	size_t n = 0;
	int c;

	if (!line || !cap || !f) {
		errno = EINVAL;
		return -1;
	}
	while ((c = getc(f)) != EOF) {
		if (n + 2 > *cap || !*line) {
			size_t want = *cap && *line ? *cap * 2 : 128;
			char *p = realloc(*line, want);

			if (!p) {
				errno = ENOMEM;
				return -1;
			}
			*line = p;
			*cap = want;
		}
		(*line)[n++] = (char)c;
		if (c == '\n')
			break;
	}
	if (n == 0)
		return -1; /* the end of the file, or an error (ferror() tells) */
	(*line)[n] = '\0';
	return (ssize_t)n;
}

struct tm *wd_win_gmtime_r(const time_t *t, struct tm *tm)
{
	return gmtime_s(tm, t) ? NULL : tm;
}
#endif
