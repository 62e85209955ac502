/* outdir.c - the folder an end-of-run file goes to, held from before the program starts, and
 * the file written into it as the person who asked (outdir.h has the why).
 *
 * Theory of operation. Two steps, each done by a "job": open (before the program starts: walk
 * the path from `/` one component at a time with openat2 RESOLVE_NO_SYMLINKS, making missing
 * folders when asked, and check the folder is writable) and write (after the run: walk the
 * path again and require the same folder, then make a new file through the held descriptor).
 * A job runs in the launcher itself, or, for root working for a sudo user, in a forked child
 * that first takes the user's identity with raw system calls (glibc's would signal threads the
 * child does not have), answers on a socket pair (with the opened descriptor, SCM_RIGHTS) and
 * exits. The child never execs; having changed its uid it is not dumpable, so the user cannot
 * read its memory. Nothing in a job allocates memory.
 */
#include "run/outdir.h"
#include "common/common.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* what a job answers */
struct reply {
	int ret;
	char name[NAME_MAX + 1];
};

/* one step, with its arguments */
struct job {
	int (*fn)(const struct job *j, struct reply *rep, int *ret_fd);
	/* open */
	const char *path;
	bool make;
	/* write */
	const struct outdir *d;
	const char *name;
	enum outdir_mode how;
	mode_t mode;
	const void *buf;
	size_t len;
};

void outdir_init(struct outdir *d)
{
	memset(d, 0, sizeof(*d));
	d->dfd = -1;
}

void outdir_close(struct outdir *d)
{
	if (d)
		wd_closep(&d->dfd);
}

int outdir_who_sudo(struct outdir_who *w)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	unsigned long long u = 0, g = 0;
	struct passwd *pw;
	int n = OUTDIR_GROUPS_MAX;

	memset(w, 0, sizeof(*w));
	if (getuid() != 0 || !su || !sg)
		return 0;
	if (wd_parse_uint(su, UINT32_MAX - 1, &u) || wd_parse_uint(sg, UINT32_MAX - 1, &g))
		return -EINVAL;
	if (!u)
		return 0;
	w->drop = true;
	w->uid = (uid_t)u;
	w->gid = (gid_t)g;
	pw = getpwuid(w->uid);
	if (pw && getgrouplist(pw->pw_name, w->gid, w->groups, &n) >= 0)
		w->ngroups = n;
	return 0;
}

/* The folder @name in the folder @dfd, never through a link (nor out of @dfd). Return: an
 * O_PATH descriptor, or a negative errno. */
