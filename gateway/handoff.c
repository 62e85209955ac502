/* handoff.c - the exec hand-off from warden-gateway to warden-gateway-worker:
 * finding and opening the worker image, the configuration as a sealed memfd,
 * and the exec with descriptors at fixed numbers (handoff.h has the layout). */
#include "gateway/handoff.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef WD_GW_LIBEXECDIR
#define WD_GW_LIBEXECDIR "/usr/local/libexec/warden"
#endif
/* the libexec folder seen from the sbin folder: an install moved to another prefix */
#ifndef WD_GW_LIBEXEC_REL
#define WD_GW_LIBEXEC_REL "../libexec/warden"
#endif

#define CONF_SEALS (F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK)

/* is the opened candidate @fd (@path) safe for a root process to exec? */
static int check_worker(int fd, const char *path, uid_t self_owner, struct wd_err *err)
{
	struct stat st;

	if (fstat(fd, &st))
		return wd_err_set(err, -errno, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode) || !(st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)))
		return wd_err_set(err, -EACCES, "%s is not an executable file", path);
	if (st.st_uid != 0 && st.st_uid != geteuid() && st.st_uid != self_owner)
		return wd_err_set(err, -EPERM,
				  "%s is owned by uid %u (not root, not the owner of "
				  "warden-gateway): refusing to run it",
				  path, (unsigned)st.st_uid);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return wd_err_set(err, -EPERM,
				  "%s is writable by group or others: refusing to run it", path);
	return 0;
}

