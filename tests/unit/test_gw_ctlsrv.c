/* test_gw_ctlsrv.c - unit tests for the control socket's server (gateway/ctlsrv.c,
 * ctlconn.c, ctlops.c, ctlnetns.c)
 * without root: the server runs on a Unix socket in a temporary folder, composed the
 * way gw.c composes it (the loop, the audit front, the run table, a DNS front and an
 * NFLOG reader without sockets, no parent channel), and this test is both its loop
 * and its client. Covered: good requests of every operation, a request that comes in
 * pieces (nothing is answered until its line is complete), pipelined requests
 * answered in order, malformed and unknown operations (an error, then the connection
 * closes), a request over GW_CTL_MAX without a newline (E2BIG, closed), requests
 * about a run that is not there, and the bounds (issue 25): the descriptor share, the
 * per-uid and total bounds on connections (refused with a line, counted), and the request
 * deadline that a byte does not move. */
#include "conf/conf.h"
#include "gateway/auditrl.h"
#include "gateway/ctlsrv.h"
#include "gateway/dns.h"
#include "gateway/ev.h"
#include "gateway/privchan.h"
#include "gateway/run.h"
#include "gateway/udplog.h"

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

struct server {
	struct wd_gwconf conf;
	struct gw_limits lim;
	struct gw_ev ev;
	struct gw_audit audit;
	struct gw_runs runs;
	struct gw_dns dns;
	struct gw_udplog udp;
	struct gw_privchan priv;
	struct gw_ctl ctl;
	char dir[48];
	char path[96];
};

static struct server *server_new(void)
{
	struct server *s = calloc(1, sizeof(*s));
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int none[2] = {-1, -1}, none2[2] = {-1, -1}, nflog = -1, fd;
	struct wd_err err;

	assert_non_null(s);
	conf_defaults(&s->conf);
	snprintf(s->conf.pool_v4, sizeof(s->conf.pool_v4), "10.213.0.0/16");
	gw_limits_from_conf(&s->conf, &s->lim);
	snprintf(s->dir, sizeof(s->dir), "/tmp/wd-ctlsrv-XXXXXX");
	assert_non_null(mkdtemp(s->dir));
	snprintf(s->path, sizeof(s->path), "%s/ctl.sock", s->dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", s->path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 16), 0);
	assert_int_equal(gw_ev_init(&s->ev, NULL, &err), 0);
	gw_audit_init(&s->audit, &s->ev, s->lim.audit_bytes);
	gw_privchan_init(&s->priv, &s->ev);
	assert_int_equal(gw_runs_init(&s->runs, &s->ev, &s->audit, &s->conf, &s->lim, &err), 0);
	assert_int_equal(
	    gw_dns_init(&s->dns, &s->ev, &s->runs, NULL, &s->audit, &s->lim, none, none2, &err), 0);
	assert_int_equal(gw_udplog_init(&s->udp, &s->ev, &s->runs, &s->audit, &s->conf, &nflog), 0);
	assert_int_equal(gw_ctl_init(&s->ctl, &s->ev, &s->runs, &s->audit, &s->dns, &s->udp,
				     &s->priv, &fd, &err),
			 0);
	assert_int_equal(fd, -1); /* taken */
	return s;
}

static void server_free(struct server *s)
{
	gw_ctl_free(&s->ctl);
	gw_dns_free(&s->dns);
	gw_privchan_free(&s->priv);
	gw_runs_free(&s->runs);
	gw_udplog_free(&s->udp);
	gw_audit_free(&s->audit);
	gw_ev_free(&s->ev);
	unlink(s->path);
	rmdir(s->dir);
	free(s);
}

/* one round of the server's loop (what gw.c does for these references) */
static void turn(struct server *s, int ms)
{
	struct gw_poll_event evs[16];
	struct gw_timer *t;
	int n = gw_ev_wait(&s->ev, evs, 16, wd_mono_ns() + (uint64_t)ms * 1000000ull, false);

	for (int i = 0; i < n; i++) {
		void *p = GW_REF_PTR(evs[i].ref);

		enum gw_ref type = GW_REF_TYPE(evs[i].ref);

		if (type == GW_REF_LISTEN)
			gw_ctl_accept(((struct gw_listener *)p)->owner, p);
		else if (type == GW_REF_CTL)
			gw_ctlconn_event(p, evs[i].events);
		else
			fail_msg("an event of type %d", (int)type);
	}
	while ((t = gw_timer_expired(&s->ev.timers, s->ev.now)))
		if (t->kind == GW_T_CTLCONN)
			gw_ctlconn_expired(t->owner);
	gw_audit_flush(&s->ev);
}

static int client(struct server *s)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", s->path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	turn(s, 10); /* accepted */
	return fd;
}

