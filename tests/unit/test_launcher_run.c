/* test_launcher_run.c - unit tests of stages of `warden run` that need no root: the liveness
 * check's DNS query and its answer test, the gateway client (one JSON call against a
 * control socket served by this test: ok, refused, not JSON, nobody listening) and the search
 * of a run in the answer to `list`, the facts of a run's network (state record, nft elements). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "conf/conf.h"
#include "run/internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static void test_liveness_query(void **state)
{
	/* id 0x1234, RD, one question: warden-liveness.check.invalid HTTPS IN */
	static const uint8_t want[] = {
	    0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	    15,	  'w',	'a',  'r',  'd',  'e',	'n',  '-',  'l',  'i',	'v',  'e',
	    'n',  'e',	's',  's',  5,	  'c',	'h',  'e',  'c',  'k',	7,    'i',
	    'n',  'v',	'a',  'l',  'i',  'd',	0,    0x00, 65,	  0x00, 0x01,
	};
	uint8_t q[512], ans[64];

	(void)state;
	assert_int_equal(strlen(RUN_LIVENESS_NAME), 29);
	assert_int_equal(run_liveness_query(0x1234, q, sizeof(q)), (int)sizeof(want));
	assert_memory_equal(q, want, sizeof(want));
	assert_int_equal(run_liveness_query(0x1234, q, sizeof(want) - 1), -ENOSPC);
	assert_int_equal(run_liveness_query(0x1234, q, sizeof(want)), (int)sizeof(want));

	/* an answer: the same id with QR set; not the query itself, not another id, not short */
	memcpy(ans, want, sizeof(want));
	ans[2] |= 0x80;
	assert_true(run_liveness_answers(q, ans, sizeof(want)));
	assert_true(run_liveness_answers(q, ans, 12));
	assert_false(run_liveness_answers(q, ans, 11));
	assert_false(run_liveness_answers(q, q, sizeof(want)));
	ans[1] ^= 1;
	assert_false(run_liveness_answers(q, ans, sizeof(want)));
}

static void test_gwclient_find(void **state)
{
	json_t *ans = json_loads("{\"ok\": true, \"runs\": ["
				 "{\"id\": \"aaaaaaaaaaaa\", \"denied\": 3, \"bytes_up\": 10,"
				 " \"bytes_down\": 20},"
				 "{\"id\": 7},"
				 "{\"id\": \"bbbbbbbbbbbb\"}]}",
				 0, NULL);
	struct run_counts c = {-1, -1, -1};

	(void)state;
	assert_non_null(ans);
	assert_true(run_gwclient_find(ans, "aaaaaaaaaaaa", &c));
	assert_int_equal(c.denied, 3);
	assert_int_equal(c.up, 10);
	assert_int_equal(c.down, 20);
	/* listed without counters: 0, not unknown */
	assert_true(run_gwclient_find(ans, "bbbbbbbbbbbb", &c));
	assert_int_equal(c.denied, 0);
	assert_true(run_gwclient_find(ans, "bbbbbbbbbbbb", NULL));
	c = (struct run_counts){-1, -1, -1};
	assert_false(run_gwclient_find(ans, "cccccccccccc", &c));
	assert_int_equal(c.denied, -1);
	assert_false(run_gwclient_find(ans, "aaaa", NULL)); /* whole ids only */
	json_decref(ans);
	ans = json_loads("{\"ok\": true}", 0, NULL);
	assert_false(run_gwclient_find(ans, "aaaaaaaaaaaa", NULL));
	json_decref(ans);
}

