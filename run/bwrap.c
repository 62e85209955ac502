/* bwrap.c - the bubblewrap command line of a run: namespaces, the read-only runtime base, the
 * policy's grants and masks, generated /etc files and the environment.
 *
 * Mount order matters (bwrap applies its options in order, later mounts cover earlier ones):
 *   1. runtime base, read-only (/usr, /lib*, /bin, /sbin as dirs or as the host's symlinks,
 *      /etc/ssl, /etc/ca-certificates, /etc/alternatives and a few /etc files; with
 *      bwrap_spec.etc_base those files are one mount of a folder of copies, see run_etc.c);
 *   2. /dev, /proc with /proc/sys read-only and the host information a sandbox does not
 *      need masked (proc_mask_files, proc_mask_dirs), a fresh /tmp (size-limited with
 *      limits.disk_mb);
 *   3. the policy's grants, shortest path first so a nested grant covers its parent's
 *      (read grants --ro-bind, write grants --bind; with bwrap_spec.grant_fd each is bound
 *      from a descriptor the launcher opened without following links: --ro-bind-fd,
 *      --bind-fd);
 *   4. the generated /etc/resolv.conf, /etc/hosts, /etc/passwd, /etc/group and the run's own
 *      /proc/sys/kernel/random/boot_id;
 *   5. the credential stores and protected folders the policy must hide (an empty tmpfs over
 *      a folder, /dev/null over a file), last so no grant uncovers them; but a `sensitive:
 *      true` grant inside one (`{ path: ~/.aws/config, sensitive: true }` beside `~`) is
 *      bound after them: the person opted that path back in.
 * Everything else of the host is absent (ENOENT): the root is bwrap's own tmpfs.
 *
 * `warden trace`'s learning sandbox (bwrap_spec.learn) replaces step 1 by the host's whole `/`
 * read-only, its /tmp included (no fresh /tmp in step 2: a program or its current folder under
 * the host's /tmp must be there), puts the program's own writable scratch tmpfs at
 * BWRAP_LEARN_SCRATCH instead (TMPDIR and, unless the policy sets it, HOME point to it), adds
 * after step 2 an empty read-only /sys and empty tmpfs over bwrap_learn_own
 * (the user's and the system's service sockets), and keeps steps 3 to 5: its write grant (the
 * current folder), the generated files, the masks (every credential store and Warden's own
 * folders, which learn_policy.c puts in the policy's masks). The seccomp
 * filter (bwrap_spec.seccomp_fd, built by sandbox/) and --disable-userns apply to every
 * process of the run, bwrap's pid 1 included.
 *
 * The argv is not bwrap's command line: the launcher writes it to a memfd that bwrap reads
 * with --args (bwrap_args_text()), so the environment values it carries (--setenv) are not
 * in any process's /proc/PID/cmdline.
 */
#include "run/bwrap.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const bwrap_base_etc[] = {
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/nsswitch.conf", "/etc/localtime",
    "/etc/timezone",	"/etc/host.conf",  "/etc/gai.conf",	 "/etc/protocols",
    "/etc/services",	"/etc/os-release", "/etc/mime.types",	 NULL,
};

const char *const bwrap_learn_own[] = {
    "/run/user",
    "/run/dbus",
    "/run/systemd",
    NULL,
};

/* The generated files, in the order of bwrap_spec.data_fd. */
static const char *const gen_files[BWRAP_NDATA] = {"/etc/resolv.conf", "/etc/hosts", "/etc/passwd",
						   "/etc/group", "/proc/sys/kernel/random/boot_id"};

/* /proc files a sandbox does not need that tell about the host (its boot command line, kernel
 * memory, keys, timers, devices), covered with /dev/null; the ones root alone can read are
 * covered too, so nothing depends on the uid. */
static const char *const proc_mask_files[] = {
    "/proc/cmdline",	 "/proc/kcore",		"/proc/keys",	       "/proc/key-users",
    "/proc/kallsyms",	 "/proc/latency_stats", "/proc/timer_list",    "/proc/timer_stats",
    "/proc/sched_debug", "/proc/slabinfo",	"/proc/vmallocinfo",   "/proc/iomem",
    "/proc/ioports",	 "/proc/kpagecount",	"/proc/kpageflags",    "/proc/kpagecgroup",
    "/proc/config.gz",	 "/proc/pagetypeinfo",	"/proc/sysrq-trigger", NULL,
};