/* send all of @msg, the server taking its share meanwhile (one thread plays both);
 * stops early when the server closed its end */
static void say(struct server *s, int fd, const char *msg, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = send(fd, msg + off, len - off, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EPIPE)
			return;
		assert_true(n < 0 && (errno == EAGAIN || errno == EINTR));
		turn(s, 5);
	}
	turn(s, 10);
}

static void says(struct server *s, int fd, const char *msg)
{
	say(s, fd, msg, strlen(msg));
}

/* the next answer line, parsed (NULL: the server closed the connection without one,
 * or nothing came within about a second) */
static json_t *answer(struct server *s, int fd, bool *closed)
{
	static char line[1 << 20];
	size_t n = 0;

	*closed = false;
	for (int idle = 0; idle < 200;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};

		if (poll(&pfd, 1, 0) == 1) {
			ssize_t k =
			    recv(fd, line + n, 1, 0); /* byte by byte: stop at the line's end */

			if (k == 0) {
				*closed = true;
				return NULL;
			}
			assert_int_equal(k, 1);
			if (line[n] == '\n') {
				json_error_t e;
				json_t *j = json_loadb(line, n, 0, &e);

				assert_non_null(j);
				return j;
			}
			n++;
			assert_true(n < sizeof(line));
			continue;
		}
		turn(s, 5);
		idle++;
	}
	return NULL;
}

/* the answer is {"ok": @ok}; its error's errno name when not ok */
static void expect(struct server *s, int fd, bool ok, const char *errname, const char *error_part)
{
	bool closed;
	json_t *j = answer(s, fd, &closed);

	assert_non_null(j);
	assert_int_equal(json_is_true(json_object_get(j, "ok")), ok);
	if (!ok) {
		assert_string_equal(json_string_value(json_object_get(j, "errno")), errname);
		if (error_part &&
		    !strstr(json_string_value(json_object_get(j, "error")), error_part))
			fail_msg("error `%s` lacks `%s`",
				 json_string_value(json_object_get(j, "error")), error_part);
	}
	json_decref(j);
}

/* the server closed the connection (after what it said) */
static void expect_closed(struct server *s, int fd)
{
	bool closed;
	json_t *j = answer(s, fd, &closed);

	assert_null(j);
	assert_true(closed);
}

static const char reg[] =
    "{\"op\":\"register\",\"id\":\"r1\",\"if\":\"wd-r1\",\"host_v4\":\"10.213.0.1\","
    "\"sandbox_v4\":\"10.213.0.2\",\"policy\":\"version: 1\\nnetwork:\\n  allow:\\n    - "
    "allowed.test\\n\",\"policy_name\":\"p.yaml\"}\n";

static void test_good(void **state)
{
	struct server *s = server_new();
	int fd = client(s);
	bool closed;
	json_t *j;

	(void)state;
	says(s, fd, "{\"op\":\"stats\"}\n");
	j = answer(s, fd, &closed);
	assert_non_null(j);
	assert_true(json_is_true(json_object_get(j, "ok")));
	assert_int_equal(json_integer_value(json_object_get(j, "runs")), 0);
	assert_true(json_is_false(json_object_get(j, "nflog")));
	assert_true(json_is_false(json_object_get(j, "manage_nft")));
	json_decref(j);

	say(s, fd, reg, strlen(reg));
	expect(s, fd, true, NULL, NULL);
	assert_int_equal(s->runs.n, 1);
	/* the same again: refused with the table's reason, the connection stays */
	say(s, fd, reg, strlen(reg));
	expect(s, fd, false, "EEXIST", "run r1 is already registered");

	says(s, fd, "{\"op\":\"list\"}\n");
	j = answer(s, fd, &closed);
	assert_non_null(j);
	{
		json_t *runs = json_object_get(j, "runs"), *r = json_array_get(runs, 0);

		assert_int_equal(json_array_size(runs), 1);
		assert_string_equal(json_string_value(json_object_get(r, "id")), "r1");
		assert_int_equal(json_integer_value(json_object_get(r, "uid")),
				 (json_int_t)getuid());
		assert_string_equal(json_string_value(json_object_get(r, "sandbox_v4")),
				    "10.213.0.2");
		assert_true(json_is_null(json_object_get(r, "host_v6")));
		assert_string_equal(json_string_value(json_object_get(r, "policy")), "p.yaml");
		assert_int_equal(json_integer_value(json_object_get(r, "denied")), 0);
	}
	json_decref(j);

	says(s, fd,
	     "{\"op\":\"replace\",\"id\":\"r1\",\"policy\":\"version: 1\\n\","
	     "\"policy_name\":\"q.yaml\"}\n");
	expect(s, fd, true, NULL, NULL);
	assert_string_equal(gw_run_find_id(&s->runs, "r1")->policy_name, "q.yaml");
	/* an invalid replacement keeps the old policy */
	says(s, fd, "{\"op\":\"replace\",\"id\":\"r1\",\"policy\":\"version: 9\\n\"}\n");
	expect(s, fd, false, "EINVAL", "invalid policy: ");
	assert_string_equal(gw_run_find_id(&s->runs, "r1")->policy_name, "q.yaml");

	says(s, fd, "{\"op\":\"unregister\",\"id\":\"r1\"}\n");
	expect(s, fd, true, NULL, NULL);
	assert_int_equal(s->runs.n, 0);
	/* gone: a run that is not there */
	says(s, fd, "{\"op\":\"unregister\",\"id\":\"r1\"}\n");
	expect(s, fd, false, "ENOENT", "no such run");
	says(s, fd, "{\"op\":\"replace\",\"id\":\"nope\",\"policy\":\"\"}\n");
	expect(s, fd, false, "ENOENT", "no such run");
	close(fd);
	turn(s, 10);
	assert_null(s->ctl.conns);
	server_free(s);
}

