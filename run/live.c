/* live.c - finding the live runs the caller may see (their state records), reaching their
 * gateway, and acting as a run's owner (live.h has the rules). */
#include "run/live.h"
#include "run/gw.h"
#include "run/state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Longest wait for one control request (connect + answer). */
#define LIVE_GW_TIMEOUT_MS 3000
/* An id prefix shorter than this is refused (too easy to hit the wrong run). */
#define LIVE_PREFIX_MIN 4

const char *live_state_name(enum live_state s)
{
	static const char *const names[] = {
	    [LIVE_STARTING] = "starting",
	    [LIVE_RUNNING] = "running",
	    [LIVE_ENDING] = "ending",
	};

	return (unsigned)s < WD_ARRAY_SIZE(names) ? names[s] : "?";
}

/* a folder that is @uid's own and private: a real folder (no link), owned by @uid, that
 * nobody else may write */
static bool private_folder(const char *path, uid_t uid, gid_t *ret_gid)
{
	struct stat st;

	if (lstat(path, &st) || !S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 022))
		return false;
	if (ret_gid)
		*ret_gid = st.st_gid;
	return true;
}

/* the record in @dir/@name, when it is a live run of @owner's: 1 found, 0 not */
static int load_one(const char *dir, const char *name, uid_t owner, gid_t gid, struct live_run *out)
{
	char d[PATH_MAX], sp[PATH_MAX + 8], proc[32], *text = NULL;
	struct stat st;
	size_t len;
	int fd, ret;

	if (snprintf(d, sizeof(d), "%s/%s", dir, name) >= (int)sizeof(d) ||
	    snprintf(sp, sizeof(sp), "%s/state", d) >= (int)sizeof(sp))
		return 0;
	fd = open(sp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != owner) {
		close(fd);
		return 0;
	}
	close(fd);
	if (!private_folder(d, owner, NULL) || wd_read_file(sp, 65536, &text, &len))
		return 0;
	ret = run_record_parse(text, &out->rec);
	free(text);
	if (ret || strcmp(out->rec.id, name))
		return 0;
	/* alive, the recorded process (start time), and the folder owner's */
	if (!out->rec.start || run_proc_start(out->rec.pid) != out->rec.start)
		return 0;
	snprintf(proc, sizeof(proc), "/proc/%d", (int)out->rec.pid);
	if (stat(proc, &st) || st.st_uid != owner)
		return 0;
	snprintf(out->dir, sizeof(out->dir), "%s", d);
	out->owner = owner;
	out->owner_gid = gid;
	out->state = out->rec.ending	     ? LIVE_ENDING
		     : out->rec.gw_socket[0] ? LIVE_RUNNING
					     : LIVE_STARTING;
	return 1;
}

struct found {
	struct live_run *v;
	size_t n, cap;
};

/* every live run of @owner's in @dir (its runs folder) */
static int scan(struct found *f, const char *dir, uid_t owner)
{
	gid_t gid = 0;
	DIR *dd;
	struct dirent *de;

	if (!private_folder(dir, owner, &gid))
		return 0;
	dd = opendir(dir);
	if (!dd)
		return 0;
	while ((de = readdir(dd))) {
		if (de->d_name[0] == '.')
			continue;
		if (f->n == f->cap) {
			size_t cap = f->cap ? f->cap * 2 : 8;
			struct live_run *v = realloc(f->v, cap * sizeof(*v));

			if (!v) {
				closedir(dd);
				return -ENOMEM;
			}
			f->v = v;
			f->cap = cap;
		}
		memset(&f->v[f->n], 0, sizeof(f->v[f->n]));
		f->n += (size_t)load_one(dir, de->d_name, owner, gid, &f->v[f->n]);
	}
	closedir(dd);
	return 0;
}

/* root: every user's folder of the two kinds run_rootless_dir() makes; @pattern has the uid
 * where "%u" is, @base is where the uids are listed, @prefix the entries' start there */
