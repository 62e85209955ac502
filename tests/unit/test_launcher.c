/* test_launcher.c - unit tests of `warden run`'s pure parts: command lookup, exit statuses,
 * SHA-256, path containment, the bubblewrap command line, generated /etc files and the run
 * state record (linked from wd_launcher). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "conf/conf.h"
#include "conf/host.h"
#include "run/bwrap.h"
#include "run/child.h"
#include "run/run.h"
#include "run/state.h"
#include "netns/netns.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_resolve(void **state)
{
	char out[PATH_MAX];

	(void)state;
	assert_int_equal(run_resolve_command("sh", "/nonexistent:/usr/bin:/bin", out, sizeof(out)),
			 0);
	assert_string_equal(out, "/usr/bin/sh");
	assert_int_equal(run_resolve_command("/bin/sh", NULL, out, sizeof(out)), 0);
	assert_string_equal(out, "/bin/sh");
	assert_int_equal(run_resolve_command("no-such-command-xyz", NULL, out, sizeof(out)),
			 -ENOENT);
	assert_int_equal(run_resolve_command("/etc/passwd", NULL, out, sizeof(out)), -EACCES);
	assert_int_equal(run_resolve_command("/etc", NULL, out, sizeof(out)), -EACCES);
	assert_int_equal(run_resolve_command("", NULL, out, sizeof(out)), -ENOENT);
	/* empty PATH entries (the current folder) are skipped */
	assert_int_equal(run_resolve_command("sh", "::/usr/bin", out, sizeof(out)), 0);
	assert_string_equal(out, "/usr/bin/sh");
	assert_int_equal(run_resolve_command("sh", "/usr/bin", out, 4), -ENAMETOOLONG);
}

static void test_exit_status(void **state)
{
	int sig;

	(void)state;
	assert_int_equal(run_exit_status(3 << 8, false, &sig), 3);
	assert_int_equal(sig, 0);
	assert_int_equal(run_exit_status(SIGKILL, false, &sig), 137);
	assert_int_equal(sig, SIGKILL);
	assert_int_equal(run_exit_status(SIGTERM, true, &sig), 124);
	assert_int_equal(run_exit_status(0, true, &sig), 124);
	assert_int_equal(run_exit_status(0, false, &sig), 0);
}