/* a request in pieces is answered once, when its line is complete; two in one
 * write are answered in order */
static void test_pieces_and_pipelining(void **state)
{
	struct server *s = server_new();
	int fd = client(s);
	size_t half = strlen(reg) / 2;
	bool closed;
	json_t *j;

	(void)state;
	say(s, fd, reg, half);
	j = answer(s, fd, &closed);
	assert_null(j); /* nothing yet: the line is not complete */
	assert_false(closed);
	assert_int_equal(s->runs.n, 0);
	say(s, fd, reg + half, strlen(reg) - half);
	expect(s, fd, true, NULL, NULL);
	assert_int_equal(s->runs.n, 1);
	{
		static const char two[] = "{\"op\":\"unregister\",\"id\":\"r1\"}\n"
					  "{\"op\":\"unregister\",\"id\":\"r1\"}\n";

		say(s, fd, two, sizeof(two) - 1);
		expect(s, fd, true, NULL, NULL);
		expect(s, fd, false, "ENOENT", "no such run");
	}
	close(fd);
	turn(s, 10);
	server_free(s);
}

/* malformed requests and unknown operations: an error, then the connection ends;
 * another connection is served as before */
static void test_malformed(void **state)
{
	static const struct {
		const char *line;
		const char *why;
	} bad[] = {
	    {"{\"op\":\"lsit\"}\n", "unknown or missing op"},
	    {"{\"op\":\"shutdown\"}\n", "unknown or missing op"},
	    {"hello\n", "not JSON"},
	    {"{\"op\":\"list\",\"id\":\"x\"}\n", "does not take"},
	    {"{\"op\":\"unregister\",\"id\":\"a b\"}\n", "bad run id"},
	};
	struct server *s = server_new();

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int fd = client(s);

		say(s, fd, bad[i].line, strlen(bad[i].line));
		expect(s, fd, false, "EINVAL", bad[i].why);
		expect_closed(s, fd);
		close(fd);
	}
	/* the control: a good request on a new connection */
	{
		int fd = client(s);

		says(s, fd, "{\"op\":\"stats\"}\n");
		expect(s, fd, true, NULL, NULL);
		close(fd);
	}
	turn(s, 10);
	assert_null(s->ctl.conns);
	server_free(s);
}

/* a request longer than GW_CTL_MAX without its newline: E2BIG and closed */
static void test_oversized(void **state)
{
	struct server *s = server_new();
	size_t n = GW_CTL_MAX + 4096;
	char *big = malloc(n);
	int fd = client(s);

	(void)state;
	assert_non_null(big);
	memset(big, ' ', n);
	memcpy(big, "{\"op\":\"list\",\"pad\":\"", 20);
	say(s, fd, big, n);
	expect(s, fd, false, "E2BIG", NULL);
	expect_closed(s, fd);
	close(fd);
	/* just under the limit, then the newline: parsed (and refused for its unknown key) */
	fd = client(s);
	memset(big, ' ', n);
	memcpy(big, "{\"op\":\"list\",\"pad\":\"x\"}", 23);
	big[GW_CTL_MAX - 1] = '\n';
	say(s, fd, big, GW_CTL_MAX);
	expect(s, fd, false, "EINVAL", "unknown key");
	close(fd);
	turn(s, 10);
	free(big);
	server_free(s);
}

