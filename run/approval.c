/* approval.c - the approval store of `warden mcp`'s allowlist additions (approval.h): one
 * 0600 JSON file a request in a 0700 folder of the user's, opened relative to the folder's
 * descriptor with O_NOFOLLOW, rewritten by rename so a reader never sees half a file. */
#include "run/approval.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const state_names[] = {
    [RUN_APPROVAL_PENDING] = "pending",
    [RUN_APPROVAL_APPROVED] = "approved",
    [RUN_APPROVAL_DENIED] = "denied",
};

const char *run_approval_state_name(enum run_approval_state s)
{
	return (unsigned)s < WD_ARRAY_SIZE(state_names) ? state_names[s] : "?";
}

int run_approval_dir(char *out, size_t size)
{
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	int n;

	if (state && *state == '/') {
		n = snprintf(out, size, "%s/warden/approvals", state);
	} else {
		if (!home || *home != '/') {
			struct passwd *pw = getpwuid(geteuid());

			home = pw ? pw->pw_dir : NULL;
		}
		if (!home)
			return -ENOENT;
		n = snprintf(out, size, "%s/.local/state/warden/approvals", home);
	}
	return n > 0 && (size_t)n < size ? 0 : -ENAMETOOLONG;
}

int run_approval_open(const char *dir, int *ret_fd, struct wd_err *err)
{
	char parent[4096];
	struct stat st;
	char *slash;
	int fd, ret;

	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (!slash || slash == parent)
		return wd_err_set(err, -EINVAL, "approval store %s: not an absolute path", dir);
	*slash = '\0';
	ret = wd_mkdir_p(parent, 0700);
	if (ret)
		return wd_err_set(err, ret, "approval store: cannot make %s: %s", parent,
				  strerror(-ret));
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return wd_err_set(err, -errno, "approval store: cannot make %s: %s", dir,
				  strerror(errno));
	fd = wd_open_nofollow(dir, O_RDONLY | O_DIRECTORY);
	if (fd == -ENOSYS) {
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			fd = -errno;
	}
	if (fd < 0)
		return wd_err_set(
		    err, fd, "approval store %s: %s%s", dir, strerror(-fd),
		    fd == -ELOOP || fd == -ENOTDIR ? " (a link is in the way: refused)" : "");
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		close(fd);
		return wd_err_set(err, ret, "approval store %s: %s", dir, strerror(-ret));
	}
	if (st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(fd);
		return wd_err_set(err, -EPERM,
				  "approval store %s: owned by uid %u with mode %04o; it must be "
				  "yours (uid %u) and 0700",
				  dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
				  (unsigned)geteuid());
	}
	*ret_fd = fd;
	return 0;
}

bool run_approval_id_valid(const char *id)
{
	size_t i;

	for (i = 0; id[i]; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return false;
	return i == RUN_APPROVAL_ID_LEN;
}

static int write_req(int dfd, const struct run_approval_req *req, bool fresh)
{
	char file[64];
	json_t *j;
	char *text;
	int fd, ret;

	j = json_pack("{s:s, s:s, s:s, s:i, s:I, s:s, s:s}", "id", req->id, "name", req->name,
		      "run", req->run, "server_pid", (int)req->server_pid, "created",
		      (json_int_t)req->created, "state", run_approval_state_name(req->state),
		      "decided_by", req->decided_by);
	text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!text)
		return -ENOMEM;
	snprintf(file, sizeof(file), "%s.json", req->id);
	if (!fresh) {
		/* a decision replaces the request whole: a reader sees one or the other */
		struct wd_buf b = WD_BUF_INIT;

		ret = wd_buf_printf(&b, "%s\n", text) < 0 ? -ENOMEM : 0;
		free(text);
		if (!ret)
			ret = wd_write_file_atomic(dfd, file, b.data, b.len, WD_ATOMIC_SYNC);
		wd_buf_free(&b);
		return ret;
	}
	/* a new request: O_EXCL on the name itself, so two never share an id */
	fd = openat(dfd, file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		free(text);
		return -errno;
	}
	ret = wd_write_all(fd, text, strlen(text));
	if (!ret)
		ret = wd_write_all(fd, "\n", 1);
	if (!ret && fsync(fd) < 0)
		ret = -errno;
	close(fd);
	free(text);
	return ret;
}

int run_approval_create(int dfd, struct run_approval_req *req)
{
	uint8_t b[RUN_APPROVAL_ID_LEN / 2];

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return -EIO;
	for (size_t i = 0; i < sizeof(b); i++)
		snprintf(req->id + 2 * i, 3, "%02x", b[i]);
	req->created = (long long)time(NULL);
	req->state = RUN_APPROVAL_PENDING;
	req->decided_by[0] = '\0';
	return write_req(dfd, req, true);
}

