/* util.c - small pure helpers of `warden run`: command lookup, exit statuses, SHA-256 of
 * the policy file, path containment, the run networks' configuration from the gateway's. */
#include "run/run.h"
#include "netns/netns.h"

#include <errno.h>
#include <openssl/evp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Is @p an executable regular file? 0, -ENOENT or -EACCES. */
static int check_exec(const char *p)
{
	struct stat st;

	if (stat(p, &st) < 0)
		return errno == EACCES ? -EACCES : -ENOENT;
	if (!S_ISREG(st.st_mode) || access(p, X_OK) < 0)
		return -EACCES;
	return 0;
}

int run_resolve_command(const char *cmd, const char *path, char *out, size_t outlen)
{
	char buf[PATH_MAX], cwd[PATH_MAX];
	int ret, best = -ENOENT;
	const char *p, *end;
	int n;

	if (!cmd || !*cmd)
		return -ENOENT;
	if (strchr(cmd, '/')) {
		if (cmd[0] == '/') {
			n = snprintf(buf, sizeof(buf), "%s", cmd);
		} else {
			if (!getcwd(cwd, sizeof(cwd)))
				return -errno;
			n = snprintf(buf, sizeof(buf), "%s/%s", cwd, cmd);
		}
		if (n < 0 || (size_t)n >= sizeof(buf))
			return -ENAMETOOLONG;
		ret = check_exec(buf);
		if (ret)
			return ret;
		goto found;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; p = end + 1) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		/* an empty entry means the current folder, as for execvp(); skip it: a
		 * sandboxed command must not be picked up from wherever we happen to be */
		if (end > p && *p == '/') {
			n = snprintf(buf, sizeof(buf), "%.*s/%s", (int)(end - p), p, cmd);
			if (n > 0 && (size_t)n < sizeof(buf)) {
				ret = check_exec(buf);
				if (!ret)
					goto found;
				if (ret == -EACCES)
					best = -EACCES;
			}
		}
		if (!*end)
			break;
	}
	return best;
found:
	if (strlen(buf) >= outlen)
		return -ENAMETOOLONG;
	strcpy(out, buf);
	return 0;
}

int run_exit_status(int wstatus, bool timed_out, int *ret_signal)
{
	*ret_signal = 0;
	if (WIFSIGNALED(wstatus))
		*ret_signal = WTERMSIG(wstatus);
	if (timed_out)
		return RUN_EXIT_TIMEOUT;
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return RUN_EXIT_WARDEN;
}

bool run_path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return path[0] == '/';
	while (n > 1 && dir[n - 1] == '/')
		n--;
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

/* ---------------------------------------------------------------- SHA-256 (libcrypto) */

int run_sha256_hex(const void *data, size_t len, char out[72])
{
	unsigned char md[32];
	unsigned int mdlen = 0;

	/* EVP_Digest fails only when libcrypto cannot allocate or has no SHA-256 at all: the
	 * callers fail (a pin, a policy hash); no text stands in for a digest */
	out[0] = '\0';
	if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) || mdlen != sizeof(md))
		return -EIO;
	memcpy(out, "sha256:", 7);
	for (size_t i = 0; i < sizeof(md); i++)
		snprintf(out + 7 + 2 * i, 3, "%02x", md[i]);
	return 0;
}

int run_sandbox_user(const char *want, uid_t *ret_uid, gid_t *ret_gid, char *name, size_t size)
{
	struct passwd *pw;
	unsigned long v;
	char *end;

	if (!want || !*want)
		want = getenv("WARDEN_SANDBOX_USER");
	if (!want || !*want)
		want = RUN_SANDBOX_USER;
	snprintf(name, size, "%s", want);
	pw = getpwnam(want);
	if (pw) {
		*ret_uid = pw->pw_uid;
		*ret_gid = pw->pw_gid;
	} else {
		errno = 0;
		v = strtoul(want, &end, 10);
		if (*end || end == want || errno || v > 0x7fffffffUL) {
			if (strcmp(want, RUN_SANDBOX_USER))
				return -ENOENT;
			v = RUN_SANDBOX_UID; /* a system without `nobody` in its passwd file */
		}
		*ret_uid = (uid_t)v;
		*ret_gid = (gid_t)v;
	}
	return *ret_uid == 0 || *ret_gid == 0 ? -EPERM : 0;
}

uint64_t run_nproc_backstop(uint64_t pids, bool cgroup)
{
	return pids && cgroup ? pids + RUN_NPROC_SLACK : pids;
}