/* The network's facts: the state record's text, the nft elements, one family or both. */
static void test_network_facts(void **state)
{
	struct run *r = calloc(1, sizeof(*r));

	(void)state;
	assert_non_null(r);
	snprintf(r->network.net.ifname, sizeof(r->network.net.ifname), "wd-3f9a1c2b7e01");
	inet_pton(AF_INET, "10.213.0.1", &r->network.net.addr.host4);
	inet_pton(AF_INET, "10.213.0.2", &r->network.net.addr.sbx4);
	inet_pton(AF_INET6, "fd77:7764:6e00::1", &r->network.net.addr.host6);
	inet_pton(AF_INET6, "fd77:7764:6e00::2", &r->network.net.addr.sbx6);
	memset(&r->network.fr, 0x5a, sizeof(r->network.fr)); /* every field is written */
	run_network_facts(r);
	assert_string_equal(r->network.host4, "10.213.0.1");
	assert_string_equal(r->network.host6, "fd77:7764:6e00::1");
	assert_string_equal(r->rec.sbx4, "10.213.0.2");
	assert_string_equal(r->rec.sbx6, "fd77:7764:6e00::2");
	assert_string_equal(r->rec.host4, "10.213.0.1");
	assert_string_equal(r->rec.host6, "fd77:7764:6e00::1");
	assert_string_equal(r->rec.ifname, "wd-3f9a1c2b7e01");
	assert_string_equal(r->network.fr.ifname, "wd-3f9a1c2b7e01");
	assert_true(r->network.fr.has_v4 && r->network.fr.has_v6 && r->network.fr.has_gw4 &&
		    r->network.fr.has_gw6);
	assert_memory_equal(&r->network.fr.sbx4, &r->network.net.addr.sbx4,
			    sizeof(r->network.fr.sbx4));
	assert_memory_equal(&r->network.fr.gw4, &r->network.net.addr.host4,
			    sizeof(r->network.fr.gw4));
	assert_memory_equal(&r->network.fr.sbx6, &r->network.net.addr.sbx6,
			    sizeof(r->network.fr.sbx6));
	assert_memory_equal(&r->network.fr.gw6, &r->network.net.addr.host6,
			    sizeof(r->network.fr.gw6));
	free(r);
}

/* A control socket that reads one request line and answers @answer. */
struct server {
	char path[108];
	int fd;
	const char *answer;
	char request[256];
};

static void *serve(void *arg)
{
	struct server *s = arg;
	int c = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
	size_t n = 0;

	if (c < 0)
		return NULL;
	while (n + 1 < sizeof(s->request) && read(c, s->request + n, 1) == 1 &&
	       s->request[n] != '\n')
		n++;
	s->request[n] = '\0';
	if (write(c, s->answer, strlen(s->answer)) < 0) {
		/* the client sees the short answer */
	}
	close(c);
	return NULL;
}

static void call(const char *answer, int want, const char *want_why, char *request, size_t size)
{
	struct server s = {.answer = answer};
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	char dir[] = "/tmp/wd-test-gwcall-XXXXXX", why[256] = "";
	json_t *req = json_pack("{s:s, s:s}", "op", "register", "id", "aaaaaaaaaaaa"), *ans = NULL;
	pthread_t t;

	assert_non_null(mkdtemp(dir));
	snprintf(s.path, sizeof(s.path), "%s/gw.sock", dir);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", s.path);
	s.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s.fd >= 0);
	assert_int_equal(bind(s.fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(s.fd, 1), 0);
	assert_int_equal(pthread_create(&t, NULL, serve, &s), 0);
	assert_int_equal(run_gw_call(s.path, req, 2000, &ans, why, sizeof(why)), want);
	assert_int_equal(pthread_join(t, NULL), 0);
	if (want == 0) {
		assert_non_null(ans);
		assert_true(json_is_true(json_object_get(ans, "ok")));
		json_decref(ans);
	} else {
		assert_null(ans);
		if (strchr(want_why, '%'))
			assert_non_null(strstr(why, "the answer is not JSON"));
		else
			assert_string_equal(why, want_why);
	}
	snprintf(request, size, "%s", s.request);
	json_decref(req);
	close(s.fd);
	unlink(s.path);
	rmdir(dir);
}

