/* fuse_nosync.c - a tiny FUSE file system whose files take writes but, in `fail` mode, refuse
 * every fsync/fdatasync with EIO, for tests/integration/audit_durable.sh: an audit log on it
 * is written (run.start lands) and cannot be made durable, the one failure the launcher's
 * overlapped sync must still turn into a run that never starts. In `ok` mode fsync succeeds
 * (the positive control: the same file system, the same log, a run that starts).
 *
 * Usage: fuse_nosync MOUNTPOINT fail|ok
 *   serves MOUNTPOINT (mode 0755, root's) in the foreground, single threaded, until unmounted:
 *   regular files made with create(2)/open(O_CREAT), kept in memory (1 MiB each at most),
 *   read, written (at an offset: the kernel turns O_APPEND into one), truncated, stat'ed as
 *   root's; each fsync said on stderr. allow_other with default_permissions: the mode bits
 *   decide, as on a disk (the embedded gateway's unprivileged worker reaches the log too).
 * Exit 0 after a clean unmount, 2 on a usage or mount error.
 */
#define FUSE_USE_VERSION 31

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NFILES 8
#define FILE_MAX (1 << 20)

static struct nosync_file {
	char name[64];
	mode_t mode;
	char *data;
	size_t len;
} files[NFILES];
static int fail_sync;

static struct nosync_file *find(const char *path)
{
	for (int i = 0; i < NFILES; i++)
		if (files[i].name[0] && path[0] == '/' && !strcmp(files[i].name, path + 1))
			return &files[i];
	return NULL;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct nosync_file *f;

	(void)fi;
	memset(st, 0, sizeof(*st));
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	f = find(path);
	if (!f)
		return -ENOENT;
	st->st_mode = S_IFREG | f->mode;
	st->st_nlink = 1;
	st->st_size = (off_t)f->len;
	return 0;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void)off;
	(void)fi;
	(void)flags;
	if (strcmp(path, "/"))
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	for (int i = 0; i < NFILES; i++)
		if (files[i].name[0])
			fill(buf, files[i].name, NULL, 0, 0);
	return 0;
}

static int fs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	(void)fi;
	if (find(path))
		return 0;
	if (path[0] != '/' || strchr(path + 1, '/') || strlen(path + 1) >= sizeof(files[0].name))
		return -EINVAL;
	for (int i = 0; i < NFILES; i++)
		if (!files[i].name[0]) {
			strcpy(files[i].name, path + 1);
			files[i].mode = mode & 07777;
			return 0;
		}
	return -ENOSPC;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	(void)fi;
	return find(path) ? 0 : -ENOENT;
}

static int fs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct nosync_file *f = find(path);

	(void)fi;
	if (!f)
		return -ENOENT;
	if (off < 0 || (size_t)off >= f->len)
		return 0;
	if (size > f->len - (size_t)off)
		size = f->len - (size_t)off;
	memcpy(buf, f->data + off, size);
	return (int)size;
}

static int fs_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct nosync_file *f = find(path);
	char *d;

	(void)fi;
	if (!f)
		return -ENOENT;
	if (off < 0 || (size_t)off + size > FILE_MAX)
		return -EFBIG;
	if ((size_t)off + size > f->len) {
		d = realloc(f->data, (size_t)off + size);
		if (!d)
			return -ENOMEM;
		memset(d + f->len, 0, (size_t)off + size - f->len);
		f->data = d;
		f->len = (size_t)off + size;
	}
	memcpy(f->data + off, buf, size);
	return (int)size;
}

static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct nosync_file *f = find(path);

	(void)fi;
	if (!f)
		return -ENOENT;
	if (size < 0 || (size_t)size > f->len)
		return -EINVAL;
	f->len = (size_t)size;
	return 0;
}

static int fs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	struct nosync_file *f = find(path);

	(void)fi;
	if (!f)
		return -ENOENT;
	f->mode = mode & 07777;
	return 0;
}

static int fs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	(void)datasync;
	(void)fi;
	fprintf(stderr, "fuse_nosync: fsync -> %s\n", fail_sync ? "EIO" : "ok");
	return fail_sync ? -EIO : 0;
}

static const struct fuse_operations ops = {
    .getattr = fs_getattr,
    .readdir = fs_readdir,
    .create = fs_create,
    .open = fs_open,
    .read = fs_read,
    .write = fs_write,
    .truncate = fs_truncate,
    .chmod = fs_chmod,
    .fsync = fs_fsync,
};

int main(int argc, char **argv)
{
	char *fargv[] = {argv[0],
			 "-f",
			 "-s",
			 "-o",
			 "fsname=wd_fuse_nosync,attr_timeout=0,allow_other,default_permissions",
			 NULL,
			 NULL};

	if (argc != 3 || (strcmp(argv[2], "fail") && strcmp(argv[2], "ok"))) {
		fprintf(stderr, "usage: fuse_nosync MOUNTPOINT fail|ok\n");
		return 2;
	}
	fail_sync = !strcmp(argv[2], "fail");
	fargv[5] = argv[1];
	return fuse_main(6, fargv, &ops, NULL) ? 2 : 0;
}