/* /proc folders of hardware and drivers, covered with an empty read-only tmpfs. */
static const char *const proc_mask_dirs[] = {"/proc/acpi",   "/proc/bus", "/proc/irq", "/proc/scsi",
					     "/proc/driver", "/proc/fs",  NULL};

void bwrap_argv_free(struct bwrap_argv *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

static int push(struct bwrap_argv *a, const char *s)
{
	if (a->n + 2 > a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		char **v = realloc(a->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n] = strdup(s);
	if (!a->v[a->n])
		return -ENOMEM;
	a->v[++a->n] = NULL;
	return 0;
}

static int push2(struct bwrap_argv *a, const char *x, const char *y)
{
	int r = push(a, x);

	return r ? r : push(a, y);
}

static int push3(struct bwrap_argv *a, const char *x, const char *y, const char *z)
{
	int r = push2(a, x, y);

	return r ? r : push(a, z);
}

static int push_fd(struct bwrap_argv *a, const char *opt, int fd, const char *dest)
{
	char num[16];

	snprintf(num, sizeof(num), "%d", fd);
	return push3(a, opt, num, dest);
}

/* The runtime base: a folder, or the host's symlink (merged /usr: /bin -> usr/bin). */
static int push_base(struct bwrap_argv *a, const char *path)
{
	char target[4096];
	struct stat st;
	ssize_t n;

	if (lstat(path, &st) < 0)
		return 0;
	if (S_ISLNK(st.st_mode) && strncmp(path, "/etc/", 5)) {
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			return 0;
		target[n] = '\0';
		return push3(a, "--symlink", target, path);
	}
	return push3(a, "--ro-bind", path, path);
}

static const char *env_get(char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (; env && *env; env++)
		if (!strncmp(*env, name, n) && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

/*
 * The proxy variables name the gateway by BWRAP_PROXY_NAME, which the run's /etc/hosts
 * resolves to its v4 and v6 gateway addresses: a client asked for one family (curl -6) finds
 * the proxy in it (an IPv4 literal made curl -6 fail). ALL_PROXY / all_proxy are not set:
 * curl uses them for every protocol, including ones an HTTP proxy cannot carry (ftp:// would
 * become a GET the gateway refuses), and other tools read them as a SOCKS proxy; without them
 * those clients take the transparent path, which carries any TCP by name and port.
 */
static int push_env(struct bwrap_argv *a, const struct bwrap_spec *s)
{
	static const char *const proxy_vars[] = {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
						 "https_proxy"};
	const struct wd_policy *p = s->policy;
	char url[128];
	int r = push(a, "--clearenv");

	if (!r && !policy_env_names(p, "PATH"))
		r = push3(a, "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin");
	/* a learning sandbox's /tmp is the host's, read-only: its scratch is elsewhere */
	if (!r && !policy_env_names(p, "HOME"))
		r = push3(a, "--setenv", "HOME", s->learn ? BWRAP_LEARN_SCRATCH : "/tmp");
	if (!r && s->learn && !policy_env_names(p, "TMPDIR"))
		r = push3(a, "--setenv", "TMPDIR", BWRAP_LEARN_SCRATCH);
	for (size_t i = 0; !r && i < p->nenv_allow; i++) {
		const char *v = env_get(s->environ, p->env_allow[i]);

		if (v)
			r = push3(a, "--setenv", p->env_allow[i], v);
	}
	for (size_t i = 0; !r && i < p->nenv_set; i++)
		r = push3(a, "--setenv", p->env_set[i].name, p->env_set[i].value);
	if (s->host4[0] || s->host6[0])
		snprintf(url, sizeof(url), "http://%s:%u", BWRAP_PROXY_NAME, s->proxy_port);
	else
		url[0] = '\0';
	for (size_t i = 0; !r && url[0] && i < WD_ARRAY_SIZE(proxy_vars); i++)
		r = push3(a, "--setenv", proxy_vars[i], url);
	if (!r && url[0])
		r = push3(a, "--setenv", "NO_PROXY", "localhost,127.0.0.1,::1");
	if (!r && url[0])
		r = push3(a, "--setenv", "no_proxy", "localhost,127.0.0.1,::1");
	return r;
}

/* a total order, so that every list of the same grants has the same order */
static int grant_cmp(const void *x, const void *y)
{
	const struct bwrap_grant *a = x, *b = y;
	size_t la = strlen(a->path), lb = strlen(b->path);
	int c;

	if (la != lb)
		return la < lb ? -1 : 1;
	c = strcmp(a->path, b->path);
	if (c)
		return c;
	/* the same path: a write grant after a read grant of it wins */
	return (int)a->rw - (int)b->rw;
}

int bwrap_grants(const struct wd_policy *p, struct bwrap_grant **ret, size_t *ret_n)
{
	size_t n = p->nread + p->nwrite, k = 0;
	struct bwrap_grant *g = calloc(n ? n : 1, sizeof(*g));

	if (!g)
		return -ENOMEM;
	for (size_t i = 0; i < p->nread; i++)
		if (p->read[i].real)
			g[k++] = (struct bwrap_grant){p->read[i].real, false};
	for (size_t i = 0; i < p->nwrite; i++)
		if (p->write[i].real)
			g[k++] = (struct bwrap_grant){p->write[i].real, true};
	qsort(g, k, sizeof(*g), grant_cmp);
	*ret = g;
	*ret_n = k;
	return 0;
}

/* @path equals @dir or lies below it */
static bool within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

/* A `sensitive: true` grant inside a mask (`{ path: ~/.aws/config, sensitive: true }` beside
 * `~`, which hides ~/.aws): bound after the masks (push_masks()), or the mask would cover what
 * the person opted in. Any other grant never lies in a mask (the validator refuses it). */
static bool grant_after_masks(const struct wd_policy *p, const char *path)
{
	bool masked = false, sensitive = false;

	for (size_t i = 0; !masked && i < p->nmask; i++)
		masked = within(path, p->mask[i]);
	for (size_t i = 0; masked && !sensitive && i < p->nread; i++)
		sensitive =
		    p->read[i].sensitive && p->read[i].real && !strcmp(p->read[i].real, path);
	for (size_t i = 0; masked && !sensitive && i < p->nwrite; i++)
		sensitive =
		    p->write[i].sensitive && p->write[i].real && !strcmp(p->write[i].real, path);
	return masked && sensitive;
}

/* The grants (all, or with @late those grant_after_masks() puts after the masks), in order. */
static int push_grants(struct bwrap_argv *a, const struct bwrap_spec *s, bool late)
{
	struct bwrap_grant *own = NULL;
	const struct bwrap_grant *g = s->grants;
	size_t n = s->ngrants;
	int r = 0;

	if (!g) {
		r = bwrap_grants(s->policy, &own, &n);
		if (r)
			return r;
		g = own;
	}
	for (size_t i = 0; !r && i < n; i++) {
		if (grant_after_masks(s->policy, g[i].path) != late)
			continue;
		if (s->grant_fd)
			r = push_fd(a, g[i].rw ? "--bind-fd" : "--ro-bind-fd", s->grant_fd[i],
				    g[i].path);
		else
			r = push3(a, g[i].rw ? "--bind" : "--ro-bind", g[i].path, g[i].path);
	}
	free(own);
	return r;
}

/* /proc/sys read-only (bwrap leaves it writable when its own access() test says it is not),
 * the masks over host information, the run's own boot id later (data_fd). */
static int push_proc(struct bwrap_argv *a, const char *empty)
{
	struct stat st;
	int r = push2(a, "--proc", "/proc");

	if (!r && lstat("/proc/sys", &st) == 0 && S_ISDIR(st.st_mode))
		r = push3(a, "--ro-bind", "/proc/sys", "/proc/sys");
	/* an empty file, not /dev/null: binds are nodev, a device node there cannot be read */
	for (size_t i = 0; !r && empty && proc_mask_files[i]; i++)
		if (lstat(proc_mask_files[i], &st) == 0 && S_ISREG(st.st_mode))
			r = push3(a, "--ro-bind", empty, proc_mask_files[i]);
	for (size_t i = 0; !r && proc_mask_dirs[i]; i++)
		if (lstat(proc_mask_dirs[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			r = push2(a, "--tmpfs", proc_mask_dirs[i]);
			if (!r)
				r = push2(a, "--remount-ro", proc_mask_dirs[i]);
		}
	return r;
}

/* The learning sandbox's own /sys (empty, read-only: a run has none) and the host folders
 * of bwrap_learn_own covered. */
static int push_learn_own(struct bwrap_argv *a)
{
	struct stat st;
	int r = push2(a, "--tmpfs", "/sys");

	if (!r)
		r = push2(a, "--remount-ro", "/sys");
	for (size_t i = 0; !r && bwrap_learn_own[i]; i++)
		if (lstat(bwrap_learn_own[i], &st) == 0 && S_ISDIR(st.st_mode))
			r = push2(a, "--tmpfs", bwrap_learn_own[i]);
	return r;
}

/* The masks, then the sensitive grants that lie in one (grant_after_masks()). */
static int push_masks(struct bwrap_argv *a, const struct bwrap_spec *s)
{
	const struct wd_policy *p = s->policy;
	struct stat st;
	int r = 0;

	for (size_t i = 0; !r && i < p->nmask; i++) {
		if (lstat(p->mask[i], &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode))
			r = push2(a, "--tmpfs", p->mask[i]);
		else
			r = push3(a, "--ro-bind", "/dev/null", p->mask[i]);
	}
	return r ? r : push_grants(a, s, true);
}

int bwrap_build(const char *bwrap, const struct bwrap_spec *s, struct bwrap_argv *out)
{
	static const char *const ns_opts[] = {
	    "--unshare-user",	    "--unshare-pid",	 "--unshare-ipc", "--unshare-uts",
	    "--unshare-cgroup-try", "--die-with-parent", "--hostname",	  "warden",
	};
	int r = push(out, bwrap);

	for (size_t i = 0; !r && i < WD_ARRAY_SIZE(ns_opts); i++)
		r = push(out, ns_opts[i]);
	if (!r && s->new_session)
		r = push(out, "--new-session");
	if (!r)
		r = push2(out, "--cap-drop", "ALL");
	/* the seccomp filter (sandbox/), and no nested user namespace unless the policy asks */
	if (!r && s->seccomp_fd >= 0) {
		char num[16];

		snprintf(num, sizeof(num), "%d", s->seccomp_fd);
		r = push2(out, "--seccomp", num);
	}
	if (!r && !(s->policy->sandbox_allow & POLICY_SANDBOX_USERNS))
		r = push2(out, "--disable-userns", "--assert-userns-disabled");
	if (!r && s->info_fd >= 0) {
		char num[16];

		snprintf(num, sizeof(num), "%d", s->info_fd);
		r = push2(out, "--info-fd", num);
	}
	if (s->learn) {
		/* the learning sandbox: the whole host, read-only; what follows covers it */
		if (!r)
			r = push3(out, "--ro-bind", "/", "/");
	} else if (s->etc_base) {
		/* the single /etc files come in one mount: a folder of copies made for this,
		 * with empty mount points for the /etc folders and the generated files */
		for (size_t i = 0; !r && sandbox_base_dirs[i]; i++)
			if (strncmp(sandbox_base_dirs[i], "/etc/", 5))
				r = push_base(out, sandbox_base_dirs[i]);
		if (!r)
			r = push3(out, "--ro-bind", s->etc_base, "/etc");
		for (size_t i = 0; !r && sandbox_base_dirs[i]; i++)
			if (!strncmp(sandbox_base_dirs[i], "/etc/", 5))
				r = push_base(out, sandbox_base_dirs[i]);
	} else {
		for (size_t i = 0; !r && sandbox_base_dirs[i]; i++)
			r = push_base(out, sandbox_base_dirs[i]);
		for (size_t i = 0; !r && bwrap_base_etc[i]; i++)
			r = push3(out, "--ro-bind-try", bwrap_base_etc[i], bwrap_base_etc[i]);
	}
	if (!r)
		r = push2(out, "--dev", "/dev");
	if (!r)
		r = push_proc(out, s->empty_file);
	if (!r && s->policy->limits.disk_mb) {
		char size[32];

		snprintf(size, sizeof(size), "%llu",
			 (unsigned long long)s->policy->limits.disk_mb << 20);
		r = push2(out, "--size", size);
	}
	if (!r)
		r = push2(out, "--tmpfs", s->learn ? BWRAP_LEARN_SCRATCH : "/tmp");
	if (!r && s->learn)
		r = push_learn_own(out);
	if (!r)
		r = push_grants(out, s, false);
	for (int i = 0; !r && i < BWRAP_NDATA; i++)
		if (s->data_fd[i] >= 0)
			r = push_fd(out, "--ro-bind-data", s->data_fd[i], gen_files[i]);
	if (!r)
		r = push_masks(out, s);
	if (!r)
		r = push_env(out, s);
	if (!r)
		r = push2(out, "--chdir", s->cwd && *s->cwd ? s->cwd : "/");
	if (!r) {
		out->opts_end = out->n;
		r = push(out, "--");
	}
	for (size_t i = 0; !r && s->argv[i]; i++)
		r = push(out, s->argv[i]);
	if (r)
		bwrap_argv_free(out);
	return r;
}

int bwrap_args_text(const struct bwrap_argv *a, struct wd_buf *out)
{
	if (!a->opts_end || a->opts_end > a->n)
		return -EINVAL;
	for (size_t i = 1; i < a->opts_end; i++)
		if (wd_buf_append(out, a->v[i], strlen(a->v[i]) + 1))
			return -ENOMEM;
	return 0;
}

int bwrap_shell_word(const char *s, struct wd_buf *out)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789_-./=:,+@%";

	if (*s && strspn(s, plain) == strlen(s))
		return wd_buf_puts(out, s);
	if (wd_buf_puts(out, "'"))
		return -ENOMEM;
	for (const char *q; (q = strchr(s, '\'')); s = q + 1)
		if (wd_buf_append(out, s, (size_t)(q - s)) || wd_buf_puts(out, "'\\''"))
			return -ENOMEM;
	return wd_buf_puts(out, s) || wd_buf_puts(out, "'") ? -ENOMEM : 0;
}

int bwrap_file_text(int which, const struct bwrap_spec *s, uid_t uid, gid_t gid, struct wd_buf *out)
{
	const char *name = uid == 0 ? "root" : uid == 65534 ? "nobody" : "user";
	const char *group = gid == 0 ? "root" : gid == 65534 ? "nogroup" : "user";
	int r = 0;

	switch (which) {
	case 0:
		r |= wd_buf_puts(out, "# generated by warden: the gateway answers every query\n");
		if (s->host4[0])
			r |= wd_buf_printf(out, "nameserver %s\n", s->host4);
		if (s->host6[0])
			r |= wd_buf_printf(out, "nameserver %s\n", s->host6);
		r |= wd_buf_puts(out, "options edns0 trust-ad");
		/* network.ask holds a query while a person answers: the stub waits for it (glibc
		 * waits 5 s a try by default, and at most 30) */
		if (s->policy &&
		    ((s->policy->ask && s->policy->ask->nrules) || s->policy->ask_any)) {
			unsigned t = policy_ask_timeout_s(s->policy) + 1;

			r |= wd_buf_printf(out, " timeout:%u attempts:1", t < 30 ? t : 30);
		}
		r |= wd_buf_puts(out, "\n");
		break;
	case 1:
		r |= wd_buf_puts(out, "127.0.0.1\tlocalhost warden\n::1\tlocalhost ip6-localhost "
				      "ip6-loopback\n");
		/* the gateway's explicit proxy, in both families (the proxy variables) */
		if (s->host4[0])
			r |= wd_buf_printf(out, "%s\t%s\n", s->host4, BWRAP_PROXY_NAME);
		if (s->host6[0])
			r |= wd_buf_printf(out, "%s\t%s\n", s->host6, BWRAP_PROXY_NAME);
		break;
	case 2:
		if (uid != 0)
			r |= wd_buf_puts(out, "root:x:0:0:root:/root:/usr/sbin/nologin\n");
		r |= wd_buf_printf(out, "%s:x:%u:%u:%s:/tmp:/bin/sh\n", name, (unsigned)uid,
				   (unsigned)gid, name);
		if (uid != 65534)
			r |= wd_buf_puts(
			    out, "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
		break;
	case 3:
		if (gid != 0)
			r |= wd_buf_puts(out, "root:x:0:\n");
		r |= wd_buf_printf(out, "%s:x:%u:\n", group, (unsigned)gid);
		if (gid != 65534)
			r |= wd_buf_puts(out, "nogroup:x:65534:\n");
		break;
	case 4: {
		uint8_t b[16];

		/* a boot id of the run's own, so that programs cannot tell which host boot */
		if (getrandom(b, sizeof(b), 0) != sizeof(b))
			return -EIO;
		b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
		b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
		r |=
		    wd_buf_printf(out,
				  "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x"
				  "%02x\n",
				  b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10],
				  b[11], b[12], b[13], b[14], b[15]);
		break;
	}
	default:
		return -EINVAL;
	}
	return r ? -ENOMEM : 0;
}