/* the op `mcp` (issue 15): the calls in flight go on the run's net and dns events, a denial
 * counts for each distinct tool in flight, the answer has the denials per tool; malformed calls
 * are refused; another uid's connection cannot annotate the run (it is "no such run" there) */
static void test_mcp(void **state)
{
	static const char call_a[] =
	    "{\"tool\":\"fetch_url\",\"call_id\":7,\"args_sha256\":"
	    "\"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"}";
	static const char call_b[] =
	    "{\"tool\":\"search\",\"call_id\":\"x-1\",\"args_sha256\":"
	    "\"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"}";
	struct server *s = server_new();
	int fd = client(s), other;
	struct gw_run *r;
	struct audit_event ev = {.type = AUDIT_TYPE_NET, .action = "net.connect", .allowed = true};
	char line[1024];
	bool closed;
	json_t *j;

	(void)state;
	say(s, fd, reg, strlen(reg));
	expect(s, fd, true, NULL, NULL);
	r = gw_run_find_id(&s->runs, "r1");
	assert_non_null(r);
	assert_null(r->mcp.json);
	snprintf(line, sizeof(line), "{\"op\":\"mcp\",\"id\":\"r1\",\"calls\":[%s,%s]}\n", call_a,
		 call_b);
	says(s, fd, line);
	j = answer(s, fd, &closed);
	assert_non_null(j);
	assert_true(json_is_true(json_object_get(j, "ok")));
	json_decref(j);
	assert_non_null(r->mcp.json);
	/* the newest call on top, both listed */
	assert_non_null(
	    strstr(r->mcp.json, "{\"tool\":\"search\",\"call_id\":\"x-1\",\"in_flight\":2,"));
	assert_non_null(strstr(r->mcp.json, "\"calls\":[{\"tool\":\"fetch_url\",\"call_id\":7,"));
	/* an event of the run gets it; a run event does not */
	gw_audit(&s->audit, &r->acct, &ev);
	assert_ptr_equal(ev.mcp, r->mcp.json);
	{
		struct audit_event rev = {
		    .type = AUDIT_TYPE_RUN, .action = "run.x", .allowed = true};

		gw_audit(&s->audit, &r->acct, &rev);
		assert_null(rev.mcp);
	}
	/* a denial during both calls counts for each tool */
	{
		struct audit_event d = {.type = AUDIT_TYPE_DNS, .action = "dns.query"};

		gw_audit_denial(&s->audit, &r->acct, &d);
		assert_ptr_equal(d.mcp, r->mcp.json);
	}
	/* one call ends: the answer counts the denial for both tools */
	snprintf(line, sizeof(line), "{\"op\":\"mcp\",\"id\":\"r1\",\"calls\":[%s]}\n", call_b);
	says(s, fd, line);
	j = answer(s, fd, &closed);
	assert_non_null(j);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(j, "denials"), "fetch_url")), 1);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(j, "denials"), "search")), 1);
	json_decref(j);
	/* all ended: events carry none, later denials count for no tool */
	says(s, fd, "{\"op\":\"mcp\",\"id\":\"r1\",\"calls\":[]}\n");
	expect(s, fd, true, NULL, NULL);
	assert_null(r->mcp.json);
	{
		struct audit_event d = {.type = AUDIT_TYPE_DNS, .action = "dns.query"};

		gw_audit_denial(&s->audit, &r->acct, &d);
		assert_null(d.mcp);
	}
	says(s, fd, "{\"op\":\"mcp\",\"id\":\"r1\",\"calls\":[]}\n");
	j = answer(s, fd, &closed);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(j, "denials"), "search")), 1);
	json_decref(j);
	/* another uid's connection: the run is not there for it, and nothing changes */
	other = client(s);
	assert_int_equal(s->ctl.conns->fd >= 0, 1);
	s->ctl.conns->uid = getuid() + 1000;
	snprintf(line, sizeof(line), "{\"op\":\"mcp\",\"id\":\"r1\",\"calls\":[%s]}\n", call_a);
	says(s, other, line);
	expect(s, other, false, "ENOENT", "no such run");
	assert_null(r->mcp.json);
	/* the control: the owner's connection sets the same line */
	says(s, fd, line);
	expect(s, fd, true, NULL, NULL);
	assert_non_null(r->mcp.json);
	close(other);
	/* malformed calls: refused, the connection closed */
	{
		static const char *const bad[] = {
		    "{\"op\":\"mcp\",\"id\":\"r1\",\"calls\":\"x\"}\n",
		    "{\"op\":\"mcp\",\"id\":\"r1\",\"calls\":[{\"tool\":\"a\"}]}\n",
		    "{\"op\":\"mcp\",\"id\":\"r1\",\"calls\":[{\"tool\":\"a\",\"call_id\":1.5,"
		    "\"args_sha256\":\"00\"}]}\n",
		    "{\"op\":\"mcp\",\"id\":\"r1\"}\n",
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			int b = client(s);

			says(s, b, bad[i]);
			expect(s, b, false, "EINVAL", NULL);
			expect_closed(s, b);
			close(b);
		}
	}
	close(fd);
	turn(s, 10);
	server_free(s);
}