static void test_sha256(void **state)
{
	static const char msg448[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	char out[72], *big;

	(void)state;
	assert_int_equal(run_sha256_hex("", 0, out), 0);
	assert_string_equal(
	    out, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	assert_int_equal(run_sha256_hex("abc", 3, out), 0);
	assert_string_equal(
	    out, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_int_equal(run_sha256_hex(msg448, sizeof(msg448) - 1, out), 0);
	assert_string_equal(
	    out, "sha256:248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	big = malloc(1000000);
	assert_non_null(big);
	memset(big, 'a', 1000000);
	assert_int_equal(run_sha256_hex(big, 1000000, out), 0);
	assert_string_equal(
	    out, "sha256:cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(big);
}

static void test_within(void **state)
{
	(void)state;
	assert_true(run_path_within("/usr/bin/sh", "/usr"));
	assert_true(run_path_within("/usr", "/usr"));
	assert_true(run_path_within("/usr", "/usr/"));
	assert_false(run_path_within("/usrx/bin", "/usr"));
	assert_false(run_path_within("/us", "/usr"));
	assert_true(run_path_within("/anything", "/"));
}

/* A validated policy over a temporary folder: read grant T/ro, write grant T/rw. */
static struct wd_policy *make_policy(char *dir, size_t size)
{
	struct policy_diags d;
	struct wd_policy *p = NULL;
	struct wd_buf y = WD_BUF_INIT;
	char sub[PATH_MAX + 8];

	snprintf(dir, size, "/tmp/wd-test-launcher-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/ro", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(sub, sizeof(sub), "%s/rw", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	wd_buf_printf(&y,
		      "version: 1\nfilesystem:\n  read: [\"%s/ro\"]\n  write: [\"%s/rw\"]\n"
		      "env:\n  allow: [KEEP_ME]\n  set: {SET_ME: \"v\"}\n",
		      dir, dir);
	policy_diags_init(&d);
	assert_int_equal(policy_parse(y.data, y.len, "t.yaml", &p, &d), 0);
	assert_int_equal(policy_validate(p, &(struct policy_ctx){.home = "/nonexistent-home"}, &d),
			 0);
	policy_diags_free(&d);
	wd_buf_free(&y);
	return p;
}

static void cleanup_dir(const char *dir)
{
	char sub[PATH_MAX + 8];

	snprintf(sub, sizeof(sub), "%s/ro", dir);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/rw", dir);
	rmdir(sub);
	rmdir(dir);
}

static ssize_t find(const struct bwrap_argv *a, const char *w, size_t from)
{
	for (size_t i = from; i < a->n; i++)
		if (!strcmp(a->v[i], w))
			return (ssize_t)i;
	return -1;
}

/* The index of the triple OPT X Y, or -1. */
static ssize_t find3(const struct bwrap_argv *a, const char *opt, const char *x, const char *y)
{
	for (size_t i = 0; i + 2 < a->n; i++)
		if (!strcmp(a->v[i], opt) && !strcmp(a->v[i + 1], x) && !strcmp(a->v[i + 2], y))
			return (ssize_t)i;
	return -1;
}

static void test_bwrap(void **state)
{
	char dir[PATH_MAX], ro[PATH_MAX + 8], rw[PATH_MAX + 8];
	char *argv[] = {"/usr/bin/env", "-0", NULL};
	char *env[] = {"KEEP_ME=1", "AWS_SECRET_ACCESS_KEY=hunter2", "PATH=/x", NULL};
	struct wd_policy *p = make_policy(dir, sizeof(dir));
	struct bwrap_spec s = {0};
	struct bwrap_argv a = {0};
	ssize_t i, dd;

	(void)state;
	s.policy = p;
	s.argv = argv;
	s.environ = env;
	s.host4 = "10.213.0.1";
	s.host6 = "fd77:7764:6e00::1";
	s.proxy_port = 15080;
	s.new_session = true;
	s.info_fd = 9;
	s.data_fd[0] = 10;
	s.data_fd[1] = s.data_fd[2] = s.data_fd[3] = s.data_fd[4] = -1;
	s.cwd = "/";
	s.seccomp_fd = 11;
	assert_int_equal(bwrap_build("/usr/bin/bwrap", &s, &a), 0);
	assert_string_equal(a.v[0], "/usr/bin/bwrap");
	assert_null(a.v[a.n]);
	for (const char *const *w =
		 (const char *const[]){"--unshare-user", "--unshare-pid", "--unshare-ipc",
				       "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent",
				       "--new-session", "--clearenv", NULL};
	     *w; w++)
		assert_true(find(&a, *w, 0) > 0);
	assert_true(find(&a, "--unshare-net", 0) < 0); /* the netns is the run's own */
	i = find(&a, "--cap-drop", 0);
	assert_true(i > 0);
	assert_string_equal(a.v[i + 1], "ALL");
	i = find(&a, "--info-fd", 0);
	assert_true(i > 0);
	assert_string_equal(a.v[i + 1], "9");
	/* the seccomp filter and bwrap's second layer, before the command */
	i = find(&a, "--seccomp", 0);
	assert_true(i > 0);
	assert_string_equal(a.v[i + 1], "11");
	assert_true(find(&a, "--disable-userns", 0) > 0);
	assert_true(find(&a, "--assert-userns-disabled", 0) > 0);
	assert_true(find(&a, "--assert-userns-disabled", 0) < find(&a, "--", 0));
	assert_true(find3(&a, "--ro-bind-data", "10", "/etc/resolv.conf") > 0);
	assert_true(find3(&a, "--ro-bind", "/usr", "/usr") > 0);
	snprintf(ro, sizeof(ro), "%s/ro", dir);
	snprintf(rw, sizeof(rw), "%s/rw", dir);
	assert_true(find3(&a, "--ro-bind", ro, ro) > 0);
	assert_true(find3(&a, "--bind", rw, rw) > 0);
	/* the fresh /tmp comes before the grants (which live under /tmp here) */
	assert_true(find3(&a, "--tmpfs", "/tmp", "--ro-bind") > 0 || find(&a, "/tmp", 0) > 0);
	assert_true(find(&a, "/tmp", 0) < find3(&a, "--ro-bind", ro, ro));
	assert_true(find3(&a, "--setenv", "KEEP_ME", "1") > 0);
	assert_true(find3(&a, "--setenv", "SET_ME", "v") > 0);
	/* the proxy by name (both families, through /etc/hosts); no ALL_PROXY */
	assert_true(find3(&a, "--setenv", "HTTPS_PROXY", "http://warden-proxy:15080") > 0);
	assert_true(find3(&a, "--setenv", "http_proxy", "http://warden-proxy:15080") > 0);
	assert_true(find(&a, "all_proxy", 0) < 0);
	assert_true(find(&a, "ALL_PROXY", 0) < 0);
	assert_true(find3(&a, "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin") > 0);
	for (size_t k = 0; k < a.n; k++)
		assert_null(strstr(a.v[k], "hunter2"));
	/* the command comes last, after "--" */
	dd = find(&a, "--", 0);
	assert_true(dd > 0);
	assert_string_equal(a.v[dd + 1], "/usr/bin/env");
	assert_string_equal(a.v[dd + 2], "-0");
	assert_int_equal((size_t)dd + 3, a.n);
	assert_int_equal(a.opts_end, (size_t)dd);
	/* /proc/sys read-only over the new /proc; no masks without the empty file */
	i = find(&a, "--proc", 0);
	assert_true(i > 0);
	if (access("/proc/sys", F_OK) == 0)
		assert_true(find3(&a, "--ro-bind", "/proc/sys", "/proc/sys") > i);
	assert_true(find(&a, "/proc/cmdline", 0) < 0);
	/* --args: the options, NUL-separated, without argv[0], "--" and the command */
	{
		struct wd_buf t = WD_BUF_INIT;
		size_t count = 0;

		assert_int_equal(bwrap_args_text(&a, &t), 0);
		for (size_t k = 0; k < t.len; k++)
			count += t.data[k] == '\0';
		assert_int_equal(count, (size_t)dd - 1);
		assert_string_equal(t.data, a.v[1]);
		assert_null(memmem(t.data, t.len, "/usr/bin/env", 13));
		wd_buf_free(&t);
	}
	bwrap_argv_free(&a);

	/* the masks over /proc files bind the empty file; grants bound from descriptors; a
	 * size for /tmp with limits.disk_mb */
	{
		struct bwrap_grant *g;
		size_t ng;
		int fds[2] = {21, 22};
		char n21[] = "21", n22[] = "22";

		assert_int_equal(bwrap_grants(p, &g, &ng), 0);
		assert_int_equal(ng, 2);
		s.grants = g;
		s.ngrants = ng;
		s.grant_fd = fds;
		s.empty_file = "/run/warden/empty";
		p->limits.disk_mb = 8;
		assert_int_equal(bwrap_build("bwrap", &s, &a), 0);
		if (access("/proc/cmdline", F_OK) == 0)
			assert_true(find3(&a, "--ro-bind", "/run/warden/empty", "/proc/cmdline") >
				    0);
		/* same length: in name order, so ro (fd 21) before rw (fd 22) */
		assert_string_equal(g[0].path, ro);
		assert_false(g[0].rw);
		assert_string_equal(g[1].path, rw);
		assert_true(g[1].rw);
		assert_true(find3(&a, "--ro-bind-fd", n21, ro) > 0);
		assert_true(find3(&a, "--bind-fd", n22, rw) > 0);
		assert_true(find3(&a, "--ro-bind", ro, ro) < 0);
		i = find(&a, "--size", 0);
		assert_true(i > 0);
		assert_string_equal(a.v[i + 1], "8388608");
		assert_string_equal(a.v[i + 2], "--tmpfs");
		assert_string_equal(a.v[i + 3], "/tmp");
		bwrap_argv_free(&a);
		p->limits.disk_mb = 0;
		s.grants = NULL;
		s.ngrants = 0;
		s.grant_fd = NULL;
		s.empty_file = NULL;
		free(g);
	}

	/* a terminal: no new session; no addresses: no proxy variables; no filter fd (only
	 * WARDEN_UNSAFE_NO_SECCOMP): no --seccomp, but still no nested user namespace */
	s.new_session = false;
	s.info_fd = -1;
	s.seccomp_fd = -1;
	s.host4 = s.host6 = "";
	assert_int_equal(bwrap_build("bwrap", &s, &a), 0);
	assert_true(find(&a, "--seccomp", 0) < 0);
	assert_true(find(&a, "--disable-userns", 0) > 0);
	assert_true(find(&a, "--new-session", 0) < 0);
	assert_true(find(&a, "--info-fd", 0) < 0);
	assert_true(find(&a, "HTTPS_PROXY", 0) < 0);
	bwrap_argv_free(&a);
	bwrap_argv_free(&a); /* harmless twice */

	/* /etc in one mount: the folder of copies, then the /etc folders over its mount
	 * points, no single /etc file, the generated files still on top */
	s.etc_base = "/run/warden/etc";
	s.data_fd[0] = 10;
	assert_int_equal(bwrap_build("bwrap", &s, &a), 0);
	i = find3(&a, "--ro-bind", "/run/warden/etc", "/etc");
	assert_true(i > 0);
	assert_true(find3(&a, "--ro-bind", "/usr", "/usr") < i);
	if (access("/etc/ssl", F_OK) == 0)
		assert_true(find3(&a, "--ro-bind", "/etc/ssl", "/etc/ssl") > i);
	for (size_t k = 0; bwrap_base_etc[k]; k++)
		assert_true(find(&a, bwrap_base_etc[k], 0) < 0);
	assert_true(find3(&a, "--ro-bind-data", "10", "/etc/resolv.conf") > i);
	bwrap_argv_free(&a);

	/* sandbox.allow: [userns]: bwrap lets the program make nested namespaces */
	p->sandbox_allow = POLICY_SANDBOX_USERNS;
	s.seccomp_fd = 12;
	assert_int_equal(bwrap_build("bwrap", &s, &a), 0);
	assert_true(find(&a, "--disable-userns", 0) < 0);
	assert_true(find(&a, "--assert-userns-disabled", 0) < 0);
	assert_string_equal(a.v[find(&a, "--seccomp", 0) + 1], "12");
	bwrap_argv_free(&a);
	policy_free(p);
	cleanup_dir(dir);
}

/* A sensitive grant inside a hidden store is bound after the masks (issue 27 item 4):
 * `read: [~, { path: ~/.aws/config, sensitive: true }]` shows that file and hides the rest. */
static void test_bwrap_optin_after_masks(void **state)
{
	char home[PATH_MAX], aws[PATH_MAX + 8], cfg[PATH_MAX + 16], ssh[PATH_MAX + 8];
	char *argv[] = {"/bin/true", NULL};
	struct policy_diags d;
	struct wd_policy *p = NULL;
	struct wd_buf y = WD_BUF_INIT;
	struct bwrap_spec s = {0};
	struct bwrap_argv a = {0};
	ssize_t mask, bind;
	FILE *f;

	(void)state;
	snprintf(home, sizeof(home), "/tmp/wd-test-optin-XXXXXX");
	assert_non_null(mkdtemp(home));
	snprintf(aws, sizeof(aws), "%s/.aws", home);
	snprintf(cfg, sizeof(cfg), "%s/config", aws);
	snprintf(ssh, sizeof(ssh), "%s/.ssh", home);
	assert_int_equal(mkdir(aws, 0700), 0);
	assert_int_equal(mkdir(ssh, 0700), 0);
	f = fopen(cfg, "we");
	assert_non_null(f);
	fclose(f);
	wd_buf_printf(&y, "version: 1\nfilesystem:\n  read: [~, {path: ~/.aws/config, sensitive: "
			  "true}]\n");
	policy_diags_init(&d);
	assert_int_equal(policy_parse(y.data, y.len, "t.yaml", &p, &d), 0);
	assert_int_equal(policy_validate(p, &(struct policy_ctx){.home = home}, &d), 0);
	assert_int_equal(p->nmask, 2);
	s.policy = p;
	s.argv = argv;
	s.cwd = "/";
	s.host4 = s.host6 = "";
	s.info_fd = s.seccomp_fd = -1;
	for (int k = 0; k < BWRAP_NDATA; k++)
		s.data_fd[k] = -1;
	assert_int_equal(bwrap_build("bwrap", &s, &a), 0);
	mask = find(&a, aws, 0);
	bind = find3(&a, "--ro-bind", cfg, cfg);
	assert_true(mask > 0);
	assert_string_equal(a.v[mask - 1], "--tmpfs");
	assert_true(bind > mask);
	/* bound once, and ~ itself before the masks */
	assert_true(find3(&a, "--ro-bind", cfg, cfg) == find(&a, "--ro-bind", (size_t)bind));
	assert_true(find3(&a, "--ro-bind", home, home) < find(&a, ssh, 0));
	bwrap_argv_free(&a);
	policy_free(p);
	policy_diags_free(&d);
	wd_buf_free(&y);
	unlink(cfg);
	rmdir(aws);
	rmdir(ssh);
	rmdir(home);
}

/* Whether /etc may be one mount: not with a grant or mask at or under /etc. */
static void test_etc_usable(void **state)
{
	struct policy_diags d;
	struct wd_policy *p = NULL;
	static const char with[] = "version: 1\nfilesystem:\n  read: [\"/etc/hostname\"]\n";
	static const char without[] = "version: 1\nfilesystem:\n  read: [\"/usr/share\"]\n";

	(void)state;
	policy_diags_init(&d);
	assert_int_equal(policy_parse(without, sizeof(without) - 1, "t.yaml", &p, &d), 0);
	assert_int_equal(policy_validate(p, &(struct policy_ctx){.home = "/nonexistent-home"}, &d),
			 0);
	assert_true(run_etc_usable(p));
	policy_free(p);
	p = NULL;
	if (access("/etc/hostname", F_OK) == 0) {
		assert_int_equal(policy_parse(with, sizeof(with) - 1, "t.yaml", &p, &d), 0);
		assert_int_equal(
		    policy_validate(p, &(struct policy_ctx){.home = "/nonexistent-home"}, &d), 0);
		assert_false(run_etc_usable(p));
		policy_free(p);
	}
	policy_diags_free(&d);
}

static void test_files(void **state)
{
	struct bwrap_spec s = {.host4 = "10.213.0.1", .host6 = "fd77:7764:6e00::1"};
	struct wd_buf b = WD_BUF_INIT;

	(void)state;
	assert_int_equal(bwrap_file_text(0, &s, 0, 0, &b), 0);
	assert_non_null(strstr(wd_buf_cstr(&b), "nameserver 10.213.0.1\n"));
	assert_non_null(strstr(wd_buf_cstr(&b), "nameserver fd77:7764:6e00::1\n"));
	wd_buf_reset(&b);
	assert_int_equal(bwrap_file_text(1, &s, 0, 0, &b), 0);
	assert_non_null(strstr(wd_buf_cstr(&b), "localhost"));
	/* the proxy variables' name, in both families */
	assert_non_null(strstr(wd_buf_cstr(&b), "\n10.213.0.1\twarden-proxy\n"));
	assert_non_null(strstr(wd_buf_cstr(&b), "\nfd77:7764:6e00::1\twarden-proxy\n"));
	wd_buf_reset(&b);
	assert_int_equal(bwrap_file_text(2, &s, 1000, 1000, &b), 0);
	assert_non_null(strstr(wd_buf_cstr(&b), "user:x:1000:1000:"));
	assert_non_null(strstr(wd_buf_cstr(&b), "root:x:0:0:"));
	wd_buf_reset(&b);
	assert_int_equal(bwrap_file_text(3, &s, 1000, 1000, &b), 0);
	assert_non_null(strstr(wd_buf_cstr(&b), "user:x:1000:"));
	wd_buf_reset(&b);
	assert_int_equal(bwrap_file_text(2, &s, 65534, 65534, &b), 0);
	assert_non_null(strstr(wd_buf_cstr(&b), "nobody:x:65534:65534:"));
	assert_null(strstr(wd_buf_cstr(&b), "user:x:"));
	wd_buf_reset(&b);
	/* a random boot id of the run's own: a version 4 UUID */
	assert_int_equal(bwrap_file_text(4, &s, 0, 0, &b), 0);
	assert_int_equal(b.len, 37);
	assert_int_equal(b.data[14], '4');
	assert_int_equal(b.data[8], '-');
	assert_int_equal(bwrap_file_text(5, &s, 0, 0, &b), -EINVAL);
	wd_buf_free(&b);
}

static void test_record(void **state)
{
	struct run_record r = {0}, back;
	struct wd_buf b = WD_BUF_INIT;

	(void)state;
	snprintf(r.id, sizeof(r.id), "0123456789ab");
	r.pid = 4242;
	r.start = 987654321;
	snprintf(r.ifname, sizeof(r.ifname), "wd-3f9a1c2b7e01");
	snprintf(r.sbx4, sizeof(r.sbx4), "10.213.0.2");
	snprintf(r.sbx6, sizeof(r.sbx6), "fd77:7764:6e00::2");
	snprintf(r.table, sizeof(r.table), "warden");
	snprintf(r.if_prefix, sizeof(r.if_prefix), "wd-");
	snprintf(r.gw_socket, sizeof(r.gw_socket), "/run/warden/runs/0123456789ab/gw.sock");
	r.gw_pid = 77;
	r.gw_start = 12;
	snprintf(r.cg[1], sizeof(r.cg[1]), "/sys/fs/cgroup/pids/warden-0123456789ab");
	/* what the live-run verbs read (launcher/live.c) */
	snprintf(r.mode, sizeof(r.mode), "daemon");
	r.uid = 1500;
	r.created = 1764600000;
	r.ending = 1;
	snprintf(r.policy, sizeof(r.policy), "/home/u/p.yaml");
	snprintf(r.policy_name, sizeof(r.policy_name), "p.yaml");
	snprintf(r.audit, sizeof(r.audit), "/home/u/.local/state/warden/audit.jsonl");
	snprintf(r.started_by, sizeof(r.started_by), "mcp");
	snprintf(r.command, sizeof(r.command), "[\"curl\",\"a=b\",\"x y\"]");
	assert_int_equal(run_record_format(&r, &b), 0);
	assert_int_equal(run_record_parse(wd_buf_cstr(&b), &back), 0);
	assert_memory_equal(&r, &back, sizeof(r));
	assert_int_equal(run_record_parse("pid=1\nstart=2\n", &back), -EINVAL); /* no id */
	assert_int_equal(run_record_parse("id=x\npid=1\nbogus=3\n", &back), -EINVAL);
	assert_int_equal(run_record_parse("id=x\npid=abc\n", &back), -EINVAL);
	assert_int_equal(run_record_parse("id=x\npid=5\n", &back), 0);
	assert_int_equal(back.pid, 5);
	/* a blank line is skipped, never the end of the checks (it returned 0 with no id, pid 0) */
	assert_int_equal(run_record_parse("\n", &back), -EINVAL);
	assert_int_equal(run_record_parse("id=x\n\n", &back), -EINVAL);
	assert_int_equal(run_record_parse("\nid=x\n\npid=6\n", &back), 0);
	assert_int_equal(back.pid, 6);
	/* numbers: no sign, no junk, in range (a uid past 32 bits, a pid past INT_MAX) */
	assert_int_equal(run_record_parse("id=x\npid=5\nuid=-1\n", &back), -EINVAL);
	assert_int_equal(run_record_parse("id=x\npid=5\nuid=4294967296\n", &back), -EINVAL);
	assert_int_equal(run_record_parse("id=x\npid=2147483648\n", &back), -EINVAL);
	assert_int_equal(run_record_parse("id=x\npid=5\ncreated=1x\n", &back), -EINVAL);
	assert_int_equal(run_record_parse("id=x\npid=5\nuid=1500\nmode=rootless\n", &back), 0);
	assert_int_equal(back.uid, 1500);
	assert_string_equal(back.mode, "rootless");
	/* a string longer than its field is refused, not cut */
	assert_int_equal(run_record_parse("id=x\npid=5\nstarted_by=0123456789abcdef\n", &back),
			 -EINVAL);
	wd_buf_free(&b);
	/* our own start time is known, a dead pid has none */
	assert_true(run_proc_start(getpid()) > 0);
	assert_int_equal(run_proc_start(-1), 0);
}

static void test_gc_dir(void **state)
{
	char dir[] = "/tmp/wd-test-gc-XXXXXX", sub[PATH_MAX];
	struct run_record r = {0};
	unsigned n = 99;

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* a live run (ourselves) is left alone */
	snprintf(r.id, sizeof(r.id), "aaaaaaaaaaaa");
	r.pid = getpid();
	r.start = run_proc_start(getpid());
	assert_int_equal(run_record_save(dir, &r), 0);
	/* a dead one without resources is removed */
	snprintf(r.id, sizeof(r.id), "bbbbbbbbbbbb");
	r.start = 1; /* wrong start time: our pid was "recycled" */
	assert_int_equal(run_record_save(dir, &r), 0);
	assert_int_equal(run_gc(dir, &n, NULL), 0);
	assert_int_equal(n, 1);
	snprintf(sub, sizeof(sub), "%s/aaaaaaaaaaaa/state", dir);
	assert_int_equal(access(sub, F_OK), 0);
	snprintf(sub, sizeof(sub), "%s/bbbbbbbbbbbb", dir);
	assert_int_not_equal(access(sub, F_OK), 0);
	snprintf(sub, sizeof(sub), "%s/aaaaaaaaaaaa/state", dir);
	unlink(sub);
	snprintf(sub, sizeof(sub), "%s/aaaaaaaaaaaa", dir);
	rmdir(sub);
	rmdir(dir);
	assert_int_equal(run_gc("/nonexistent-warden-dir", &n, NULL), 0);
	assert_int_equal(n, 0);
}

/* Whom root's runs run the program as: never root. */
static void test_sandbox_user(void **state)
{
	char name[64];
	uid_t u;
	gid_t g;

	(void)state;
	unsetenv("WARDEN_SANDBOX_USER");
	assert_int_equal(run_sandbox_user(NULL, &u, &g, name, sizeof(name)), 0);
	assert_string_equal(name, "nobody");
	assert_true(u != 0 && g != 0);
	assert_int_equal(run_sandbox_user("4321", &u, &g, name, sizeof(name)), 0);
	assert_int_equal(u, 4321);
	assert_int_equal(g, 4321);
	setenv("WARDEN_SANDBOX_USER", "4322", 1);
	assert_int_equal(run_sandbox_user(NULL, &u, &g, name, sizeof(name)), 0);
	assert_int_equal(u, 4322);
	assert_int_equal(run_sandbox_user("4323", &u, &g, name, sizeof(name)), 0);
	assert_int_equal(u, 4323);
	unsetenv("WARDEN_SANDBOX_USER");
	assert_int_equal(run_sandbox_user("root", &u, &g, name, sizeof(name)), -EPERM);
	assert_int_equal(run_sandbox_user("0", &u, &g, name, sizeof(name)), -EPERM);
	assert_int_equal(run_sandbox_user("no-such-user-wd", &u, &g, name, sizeof(name)), -ENOENT);
	assert_string_equal(name, "no-such-user-wd");
	assert_int_equal(run_sandbox_user("12x", &u, &g, name, sizeof(name)), -ENOENT);
}

static void test_limits_names(void **state)
{
	struct limits l = {0};

	(void)state;
	assert_string_equal(limits_kind_name(LIMITS_CGROUP1), "cgroup1");
	assert_string_equal(limits_kind_name(LIMITS_CGROUP2), "cgroup2");
	assert_string_equal(limits_kind_name(LIMITS_SAMPLING), "pss-sampling");
	assert_int_equal(limits_destroy(NULL), 0);
	assert_int_equal(limits_destroy(&l), 0);
	assert_int_equal(limits_signal(&l, 0), 0);
	assert_true(limits_rss_kb(getpid()) > 0);
	assert_int_equal(limits_rss_kb(0), 0);
}

/* The run networks' configuration from the gateway config: pools and interface prefix. */
static void test_netns_config(void **state)
{
	struct wd_gwconf g;
	struct netns_pool_config c;
	char text[INET6_ADDRSTRLEN + 8];

	(void)state;
	conf_defaults(&g);
	snprintf(g.pool_v4, sizeof(g.pool_v4), "10.99.0.0/16");
	snprintf(g.pool_v6, sizeof(g.pool_v6), "fd00:99::/48");
	snprintf(g.if_prefix, sizeof(g.if_prefix), "wt-");
	assert_int_equal(conf_pool_config(&g, &c), 0);
	assert_int_equal(netns_format_prefix(&c.pool4, text, sizeof(text)), 0);
	assert_string_equal(text, "10.99.0.0/16");
	assert_int_equal(netns_format_prefix(&c.pool6, text, sizeof(text)), 0);
	assert_string_equal(text, "fd00:99::/48");
	assert_string_equal(c.ifname_prefix, "wt-");
	/* the rest are the defaults */
	assert_int_equal(c.run4_len, 30);
	snprintf(g.pool_v6, sizeof(g.pool_v6), "fd00:99::1/48"); /* host bits set */
	assert_int_equal(conf_pool_config(&g, &c), -EINVAL);
	snprintf(g.pool_v6, sizeof(g.pool_v6), "fd00:99::/48");
	snprintf(g.pool_v4, sizeof(g.pool_v4), "not-a-prefix");
	assert_int_equal(conf_pool_config(&g, &c), -EINVAL);
}

/* --print-bwrap's words: plain ones as they are, the rest single-quoted so a shell gives them
 * back unchanged */
static void test_shell_word(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"--ro-bind", "--ro-bind"},
	    {"/usr/bin/true", "/usr/bin/true"},
	    {"localhost,127.0.0.1,::1", "localhost,127.0.0.1,::1"},
	    {"http://warden-proxy:15080", "http://warden-proxy:15080"},
	    {"", "''"},
	    {"a b", "'a b'"},
	    {"it's", "'it'\\''s'"},
	    {"$HOME", "'$HOME'"},
	    {"a;rm -rf /", "'a;rm -rf /'"},
	    {"`id`", "'`id`'"},
	    {"~", "'~'"},
	    {"x\ny", "'x\ny'"},
	    {"''", "''\\'''\\'''"},
	};
	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(cases); i++) {
		struct wd_buf b = WD_BUF_INIT;

		assert_int_equal(bwrap_shell_word(cases[i].in, &b), 0);
		assert_string_equal(wd_buf_cstr(&b), cases[i].out);
		wd_buf_free(&b);
	}
}

/* A grant the program may not use: the fix is for whom it runs as (issue 27): a user's run is
 * never told sudo, nor is root's through sudo; root's direct run (the sandbox user) is. */
static void test_grant_denied(void **state)
{
	struct sandbox_spec sp = {.uid = 1500, .user = "alice", .rootless = true};
	struct sandbox_err e = {0};

	(void)state;
	unsetenv("SUDO_UID");
	run_child_grant_denied(&sp, "/srv/x", false, EACCES, &e);
	assert_string_equal(e.step, "filesystem");
	assert_string_equal(e.msg, "read grant /srv/x is not readable by you (uid 1500), whom the "
				   "program runs as: Permission denied");
	assert_null(strstr(e.fix, "sudo"));
	assert_non_null(strstr(e.fix, "make it readable by you"));
	run_child_grant_denied(&sp, "/srv/out", true, EACCES, &e);
	assert_non_null(strstr(e.fix, "make it writable by you"));
	/* root's run through sudo: the program is the user already */
	sp.rootless = false;
	setenv("SUDO_UID", "1500", 1);
	run_child_grant_denied(&sp, "/srv/x", false, EACCES, &e);
	assert_string_equal(e.msg,
			    "read grant /srv/x is not readable by uid 1500 (alice), whom the "
			    "program runs as: Permission denied");
	assert_null(strstr(e.fix, "sudo"));
	/* root's direct run: the sandbox user; sudo would make it the person */
	unsetenv("SUDO_UID");
	sp.uid = 65534;
	sp.user = "nobody";
	run_child_grant_denied(&sp, "/srv/x", false, EACCES, &e);
	assert_non_null(strstr(e.fix, "or run warden through sudo so the program runs as you"));
	setenv("SUDO_UID", "1500", 1); /* another uid than the program's: still the sandbox user */
	run_child_grant_denied(&sp, "/srv/x", false, EACCES, &e);
	assert_non_null(strstr(e.fix, "through sudo"));
	unsetenv("SUDO_UID");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_resolve),	 cmocka_unit_test(test_exit_status),
	    cmocka_unit_test(test_sha256),	 cmocka_unit_test(test_within),
	    cmocka_unit_test(test_bwrap),	 cmocka_unit_test(test_bwrap_optin_after_masks),
	    cmocka_unit_test(test_etc_usable),	 cmocka_unit_test(test_files),
	    cmocka_unit_test(test_record),	 cmocka_unit_test(test_gc_dir),
	    cmocka_unit_test(test_sandbox_user), cmocka_unit_test(test_limits_names),
	    cmocka_unit_test(test_netns_config), cmocka_unit_test(test_shell_word),
	    cmocka_unit_test(test_grant_denied),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