/* open and check @path; -ENOENT (nothing there) is left to the caller to report */
static int try_worker(const char *path, uid_t self_owner, int *ret_fd, struct wd_err *err)
{
	int fd = open(path, O_PATH | O_CLOEXEC);
	int r;

	if (fd < 0)
		return errno == ENOENT ? -ENOENT
				       : wd_err_set(err, -errno, "%s: %s", path, strerror(errno));
	r = check_worker(fd, path, self_owner, err);
	if (r) {
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

int gw_handoff_find_worker(const char *explicit_path, int *ret_fd, char *path, size_t size,
			   struct wd_err *err)
{
	char self[PATH_MAX],
	    cand[PATH_MAX + sizeof(WD_GW_LIBEXEC_REL) + sizeof(GW_WORKER_NAME) + 2];
	const char *const installed = WD_GW_LIBEXECDIR "/" GW_WORKER_NAME;
	uid_t self_owner = 0;
	struct stat st;
	ssize_t n;
	int r;

	if (!stat("/proc/self/exe", &st))
		self_owner = st.st_uid;
	if (explicit_path) {
		if (strlen(explicit_path) >= size)
			return wd_err_set(err, -ENAMETOOLONG, "--worker: path too long");
		r = try_worker(explicit_path, self_owner, ret_fd, err);
		if (r == -ENOENT)
			return wd_err_set(err, r, "--worker %s: no such file", explicit_path);
		if (!r)
			snprintf(path, size, "%s", explicit_path);
		return r;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			static const char *const rel[] = {"", WD_GW_LIBEXEC_REL "/"};

			*slash = '\0';
			for (size_t i = 0; i < WD_ARRAY_SIZE(rel); i++) {
				snprintf(cand, sizeof(cand), "%s/%s%s", self, rel[i],
					 GW_WORKER_NAME);
				r = try_worker(cand, self_owner, ret_fd, err);
				if (r != -ENOENT) {
					if (!r)
						snprintf(path, size, "%s", cand);
					return r;
				}
			}
		}
	}
	r = try_worker(installed, self_owner, ret_fd, err);
	if (r == -ENOENT)
		return wd_err_set(err, r,
				  "%s not found next to warden-gateway (%s), in %s from there, "
				  "nor in %s (install it, or pass --worker PATH)",
				  GW_WORKER_NAME, n > 0 ? self : "?", WD_GW_LIBEXEC_REL,
				  WD_GW_LIBEXECDIR);
	if (!r)
		snprintf(path, size, "%s", installed);
	return r;
}

int gw_handoff_conf_fd(const struct wd_gwconf *conf, int *ret_fd, struct wd_err *err)
{
	struct wd_buf y = WD_BUF_INIT;
	int fd = -1, r;

	r = conf_render_yaml(conf, &y);
	if (r) {
		wd_err_set(err, r, "rendering the configuration for the worker: %s", strerror(-r));
		goto out;
	}
	fd = memfd_create("warden-gateway.yaml", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		r = wd_err_set(err, -errno, "memfd_create: %s", strerror(errno));
		goto out;
	}
	r = wd_write_all(fd, y.data, y.len);
	if (r) {
		wd_err_set(err, r, "writing the worker's configuration: %s", strerror(-r));
		goto out;
	}
	if (fcntl(fd, F_ADD_SEALS, CONF_SEALS | F_SEAL_SEAL) < 0 || lseek(fd, 0, SEEK_SET) < 0) {
		r = wd_err_set(err, -errno, "sealing the worker's configuration: %s",
			       strerror(errno));
		goto out;
	}
	*ret_fd = fd;
	fd = -1;
out:
	wd_closep(&fd);
	wd_buf_free(&y);
	return r;
}

int gw_handoff_conf_read(int fd, struct wd_gwconf *conf, struct wd_err *err)
{
	struct policy_diags d;
	struct wd_buf b = WD_BUF_INIT;
	char *data = NULL;
	struct stat st;
	size_t len = 0;
	int seals, r;

	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || (seals & CONF_SEALS) != CONF_SEALS || fstat(fd, &st) ||
	    !S_ISREG(st.st_mode))
		return wd_err_set(err, -EBADF,
				  "descriptor %d is not the sealed configuration warden-gateway "
				  "hands its worker (the worker is started by warden-gateway)",
				  fd);
	if (st.st_size <= 0 || st.st_size > (off_t)POLICY_MAX_BYTES)
		return wd_err_set(err, -EFBIG, "the handed-over configuration has %lld bytes",
				  (long long)st.st_size);
	data = malloc((size_t)st.st_size);
	if (!data)
		return wd_err_set(err, -ENOMEM, "out of memory");
	while (len < (size_t)st.st_size) {
		ssize_t n = pread(fd, data + len, (size_t)st.st_size - len, (off_t)len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = wd_err_set(err, n < 0 ? -errno : -EIO,
				       "reading the handed-over configuration: %s",
				       n < 0 ? strerror(errno) : "short read");
			goto out;
		}
		len += (size_t)n;
	}
	policy_diags_init(&d);
	r = conf_parse(data, len, "(from warden-gateway)", conf, &d);
	if (r) {
		if (d.n)
			policy_diag_format(&d, 0, &b);
		wd_err_set(err, r, "the handed-over configuration: %s",
			   d.n ? wd_buf_cstr(&b) : strerror(-r));
	}
	policy_diags_free(&d);
out:
	wd_buf_free(&b);
	free(data);
	return r;
}

int gw_handoff_exec(int exe_fd, const int *fds, unsigned n, char *const argv[])
{
	int keep[GW_HANDOFF_MAX_FDS + 1], exe;

	if (n > GW_HANDOFF_MAX_FDS || exe_fd < 0)
		return -EINVAL;
	/* above every target number first, so that no dup2() below overwrites a source */
	for (unsigned i = 0; i < n; i++) {
		keep[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 3 + (int)n);
		if (keep[i] < 0)
			return -errno;
	}
	exe = fcntl(exe_fd, F_DUPFD_CLOEXEC, 3 + (int)n);
	if (exe < 0)
		return -errno;
	for (unsigned i = 0; i < n; i++) {
		/* dup2() leaves the new descriptor without FD_CLOEXEC: this one is inherited */
		if (dup2(keep[i], 3 + (int)i) < 0)
			return -errno;
		keep[i] = 3 + (int)i;
	}
	keep[n] = exe; /* close-on-exec: open until the exec itself */
	if (wd_close_all_except(keep, n + 1))
		return -EBADF;
	fexecve(exe, argv, environ);
	return -errno;
}