/* learn mode (issue 16): a run registered with "learn": true keeps it through `replace`, its
 * events say so, and `learned` answers its table to its own uid only (another uid's connection
 * finds no such run and learns nothing); a run not in learn mode is refused */
static void test_learned(void **state)
{
	static const char reg_learn[] =
	    "{\"op\":\"register\",\"id\":\"r2\",\"if\":\"wd-r2\",\"host_v4\":\"10.213.0.5\","
	    "\"sandbox_v4\":\"10.213.0.6\",\"policy\":\"version: 1\\n\",\"learn\":true}\n";
	struct server *s = server_new();
	int fd = client(s), other;
	struct gw_run *r;
	struct audit_event ev = {.type = AUDIT_TYPE_NET, .action = "net.connect", .allowed = true};
	bool closed;
	json_t *j, *a;

	(void)state;
	say(s, fd, reg, strlen(reg)); /* r1: a normal run */
	expect(s, fd, true, NULL, NULL);
	assert_false(gw_run_find_id(&s->runs, "r1")->learn);
	says(s, fd, reg_learn);
	expect(s, fd, true, NULL, NULL);
	r = gw_run_find_id(&s->runs, "r2");
	assert_non_null(r);
	assert_true(r->learn);
	gw_audit(&s->audit, &r->acct, &ev);
	assert_true(ev.learn);
	{
		struct audit_event nev = {
		    .type = AUDIT_TYPE_NET, .action = "net.connect", .allowed = true};

		gw_audit(&s->audit, &gw_run_find_id(&s->runs, "r1")->acct, &nev);
		assert_false(nev.learn);
	}
	/* a replace keeps learn mode */
	says(s, fd, "{\"op\":\"replace\",\"id\":\"r2\",\"policy\":\"version: 1\\n\"}\n");
	expect(s, fd, true, NULL, NULL);
	assert_true(r->learn);
	/* what the data plane noted */
	assert_int_equal(gw_learn_note(&r->learned, "other.test", 443, GW_LEARN_TLS, NULL), 0);
	assert_int_equal(gw_learn_note(&r->learned, "other.test", 443, GW_LEARN_TLS, NULL), 0);
	assert_int_equal(
	    gw_learn_note(&r->learned, "loopback.test", 80, GW_LEARN_HTTP, "a loopback address"),
	    0);
	assert_int_equal(gw_learn_note(&r->learned, "only.test", 0, GW_LEARN_DNS, NULL), 0);
	r->learned.dropped = 3;
	says(s, fd, "{\"op\":\"learned\",\"id\":\"r2\"}\n");
	j = answer(s, fd, &closed);
	assert_non_null(j);
	assert_true(json_is_true(json_object_get(j, "ok")));
	assert_int_equal(json_integer_value(json_object_get(j, "dropped")), 3);
	a = json_object_get(j, "learned");
	assert_int_equal(json_array_size(a), 3);
	{
		char *txt = json_dumps(a, JSON_COMPACT);

		assert_string_equal(
		    txt, "[{\"host\":\"other.test\",\"port\":443,\"proto\":\"tls\",\"count\":2},"
			 "{\"host\":\"loopback.test\",\"port\":80,\"proto\":\"http\",\"count\":1,"
			 "\"refused\":\"a loopback address\"},"
			 "{\"host\":\"only.test\",\"port\":0,\"proto\":\"dns\",\"count\":1}]");
		free(txt);
	}
	json_decref(j);
	/* another uid's connection: no such run, nothing of the table */
	other = client(s);
	s->ctl.conns->uid = getuid() + 1000;
	says(s, other, "{\"op\":\"learned\",\"id\":\"r2\"}\n");
	j = answer(s, other, &closed);
	assert_non_null(j);
	assert_false(json_is_true(json_object_get(j, "ok")));
	assert_string_equal(json_string_value(json_object_get(j, "errno")), "ENOENT");
	assert_string_equal(json_string_value(json_object_get(j, "error")), "no such run");
	assert_null(json_object_get(j, "learned"));
	json_decref(j);
	close(other);
	/* not in learn mode; not there */
	says(s, fd, "{\"op\":\"learned\",\"id\":\"r1\"}\n");
	expect(s, fd, false, "EINVAL", "not in learn mode");
	says(s, fd, "{\"op\":\"learned\",\"id\":\"r9\"}\n");
	expect(s, fd, false, "ENOENT", "no such run");
	close(fd);
	turn(s, 10);
	server_free(s);
}