static void test_gw_call(void **state)
{
	char request[256], why[256];
	json_t *req;

	(void)state;
	call("{\"ok\": true, \"runs\": []}\n", 0, "", request, sizeof(request));
	/* one compact JSON line */
	assert_string_equal(request, "{\"op\":\"register\",\"id\":\"aaaaaaaaaaaa\"}");
	call("{\"ok\": false, \"error\": \"run aaaaaaaaaaaa exists\"}\n", -EPERM,
	     "run aaaaaaaaaaaa exists", request, sizeof(request));
	call("{\"ok\": false}\n", -EPERM, "refused", request, sizeof(request));
	call("this is not json\n", -EBADMSG, "%: the answer is not JSON", request, sizeof(request));
	/* nobody listens: the socket and the cause */
	req = json_pack("{s:s}", "op", "stats");
	assert_int_equal(run_gw_call("/nonexistent-wd/gw.sock", req, 200, NULL, why, sizeof(why)),
			 -ENOENT);
	assert_string_equal(why, "/nonexistent-wd/gw.sock: No such file or directory");
	json_decref(req);
	assert_int_equal(run_gw_call_op("/nonexistent-wd/gw.sock", "stats", 200, NULL), -ENOENT);
}

/* run_gw_learned() (warden trace): the `learned` request for the run, the array handed over;
 * a run not registered, or not in learn mode, asks nothing; a refusal is the call's error */
static int learned_from(const char *answer, bool learn, bool registered, char *request,
			json_t **ret)
{
	struct server s = {.answer = answer};
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	char dir[] = "/tmp/wd-test-learned-XXXXXX";
	struct run *r = calloc(1, sizeof(*r));
	pthread_t t;
	int ret_code;

	assert_non_null(r);
	assert_non_null(mkdtemp(dir));
	snprintf(s.path, sizeof(s.path), "%s/gw.sock", dir);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", s.path);
	s.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s.fd >= 0);
	assert_int_equal(bind(s.fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(s.fd, 1), 0);
	snprintf(r->id, sizeof(r->id), "aaaaaaaaaaaa");
	snprintf(r->gateway.gw.socket, sizeof(r->gateway.gw.socket), "%s", s.path);
	r->o.quiet = true;
	r->learn = learn;
	r->gateway.registered = registered;
	if (learn && registered)
		assert_int_equal(pthread_create(&t, NULL, serve, &s), 0);
	ret_code = run_gw_learned(r, ret);
	if (learn && registered)
		assert_int_equal(pthread_join(t, NULL), 0);
	snprintf(request, 256, "%s", s.request);
	close(s.fd);
	unlink(s.path);
	rmdir(dir);
	free(r);
	return ret_code;
}

static void test_gw_learned(void **state)
{
	char request[256];
	json_t *a = NULL;

	(void)state;
	assert_int_equal(learned_from("{\"ok\":true,\"learned\":[{\"host\":\"other.test\","
				      "\"port\":443,\"proto\":\"tls\",\"count\":2}],"
				      "\"dropped\":0}\n",
				      true, true, request, &a),
			 0);
	assert_string_equal(request, "{\"op\":\"learned\",\"id\":\"aaaaaaaaaaaa\"}");
	assert_true(json_is_array(a));
	assert_int_equal(json_array_size(a), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(a, 0), "host")),
			    "other.test");
	json_decref(a);
	a = NULL;
	/* the gateway refuses (an old one, another uid's run): the call's error, no array */
	assert_int_equal(
	    learned_from("{\"ok\":false,\"error\":\"no such run\"}\n", true, true, request, &a),
	    -EPERM);
	assert_null(a);
	/* an answer without the array */
	assert_int_equal(learned_from("{\"ok\":true}\n", true, true, request, &a), -EINVAL);
	assert_null(a);
	/* nothing asked of a run not in learn mode, or not registered */
	assert_int_equal(learned_from("", false, true, request, &a), -EINVAL);
	assert_int_equal(learned_from("", true, false, request, &a), -ENOTCONN);
	assert_string_equal(request, "");
	assert_null(a);
}