int run_approval_read(int dfd, const char *id, struct run_approval_req *ret_req)
{
	const char *name = NULL, *run = NULL, *state = NULL, *rid = NULL, *by = "";
	struct run_approval_req req = {0};
	char file[64], buf[2048];
	json_int_t created = 0;
	int fd, spid = 0;
	struct stat st;
	bool bad;
	ssize_t n;
	json_t *j;

	if (!run_approval_id_valid(id))
		return -EINVAL;
	snprintf(file, sizeof(file), "%s.json", id);
	fd = openat(dfd, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		close(fd);
		return -EINVAL;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EINVAL;
	j = json_loadb(buf, (size_t)n, 0, NULL);
	if (!j ||
	    json_unpack(j, "{s:s, s:s, s:s, s:i, s:I, s:s, s?s}", "id", &rid, "name", &name, "run",
			&run, "server_pid", &spid, "created", &created, "state", &state,
			"decided_by", &by) ||
	    strcmp(rid, id)) {
		json_decref(j);
		return -EINVAL;
	}
	snprintf(req.id, sizeof(req.id), "%s", rid);
	snprintf(req.name, sizeof(req.name), "%s", name);
	snprintf(req.run, sizeof(req.run), "%s", run);
	snprintf(req.decided_by, sizeof(req.decided_by), "%s", by);
	req.server_pid = spid;
	req.created = created;
	req.state = !strcmp(state, "approved") ? RUN_APPROVAL_APPROVED
		    : !strcmp(state, "denied") ? RUN_APPROVAL_DENIED
					       : RUN_APPROVAL_PENDING;
	bad = strcmp(state, run_approval_state_name(req.state)) != 0;
	json_decref(j);
	if (bad)
		return -EINVAL;
	*ret_req = req;
	return 0;
}

int run_approval_decide(int dfd, const char *id, bool approve, const char *by)
{
	struct run_approval_req req;
	int ret = run_approval_read(dfd, id, &req);

	if (ret)
		return ret;
	if (req.state != RUN_APPROVAL_PENDING)
		return -EALREADY;
	req.state = approve ? RUN_APPROVAL_APPROVED : RUN_APPROVAL_DENIED;
	snprintf(req.decided_by, sizeof(req.decided_by), "%s", by);
	return write_req(dfd, &req, false);
}

int run_approval_elicited(int dfd, const char *id, bool allow, struct run_approval_req *ret_req)
{
	int ret = run_approval_decide(dfd, id, allow, RUN_APPROVAL_BY_ELICIT);
	int r2;

	if (ret && ret != -EALREADY)
		return ret;
	r2 = run_approval_read(dfd, id, ret_req);
	return r2 ? r2 : ret;
}

int run_approval_remove(int dfd, const char *id)
{
	char file[64];

	if (!run_approval_id_valid(id))
		return -EINVAL;
	snprintf(file, sizeof(file), "%s.json", id);
	return unlinkat(dfd, file, 0) < 0 ? -errno : 0;
}

int run_approval_list(int dfd, int (*fn)(const struct run_approval_req *req, void *arg), void *arg)
{
	int fd = dup(dfd);
	struct dirent *de;
	DIR *d;
	int ret = 0;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		ret = -errno;
		close(fd);
		return ret;
	}
	rewinddir(d);
	while (!ret && (de = readdir(d))) {
		char id[RUN_APPROVAL_ID_LEN + 1];
		struct run_approval_req req;
		size_t len = strlen(de->d_name);

		if (len != RUN_APPROVAL_ID_LEN + 5 ||
		    strcmp(de->d_name + RUN_APPROVAL_ID_LEN, ".json"))
			continue;
		memcpy(id, de->d_name, RUN_APPROVAL_ID_LEN);
		id[RUN_APPROVAL_ID_LEN] = '\0';
		if (!run_approval_read(dfd, id, &req))
			ret = fn(&req, arg);
	}
	closedir(d);
	return ret;
}

int run_approval_open_mine(int *ret_fd, char *why, size_t size)
{
	char dir[4096];
	struct wd_err err;
	int ret;

	if (run_approval_dir(dir, sizeof(dir))) {
		snprintf(why, size,
			 "no state folder for the approval store: set HOME or XDG_STATE_HOME");
		return -ENOENT;
	}
	wd_err_clear(&err);
	ret = run_approval_open(dir, ret_fd, &err);
	if (ret)
		snprintf(why, size, "%.300s", err.msg);
	return ret;
}

void run_approval_announce(FILE *f, const struct run_approval_req *req)
{
	wd_say(f,
	       "warden mcp: approval needed: the agent asks to add %s to %s%s (request %s); a "
	       "person decides: warden allowlist approve %s, or warden allowlist deny %s",
	       req->name, req->run[0] ? "run " : "the allowlist of new runs", req->run, req->id,
	       req->id, req->id);
}

int run_approval_ask(const char *run, const char *by, char *const *names, int n, char *why,
		     size_t size)
{
	size_t off;
	int fd = -1, ret = run_approval_open_mine(&fd, why, size);

	if (ret)
		return ret;
	off = (size_t)snprintf(why, size,
			       "run %s was started by `warden %s`: an addition needs a person's "
			       "approval; pending:",
			       run, by);
	for (int i = 0; i < n && !ret; i++) {
		struct run_approval_req q = {0};

		snprintf(q.name, sizeof(q.name), "%s", names[i]);
		snprintf(q.run, sizeof(q.run), "%s", run);
		ret = run_approval_create(fd, &q);
		if (!ret && off < size)
			off += (size_t)snprintf(why + off, size - off,
						" %s (warden allowlist approve %s, then again with "
						"--approved %s)",
						q.name, q.id, q.id);
	}
	close(fd);
	if (ret) {
		snprintf(why, size, "the approval store: %s", strerror(-ret));
		return ret;
	}
	return -EINPROGRESS;
}

int run_approval_check(const char *id, const char *run, const char *name, int n, char *why,
		       size_t size)
{
	struct run_approval_req q = {0};
	int fd = -1, ret;

	if (!run_approval_id_valid(id) || n != 1) {
		snprintf(why, size, "--approved takes one request id and one name");
		return -EINVAL;
	}
	ret = run_approval_open_mine(&fd, why, size);
	if (ret)
		return ret;
	ret = run_approval_read(fd, id, &q);
	close(fd);
	if (ret || q.state != RUN_APPROVAL_APPROVED || strcmp(q.run, run) || strcmp(q.name, name)) {
		snprintf(why, size,
			 "request %s is not an approved request to add %s to run %s (a person "
			 "approves with warden allowlist approve)",
			 id, name, run);
		return -EPERM;
	}
	return 0;
}