/* the descriptor share: control never takes what the relays have, one uid never all of
 * control's; without a limit the configured bounds stand */
static void test_fd_share(void **state)
{
	struct wd_gwconf conf;
	struct gw_limits lim;
	struct gw_fd_share sh;

	(void)state;
	conf_defaults(&conf);
	gw_limits_from_conf(&conf, &lim);
	assert_int_equal(lim.ctl_total, 1024);
	assert_int_equal(lim.ctl_per_uid, 64);
	assert_int_equal(lim.ctl_request_ms, 5000);
	gw_fd_share(0, &lim, &sh);
	assert_int_equal(sh.conns, 4096);
	assert_int_equal(sh.ctl, 1024);
	assert_int_equal(sh.ctl_per_uid, 64);
	/* 512 descriptors: 480 past the base, a quarter (120) for 60 control connections, 360
	 * for 144 relayed ones (2 sockets each) and 36 pipes (one per 4 of them); one uid may
	 * hold 30 */
	gw_fd_share(512, &lim, &sh);
	assert_int_equal(sh.ctl, 60);
	assert_int_equal(sh.conns, 144);
	assert_int_equal(sh.pipes, 36);
	assert_int_equal(sh.ctl_per_uid, 30);
	/* 20,000 (a container's hard limit): 7,168 connections, 1,792 pipes */
	gw_fd_share(20000, &lim, &sh);
	assert_int_equal(sh.ctl, 1024);
	assert_int_equal(sh.conns, 4096); /* limits.connections */
	lim.conns_total = 100000;
	gw_fd_share(20000, &lim, &sh);
	assert_int_equal(sh.conns, 7168);
	assert_int_equal(sh.pipes, 1792);
	lim.conns_total = 4096;
	/* the usual limits: the configured bounds */
	gw_fd_share(1048576, &lim, &sh);
	assert_int_equal(sh.ctl, 1024);
	assert_int_equal(sh.conns, 4096);
	assert_int_equal(sh.ctl_per_uid, 64);
	for (uint64_t n = 40; n < 70000; n = n * 5 / 4) {
		gw_fd_share(n, &lim, &sh);
		/* every share fits beside the others */
		assert_true(GW_FD_BASE + (uint64_t)sh.ctl * GW_FD_PER_CTL +
				(uint64_t)sh.conns * GW_FD_PER_CONN + (uint64_t)sh.pipes * 2 <=
			    n + GW_FD_PER_CONN + 2 * GW_FD_PER_CTL); /* the floors of 1 and 2 */
		/* a pipe for every GW_CONNS_PER_PIPE connections (but the floor's one) */
		assert_true((uint64_t)sh.pipes * GW_CONNS_PER_PIPE + GW_CONNS_PER_PIPE >= sh.conns);
		assert_true(sh.ctl * GW_FD_PER_CTL * 4 <= (n - GW_FD_BASE) || sh.ctl == 2);
		assert_true(sh.ctl_per_uid * 2 <= sh.ctl);
		assert_true(sh.ctl_per_uid >= 1 && sh.conns >= 1);
	}
}

