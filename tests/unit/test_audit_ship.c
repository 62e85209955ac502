/* test_audit_ship.c - shipping the audit log (audit/ship.c, common/sink.c, audit.ship in
 * gateway.yaml): the sink parser and its positions, RFC 5424 framing over a unix datagram
 * socket and octet-counted TCP on loopback, journald's fields, and what an unreachable sink
 * does: the local line is written anyway, the outage and its end are recorded. */
#include "conf/conf.h"
#include "audit/audit.h"
#include "policy/policy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define BOM "\xef\xbb\xbf"

struct fx {
	char dir[64];
	char log[128];
	char sock[128];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/wd-test-ship-XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	snprintf(f->log, sizeof(f->log), "%s/audit.jsonl", f->dir);
	snprintf(f->sock, sizeof(f->sock), "%s/log.sock", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	unlink(f->log);
	unlink(f->sock);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* ------------------------------------------------------------------ the parser */

static void test_parse(void **state)
{
	static const struct {
		const char *spec;
		enum audit_sink_kind kind;
		const char *back; /* audit_sink_format() */
	} ok[] = {
	    {"unix:/dev/log", AUDIT_SINK_UNIX, "unix:/dev/log"},
	    {"udp:127.0.0.1:514", AUDIT_SINK_UDP, "udp:127.0.0.1:514"},
	    {"tcp:[::1]:6514", AUDIT_SINK_TCP, "tcp:[::1]:6514"},
	    {"tcp:[2001:db8::1]:1", AUDIT_SINK_TCP, "tcp:[2001:db8::1]:1"},
	    {"journald", AUDIT_SINK_JOURNALD, "journald"},
	    {"journald:/run/x.sock", AUDIT_SINK_JOURNALD, "journald:/run/x.sock"},
	};
	static const struct {
		const char *spec;
		size_t off;
	} bad[] = {
	    {"", 0},
	    {"syslog://h", 0},
	    {"unix:dev/log", 5},
	    {"udp:localhost:514", 4},
	    {"udp:127.0.0.1", 13},
	    {"udp:127.0.0.1:0", 14},
	    {"udp:127.0.0.1:65536", 14},
	    {"udp:127.0.0.1:+5", 14},
	    {"tcp:::1:514", 4},
	    {"tcp:[::1:514", 4},
	    {"tcp:[::1]514", 9},
	    {"tcp:[::g]:514", 5},
	    {"journald:", 9},
	    {"journaldx", 0},
	};
	char text[128];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct audit_sink s = {.facility = 3};
		size_t off = 99;
		const char *why = NULL;

		assert_int_equal(audit_sink_parse(ok[i].spec, &s, &off, &why), 0);
		assert_int_equal(s.kind, ok[i].kind);
		assert_int_equal(s.facility, 3); /* kept */
		assert_int_equal(audit_sink_format(&s, text, sizeof(text)), 0);
		assert_string_equal(text, ok[i].back);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct audit_sink s = {0};
		size_t off = 99;
		const char *why = NULL;

		if (audit_sink_parse(bad[i].spec, &s, &off, &why) != -EINVAL)
			fail_msg("accepted: %s", bad[i].spec);
		assert_non_null(why);
		if (off != bad[i].off)
			fail_msg("%s: offset %zu, wanted %zu (%s)", bad[i].spec, off, bad[i].off,
				 why);
	}
	assert_int_equal(audit_sink_facility("authpriv"), 10);
	assert_int_equal(audit_sink_facility("local7"), 23);
	assert_int_equal(audit_sink_facility("kern"), 0);
	assert_int_equal(audit_sink_facility("local8"), -EINVAL);
	assert_string_equal(audit_sink_facility_name(4), "auth");
	assert_null(audit_sink_facility_name(24));
}

/* audit.ship and audit.facility in gateway.yaml: file:line:col of a mistake, and the effective
 * config carries them to the worker (render + parse) */
static void test_gwconf(void **state)
{
	static const char good[] = "version: 1\naudit:\n  path: /x/a.jsonl\n"
				   "  ship: \"tcp:[::1]:6514\"\n  facility: local3\n";
	static const char bad[] = "version: 1\naudit:\n  ship: 'udp:10.0.0.1:99999'\n"
				  "  facility: locl3\n  shipp: x\n";
	struct wd_gwconf c, back;
	struct policy_diags d;
	struct wd_buf b = WD_BUF_INIT;

	(void)state;
	policy_diags_init(&d);
	assert_int_equal(conf_parse(good, strlen(good), "g.yaml", &c, &d), 0);
	assert_int_equal(c.audit_ship.kind, AUDIT_SINK_TCP);
	assert_int_equal(c.audit_ship.port, 6514);
	assert_int_equal(c.audit_ship.facility, 19);
	assert_int_equal(conf_render_yaml(&c, &b), 0);
	policy_diags_free(&d);
	policy_diags_init(&d);
	assert_int_equal(conf_parse(b.data, b.len, "rendered", &back, &d), 0);
	assert_int_equal(back.audit_ship.kind, AUDIT_SINK_TCP);
	assert_int_equal(back.audit_ship.facility, 19);
	assert_memory_equal(back.audit_ship.addr, c.audit_ship.addr, 16);
	assert_string_equal(back.audit_path, "/x/a.jsonl");
	policy_diags_free(&d);
	wd_buf_free(&b);

	policy_diags_init(&d);
	assert_int_not_equal(conf_parse(bad, strlen(bad), "g.yaml", &c, &d), 0);
	assert_true(d.errors >= 3);
	policy_diags_sort(&d);
	/* the port of the ship string: line 3, column 9 ('), + 1, + 13 into the string */
	assert_int_equal(d.v[0].line, 3);
	assert_int_equal(d.v[0].col, 23);
	assert_non_null(strstr(d.v[0].msg, "port from 1 to 65535"));
	assert_int_equal(d.v[1].line, 4);
	assert_int_equal(d.v[1].col, 13);
	assert_non_null(strstr(d.v[1].msg, "syslog facility"));
	assert_int_equal(d.v[2].line, 5);
	assert_non_null(strstr(d.v[2].msg, "shipp"));
	policy_diags_free(&d);

	conf_defaults(&c);
	assert_int_equal(c.audit_ship.kind, AUDIT_SINK_NONE);
	assert_int_equal(c.audit_ship.facility, AUDIT_SINK_FACILITY_DEFAULT);
}

/* ------------------------------------------------------------------ framing */

static int dgram_listener(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* the next datagram, NUL-terminated, within @ms; Return: its length, or -1 */
static ssize_t dgram_within(int fd, char *buf, size_t size, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	ssize_t n;

	if (poll(&p, 1, ms) != 1)
		return -1;
	n = recv(fd, buf, size - 1, 0);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

static ssize_t next_dgram(int fd, char *buf, size_t size)
{
	return dgram_within(fd, buf, size, 2000);
}

static struct audit_event event(const char *action, bool allowed)
{
	return (struct audit_event){
	    .ts = {.tv_sec = 1764547200, .tv_nsec = 123456000}, /* 2025-12-01T00:00:00.123456Z */
	    .run = "r-1",
	    .type = AUDIT_TYPE_NET,
	    .action = action,
	    .resource = "allowed.test",
	    .allowed = allowed,
	    .reason = allowed ? "" : "no rule allows it",
	};
}

/* the local log's lines */
static size_t read_lines(const char *path, char lines[][2048], size_t max)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	assert_non_null(f);
	while (n < max && fgets(lines[n], 2048, f)) {
		lines[n][strcspn(lines[n], "\n")] = '\0';
		n++;
	}
	fclose(f);
	return n;
}

/* the shipped copy is the local line byte for byte; @chained: with the chain's "prev", whose
 * digest is known only when the batch is written */
static void unix_rfc5424(void **state, bool chained)
{
	struct fx *f = *state;
	struct audit_sink s = {.facility = AUDIT_SINK_FACILITY_DEFAULT};
	struct audit_log *log = NULL;
	struct audit_event a = event("net.connect", true), b = event("net.connect", false);
	char host[256] = "", want[4096], got[4096], lines[4][2048];
	uint64_t sent, dropped;
	size_t off;
	const char *why;
	int lfd;

	lfd = dgram_listener(f->sock);
	snprintf(want, sizeof(want), "unix:%s", f->sock);
	assert_int_equal(audit_sink_parse(want, &s, &off, &why), 0);
	assert_int_equal(audit_log_open(f->log, &log, NULL), 0);
	assert_int_equal(audit_log_ship(log, &s, "warden-test", NULL), 0);
	assert_int_equal(audit_log_ship(log, &s, "warden-test", NULL), -EALREADY);
	if (chained)
		audit_log_chain(log);
	assert_int_equal(audit_log_write(log, &a, 0, NULL), 0);
	gethostname(host, sizeof(host));
	assert_int_equal(read_lines(f->log, lines, 4), 1);
	/* <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD BOM MSG: authpriv (10) * 8 + info (6)
	 * for the allowed event, + notice (5) for the denied one; MSG is the local line, whole */
	assert_true(next_dgram(lfd, got, sizeof(got)) > 0);
	snprintf(want, sizeof(want),
		 "<86>1 2025-12-01T00:00:00.123456Z %s warden-test %d net.connect - " BOM "%s",
		 host, (int)getpid(), lines[0]);
	assert_string_equal(got, want);
	assert_int_equal(audit_log_write(log, &b, AUDIT_WRITE_DEFER, NULL), 0);
	if (dgram_within(lfd, got, sizeof(got), 100) >= 0)
		fail_msg("a deferred line was shipped before the file had it: %s", got);
	assert_int_equal(audit_log_flush(log, NULL), 1);
	assert_int_equal(read_lines(f->log, lines, 4), 2);
	assert_true(next_dgram(lfd, got, sizeof(got)) > 0);
	snprintf(want, sizeof(want),
		 "<85>1 2025-12-01T00:00:00.123456Z %s warden-test %d net.connect - " BOM "%s",
		 host, (int)getpid(), lines[1]);
	assert_string_equal(got, want);
	if (chained)
		assert_non_null(strstr(lines[1], ",\"prev\":\""));
	audit_log_ship_stats(log, &sent, &dropped);
	assert_int_equal(sent, 2);
	assert_int_equal(dropped, 0);
	audit_log_close(log);
	close(lfd);
}

static void test_unix_rfc5424(void **state)
{
	unix_rfc5424(state, false);
}

static void test_unix_rfc5424_chained(void **state)
{
	unix_rfc5424(state, true);
}

/* no listener: the local line is written, the copy is counted as not shipped and the outage is
 * recorded in the local log; a listener that appears gets the next events (after the retry
 * second) and the event saying how many were not shipped */
static void test_unreachable(void **state)
{
	struct fx *f = *state;
	struct audit_sink s = {.facility = 4};
	struct audit_log *log = NULL;
	struct audit_event a = event("dns.query", true);
	char spec[160], got[4096], lines[8][2048];
	uint64_t sent, dropped;
	size_t off, n;
	const char *why;
	int lfd;

	snprintf(spec, sizeof(spec), "unix:%s", f->sock);
	assert_int_equal(audit_sink_parse(spec, &s, &off, &why), 0);
	assert_int_equal(audit_log_open(f->log, &log, NULL), 0);
	assert_int_equal(audit_log_ship(log, &s, "warden-test", NULL), 0); /* not an error */
	assert_int_equal(audit_log_write(log, &a, 0, NULL), 0);
	assert_int_equal(audit_log_write(log, &a, 0, NULL), 0);
	audit_log_ship_stats(log, &sent, &dropped);
	assert_int_equal(sent, 0);
	assert_int_equal(dropped, 2);
	n = read_lines(f->log, lines, 8);
	assert_int_equal(n, 3); /* both events, and the outage between them */
	assert_non_null(strstr(lines[0], "\"action\":\"dns.query\""));
	assert_non_null(strstr(lines[1], "\"type\":\"audit\",\"action\":\"audit.ship\""));
	assert_non_null(strstr(lines[1], "failed (No such file or directory)"));
	assert_non_null(strstr(lines[2], "\"action\":\"dns.query\""));

	lfd = dgram_listener(f->sock);
	sleep(1); /* a broken sink is tried again once a second */
	usleep(100000);
	assert_int_equal(audit_log_write(log, &a, 0, NULL), 0);
	assert_true(next_dgram(lfd, got, sizeof(got)) > 0);
	assert_non_null(strstr(got, "\"action\":\"dns.query\""));
	assert_true(strncmp(got, "<38>1 ", 6) == 0);		/* auth (4) * 8 + info */
	assert_int_equal(audit_log_write(log, &a, 0, NULL), 0); /* carries the notice with it */
	assert_true(next_dgram(lfd, got, sizeof(got)) > 0);
	assert_true(strncmp(got, "<36>1 ", 6) == 0); /* warning: the audit trail has a gap */
	assert_non_null(strstr(got, "audit.ship"));
	assert_non_null(strstr(got, "works again: 2 events since"));
	assert_non_null(strstr(got, "\"count\":2"));
	assert_true(next_dgram(lfd, got, sizeof(got)) > 0);
	assert_non_null(strstr(got, "\"action\":\"dns.query\""));
	n = read_lines(f->log, lines, 8);
	assert_int_equal(n, 6);
	assert_non_null(strstr(lines[4], "works again"));
	audit_log_close(log);
	close(lfd);
}

/* TCP on loopback: octet-counted frames ("LEN SP MSG"), and events written while the
 * listener is away are kept and arrive once it is back: none is lost */
static void test_tcp(void **state)
{
	struct fx *f = *state;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	struct audit_sink s = {.facility = 16};
	struct audit_log *log = NULL;
	struct audit_event a = event("net.close", true);
	char spec[64], buf[65536], lines[8][2048];
	size_t got = 0, off;
	const char *why;
	int one = 1, lfd, cfd;
	uint16_t port;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(lfd >= 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &sl), 0);
	port = ntohs(sa.sin_port);
	close(lfd); /* the port is known; nobody listens yet */
	snprintf(spec, sizeof(spec), "tcp:127.0.0.1:%u", port);
	assert_int_equal(audit_sink_parse(spec, &s, &off, &why), 0);
	assert_int_equal(audit_log_open(f->log, &log, NULL), 0);
	assert_int_equal(audit_log_ship(log, &s, "warden-test", NULL), 0);
	assert_int_equal(audit_log_write(log, &a, 0, NULL), 0); /* refused: kept */

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa.sin_port = htons(port);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 4), 0);
	sleep(1);
	usleep(100000);
	assert_int_equal(audit_log_write(log, &a, 0, NULL), 0); /* reconnects, sends both */
	a.allowed = false;
	assert_int_equal(audit_log_write(log, &a, 0, NULL), 0);
	audit_log_close(log); /* gives the frames their last moment */
	cfd = accept(lfd, NULL, NULL);
	assert_true(cfd >= 0);
	for (;;) {
		struct pollfd p = {.fd = cfd, .events = POLLIN};
		ssize_t r;

		if (poll(&p, 1, 2000) != 1)
			break;
		r = recv(cfd, buf + got, sizeof(buf) - 1 - got, 0);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	buf[got] = '\0';
	close(cfd);
	close(lfd);
	/* the local log: the event, the outage, the event, the end of the outage, the event */
	assert_int_equal(read_lines(f->log, lines, 8), 5);
	/* the frames: every event of the local log but the outage's start (which was not for
	 * the sink), in order, each whole */
	size_t pos = 0, frames = 0;
	const size_t want[] = {0, 2, 3, 4};

	while (pos < got) {
		char *sp, *msg;
		unsigned long len = strtoul(buf + pos, &sp, 10);

		assert_true(*sp == ' ');
		msg = sp + 1;
		assert_true((size_t)(msg - buf) + len <= got);
		assert_true(frames < 4);
		assert_true(!strncmp(msg, "<13", 3)); /* local0 (16) * 8 = 128: "<13x>1 " */
		char *json = strstr(msg, BOM);

		assert_non_null(json);
		json += 3;
		assert_int_equal((size_t)(msg + len - json), strlen(lines[want[frames]]));
		assert_memory_equal(json, lines[want[frames]], strlen(lines[want[frames]]));
		frames++;
		pos = (size_t)(msg - buf) + len;
	}
	assert_int_equal(frames, 4);
}