static int scan_users(struct found *f, const char *base, const char *prefix, const char *pattern)
{
	size_t plen = strlen(prefix);
	DIR *dd = opendir(base);
	struct dirent *de;
	int ret = 0;

	if (!dd)
		return 0;
	while (!ret && (de = readdir(dd))) {
		unsigned long long uid;
		char runs[PATH_MAX];

		if (strncmp(de->d_name, prefix, plen) ||
		    wd_parse_uint(de->d_name + plen, UINT32_MAX - 1, &uid) || uid == 0)
			continue;
		if (snprintf(runs, sizeof(runs), pattern, (unsigned)uid) >= (int)sizeof(runs))
			continue;
		ret = scan(f, runs, (uid_t)uid);
	}
	closedir(dd);
	return ret;
}

static int by_created(const void *a, const void *b)
{
	const struct live_run *x = a, *y = b;

	if (x->rec.created != y->rec.created)
		return x->rec.created < y->rec.created ? -1 : 1;
	return strcmp(x->rec.id, y->rec.id);
}

int live_runs_find(struct live_run **ret, size_t *ret_n, struct wd_err *err)
{
	struct found f = {0};
	char own[PATH_MAX - 8], runs[PATH_MAX];
	int x = 0;

	*ret = NULL;
	*ret_n = 0;
	if (geteuid() == 0) {
		x = scan(&f, RUN_STATE_DIR, 0);
		if (!x)
			x = scan_users(&f, "/tmp", "warden-", "/tmp/warden-%u/runs");
		if (!x)
			x = scan_users(&f, "/run/user", "", "/run/user/%u/warden/runs");
	} else if (!run_rootless_dir_path(own, sizeof(own))) {
		snprintf(runs, sizeof(runs), "%s/runs", own);
		x = scan(&f, runs, getuid());
	}
	if (x) {
		free(f.v);
		return wd_err_set(err, x, "out of memory");
	}
	/* one run found twice ($XDG_RUNTIME_DIR/warden is /run/user/UID/warden): once */
	if (f.n)
		qsort(f.v, f.n, sizeof(*f.v), by_created);
	for (size_t i = 1; i < f.n; i++)
		if (!strcmp(f.v[i].rec.id, f.v[i - 1].rec.id)) {
			memmove(&f.v[i], &f.v[i + 1], (f.n - i - 1) * sizeof(*f.v));
			f.n--;
			i--;
		}
	*ret = f.v;
	*ret_n = f.n;
	return 0;
}

int live_run_get(const char *id, struct live_run *out, struct wd_err *err)
{
	struct live_run *v;
	size_t n, len = strlen(id), hit = 0, at = 0;
	int ret;

	if (!len || len >= sizeof(out->rec.id) || strchr(id, '/') || id[0] == '.')
		return wd_err_set(err, -EINVAL, "'%s' is not a run id", id);
	ret = live_runs_find(&v, &n, err);
	if (ret)
		return ret;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(v[i].rec.id, id)) {
			hit = 1;
			at = i;
			break;
		}
		if (len >= LIVE_PREFIX_MIN && !strncmp(v[i].rec.id, id, len)) {
			hit++;
			at = i;
		}
	}
	if (hit == 1)
		*out = v[at];
	free(v);
	if (hit > 1)
		return wd_err_set(err, -EINVAL, "'%s' names %zu runs: give more of the id", id,
				  hit);
	if (!hit)
		return wd_err_set(err, -ENOENT, "no live run %s%s (`warden status` lists yours)",
				  id, geteuid() ? " of yours" : "");
	return 0;
}

/* the owner's supplementary groups (a daemon's socket may be its group's), none when the uid has
 * no passwd entry; Return: 0 or -1 */
static int owner_groups(const struct live_run *lr)
{
	struct passwd pw, *pwr = NULL;
	char buf[2048];

	if (!getpwuid_r(lr->owner, &pw, buf, sizeof(buf), &pwr) && pwr)
		return initgroups(pw.pw_name, lr->owner_gid);
	return setgroups(0, NULL);
}

int live_as_owner(const struct live_run *lr,
		  int (*fn)(const struct live_run *lr, void *arg, struct wd_buf *out), void *arg,
		  struct wd_buf *out)
{
	int p[2], st, ret = 0;
	char b[4096];
	ssize_t n;
	pid_t pid;

