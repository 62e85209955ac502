/* outdir.h - the folder an end-of-run file goes to (a trace, `warden init`'s policy), held from
 * before the program starts, and the file written into it as the person who asked.
 *
 * A traced program owns its writable current folder: during the run it can replace any folder
 * in it with a symbolic link (or move it and put another in its place). A path resolved again
 * by name when the run ends would then lead where the program chose, and root would write
 * there. So the folder is opened before the program starts (openat2 RESOLVE_NO_SYMLINKS from
 * the launcher's own root, which the program cannot change) and that descriptor is kept; at the
 * end the path must still lead to that same folder (else -ESTALE: nothing is written), and the
 * file is made through the descriptor, never by name: a new file (O_CREAT|O_EXCL, never through
 * a link) renamed or linked onto its name, so no file the program planted is ever opened.
 * Root working for a sudo user does both in a short-lived child that holds the user's identity
 * (uid, gid, groups): the folder must be one the user may write, and the file is the user's.
 */
#ifndef WARDEN_LAUNCHER_OUTDIR_H
#define WARDEN_LAUNCHER_OUTDIR_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* most supplementary groups an outdir_who carries */
#define OUTDIR_GROUPS_MAX 64

/**
 * struct outdir_who - whom the folder is opened and the file written as
 * @drop:	true: a child switches to @uid, @gid and @groups first (root for a sudo user);
 *		false: the launcher itself
 * @uid:	the user (with @drop)
 * @gid:	their group
 * @ngroups:	how many of @groups
 * @groups:	their supplementary groups
 */
struct outdir_who {
	bool drop;
	uid_t uid;
	gid_t gid;
	int ngroups;
	gid_t groups[OUTDIR_GROUPS_MAX];
};

/**
 * struct outdir - a folder held open for an end-of-run write
 * @dfd:	O_PATH|O_DIRECTORY descriptor, or -1
 * @dev:	its device, when opened
 * @ino:	its inode, when opened
 * @who:	whom it was opened as, and whom the file is written as
 * @path:	its absolute path
 */
struct outdir {
	int dfd;
	dev_t dev;
	ino_t ino;
	struct outdir_who who;
	char path[PATH_MAX];
};

/* how outdir_write() names the file */
enum outdir_mode {
	OUTDIR_REPLACE, /* the name replaced, whatever it is (a new file renamed onto it) */
	OUTDIR_KEEP,	/* the name made only when absent (a new file linked to it): -EEXIST */
	OUTDIR_SUFFIX,	/* the name, else "-2", "-3", ... (up to 99) before ".jsonl" */
};

/** outdir_init() - @d holds nothing (outdir_close() may be called on it) */
void outdir_init(struct outdir *d);

/**
 * outdir_who_sudo() - whom `warden init` writes as: root started through sudo (SUDO_UID and
 * SUDO_GID, a uid other than 0) works for the invoking user, with their groups; anyone else
 * for themselves
 * @w:	filled in
 *
 * Return: 0, or -EINVAL (SUDO_UID or SUDO_GID is not a uid or a gid).
 */
int outdir_who_sudo(struct outdir_who *w);

/**
 * outdir_open() - open the folder @path (absolute) as @who and keep it, before the program runs
 * @d:		filled in (outdir_close() it)
 * @path:	the folder; no component may be a symbolic link
 * @make:	make the missing folders (0700, as @who), one at a time through the previous
 *		one's descriptor, never through a link
 * @who:	whom as (copied into @d)
 *
 * The folder must be one @who may write and search.
 *
 * Return: 0, or a negative errno (-ELOOP a link on the way, -ENOTDIR, -ENOENT, -EACCES the
 * user may not write there, -EINVAL a relative path or a `.`/`..` component).
 */
int outdir_open(struct outdir *d, const char *path, bool make, const struct outdir_who *who);

/**
 * outdir_write() - write @len bytes of @buf as the file @name in @d's folder, as @d's person
 * @d:		an open folder (outdir_open())
 * @name:	the file's name (one component)
 * @how:	what to do when the name is taken
 * @mode:	the file's mode (0600 a trace, 0644 a policy)
 * @buf:	the bytes
 * @len:	how many
 * @ret_name:	the name the file got (OUTDIR_SUFFIX); may be NULL
 * @size:	size of @ret_name
 *
 * @d->path must still lead (without a link) to the folder opened, else nothing is written.
 * The bytes go to a new file (O_CREAT|O_EXCL|O_NOFOLLOW, fsync'd) made through @d->dfd; for
 * OUTDIR_REPLACE and OUTDIR_KEEP it is a hidden temporary renamed (or linked) onto @name.
 *
 * Return: 0, or a negative errno (-ESTALE: the folder at @d->path was replaced or moved;
 * -EEXIST: @name is taken (OUTDIR_KEEP) or every suffix is (OUTDIR_SUFFIX); -EISDIR: @name is
 * a folder).
 */
int outdir_write(const struct outdir *d, const char *name, enum outdir_mode how, mode_t mode,
		 const void *buf, size_t len, char *ret_name, size_t size);

/** outdir_close() - close @d's folder (if open); @d may be NULL */
void outdir_close(struct outdir *d);

#endif /* WARDEN_LAUNCHER_OUTDIR_H */