/* the systemd scope of a rootless run's limits: its exact command line */
static void test_rootless_scope_argv(void **state)
{
	static const char *const want[] = {"systemd-run", "--user",
					   "--scope",	  "--quiet",
					   "--collect",	  "--unit=warden-0123abcd",
					   "-p",	  RUN_SCOPE_OOM_PROPERTY,
					   "-p",	  "MemoryMax=268435456",
					   "-p",	  "MemorySwapMax=0",
					   "-p",	  "TasksMax=64",
					   "-p",	  "CPUQuota=150%",
					   "--",	  "/usr/bin/bwrap",
					   "--args",	  "3",
					   NULL};
	char *cmd[] = {"/usr/bin/bwrap", "--args", "3", NULL};
	struct policy_limits lim = {.memory_mb = 256, .pids = 64, .cpu_milli = 1500};
	char **v;

	(void)state;
	v = run_rootless_scope_argv("0123abcd", &lim, cmd);
	assert_non_null(v);
	for (size_t i = 0; want[i] || v[i]; i++) {
		assert_non_null(v[i]);
		assert_non_null(want[i]);
		assert_string_equal(v[i], want[i]);
	}
	run_strv_free(v);
	/* no limit asked for: the scope alone (its cgroup still finds every process), with its
	 * OOM policy */
	memset(&lim, 0, sizeof(lim));
	v = run_rootless_scope_argv("x", &lim, cmd);
	assert_non_null(v);
	assert_string_equal(v[5], "--unit=warden-x");
	assert_string_equal(v[6], "-p");
	assert_string_equal(v[7], RUN_SCOPE_OOM_PROPERTY);
	assert_string_equal(v[8], "--");
	assert_string_equal(v[9], "/usr/bin/bwrap");
	assert_null(v[12]);
	run_strv_free(v);
}

/* a systemd user scope is used only where a user manager of the caller's answers, systemd-run
 * is there and the cgroup hierarchy is v2; each missing part alone means the fallback */