	if (geteuid() == lr->owner)
		return fn(lr, arg, out);
	if (geteuid() != 0)
		return -EPERM;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(p[0]);
		close(p[1]);
		return ret;
	}
	if (pid == 0) {
		struct wd_buf mine = WD_BUF_INIT;

		close(p[0]);
		if (owner_groups(lr) || setresgid(lr->owner_gid, lr->owner_gid, lr->owner_gid) ||
		    setresuid(lr->owner, lr->owner, lr->owner) || geteuid() != lr->owner)
			_exit(EPERM);
		ret = fn(lr, arg, &mine);
		if (mine.len && wd_write_all(p[1], mine.data, mine.len))
			ret = -EIO;
		fflush(stdout);
		fflush(stderr);
		_exit(ret < 0 && -ret < 256 ? -ret : ret ? EIO : 0);
	}
	close(p[1]);
	while ((n = read(p[0], b, sizeof(b))) > 0 || (n < 0 && errno == EINTR))
		if (n > 0 && wd_buf_append(out, b, (size_t)n))
			ret = -ENOMEM;
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -ECHILD;
	if (!WIFEXITED(st))
		return -ECHILD;
	return ret ? ret : -WEXITSTATUS(st);
}

/* as the owner: the gateway's `list` answer into @out (compact JSON) */
static int list_fn(const struct live_run *lr, void *arg, struct wd_buf *out)
{
	json_t *ans = NULL, *it, *found = NULL;
	char *s;
	size_t i;
	int ret;

	(void)arg;
	ret = run_gw_call_op(lr->rec.gw_socket, "list", LIVE_GW_TIMEOUT_MS, &ans);
	if (ret)
		return ret;
	json_array_foreach(json_object_get(ans, "runs"), i, it)
	{
		const char *id = json_string_value(json_object_get(it, "id"));

		if (id && !strcmp(id, lr->rec.id))
			found = it;
	}
	if (!found) {
		json_decref(ans);
		return -ENOENT;
	}
	s = json_dumps(found, JSON_COMPACT);
	json_decref(ans);
	ret = !s || wd_buf_puts(out, s) ? -ENOMEM : 0;
	free(s);
	return ret;
}

int live_gw_list(const struct live_run *lr, struct json_t **ret, char *why, size_t wsize)
{
	struct wd_buf b = WD_BUF_INIT;
	int x;

	*ret = NULL;
	if (!lr->rec.gw_socket[0]) {
		snprintf(why, wsize, "run %s has no gateway yet (or any more)", lr->rec.id);
		return -ENOENT;
	}
	x = live_as_owner(lr, list_fn, NULL, &b);
	if (!x) {
		*ret = json_loadb(b.data ? b.data : "", b.len, 0, NULL);
		if (!*ret)
			x = -EBADMSG;
	}
	if (x == -ENOENT)
		snprintf(why, wsize, "the gateway on %s does not list run %s", lr->rec.gw_socket,
			 lr->rec.id);
	else if (x)
		snprintf(why, wsize, "the gateway on %s: %s", lr->rec.gw_socket, strerror(-x));
	wd_buf_free(&b);
	return x;
}

int live_policy_read(const struct live_run *lr, char **ret, size_t *ret_len)
{
	char p[PATH_MAX + 32];
	struct stat st;
	int fd, x;

	snprintf(p, sizeof(p), "%s/%s", lr->dir, RUN_POLICY_FILE);
	fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	/* the owner's (root may have written it for a root-mode run only) */
	x = fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != lr->owner ? -EPERM : 0;
	close(fd);
	if (x)
		return x;
	return wd_read_file(p, POLICY_MAX_BYTES, ret, ret_len);
}

int live_policy_write(const struct live_run *lr, const char *text, size_t len)
{
	char p[PATH_MAX + 32];
	struct wd_atomic a;
	int ret;

	snprintf(p, sizeof(p), "%s/%s", lr->dir, RUN_POLICY_FILE);
	ret = wd_atomic_open(&a, AT_FDCWD, p, 0);
	if (ret)
		return ret;
	ret = wd_write_all(a.fd, text, len);
	if (!ret && geteuid() != lr->owner && fchown(a.fd, lr->owner, lr->owner_gid) < 0)
		ret = -errno;
	if (ret) {
		wd_atomic_abort(&a);
		return ret;
	}
	return wd_atomic_commit(&a);
}
