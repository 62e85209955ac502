/* util.c - small pure helpers of `warden run`: command lookup, exit statuses, SHA-256 of
 * the policy file, path containment, the run networks' configuration from the gateway's. */
#include "run/run.h"
#include "netns/netns.h"

#include <errno.h>
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

/* ---------------------------------------------------------------- SHA-256 (FIPS 180-4) */

static const uint32_t sha_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror32(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static void sha_block(uint32_t h[8], const uint8_t *p)
{
	uint32_t w[64], s[8];

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^ (w[i - 2] >> 10);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	memcpy(s, h, sizeof(s));
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = s[7] + (ror32(s[4], 6) ^ ror32(s[4], 11) ^ ror32(s[4], 25)) +
			      ((s[4] & s[5]) ^ (~s[4] & s[6])) + sha_k[i] + w[i];
		uint32_t t2 = (ror32(s[0], 2) ^ ror32(s[0], 13) ^ ror32(s[0], 22)) +
			      ((s[0] & s[1]) ^ (s[0] & s[2]) ^ (s[1] & s[2]));

		memmove(s + 1, s, 7 * sizeof(s[0]));
		s[4] += t1;
		s[0] = t1 + t2;
	}
	for (int i = 0; i < 8; i++)
		h[i] += s[i];
}

void run_sha256_hex(const void *data, size_t len, char out[72])
{
	uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
			 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	const uint8_t *p = data;
	uint8_t tail[128] = {0};
	uint64_t bits = (uint64_t)len * 8;
	size_t rest, tlen;

	for (rest = len; rest >= 64; rest -= 64, p += 64)
		sha_block(h, p);
	if (rest)
		memcpy(tail, p, rest);
	tail[rest] = 0x80;
	tlen = rest + 1 + 8 <= 64 ? 64 : 128;
	for (int i = 0; i < 8; i++)
		tail[tlen - 1 - i] = (uint8_t)(bits >> (8 * i));
	sha_block(h, tail);
	if (tlen == 128)
		sha_block(h, tail + 64);
	memcpy(out, "sha256:", 7);
	for (int i = 0; i < 8; i++)
		snprintf(out + 7 + 8 * i, 9, "%08x", h[i]);
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