static void test_rootless_scope_usable(void **state)
{
	char d[] = "/tmp/wd-scope-XXXXXX", p[320], run[64], cg[64];
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	(void)state;
	assert_non_null(mkdtemp(d));
	snprintf(p, sizeof(p), "%s/systemd", d);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(run, sizeof(run), "%s/systemd-run", d);
	snprintf(cg, sizeof(cg), "%s/cgroup", d);
	assert_int_equal(mkdir(cg, 0755), 0);
	/* nothing yet: no manager */
	assert_false(run_rootless_scope_usable(d, run, cg));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/systemd/private", d);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 1), 0);
	/* a manager, but no systemd-run */
	assert_false(run_rootless_scope_usable(d, run, cg));
	close(open(run, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	/* systemd-run not executable */
	assert_false(run_rootless_scope_usable(d, run, cg));
	assert_int_equal(chmod(run, 0755), 0);
	/* cgroup v1 (no cgroup.controllers at the root) */
	assert_false(run_rootless_scope_usable(d, run, cg));
	snprintf(p, sizeof(p), "%s/cgroup.controllers", cg);
	close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	/* all three: the scope */
	assert_true(run_rootless_scope_usable(d, run, cg));
	assert_false(run_rootless_scope_usable(NULL, run, cg));
	assert_false(run_rootless_scope_usable("relative", run, cg));
	/* a regular file where the manager's socket should be is no manager */
	close(fd);
	assert_int_equal(unlink(sa.sun_path), 0);
	close(open(sa.sun_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
	assert_false(run_rootless_scope_usable(d, run, cg));
	unlink(sa.sun_path);
	unlink(p);
	unlink(run);
	snprintf(p, sizeof(p), "%s/systemd", d);
	rmdir(p);
	rmdir(cg);
	rmdir(d);
}

/* the run's scope: its limits, then `env -i` ahead of the sandbox's command line; the user
 * manager's address in its environment */
static void test_rootless_scope_prepare(void **state)
{
	struct wd_policy pol = {0};
	struct run r;

	(void)state;
	memset(&r, 0, sizeof(r));
	snprintf(r.id, sizeof(r.id), "%s", "abc123");
	pol.limits.memory_mb = 64;
	pol.limits.pids = 32;
	r.input.pol = &pol;
	setenv("XDG_RUNTIME_DIR", "/run/user/1500", 1);
	unsetenv("DBUS_SESSION_BUS_ADDRESS");
	assert_int_equal(run_rootless_scope_prepare(&r), 0);
	assert_string_equal(r.limits.scope_argv[0], "systemd-run");
	assert_string_equal(r.limits.scope_argv[5], "--unit=warden-abc123");
	assert_string_equal(r.limits.scope_argv[7], RUN_SCOPE_OOM_PROPERTY);
	assert_string_equal(r.limits.scope_argv[9], "MemoryMax=67108864");
	assert_string_equal(r.limits.scope_argv[13], "TasksMax=32");
	assert_string_equal(r.limits.scope_argv[14], "--");
	assert_string_equal(r.limits.scope_argv[15], "/usr/bin/env");
	assert_string_equal(r.limits.scope_argv[16], "-i");
	assert_null(r.limits.scope_argv[17]);
	assert_string_equal(r.limits.scope_env[0], "XDG_RUNTIME_DIR=/run/user/1500");
	assert_null(r.limits.scope_env[1]);
	setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1500/bus", 1);
	assert_int_equal(run_rootless_scope_prepare(&r), 0);
	assert_string_equal(r.limits.scope_env[1],
			    "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1500/bus");
	assert_null(r.limits.scope_env[2]);
	run_rootless_scope_free(&r);
	assert_null(r.limits.scope_argv);
	unsetenv("DBUS_SESSION_BUS_ADDRESS");
	unsetenv("XDG_RUNTIME_DIR");
}

/* the rootless run's addresses and table: slot 0 of the pools, FW_MODE_RUN */
static void test_rootless_fw_config(void **state)
{
	struct wd_gwconf g;
	struct fw_config fc;
	struct netns_addrs a;
	char s4[INET_ADDRSTRLEN], s6[INET6_ADDRSTRLEN];

	(void)state;
	conf_defaults(&g);
	assert_int_equal(run_rootless_fw_config(&g, &fc, &a), 0);
	assert_int_equal(fc.mode, FW_MODE_RUN);
	assert_int_equal(fc.gw4.s_addr, a.host4.s_addr);
	assert_memory_equal(&fc.gw6, &a.host6, sizeof(a.host6));
	assert_string_equal(inet_ntop(AF_INET, &a.sbx4, s4, sizeof(s4)), "10.213.0.2");
	assert_string_equal(inet_ntop(AF_INET6, &a.sbx6, s6, sizeof(s6)), "fd77:7764:6e00::2");
	assert_int_equal(fw_config_check(&fc, NULL), 0);
	snprintf(g.pool_v4, sizeof(g.pool_v4), "%s", "not-a-prefix");
	assert_int_equal(run_rootless_fw_config(&g, &fc, &a), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_liveness_query),
	    cmocka_unit_test(test_gwclient_find),
	    cmocka_unit_test(test_network_facts),
	    cmocka_unit_test(test_gw_call),
	    cmocka_unit_test(test_gw_learned),
	    cmocka_unit_test(test_rootless_scope_argv),
	    cmocka_unit_test(test_rootless_fw_config),
	    cmocka_unit_test(test_rootless_scope_usable),
	    cmocka_unit_test(test_rootless_scope_prepare),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