/* control.* in the gateway config: parsed, bounded, rendered back */
static void test_conf(void **state)
{
	static const char good[] = "version: 1\ncontrol:\n  path: /run/x.sock\n  connections: 100\n"
				   "  connections_per_user: 10\n  request_timeout_ms: 2000\n";
	static const char *const bad[] = {
	    "version: 1\ncontrol: {connections: 10, connections_per_user: 10}\n",
	    "version: 1\ncontrol: {connections_per_user: 2000}\n",
	    "version: 1\ncontrol: {connections: 1}\n",
	    "version: 1\ncontrol: {request_timeout_ms: 10}\n",
	    "version: 1\ncontrol: {per_user: 3}\n",
	};
	struct wd_gwconf c, back;
	struct policy_diags d;
	struct wd_buf b = WD_BUF_INIT;

	(void)state;
	policy_diags_init(&d);
	assert_int_equal(conf_parse(good, strlen(good), "g.yaml", &c, &d), 0);
	assert_int_equal(c.ctl_conns, 100);
	assert_int_equal(c.ctl_conns_per_user, 10);
	assert_int_equal(c.ctl_request_ms, 2000);
	assert_string_equal(c.control_path, "/run/x.sock");
	assert_int_equal(conf_render_yaml(&c, &b), 0);
	assert_int_equal(conf_parse(b.data, b.len, "rendered", &back, &d), 0);
	assert_int_equal(back.ctl_conns, 100);
	assert_int_equal(back.ctl_conns_per_user, 10);
	assert_int_equal(back.ctl_request_ms, 2000);
	conf_free(&c);
	conf_free(&back);
	wd_buf_free(&b);
	policy_diags_free(&d);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		policy_diags_init(&d);
		assert_int_not_equal(conf_parse(bad[i], strlen(bad[i]), "g.yaml", &c, &d), 0);
		assert_true(d.n > 0);
		conf_free(&c);
		policy_diags_free(&d);
	}
}

/* the connection's stats answer */
static json_t *stats_of(struct server *s, int fd)
{
	bool closed;
	json_t *j;

	says(s, fd, "{\"op\":\"stats\"}\n");
	j = answer(s, fd, &closed);
	assert_non_null(j);
	assert_true(json_is_true(json_object_get(j, "ok")));
	return j;
}

/* a uid holds at most its bound, the gateway at most its own: one past is told why in a
 * line, closed at once and counted; the others are served as before */
static void test_bounds(void **state)
{
	struct server *s = server_new();
	int a1, a2, a3, b1, b2, b3, c;
	json_t *j;

	(void)state;
	s->runs.ctl_max = 4;
	s->runs.ctl_per_uid = 2;
	a1 = client(s);
	a2 = client(s);
	assert_int_equal(s->ctl.nconns, 2);
	a3 = client(s); /* a third of this uid's */
	expect(s, a3, false, "EUSERS", "too many control connections: uid ");
	expect_closed(s, a3);
	close(a3);
	assert_int_equal(s->ctl.nconns, 2);
	assert_int_equal(s->ev.stats.ctl_refused, 1);
	/* the control: this uid's two are served */
	j = stats_of(s, a1);
	assert_int_equal(json_integer_value(json_object_get(j, "control_connections")), 2);
	assert_int_equal(json_integer_value(json_object_get(j, "control_max")), 4);
	assert_int_equal(json_integer_value(json_object_get(j, "control_per_user")), 2);
	assert_int_equal(json_integer_value(json_object_get(j, "control_refused")), 1);
	assert_int_equal(json_integer_value(json_object_get(j, "control_request_ms")), 5000);
	json_decref(j);
	j = stats_of(s, a2);
	json_decref(j);
	close(a2);
	turn(s, 10);
	assert_int_equal(s->ctl.nconns, 1);
	/* other uids' (the connections are relabelled: one test process plays them all) */
	b1 = client(s);
	s->ctl.conns->uid = getuid() + 1000;
	b2 = client(s);
	s->ctl.conns->uid = getuid() + 1000;
	b3 = client(s);
	s->ctl.conns->uid = getuid() + 2000;
	assert_int_equal(s->ctl.nconns, 4);
	/* the gateway's bound: refused for every uid */
	c = client(s);
	expect(s, c, false, "ENFILE", "the gateway holds its bound of 4");
	expect_closed(s, c);
	close(c);
	assert_int_equal(s->ev.stats.ctl_refused, 2);
	assert_int_equal(s->ctl.nconns, 4);
	/* the control: one closes, a new one is served */
	close(b3);
	turn(s, 10);
	c = client(s);
	j = stats_of(s, c);
	assert_int_equal(json_integer_value(json_object_get(j, "control_connections")), 4);
	if (getuid() == 0) {
		/* root sees who holds them */
		json_t *u = json_object_get(j, "control_users");

		assert_int_equal(json_array_size(u), 2);
	}
	json_decref(j);
	close(c);
	close(a1);
	close(b1);
	close(b2);
	turn(s, 10);
	assert_int_equal(s->ctl.nconns, 0);
	assert_null(s->ctl.conns);
	server_free(s);
}

/* the request deadline is set at accept and not moved by a byte; a line that never ends is
 * closed when it is due (told so, counted); a whole request moves it to its own end */