/* a line the file did not take (RLIMIT_FSIZE: -EFBIG) is not shipped either; the control, a
 * line that fits, is */
static void test_not_in_file_not_shipped(void **state)
{
	struct fx *f = *state;
	struct audit_sink s = {.facility = AUDIT_SINK_FACILITY_DEFAULT};
	char spec[160], got[8192];
	size_t off;
	const char *why;
	pid_t pid;
	int lfd, st;

	lfd = dgram_listener(f->sock);
	snprintf(spec, sizeof(spec), "unix:%s", f->sock);
	assert_int_equal(audit_sink_parse(spec, &s, &off, &why), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = {.rlim_cur = 1024, .rlim_max = 1024};
		struct audit_log *log = NULL;
		struct audit_event a = event("net.connect", true);
		char big[2048];

		signal(SIGXFSZ, SIG_IGN);
		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		if (audit_log_open(f->log, &log, NULL) || audit_log_ship(log, &s, "t", NULL) ||
		    setrlimit(RLIMIT_FSIZE, &rl))
			_exit(2);
		if (audit_log_write(log, &a, 0, NULL)) /* fits */
			_exit(3);
		a.resource = big;
		if (audit_log_write(log, &a, 0, NULL) != -EFBIG)
			_exit(4);
		audit_log_close(log);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_true(next_dgram(lfd, got, sizeof(got)) > 0); /* the control */
	assert_non_null(strstr(got, "\"resource\":\"allowed.test\""));
	if (dgram_within(lfd, got, sizeof(got), 200) >= 0)
		fail_msg("shipped a line the file refused: %.80s", got);
	close(lfd);
}

/* journald's native protocol: FIELD=value lines, MESSAGE the JSON line */
static void test_journald(void **state)
{
	struct fx *f = *state;
	struct audit_sink s = {.facility = AUDIT_SINK_FACILITY_DEFAULT};
	struct audit_log *log = NULL;
	struct audit_event a = event("net.connect", false);
	char spec[160], got[4096], lines[2][2048], want[4096];
	size_t off;
	const char *why;
	int lfd;

	a.has = AUDIT_HAS_UID;
	a.uid = 1000;
	lfd = dgram_listener(f->sock);
	snprintf(spec, sizeof(spec), "journald:%s", f->sock);
	assert_int_equal(audit_sink_parse(spec, &s, &off, &why), 0);
	assert_int_equal(audit_log_open(f->log, &log, NULL), 0);
	assert_int_equal(audit_log_ship(log, &s, "warden-test", NULL), 0);
	assert_int_equal(audit_log_write(log, &a, 0, NULL), 0);
	assert_true(next_dgram(lfd, got, sizeof(got)) > 0);
	assert_int_equal(read_lines(f->log, lines, 2), 1);
	snprintf(want, sizeof(want),
		 "MESSAGE=%s\nPRIORITY=5\nSYSLOG_FACILITY=10\nSYSLOG_IDENTIFIER=warden-test\n"
		 "WARDEN_ALLOWED=0\nWARDEN_ACTION=net.connect\nWARDEN_RUN=r-1\nWARDEN_UID=1000\n",
		 lines[0]);
	assert_string_equal(got, want);
	audit_log_close(log);
	close(lfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_gwconf),
	    cmocka_unit_test_setup_teardown(test_unix_rfc5424, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unix_rfc5424_chained, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unreachable, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_tcp, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_journald, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_not_in_file_not_shipped, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
