/* run_etc.c - the sandbox's /etc in one read-only mount: a folder of copies of the few host
 * /etc files a program may need (bwrap_base_etc), kept up to date by size and mtime, with
 * empty mount points where the /etc folders of the runtime base and the generated files go.
 * One bind instead of eleven saves bubblewrap about a millisecond per run. */
#include "run/bwrap.h"
#include "run/run.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* Mount points inside the folder: the /etc folders of the base and the generated files. */
static const char *const etc_dirs[] = {"ssl", "ca-certificates", "alternatives", "ld.so.conf.d"};
static const char *const etc_files[] = {"resolv.conf", "hosts", "passwd", "group"};

bool run_etc_usable(const struct wd_policy *p)
{
	for (size_t i = 0; i < p->nread; i++)
		if (p->read[i].real && run_path_within(p->read[i].real, "/etc"))
			return false;
	for (size_t i = 0; i < p->nwrite; i++)
		if (p->write[i].real && run_path_within(p->write[i].real, "/etc"))
			return false;
	for (size_t i = 0; i < p->nmask; i++)
		if (run_path_within(p->mask[i], "/etc"))
			return false;
	return true;
}

/* Whether @copy is up to date with @host (both stat()ed; @copy may be absent). */
static bool fresh(const struct stat *host, const struct stat *copy)
{
	return S_ISREG(copy->st_mode) && (copy->st_mode & 07777) == (host->st_mode & 0644) &&
	       copy->st_size == host->st_size && copy->st_mtim.tv_sec == host->st_mtim.tv_sec &&
	       copy->st_mtim.tv_nsec == host->st_mtim.tv_nsec;
}

/* Copy @src (followed) to @dst through a temporary file and rename(). The copy is never more
 * readable than the original (its mode & 0644), and the temporary file is 0600 until written,
 * so a host file only root may read does not become readable by others here. */
static int copy_file(const char *src, const char *dst, const struct stat *st)
{
	char buf[65536];
	struct timespec times[2] = {st->st_atim, st->st_mtim};
	struct wd_atomic out;
	int in, ret = 0;
	ssize_t n;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	ret = wd_atomic_open(&out, AT_FDCWD, dst, 0);
	if (ret) {
		close(in);
		return ret;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0 && !ret)
		ret = wd_write_all(out.fd, buf, (size_t)n);
	if (n < 0 && !ret)
		ret = -errno;
	if (!ret && (fchmod(out.fd, st->st_mode & 0644) < 0 || futimens(out.fd, times) < 0))
		ret = -errno;
	close(in);
	if (ret) {
		wd_atomic_abort(&out);
		return ret;
	}
	return wd_atomic_commit(&out);
}

/* One pass over the copies; with @fix, bring them up to date. Return: 1 when something is
 * stale (without @fix), 0 when all is fresh (or fixed), or a negative errno. */
static int sync_pass(const char *dir, bool fix)
{
	char path[PATH_MAX];
	struct stat h, c;
	int ret;

	for (size_t i = 0; bwrap_base_etc[i]; i++) {
		const char *name = bwrap_base_etc[i] + 5; /* after "/etc/" */
		bool have = stat(bwrap_base_etc[i], &h) == 0 && S_ISREG(h.st_mode);

		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (lstat(path, &c) < 0)
			memset(&c, 0, sizeof(c));
		if (have ? fresh(&h, &c) : c.st_mode == 0)
			continue;
		if (!fix)
			return 1;
		ret = have ? copy_file(bwrap_base_etc[i], path, &h) : unlink(path) < 0 ? -errno : 0;
		if (ret && ret != -ENOENT)
			return ret;
	}
	for (size_t i = 0; i < WD_ARRAY_SIZE(etc_dirs); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, etc_dirs[i]);
		if (lstat(path, &c) == 0 && S_ISDIR(c.st_mode))
			continue;
		if (!fix)
			return 1;
		if (mkdir(path, 0755) < 0)
			return -errno;
	}
	for (size_t i = 0; i < WD_ARRAY_SIZE(etc_files); i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/%s", dir, etc_files[i]);
		if (lstat(path, &c) == 0 && S_ISREG(c.st_mode))
			continue;
		if (!fix)
			return 1;
		fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0)
			return -errno;
		close(fd);
	}
	return 0;
}

/* The folder above @dir (/run/warden) must let the invoking user through to it: the first
 * state folder of a boot makes it 0700. When it is root's and nobody else may write to it,
 * it is made searchable (its own folders and files keep their modes); otherwise -EPERM. */
static int parent_searchable(const char *dir)
{
	char parent[PATH_MAX];
	const char *slash = strrchr(dir, '/');
	struct stat st;

	if (!slash || slash == dir || (size_t)(slash - dir) >= sizeof(parent))
		return -EINVAL;
	memcpy(parent, dir, (size_t)(slash - dir));
	parent[slash - dir] = '\0';
	if (lstat(parent, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
		return -EPERM;
	if ((st.st_mode & 0111) != 0111 && chmod(parent, (st.st_mode & 07777) | 0111) < 0)
		return -errno;
	return 0;
}

int run_etc_base(const char *dir)
{
	char lockpath[PATH_MAX];
	struct stat st;
	int ret, lock;

	if (lstat(dir, &st) < 0) {
		if (errno != ENOENT)
			return -errno;
		ret = wd_mkdir_p(dir, 0755);
		if (ret)
			return ret;
		if (lstat(dir, &st) < 0)
			return -errno;
	}
	/* mounted as every sandbox's /etc: it must be root's and nobody else's to change, and
	 * readable by all (bwrap binds it as the invoking user under sudo) */
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022) ||
	    (st.st_mode & 0555) != 0555)
		return -EPERM;
	ret = parent_searchable(dir);
	if (ret)
		return ret;
	ret = sync_pass(dir, false);
	if (ret <= 0)
		return ret;
	if (snprintf(lockpath, sizeof(lockpath), "%s.lock", dir) >= (int)sizeof(lockpath))
		return -ENAMETOOLONG;
	lock = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lock < 0)
		return -errno;
	while (flock(lock, LOCK_EX) < 0)
		if (errno != EINTR) {
			ret = -errno;
			close(lock);
			return ret;
		}
	ret = sync_pass(dir, true);
	close(lock);
	return ret;
}

int run_empty_file(const char *path)
{
	return run_empty_file_owned(path, 0);
}

int run_empty_file_owned(const char *path, uid_t owner)
{
	struct stat st;
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd, ret;

	if (!slash || slash == path || (size_t)(slash - path) >= sizeof(dir))
		return -EINVAL;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	ret = wd_mkdir_p(dir, 0755);
	if (ret)
		return ret;
	/* parent_searchable() checks the folder above the path given: the file's own folder
	 * (root's, searchable by the program's user); a rootless run's is the caller's private
	 * one (run_rootless_dir() checked it), which only the caller's bwrap reads */
	ret = owner == 0 ? parent_searchable(path) : 0;
	if (ret)
		return ret;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (fd >= 0) {
		ret = fchmod(fd, 0444) < 0 ? -errno : 0;
		close(fd);
		if (ret)
			return ret;
	} else if (errno != EEXIST) {
		return -errno;
	}
	if (lstat(path, &st) < 0)
		return -errno;
	/* bound over files of every sandbox's /proc: root's, empty, nobody may change it */
	if (!S_ISREG(st.st_mode) || st.st_uid != owner || st.st_size != 0 || (st.st_mode & 0222))
		return -EPERM;
	return 0;
}