static void test_deadline(void **state)
{
	struct server *s = server_new();
	int fd, ok;
	uint64_t when, t0;
	bool closed = false;
	json_t *j;

	(void)state;
	s->ctl.request_ns = 400000000ull; /* 400 ms */
	fd = client(s);
	assert_int_equal(s->ctl.nconns, 1);
	when = s->ctl.conns->timer.when;
	assert_true(s->ctl.conns->timer.pos != GW_TIMER_IDLE);
	says(s, fd, "{");
	assert_int_equal(s->ctl.conns->timer.when, when); /* not moved */
	says(s, fd, "\"op\"");
	assert_int_equal(s->ctl.conns->timer.when, when);
	/* one byte every 20 ms: closed at the deadline, not kept alive (waited for 5 s at most) */
	t0 = wd_mono_ns();
	while (s->ctl.conns && wd_mono_ns() - t0 < 5000000000ull) {
		(void)send(fd, " ", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
		usleep(20000);
		turn(s, 0);
	}
	assert_null(s->ctl.conns);
	assert_true(wd_mono_ns() - t0 < 5000000000ull);
	assert_int_equal(s->ev.stats.ctl_expired, 1);
	j = answer(s, fd, &closed);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "errno")), "ETIMEDOUT");
	assert_non_null(strstr(json_string_value(json_object_get(j, "error")),
			       "request not whole within 400 ms"));
	json_decref(j);
	close(fd);
	/* the control: a whole request is answered, and the next one's time starts at its end */
	fd = client(s);
	when = s->ctl.conns->timer.when;
	turn(s, 30);
	j = stats_of(s, fd);
	json_decref(j);
	assert_true(s->ctl.conns->timer.when > when);
	ok = s->ctl.conns != NULL;
	assert_true(ok);
	close(fd);
	turn(s, 10);
	server_free(s);
}

/* the parent's channel full (a mass teardown: hundreds of RUN_DELs behind the parent's one-by-one
 * work): no request is lost, every one goes out in order as the channel drains */
static unsigned full_done;
static void full_done_cb(struct gw_privreq *q, const struct gw_priv_reply *rep)
{
	(void)q;
	(void)rep;
	full_done++;
}

static void test_privchan_full(void **state)
{
	enum { N = 2000 };
	static struct gw_privreq reqs[N];
	struct gw_ev ev;
	struct gw_privchan p;
	struct gw_addr sb4 = {0}, h4 = {0}, none = {0};
	struct wd_err err;
	int sv[2], small = 4096;
	unsigned got = 0;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
	assert_int_equal(gw_ev_init(&ev, NULL, &err), 0);
	gw_privchan_init(&p, &ev);
	assert_int_equal(gw_privchan_open(&p, sv[0], true), 0);
	assert_int_equal(gw_addr_parse("10.213.0.2", &sb4), 0);
	assert_int_equal(gw_addr_parse("10.213.0.1", &h4), 0);
	for (int i = 0; i < N; i++) {
		reqs[i].done = full_done_cb;
		assert_int_equal(gw_privchan_send(&p, &reqs[i], GW_PRIV_RUN_DEL, "wd-x1", &sb4,
						  &none, &h4, &none),
				 0);
	}
	/* the parent reads them (in order), and the worker's loop sends the rest as room comes */
	while (got < N) {
		struct gw_priv_run m;
		ssize_t n = recv(sv[1], &m, sizeof(m), MSG_DONTWAIT);

		if (n < 0) {
			assert_int_equal(errno, EAGAIN);
			gw_privchan_event(&p, GW_POLL_OUT);
			continue;
		}
		assert_int_equal(n, sizeof(m));
		assert_int_equal(gw_priv_run_check(&m, (size_t)n), 0);
		assert_int_equal(m.seq, got + 1);
		got++;
	}
	assert_int_equal(recv(sv[1], &(char){0}, 1, MSG_DONTWAIT), -1);
	gw_privchan_free(&p);
	assert_int_equal(full_done, N); /* each told once, at the end (no parent answered) */
	close(sv[1]);
	gw_ev_free(&ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_good),	  cmocka_unit_test(test_pieces_and_pipelining),
	    cmocka_unit_test(test_malformed),	  cmocka_unit_test(test_oversized),
	    cmocka_unit_test(test_mcp),		  cmocka_unit_test(test_learned),
	    cmocka_unit_test(test_fd_share),	  cmocka_unit_test(test_conf),
	    cmocka_unit_test(test_bounds),	  cmocka_unit_test(test_deadline),
	    cmocka_unit_test(test_privchan_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
