/* fuse_secret.c - a tiny FUSE file system holding one file, for
 * tests/integration/recorder_identity.sh: mounted by root without allow_other, the kernel admits
 * only callers whose real, effective and saved uid (and gid) are root's, whatever the file's
 * mode bits say (fuse_allow_current_process()), so it tells a process that holds a user's full
 * identity from one that changed only its file system ids.
 *
 * Usage: fuse_secret MOUNTPOINT SECRET
 *   serves MOUNTPOINT/secret (mode 0444, SECRET and a newline) in the foreground, single
 *   threaded, until unmounted (fusermount3 -u, umount) or killed. No allow_other, no
 *   default_permissions: the mode bits do not refuse anyone, only the mount's owner check does.
 * Exit 0 after a clean unmount, 2 on a usage or mount error.
 */
#define FUSE_USE_VERSION 31

#include <errno.h>
#include <fuse.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static char secret[256];

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (!strcmp(path, "/secret")) {
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		st->st_size = (off_t)strlen(secret);
		return 0;
	}
	return -ENOENT;
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
	fill(buf, "secret", NULL, 0, 0);
	return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	if (strcmp(path, "/secret"))
		return -ENOENT;
	if ((fi->flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	return 0;
}

static int fs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	size_t len = strlen(secret);

	(void)fi;
	if (strcmp(path, "/secret"))
		return -ENOENT;
	if (off < 0 || (size_t)off >= len)
		return 0;
	if (size > len - (size_t)off)
		size = len - (size_t)off;
	memcpy(buf, secret + off, size);
	return (int)size;
}

static const struct fuse_operations ops = {
    .getattr = fs_getattr,
    .readdir = fs_readdir,
    .open = fs_open,
    .read = fs_read,
};

int main(int argc, char **argv)
{
	char *fargv[] = {argv[0], "-f", "-s", "-o", "fsname=wd_fuse_secret", NULL, NULL};

	if (argc != 3 || snprintf(secret, sizeof(secret), "%s\n", argv[2]) >= (int)sizeof(secret)) {
		fprintf(stderr, "usage: fuse_secret MOUNTPOINT SECRET\n");
		return 2;
	}
	fargv[5] = argv[1];
	return fuse_main(6, fargv, &ops, NULL) ? 2 : 0;
}