static int open_comp(int dfd, const char *name)
{
	struct open_how how = {
	    .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
	    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH,
	};
	long fd = syscall(SYS_openat2, dfd, name, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

/* @path (absolute) from `/`, one component at a time, none a link; with @make a missing one
 * is made 0700. Return: its O_PATH|O_DIRECTORY descriptor, or a negative errno. */
static int walk(const char *path, bool make)
{
	char comp[NAME_MAX + 1];
	const char *p = path;
	int dfd, fd;

	if (path[0] != '/')
		return -EINVAL;
	dfd = wd_open_nofollow("/", O_PATH | O_DIRECTORY);
	while (dfd >= 0 && *p) {
		size_t n = strcspn(p, "/");

		if (!n) {
			p++;
			continue;
		}
		fd = n > NAME_MAX ? -ENAMETOOLONG : 0;
		if (!fd) {
			memcpy(comp, p, n);
			comp[n] = '\0';
			p += n;
			fd = !strcmp(comp, ".") || !strcmp(comp, "..") ? -EINVAL : 0;
		}
		if (!fd)
			fd = open_comp(dfd, comp);
		if (fd == -ENOENT && make) {
			fd = mkdirat(dfd, comp, 0700) < 0 && errno != EEXIST ? -errno : 0;
			if (!fd)
				fd = open_comp(dfd, comp);
		}
		close(dfd);
		dfd = fd;
	}
	return dfd;
}

static int job_open(const struct job *j, struct reply *rep, int *ret_fd)
{
	int fd = walk(j->path, j->make), e;

	(void)rep;
	if (fd < 0)
		return fd;
	/* as whom the file will be written: may they make a file there? (an older kernel
	 * without faccessat2: the write says it at the end) */
	if (syscall(SYS_faccessat2, fd, "", W_OK | X_OK, AT_EMPTY_PATH) < 0 && errno != ENOSYS) {
		e = -errno;
		close(fd);
		return e;
	}
	*ret_fd = fd;
	return 0;
}

/* The bytes into @fd (a new file), with @mode, on the disk; @fd is closed. Return: 0 or a
 * negative errno. */
static int fill(int fd, const struct job *j)
{
	int ret = wd_write_all(fd, j->buf, j->len);

	if (!ret && fchmod(fd, j->mode) < 0)
		ret = -errno;
	if (!ret && fsync(fd) < 0)
		ret = -errno;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	return ret;
}

/* A new file @file in the held folder. Return: the descriptor, or a negative errno. */
static int create(const struct job *j, const char *file)
{
	int fd =
	    openat(j->d->dfd, file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	return fd;
}

/* OUTDIR_SUFFIX: @name, else "-2" ... "-99" before ".jsonl" (or at the end). */
static int write_suffix(const struct job *j, struct reply *rep)
{
	const char *ext = strstr(j->name, ".jsonl");
	size_t stem = ext ? (size_t)(ext - j->name) : strlen(j->name);
	int fd = -EEXIST, ret;

	for (unsigned i = 1; i < 100 && fd == -EEXIST; i++) {
		int n = i == 1 ? snprintf(rep->name, sizeof(rep->name), "%s", j->name)
			       : snprintf(rep->name, sizeof(rep->name), "%.*s-%u%s", (int)stem,
					  j->name, i, ext ? ext : "");

		if (n < 0 || (size_t)n >= sizeof(rep->name))
			return -ENAMETOOLONG;
		fd = create(j, rep->name);
	}
	if (fd < 0)
		return fd;
	ret = fill(fd, j);
	if (ret)
		unlinkat(j->d->dfd, rep->name, 0);
	return ret;
}

/* OUTDIR_REPLACE, OUTDIR_KEEP: a hidden new file, renamed (or linked) onto @name. Not
 * wd_atomic_open(): the file is made by create() as the person, in a folder opened before the
 * run, and KEEP links instead of renaming. */
static int write_swap(const struct job *j, struct reply *rep)
{
	char tmp[NAME_MAX + 1];
	int fd = -EEXIST, ret;

	for (unsigned i = 0; i < 100 && fd == -EEXIST; i++) {
		snprintf(tmp, sizeof(tmp), ".%.200s.warden-%ld-%u", j->name, (long)getpid(), i);
		fd = create(j, tmp);
	}
	if (fd < 0)
		return fd;
	ret = fill(fd, j);
	if (!ret && j->how == OUTDIR_REPLACE && renameat(j->d->dfd, tmp, j->d->dfd, j->name) < 0)
		ret = -errno;
	/* link() never replaces: a file made meanwhile is kept */
	if (!ret && j->how == OUTDIR_KEEP && linkat(j->d->dfd, tmp, j->d->dfd, j->name, 0) < 0)
		ret = -errno;
	if (ret || j->how == OUTDIR_KEEP)
		unlinkat(j->d->dfd, tmp, 0);
	if (!ret)
		snprintf(rep->name, sizeof(rep->name), "%s", j->name);
	return ret;
}

static int job_write(const struct job *j, struct reply *rep, int *ret_fd)
{
	struct stat st;
	int fd;

	*ret_fd = -1; /* no descriptor to hand back */
	/* the path must still lead to the folder opened before the program ran */
	fd = walk(j->d->path, false);
	if (fd == -ENOENT || fd == -ELOOP || fd == -ENOTDIR)
		return -ESTALE;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	close(fd);
	if (st.st_dev != j->d->dev || st.st_ino != j->d->ino)
		return -ESTALE;
	return j->how == OUTDIR_SUFFIX ? write_suffix(j, rep) : write_swap(j, rep);
}

/* The reply (and a descriptor with it) from the child. Return: 0, or -ECHILD (none). */
static int recv_reply(int sock, struct reply *rep, int *ret_fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {rep, sizeof(*rep)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *cm;
	ssize_t n;
	int fd = -1;

	memset(&u, 0, sizeof(u));
	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof(u.buf);
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	cm = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	if (n != (ssize_t)sizeof(*rep) || (mh.msg_flags & (MSG_CTRUNC | MSG_TRUNC))) {
		if (fd >= 0)
			close(fd);
		return -ECHILD;
	}
	rep->name[sizeof(rep->name) - 1] = '\0';
	*ret_fd = fd;
	return 0;
}

/* @j as @w: in the launcher, or in a child with @w's identity. Return: the job's result. */
static int run_as(const struct outdir_who *w, const struct job *j, struct reply *rep, int *ret_fd)
{
	int sv[2], fd = -1, status, ret;
	pid_t pid;

	memset(rep, 0, sizeof(*rep));
	*ret_fd = -1;
	if (!w->drop)
		return j->fn(j, rep, ret_fd);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(sv[0]);
		close(sv[1]);
		return ret;
	}
	if (pid == 0) {
		close(sv[0]);
		if (syscall(SYS_setgroups, (size_t)w->ngroups, w->groups) < 0 ||
		    syscall(SYS_setresgid, w->gid, w->gid, w->gid) < 0 ||
		    syscall(SYS_setresuid, w->uid, w->uid, w->uid) < 0 || geteuid() != w->uid)
			rep->ret = -EPERM;
		else
			rep->ret = j->fn(j, rep, &fd);
		if (fd >= 0)
			(void)!wd_send_fds(sv[1], rep, sizeof(*rep), &fd, 1, 0);
		else
			(void)!send(sv[1], rep, sizeof(*rep), MSG_NOSIGNAL);
		_exit(0);
	}
	close(sv[1]);
	ret = recv_reply(sv[0], rep, ret_fd);
	close(sv[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (ret)
		return ret;
	if (rep->ret < 0 && *ret_fd >= 0)
		wd_closep(ret_fd);
	return rep->ret;
}

int outdir_open(struct outdir *d, const char *path, bool make, const struct outdir_who *who)
{
	struct job j = {.fn = job_open, .path = path, .make = make};
	struct reply rep;
	struct stat st;
	int fd, ret;

	outdir_init(d);
	if (!path || path[0] != '/' || strlen(path) >= sizeof(d->path))
		return path && path[0] == '/' ? -ENAMETOOLONG : -EINVAL;
	ret = run_as(who, &j, &rep, &fd);
	if (ret)
		return ret;
	if (fd < 0)
		return -ECHILD;
	if (fstat(fd, &st) < 0)
		ret = -errno;
	else if (!S_ISDIR(st.st_mode))
		ret = -ENOTDIR;
	if (ret) {
		close(fd);
		return ret;
	}
	d->dfd = fd;
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	d->who = *who;
	snprintf(d->path, sizeof(d->path), "%s", path);
	return 0;
}

int outdir_write(const struct outdir *d, const char *name, enum outdir_mode how, mode_t mode,
		 const void *buf, size_t len, char *ret_name, size_t size)
{
	struct job j = {.fn = job_write,
			.d = d,
			.name = name,
			.how = how,
			.mode = mode,
			.buf = buf,
			.len = len};
	struct reply rep;
	int fd, ret;

	if (d->dfd < 0)
		return -EBADF;
	if (!name || !name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..") ||
	    strlen(name) > NAME_MAX)
		return -EINVAL;
	ret = run_as(&d->who, &j, &rep, &fd);
	if (fd >= 0)
		close(fd);
	if (!ret && ret_name && snprintf(ret_name, size, "%s", rep.name) >= (int)size)
		ret = -ENAMETOOLONG;
	return ret;
}
