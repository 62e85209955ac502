/* test_audit.c - unit tests for audit/: codec round trips and escaping, corrupt lines,
 * the writer's safety checks and failures, the reader (skip, tail, follow), concurrency. */
#include "audit/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

struct fixture {
	char dir[64];
	char log[128];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/wd-test-audit-XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	snprintf(f->log, sizeof(f->log), "%s/audit.jsonl", f->dir);
	*state = f;
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

/* A run.start event with every field set, for round trips. */
static const char *const full_argv[] = {"npx", "-y", "some mcp server", ""};

static const struct audit_count full_names[] = {{"a.test", 3}, {"b.test", 0}, {"-", 9}};

static struct audit_event full_event(void)
{
	struct audit_event ev = {
	    .ts = {1795947255, 123456000},
	    .run = "r-0123456789abcdef",
	    .type = AUDIT_TYPE_NET,
	    .action = "net.close",
	    .resource = "api.github.com",
	    .allowed = true,
	    .reason = "allowed by rule 2",
	    .rule = "allow: *.github.com:443",
	    .policy = "/home/u/policy.yaml",
	    .policy_hash = "sha256:00ff",
	    .isolation = "netns+bwrap",
	    .dst = "2001:db8::1",
	    .proto = "tls",
	    .sni = "api.github.com",
	    .host = "api.github.com:443",
	    .qtype = "AAAA",
	    .denial_id = "d-7",
	    .decision = AUDIT_WOULD_DENY,
	    .shadow = true,
	    .command = full_argv,
	    .command_len = 4,
	    .has = AUDIT_HAS_PID | AUDIT_HAS_UID | AUDIT_HAS_PORT | AUDIT_HAS_BYTES_UP |
		   AUDIT_HAS_BYTES_DOWN | AUDIT_HAS_DURATION | AUDIT_HAS_EXIT | AUDIT_HAS_SIGNAL |
		   AUDIT_HAS_DENIALS | AUDIT_HAS_LIMIT | AUDIT_HAS_USAGE |
		   AUDIT_HAS_COUNTS_INCOMPLETE | AUDIT_HAS_COUNT,
	    .ech = true,
	    .count = 12,
	    .names = full_names,
	    .names_len = 3,
	    .pid = 4242,
	    .uid = 4294967295LL,
	    .port = 65535,
	    .bytes_up = 1,
	    .bytes_down = 9007199254740993LL,
	    .duration_ms = 0,
	    .exit = 255,
	    .signal = 9,
	    .denials = 3,
	    .limit = 536870912,
	    .usage = 536870913,
	    .counts_incomplete = true,
	};
	return ev;
}

static void assert_str_eq_or_null(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void assert_events_equal(const struct audit_event *a, const struct audit_event *b)
{
	assert_int_equal(a->ts.tv_sec, b->ts.tv_sec);
	assert_int_equal(a->ts.tv_nsec / 1000, b->ts.tv_nsec / 1000);
	assert_string_equal(a->run, b->run);
	assert_int_equal(a->type, b->type);
	assert_string_equal(a->action, b->action);
	assert_str_eq_or_null(a->resource ? a->resource : "", b->resource);
	assert_int_equal(a->allowed, b->allowed);
	assert_str_eq_or_null(a->reason ? a->reason : "", b->reason);
	assert_str_eq_or_null(a->rule, b->rule);
	assert_str_eq_or_null(a->policy, b->policy);
	assert_str_eq_or_null(a->policy_hash, b->policy_hash);
	assert_str_eq_or_null(a->isolation, b->isolation);
	assert_str_eq_or_null(a->dst, b->dst);
	assert_str_eq_or_null(a->proto, b->proto);
	assert_str_eq_or_null(a->sni, b->sni);
	assert_str_eq_or_null(a->host, b->host);
	assert_str_eq_or_null(a->qtype, b->qtype);
	assert_str_eq_or_null(a->denial_id, b->denial_id);
	assert_str_eq_or_null(a->decision, b->decision);
	assert_int_equal(a->shadow, b->shadow);
	assert_int_equal(a->command_len, b->command_len);
	assert_int_equal(!a->command, !b->command);
	for (size_t i = 0; i < a->command_len; i++) {
		/* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): both non-NULL, asserted */
		assert_string_equal(a->command[i], b->command[i]);
	}
	assert_int_equal(a->has, b->has);
	if (a->has & AUDIT_HAS_PID)
		assert_int_equal(a->pid, b->pid);
	if (a->has & AUDIT_HAS_UID)
		assert_int_equal(a->uid, b->uid);
	if (a->has & AUDIT_HAS_PORT)
		assert_int_equal(a->port, b->port);
	if (a->has & AUDIT_HAS_BYTES_UP)
		assert_int_equal(a->bytes_up, b->bytes_up);
	if (a->has & AUDIT_HAS_BYTES_DOWN)
		assert_int_equal(a->bytes_down, b->bytes_down);
	if (a->has & AUDIT_HAS_DURATION)
		assert_int_equal(a->duration_ms, b->duration_ms);
	if (a->has & AUDIT_HAS_EXIT)
		assert_int_equal(a->exit, b->exit);
	if (a->has & AUDIT_HAS_SIGNAL)
		assert_int_equal(a->signal, b->signal);
	if (a->has & AUDIT_HAS_DENIALS)
		assert_int_equal(a->denials, b->denials);
	if (a->has & AUDIT_HAS_LIMIT)
		assert_int_equal(a->limit, b->limit);
	if (a->has & AUDIT_HAS_USAGE)
		assert_int_equal(a->usage, b->usage);
	if (a->has & AUDIT_HAS_COUNTS_INCOMPLETE)
		assert_int_equal(a->counts_incomplete, b->counts_incomplete);
	if (a->has & AUDIT_HAS_COUNT)
		assert_int_equal(a->count, b->count);
	assert_int_equal(a->ech, b->ech);
	assert_str_eq_or_null(a->mcp, b->mcp);
	assert_int_equal(a->names_len, b->names_len);
	assert_int_equal(!a->names, !b->names);
	for (size_t i = 0; i < a->names_len; i++) {
		assert_string_equal(a->names[i].name, b->names[i].name);
		assert_int_equal(a->names[i].count, b->names[i].count);
	}
}

/* roundtrip() - encode @ev, check the line is one valid JSON line, decode, compare. */
static void roundtrip(const struct audit_event *ev)
{
	struct wd_buf b = WD_BUF_INIT;
	struct audit_event back;
	json_error_t jerr;
	json_t *j;

	assert_int_equal(audit_event_encode(ev, &b, NULL), 0);
	assert_true(b.len > 1);
	assert_int_equal(b.data[b.len - 1], '\n');
	assert_null(memchr(b.data, '\n', b.len - 1));
	for (size_t i = 0; i < b.len;) {
		int l = wd_utf8_seqlen(b.data + i, b.len - i);

		assert_true(l > 0);
		if (i < b.len - 1)
			assert_true((unsigned char)b.data[i] >= 0x20);
		i += (size_t)l;
	}
	j = json_loadb(b.data, b.len, JSON_REJECT_DUPLICATES, &jerr);
	assert_non_null(j);
	assert_true(json_is_object(j));
	json_decref(j);
	assert_int_equal(audit_event_decode(b.data, b.len, &back, NULL), 0);
	assert_events_equal(ev, &back);
	audit_event_clear(&back);
	wd_buf_free(&b);
}

static void test_roundtrip_every_field(void **state)
{
	struct audit_event ev = full_event();

	(void)state;
	roundtrip(&ev);
	for (enum audit_type t = AUDIT_TYPE_RUN; t <= AUDIT_TYPE_LIMIT; t++) {
		ev.type = t;
		ev.allowed = !ev.allowed;
		roundtrip(&ev);
	}
	/* each numeric field alone, at 0 (the flag: false) */
	for (uint32_t bit = 1; bit <= AUDIT_HAS_COUNT; bit <<= 1) {
		struct audit_event one = {
		    .run = "r", .type = AUDIT_TYPE_LIMIT, .action = "limit.x", .has = bit};

		roundtrip(&one);
	}
}

/* run.exit written for a launcher that died (issue 27): "crashed" is a JSON boolean, read back */
static void test_crashed(void **state)
{
	struct audit_event ev = {.ts = {1795947255, 5000},
				 .run = "r1",
				 .type = AUDIT_TYPE_RUN,
				 .action = "run.exit",
				 .allowed = false,
				 .has = AUDIT_HAS_PID | AUDIT_HAS_CRASHED,
				 .pid = 42,
				 .crashed = true};
	struct audit_event back;
	struct wd_buf b = WD_BUF_INIT;
	static const char bad[] = "{\"ts\":\"2026-11-29T10:14:15.000005Z\",\"run\":\"r\","
				  "\"type\":\"run\",\"action\":\"run.exit\",\"allowed\":false,"
				  "\"crashed\":\"yes\"}\n";

	(void)state;
	assert_int_equal(audit_event_encode(&ev, &b, NULL), 0);
	assert_non_null(strstr(b.data, ",\"crashed\":true"));
	assert_int_equal(audit_event_decode(b.data, b.len, &back, NULL), 0);
	assert_true(back.has & AUDIT_HAS_CRASHED);
	assert_true(back.crashed);
	assert_int_equal(back.pid, 42);
	audit_event_clear(&back);
	/* absent: no bit, false */
	ev.has = AUDIT_HAS_PID;
	wd_buf_reset(&b);
	assert_int_equal(audit_event_encode(&ev, &b, NULL), 0);
	assert_null(strstr(b.data, "crashed"));
	assert_int_equal(audit_event_decode(b.data, b.len, &back, NULL), 0);
	assert_false(back.has & AUDIT_HAS_CRASHED);
	audit_event_clear(&back);
	assert_int_equal(audit_event_decode(bad, sizeof(bad) - 1, &back, NULL), -EBADMSG);
	wd_buf_free(&b);
}

/* run.exit of a run whose gateway died: the flag is a JSON boolean after "usage" */
static void test_counts_incomplete(void **state)
{
	struct audit_event ev = {.ts = {1795947255, 5000},
				 .run = "r1",
				 .type = AUDIT_TYPE_RUN,
				 .action = "run.exit",
				 .allowed = true,
				 .has = AUDIT_HAS_EXIT | AUDIT_HAS_COUNTS_INCOMPLETE,
				 .counts_incomplete = true};
	struct audit_event back;
	struct wd_buf b = WD_BUF_INIT;
	static const char bad[] = "{\"ts\":\"2026-11-29T10:14:15.000005Z\",\"run\":\"r\","
				  "\"type\":\"run\",\"action\":\"run.exit\",\"allowed\":true,"
				  "\"counts_incomplete\":1}\n";

	(void)state;
	assert_int_equal(audit_event_encode(&ev, &b, NULL), 0);
	assert_string_equal(b.data, "{\"ts\":\"2026-11-29T10:14:15.000005Z\",\"run\":\"r1\","
				    "\"type\":\"run\",\"action\":\"run.exit\",\"allowed\":true,"
				    "\"resource\":\"\",\"reason\":\"\",\"exit\":0,"
				    "\"counts_incomplete\":true}\n");
	assert_int_equal(audit_event_decode(b.data, b.len, &back, NULL), 0);
	assert_true(back.has & AUDIT_HAS_COUNTS_INCOMPLETE);
	assert_true(back.counts_incomplete);
	audit_event_clear(&back);
	assert_int_equal(audit_event_decode(bad, sizeof(bad) - 1, &back, NULL), -EBADMSG);
	wd_buf_free(&b);
}

/* `mcp` (issue 15): JSON text written as it is, after denial_id; decoded back compact; what
 * is no object on one line is refused by the encoder, and a non-object by the decoder */
static void test_mcp_field(void **state)
{
	static const char mcp[] = "{\"tool\":\"fetch_url\",\"call_id\":7,\"in_flight\":1,"
				  "\"calls\":[{\"tool\":\"fetch_url\",\"call_id\":7,"
				  "\"args_sha256\":\"ab\"}]}";
	struct audit_event ev = {.ts = {1795947255, 5000},
				 .run = "r1",
				 .type = AUDIT_TYPE_NET,
				 .action = "net.connect",
				 .allowed = true,
				 .resource = "a.test",
				 .denial_id = "d-1",
				 .mcp = mcp};
	static const char *const bad[] = {"[1]", "{\"a\":\n1}", "", "{", "x"};
	static const char bad_line[] =
	    "{\"ts\":\"2026-11-29T10:14:15.000005Z\",\"run\":\"r\","
	    "\"type\":\"net\",\"action\":\"net.connect\",\"allowed\":true,"
	    "\"mcp\":[1]}\n";
	struct wd_buf b = WD_BUF_INIT;
	struct audit_event back;

	(void)state;
	assert_int_equal(audit_event_encode(&ev, &b, NULL), 0);
	assert_non_null(strstr(b.data, "\"denial_id\":\"d-1\",\"mcp\":{\"tool\":\"fetch_url\""));
	roundtrip(&ev);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ev.mcp = bad[i];
		assert_int_equal(audit_event_encode(&ev, &b, NULL), -EINVAL);
	}
	assert_int_equal(audit_event_decode(bad_line, sizeof(bad_line) - 1, &back, NULL), -EBADMSG);
	wd_buf_free(&b);
}

static void test_roundtrip_minimal(void **state)
{
	struct audit_event ev = {.run = "", .type = AUDIT_TYPE_RUN, .action = "run.exit"};
	struct wd_buf b = WD_BUF_INIT;
	struct audit_event back;

	(void)state;
	roundtrip(&ev);
	assert_int_equal(audit_event_encode(&ev, &b, NULL), 0);
	assert_int_equal(audit_event_decode(b.data, b.len, &back, NULL), 0);
	assert_int_equal(back.has, 0);
	assert_null(back.command);
	assert_null(back.sni);
	assert_string_equal(back.resource, "");
	assert_string_equal(back.reason, "");
	audit_event_clear(&back);
	wd_buf_free(&b);
}

/* the summary fields: "ech" only when true, "count", "names" in order, at their place */
static void test_golden_summary_fields(void **state)
{
	static const struct audit_count names[] = {{"f1.blocked.test", 5}, {"f0.blocked.test", 2}};
	static const struct audit_count dup[] = {{"a.test", 1}, {"a.test", 2}};
	static const struct audit_count bad[] = {{"a\xff", 1}};
	struct audit_event ev = {
	    .ts = {1795947255, 5000},
	    .run = "r1",
	    .type = AUDIT_TYPE_DNS,
	    .action = "dns.query",
	    .resource = "",
	    .reason = "rate limit",
	    .sni = "x.test",
	    .ech = true,
	    .has = AUDIT_HAS_COUNT | AUDIT_HAS_DENIALS,
	    .denials = 1,
	    .count = 7,
	    .names = names,
	    .names_len = 2,
	};
	struct wd_buf b = WD_BUF_INIT;

	(void)state;
	assert_int_equal(audit_event_encode(&ev, &b, NULL), 0);
	assert_string_equal(
	    b.data, "{\"ts\":\"2026-11-29T10:14:15.000005Z\",\"run\":\"r1\",\"type\":\"dns\","
		    "\"action\":\"dns.query\",\"allowed\":false,\"resource\":\"\",\"reason\":"
		    "\"rate limit\",\"sni\":\"x.test\",\"ech\":true,\"denials\":1,\"count\":7,"
		    "\"names\":{\"f1.blocked.test\":5,\"f0.blocked.test\":2}}\n");
	roundtrip(&ev);
	ev.ech = false;
	wd_buf_reset(&b);
	assert_int_equal(audit_event_encode(&ev, &b, NULL), 0);
	assert_null(strstr(b.data, "ech"));
	/* names must be unique, valid UTF-8, non-empty: they are object keys without "raw" */
	ev.names = dup;
	assert_int_equal(audit_event_encode(&ev, &b, NULL), -EINVAL);
	ev.names = bad;
	ev.names_len = 1;
	assert_int_equal(audit_event_encode(&ev, &b, NULL), -EINVAL);
	/* a decoded "names" that is not an object of counts is corrupt */
	{
		static const char *const lines[] = {
		    "{\"ts\":\"2026-11-29T10:14:15Z\",\"run\":\"r\",\"type\":\"dns\",\"action\":"
		    "\"d.q\","
		    "\"allowed\":false,\"names\":[1]}",
		    "{\"ts\":\"2026-11-29T10:14:15Z\",\"run\":\"r\",\"type\":\"dns\",\"action\":"
		    "\"d.q\","
		    "\"allowed\":false,\"names\":{\"a\":-1}}",
		    "{\"ts\":\"2026-11-29T10:14:15Z\",\"run\":\"r\",\"type\":\"dns\",\"action\":"
		    "\"d.q\","
		    "\"allowed\":false,\"ech\":1}",
		};
		struct audit_event back;

		for (size_t i = 0; i < WD_ARRAY_SIZE(lines); i++)
			assert_int_equal(
			    audit_event_decode(lines[i], strlen(lines[i]), &back, NULL), -EBADMSG);
	}
	wd_buf_free(&b);
}

static void test_golden_key_order(void **state)
{
	static const char *const argv[] = {"curl", "https://x.test/"};
	struct audit_event ev = {
	    .ts = {1795947255, 5000},
	    .run = "r1",
	    .type = AUDIT_TYPE_RUN,
	    .action = "run.start",
	    .resource = "curl",
	    .allowed = true,
	    .reason = "",
	    .policy = "p.yaml",
	    .command = argv,
	    .command_len = 2,
	    .has = AUDIT_HAS_PID | AUDIT_HAS_EXIT,
	    .pid = 7,
	    .exit = 0,
	    .sni = "x.test",
	};
	struct wd_buf b = WD_BUF_INIT;

	(void)state;
	assert_int_equal(audit_event_encode(&ev, &b, NULL), 0);
	assert_string_equal(
	    b.data,
	    "{\"ts\":\"2026-11-29T10:14:15.000005Z\",\"run\":\"r1\",\"type\":\"run\","
	    "\"action\":\"run.start\",\"allowed\":true,\"resource\":\"curl\",\"reason\":\"\","
	    "\"policy\":\"p.yaml\",\"command\":[\"curl\",\"https://x.test/\"],\"pid\":7,"
	    "\"sni\":\"x.test\",\"exit\":0}\n");
	wd_buf_free(&b);
}

/* a shadow run's would-be denial (issue 31 item 6): allowed, with the denial's reason, id and
 * "decision", and "shadow" last; both read back */
static void test_golden_would_deny(void **state)
{
	struct audit_event ev = {
	    .ts = {1795947255, 5000},
	    .run = "r1",
	    .type = AUDIT_TYPE_NET,
	    .action = "net.connect",
	    .resource = "other.test",
	    .allowed = true,
	    .reason = "other.test:443 is not allowed by policy p.yaml (no network.allow rule "
		      "matches)",
	    .denial_id = "d-1",
	    .decision = AUDIT_WOULD_DENY,
	    .has = AUDIT_HAS_PORT,
	    .port = 443,
	    .shadow = true,
	};
	struct wd_buf b = WD_BUF_INIT;

	(void)state;
	assert_int_equal(audit_event_encode(&ev, &b, NULL), 0);
	assert_string_equal(
	    b.data,
	    "{\"ts\":\"2026-11-29T10:14:15.000005Z\",\"run\":\"r1\",\"type\":\"net\","
	    "\"action\":\"net.connect\",\"allowed\":true,\"resource\":\"other.test\","
	    "\"reason\":\"other.test:443 is not allowed by policy p.yaml (no network.allow rule "
	    "matches)\",\"port\":443,\"denial_id\":\"d-1\",\"decision\":\"would_deny\","
	    "\"shadow\":true}\n");
	wd_buf_free(&b);
	roundtrip(&ev);
}

/* The hand encoder writes what jansson's json_dumpb(JSON_COMPACT) wrote: these
 * lines were produced by the jansson encoder it replaced. */
static void test_golden_bytes(void **state)
{
	static const char ctl[] = "\x01\x02\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x1b\x1f \"\\/\x7f end";
	const char *cmd[] = {"ls",
			     "\xff\xfe",
			     "a\"b\\c\n",
			     "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
			     "\xed\xa0\x80 surrogate",
			     "\xc0\xaf overlong"};
	struct audit_event e1 = {
	    .ts = {1764410400, 123456789},
	    .run = "r-1",
	    .type = AUDIT_TYPE_RUN,
	    .action = "run.start",
	    .resource = ctl,
	    .allowed = true,
	    .reason = "why \xe2\x9c\x93",
	    .rule = "rule",
	    .policy = "/p\xff.yaml",
	    .policy_hash = "sha256:00",
	    .isolation = "netns+bwrap",
	    .command = cmd,
	    .command_len = 6,
	    .has = 0x7ff,
	    .pid = 2147483647,
	    .uid = 4294967295LL,
	    .port = 65535,
	    .dst = "10.0.0.1",
	    .proto = "tls",
	    .sni = "s\x80ni",
	    .host = "h",
	    .qtype = "A",
	    .bytes_up = 9223372036854775807LL,
	    .bytes_down = 0,
	    .duration_ms = 12,
	    .exit = 255,
	    .signal = 127,
	    .denials = 3,
	    .limit = 1,
	    .usage = 2,
	    .denial_id = "dn-1",
	};
	struct audit_event e2 = {
	    .ts = {0, 0}, .run = "", .type = AUDIT_TYPE_DNS, .action = "dns.query"};
	struct audit_event e3 = {.ts = {4102444799, 999999999},
				 .run = "\xff",
				 .type = AUDIT_TYPE_OTHER,
				 .type_name = "fancy\x01",
				 .action = "x.\xfey",
				 .resource = "\xe2\x82",
				 .reason = "",
				 .command = cmd,
				 .command_len = 0};
	struct audit_event e4 = {.ts = {86400, 5},
				 .run = "r",
				 .type = AUDIT_TYPE_NET,
				 .action = "net.close",
				 .has = AUDIT_HAS_PORT | AUDIT_HAS_BYTES_DOWN,
				 .port = 0,
				 .bytes_down = 1234567890123LL,
				 .allowed = false};
	static const char *const want[] = {
	    "{\"ts\":\"2025-11-29T10:00:00.123456Z\",\"run\":\"r-1\",\"type\":\"run\",\"action\":"
	    "\"run.start\",\"allowed\":true,\"resource\":"
	    "\"\\u0001\\u0002\\u0007\\b\\t\\n\\u000B\\f\\r\\u000E\\u001B\\u001F \\\"\\\\/\x7f"
	    " end\",\"reason\":\"why \xe2"
	    "\x9c"
	    "\x93"
	    "\",\"rule\":\"rule\",\"policy\":\"/p\xef"
	    "\xbf"
	    "\xbd"
	    ".yaml\",\"policy_hash\":\"sha256:00\",\"isolation\":\"netns+bwrap\",\"command\":["
	    "\"ls\",\"\xef"
	    "\xbf"
	    "\xbd"
	    "\xef"
	    "\xbf"
	    "\xbd"
	    "\",\"a\\\"b\\\\c\\n\",\"\xc3"
	    "\xa9"
	    "t\xc3"
	    "\xa9"
	    " \xe2"
	    "\x82"
	    "\xac"
	    " \xf0"
	    "\x9f"
	    "\x98"
	    "\x80"
	    "\",\"\xef"
	    "\xbf"
	    "\xbd"
	    "\xef"
	    "\xbf"
	    "\xbd"
	    "\xef"
	    "\xbf"
	    "\xbd"
	    " surrogate\",\"\xef"
	    "\xbf"
	    "\xbd"
	    "\xef"
	    "\xbf"
	    "\xbd"
	    " overlong\"],\"pid\":2147483647,\"uid\":4294967295,\"dst\":\"10.0.0.1\",\"port\":"
	    "65535,\"proto\":\"tls\",\"sni\":\"s\xef"
	    "\xbf"
	    "\xbd"
	    "ni\",\"host\":\"h\",\"qtype\":\"A\",\"bytes_up\":9223372036854775807,\"bytes_down\":0,"
	    "\"duration_ms\":12,\"exit\":255,\"signal\":127,\"denials\":3,\"limit\":1,\"usage\":2,"
	    "\"denial_id\":\"dn-1\",\"raw\":{\"policy\":\"2f70ff2e79616d6c\",\"command[1]\":"
	    "\"fffe\",\"command[4]\":\"eda08020737572726f67617465\",\"command[5]\":"
	    "\"c0af206f7665726c6f6e67\",\"sni\":\"73806e69\"}}\n",
	    "{\"ts\":\"1970-01-01T00:00:00.000000Z\",\"run\":\"\",\"type\":\"dns\",\"action\":"
	    "\"dns.query\",\"allowed\":false,\"resource\":\"\",\"reason\":\"\"}\n",
	    "{\"ts\":\"2099-12-31T23:59:59.999999Z\",\"run\":\"\xef"
	    "\xbf"
	    "\xbd"
	    "\",\"type\":\"fancy\\u0001\",\"action\":\"x.\xef"
	    "\xbf"
	    "\xbd"
	    "y\",\"allowed\":false,\"resource\":\"\xef"
	    "\xbf"
	    "\xbd"
	    "\xef"
	    "\xbf"
	    "\xbd"
	    "\",\"reason\":\"\",\"command\":[],\"raw\":{\"run\":\"ff\",\"action\":\"782efe79\","
	    "\"resource\":\"e282\"}}\n",
	    "{\"ts\":\"1970-01-02T00:00:00.000000Z\",\"run\":\"r\",\"type\":\"net\",\"action\":"
	    "\"net.close\",\"allowed\":false,\"resource\":\"\",\"reason\":\"\",\"port\":0,\"bytes_"
	    "down\":1234567890123}\n",
	};
	const struct audit_event *evs[] = {&e1, &e2, &e3, &e4};

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		struct wd_buf b = WD_BUF_INIT;
		struct audit_event back;

		assert_int_equal(audit_event_encode(evs[i], &b, NULL), 0);
		assert_string_equal(b.data, want[i]);
		assert_int_equal(audit_event_decode(b.data, b.len, &back, NULL), 0);
		assert_string_equal(back.run, evs[i]->run);
		assert_string_equal(back.resource, evs[i]->resource ? evs[i]->resource : "");
		audit_event_clear(&back);
		wd_buf_free(&b);
	}
}

/* Timestamps are formatted without gmtime_r(): calendar edges. */
static void test_timestamps(void **state)
{
	static const struct {
		time_t sec;
		long nsec;
		const char *want;
	} cases[] = {
	    {0, 0, "1970-01-01T00:00:00.000000Z"},
	    {-1, 999999999, "1969-12-31T23:59:59.999999Z"},
	    {951782400, 1000, "2000-02-29T00:00:00.000001Z"},
	    {1709164800, 0, "2024-02-29T00:00:00.000000Z"},
	    {-2203891200, 0, "1900-03-01T00:00:00.000000Z"},
	    {4107542400, 0, "2100-03-01T00:00:00.000000Z"},
	    {-62167219200, 0, "0000-01-01T00:00:00.000000Z"},
	    {253402300799, 999999999, "9999-12-31T23:59:59.999999Z"},
	};
	struct audit_event ev = {.run = "r", .type = AUDIT_TYPE_RUN, .action = "run.x"};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct wd_buf b = WD_BUF_INIT;
		struct audit_event back;

		ev.ts.tv_sec = cases[i].sec;
		ev.ts.tv_nsec = cases[i].nsec;
		assert_int_equal(audit_event_encode(&ev, &b, NULL), 0);
		assert_memory_equal(b.data, "{\"ts\":\"", 7);
		assert_memory_equal(b.data + 7, cases[i].want, 27);
		assert_int_equal(audit_event_decode(b.data, b.len, &back, NULL), 0);
		assert_int_equal(back.ts.tv_sec, cases[i].sec);
		assert_int_equal(back.ts.tv_nsec, cases[i].nsec / 1000 * 1000);
		audit_event_clear(&back);
		wd_buf_free(&b);
	}
	/* years the decoder could not read back are refused */
	{
		struct wd_buf b = WD_BUF_INIT;

		ev.ts.tv_sec = 253402300800;
		assert_int_equal(audit_event_encode(&ev, &b, NULL), -EINVAL);
		ev.ts.tv_sec = -62167219201;
		assert_int_equal(audit_event_encode(&ev, &b, NULL), -EINVAL);
		assert_true(b.len == 0);
		wd_buf_free(&b);
	}
}

static void test_nasty_strings(void **state)
{
	static const char *const nasty[] = {
	    "quote\" backslash\\ slash/",
	    "\x01\x02\x1b[31mred\x1b[0m\x7f",
	    "new\nline\r\ttab",
	    "\"},{\"allowed\":true,\"x\":\"",
	    /* NOLINTNEXTLINE(misc-misleading-bidirectional): the encoder must escape it */
	    "\xe2\x80\xa8 line sep \xe2\x80\xa9, bidi \xe2\x80\xae, emoji \xf0\x9f\x98\x80",
	    "\xff\xfe raw bytes",
	    "overlong \xc0\xaf slash",
	    "torn \xe2\x82",
	    "surrogate \xed\xa0\x80 half",
	    "too big \xf4\x90\x80\x80",
	    "\x80",
	    "mixed caf\xc3\xa9 \xe9t\xe9",
	    "",
	};
	struct audit_event ev = full_event();

	(void)state;
	for (size_t i = 0; i < sizeof(nasty) / sizeof(nasty[0]); i++) {
		const char *argv[] = {"sh", nasty[i], "-c", nasty[i]};

		ev.resource = nasty[i];
		ev.reason = nasty[i];
		ev.host = nasty[i];
		ev.run = nasty[i];
		ev.command = argv;
		ev.command_len = 4;
		roundtrip(&ev);
	}
}

static void test_invalid_utf8_is_replaced_and_kept(void **state)
{
	struct audit_event ev = {.run = "r",
				 .type = AUDIT_TYPE_DNS,
				 .action = "dns.query",
				 .resource = "a\xff"
					     "b.test"};
	struct wd_buf b = WD_BUF_INIT;

	(void)state;
	assert_int_equal(audit_event_encode(&ev, &b, NULL), 0);
	/* readable with U+FFFD, exact bytes under raw */
	assert_non_null(strstr(b.data, "\"resource\":\"a\xef\xbf\xbd"
				       "b.test\""));
	assert_non_null(strstr(b.data, "\"raw\":{\"resource\":\"61ff622e74657374\"}"));
	wd_buf_free(&b);
}

static void test_decode_corrupt(void **state)
{
	static const char *const bad[] = {
	    "",
	    "garbage",
	    "[]",
	    "\"string\"",
	    "{}",
	    "{\"ts\":\"2026-11-29T10:00:00Z\",\"run\":\"r\",\"type\":\"run\",\"action\":\"run."
	    "start\"}",
	    "{\"ts\":\"2026-11-29T10:00:00Z\",\"run\":\"r\",\"type\":\"run\",\"action\":\"a\","
	    "\"allowed\":1}",
	    "{\"ts\":\"yesterday\",\"run\":\"r\",\"type\":\"run\",\"action\":\"a\",\"allowed\":"
	    "true}",
	    "{\"ts\":\"2026-13-29T10:00:00Z\",\"run\":\"r\",\"type\":\"run\",\"action\":\"a\","
	    "\"allowed\":true}",
	    "{\"ts\":\"2026-11-29T10:00:00\",\"run\":\"r\",\"type\":\"run\",\"action\":\"a\","
	    "\"allowed\":true}",
	    "{\"ts\":\"2026-11-29T10:00:00Z\",\"run\":5,\"type\":\"run\",\"action\":\"a\","
	    "\"allowed\":true}",
	    "{\"ts\":\"2026-11-29T10:00:00Z\",\"run\":\"r\",\"type\":\"run\",\"action\":\"a\","
	    "\"allowed\":true,\"allowed\":false}",
	    "{\"ts\":\"2026-11-29T10:00:00Z\",\"run\":\"r\",\"type\":\"net\",\"action\":\"a\","
	    "\"allowed\":true,\"port\":65536}",
	    "{\"ts\":\"2026-11-29T10:00:00Z\",\"run\":\"r\",\"type\":\"net\",\"action\":\"a\","
	    "\"allowed\":true,\"port\":-1}",
	    "{\"ts\":\"2026-11-29T10:00:00Z\",\"run\":\"r\",\"type\":\"net\",\"action\":\"a\","
	    "\"allowed\":true,\"port\":4.5}",
	    "{\"ts\":\"2026-11-29T10:00:00Z\",\"run\":\"r\",\"type\":\"run\",\"action\":\"a\","
	    "\"allowed\":true,\"command\":\"ls\"}",
	    "{\"ts\":\"2026-11-29T10:00:00Z\",\"run\":\"r\",\"type\":\"run\",\"action\":\"a\","
	    "\"allowed\":true,\"command\":[1]}",
	    "{\"ts\":\"2026-11-29T10:00:00Z\",\"run\":\"r\",\"type\":\"run\",\"action\":\"a\","
	    "\"allowed\":true,\"raw\":{\"run\":\"zz\"}}",
	    "{\"ts\":\"2026-11-29T10:00:00Z\",\"run\":\"r\",\"type\":\"run\",\"action\":\"a\","
	    "\"allowed\":true,\"raw\":{\"run\":\"6100\"}}",
	    "{\"ts\":\"2026-11-29T10:00:00Z\",\"run\":\"r\",\"type\":\"run\",\"action\":\"a\","
	    "\"allowed\":true,\"raw\":[]}",
	    "{\"ts\":\"2026-11-29T10:00:00Z\",\"run\":\"r\\u0000x\",\"type\":\"run\",\"action\":"
	    "\"a\",\"allowed\":true}",
	    "{\"ts\":\"2026-11-29T10:00:00Z\",\"run\":\"r\",\"type\":\"run\",\"action\":\"a\","
	    "\"allowed\":true}\n{}",
	    "{\"ts\":\"2026-11-29T10:00:00Z\",\"run\":\"r\xff\",\"type\":\"run\",\"action\":\"a\","
	    "\"allowed\":true}",
	};
	struct audit_event ev = full_event(), out;
	struct wd_buf b = WD_BUF_INIT;
	struct wd_err err;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		wd_err_clear(&err);
		assert_int_equal(audit_event_decode(bad[i], strlen(bad[i]), &out, &err), -EBADMSG);
		assert_true(err.msg[0] != '\0');
	}
	/* torn: no proper prefix of a line is an event */
	assert_int_equal(audit_event_encode(&ev, &b, NULL), 0);
	for (size_t n = 0; n < b.len - 1; n++)
		assert_int_equal(audit_event_decode(b.data, n, &out, NULL), -EBADMSG);
	wd_buf_free(&b);
}

static void test_decode_tolerant(void **state)
{
	static const char newer[] =
	    "{\"ts\":\"2026-11-29T11:00:00.5+01:00\",\"run\":\"r\",\"type\":\"udp\","
	    "\"action\":\"udp.send\",\"allowed\":false,\"future\":{\"a\":[1,2]},\"port\":53,"
	    "\"sni\":null,\"raw\":{\"unknown\":\"ff\"},\"zzz\":1.5}\r\n";
	struct audit_event ev;

	(void)state;
	assert_int_equal(audit_event_decode(newer, strlen(newer), &ev, NULL), 0);
	assert_int_equal(ev.type, AUDIT_TYPE_OTHER);
	assert_string_equal(audit_event_type(&ev), "udp");
	assert_int_equal(ev.ts.tv_sec, 1795946400);
	assert_int_equal(ev.ts.tv_nsec, 500000000);
	assert_string_equal(ev.resource, "");
	assert_string_equal(ev.reason, "");
	assert_null(ev.sni);
	assert_int_equal(ev.has, AUDIT_HAS_PORT);
	assert_int_equal(ev.port, 53);
	assert_false(ev.allowed);
	/* an unknown type survives a re-encode */
	{
		struct wd_buf b = WD_BUF_INIT;

		assert_int_equal(audit_event_encode(&ev, &b, NULL), 0);
		assert_non_null(strstr(b.data, "\"type\":\"udp\""));
		wd_buf_free(&b);
	}
	audit_event_clear(&ev);
	audit_event_clear(NULL);
}

static void test_encode_errors(void **state)
{
	struct audit_event ev = {.run = "r", .type = AUDIT_TYPE_RUN, .action = "run.start"};
	struct wd_buf b = WD_BUF_INIT;
	struct wd_err err;
	char *big;

	(void)state;
	ev.run = NULL;
	assert_int_equal(audit_event_encode(&ev, &b, &err), -EINVAL);
	ev.run = "r";
	ev.action = NULL;
	assert_int_equal(audit_event_encode(&ev, &b, &err), -EINVAL);
	ev.action = "x";
	ev.type = AUDIT_TYPE_OTHER;
	assert_int_equal(audit_event_encode(&ev, &b, &err), -EINVAL);
	ev.type = (enum audit_type)99;
	assert_int_equal(audit_event_encode(&ev, &b, &err), -EINVAL);
	ev.type = AUDIT_TYPE_NET;
	ev.has = AUDIT_HAS_PORT;
	ev.port = 70000;
	assert_int_equal(audit_event_encode(&ev, &b, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "port"));
	ev.port = -1;
	assert_int_equal(audit_event_encode(&ev, &b, &err), -EINVAL);
	ev.has = 0;
	big = malloc(AUDIT_LINE_MAX + 1);
	assert_non_null(big);
	memset(big, 'a', AUDIT_LINE_MAX);
	big[AUDIT_LINE_MAX] = '\0';
	ev.resource = big;
	assert_int_equal(audit_event_encode(&ev, &b, &err), -E2BIG);
	assert_int_equal(b.len, 0);
	free(big);
	wd_buf_free(&b);
}

static void write_file(const char *path, const char *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(wd_write_all(fd, data, len), 0);
	close(fd);
	assert_int_equal(chmod(path, mode), 0);
}

static struct audit_event seq_event(char *buf, size_t len, int writer, int seq)
{
	struct audit_event ev = {.run = "r-seq",
				 .type = AUDIT_TYPE_NET,
				 .action = "net.connect",
				 .allowed = seq % 2,
				 .reason = "test"};

	snprintf(buf, len, "w%d-%d", writer, seq);
	ev.resource = buf;
	ev.has = AUDIT_HAS_PID | AUDIT_HAS_PORT;
	ev.pid = writer;
	ev.port = seq;
	return ev;
}

static void test_reader_skips_corrupt(void **state)
{
	struct fixture *f = *state;
	struct wd_buf b = WD_BUF_INIT;
	struct audit_reader *r;
	struct audit_event ev;
	const char *line;
	char name[32];
	size_t len;
	int got = 0;

	for (int i = 0; i < 3; i++) {
		struct audit_event e = seq_event(name, sizeof(name), 0, i);

		e.ts.tv_sec = 1;
		assert_int_equal(audit_event_encode(&e, &b, NULL), 0);
		if (i == 0) {
			wd_buf_puts(&b, "{\"ts\":\"2026-11-29T10:00:00Z\",\"ru\n"); /* torn */
			wd_buf_puts(&b, "\n   \n");				    /* blank */
			wd_buf_append(&b, "\x00\x00 not json\n", 12);
		}
		if (i == 1)
			wd_buf_puts(&b, "{\"almost\":true}\n");
	}
	b.len--; /* the last line loses its newline: still read without follow */
	write_file(f->log, b.data, b.len, 0600);
	assert_int_equal(audit_reader_open(f->log, 0, &r, NULL), 0);
	assert_null(audit_reader_line(r, &len));
	while (audit_reader_next(r, &ev) == 1) {
		assert_int_equal(ev.port, got);
		line = audit_reader_line(r, &len);
		assert_non_null(line);
		assert_int_equal(line[0], '{');
		assert_int_equal(line[len - 1], '}');
		audit_event_clear(&ev);
		got++;
	}
	assert_int_equal(got, 3);
	assert_int_equal(audit_reader_skipped(r), 3);
	assert_int_equal(audit_reader_next(r, &ev), 0);
	audit_reader_close(r);
	wd_buf_free(&b);
}

static void test_reader_overlong_line(void **state)
{
	struct fixture *f = *state;
	struct wd_buf b = WD_BUF_INIT;
	struct audit_event ev = {
	    .run = "r", .type = AUDIT_TYPE_RUN, .action = "run.exit", .ts = {1, 0}};
	struct audit_reader *r;
	size_t n = 3 * AUDIT_LINE_MAX;

	assert_int_equal(wd_buf_reserve(&b, n), 0);
	memset(b.data, 'x', n);
	b.len = n;
	wd_buf_puts(&b, "\n");
	assert_int_equal(audit_event_encode(&ev, &b, NULL), 0);
	write_file(f->log, b.data, b.len, 0600);
	assert_int_equal(audit_reader_open(f->log, 0, &r, NULL), 0);
	assert_int_equal(audit_reader_next(r, &ev), 1);
	assert_string_equal(ev.action, "run.exit");
	audit_event_clear(&ev);
	assert_int_equal(audit_reader_next(r, &ev), 0);
	assert_int_equal(audit_reader_skipped(r), 1);
	audit_reader_close(r);
	wd_buf_free(&b);
}

static void test_reader_tail_100k(void **state)
{
	struct fixture *f = *state;
	struct wd_buf b = WD_BUF_INIT;
	struct audit_reader *r;
	struct audit_event ev;
	char name[32];
	int n = 100000, got = 0;

	for (int i = 0; i < n; i++) {
		struct audit_event e = seq_event(name, sizeof(name), 0, i % 65536);

		e.ts.tv_sec = 1795947255;
		e.has |= AUDIT_HAS_DENIALS;
		e.denials = i;
		assert_int_equal(audit_event_encode(&e, &b, NULL), 0);
	}
	write_file(f->log, b.data, b.len, 0600);
	wd_buf_free(&b);
	assert_int_equal(audit_reader_open(f->log, 0, &r, NULL), 0);
	assert_int_equal(audit_reader_tail(r, 5), 0);
	while (audit_reader_next(r, &ev) == 1) {
		assert_int_equal(ev.denials, n - 5 + got);
		audit_event_clear(&ev);
		got++;
	}
	assert_int_equal(got, 5);
	assert_int_equal(audit_reader_tail(r, 0), 0);
	assert_int_equal(audit_reader_next(r, &ev), 0);
	/* more than there are: everything, then a full read is fast enough to count */
	assert_int_equal(audit_reader_tail(r, 1000000), 0);
	for (got = 0; audit_reader_next(r, &ev) == 1; got++)
		audit_event_clear(&ev);
	assert_int_equal(got, n);
	assert_int_equal(audit_reader_skipped(r), 0);
	audit_reader_close(r);
}

static void test_reader_missing(void **state)
{
	struct fixture *f = *state;
	struct audit_reader *r;
	struct wd_err err;

	assert_int_equal(audit_reader_open(f->log, 0, &r, &err), -ENOENT);
	assert_int_equal(mkfifo(f->log, 0600), 0);
	assert_int_equal(audit_reader_open(f->log, 0, &r, &err), -EINVAL);
}

static void test_open_creates_private(void **state)
{
	struct fixture *f = *state;
	struct audit_event ev = {.run = "r", .type = AUDIT_TYPE_RUN, .action = "run.start"};
	struct audit_log *log;
	char path[320], dir[256];
	struct stat st;
	mode_t old = umask(0);

	snprintf(dir, sizeof(dir), "%s/state/warden", f->dir);
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	assert_int_equal(audit_log_open(path, &log, NULL), 0);
	umask(old);
	assert_string_equal(audit_log_path(log), path);
	assert_int_equal(audit_log_write(log, &ev, 0, NULL), 0);
	audit_log_close(log);
	audit_log_close(NULL);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	/* an existing 0644 log is fine (readable by others is the owner's choice) */
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(audit_log_open(path, &log, NULL), 0);
	audit_log_close(log);
}

static void test_refuse_symlink(void **state)
{
	struct fixture *f = *state;
	struct audit_log *log;
	struct wd_err err;
	char target[160];

	snprintf(target, sizeof(target), "%s/real.jsonl", f->dir);
	write_file(target, "", 0, 0600);
	assert_int_equal(symlink(target, f->log), 0);
	wd_err_clear(&err);
	assert_int_equal(audit_log_open(f->log, &log, &err), -ELOOP);
	assert_non_null(strstr(err.msg, "symbolic link"));
	/* a dangling link is refused too, and nothing is created behind it */
	unlink(target);
	assert_int_equal(audit_log_open(f->log, &log, &err), -ELOOP);
	assert_int_equal(access(target, F_OK), -1);
}

static void test_refuse_unsafe_files(void **state)
{
	struct fixture *f = *state;
	struct audit_log *log;
	struct wd_err err;
	char sub[160], subfile[200];

	write_file(f->log, "", 0, 0666);
	assert_int_equal(audit_log_open(f->log, &log, &err), -EPERM);
	assert_non_null(strstr(err.msg, "chmod 600"));
	assert_int_equal(chmod(f->log, 0620), 0);
	assert_int_equal(audit_log_open(f->log, &log, &err), -EPERM);
	assert_non_null(strstr(err.msg, "group"));
	if (geteuid() == 0) {
		assert_int_equal(chmod(f->log, 0600), 0);
		assert_int_equal(chown(f->log, 12345, 12345), 0);
		assert_int_equal(audit_log_open(f->log, &log, &err), -EPERM);
		assert_non_null(strstr(err.msg, "uid 12345"));
	}
	unlink(f->log);
	assert_int_equal(mkfifo(f->log, 0600), 0);
	assert_int_equal(audit_log_open(f->log, &log, &err), -EINVAL); /* and does not hang */
	assert_non_null(strstr(err.msg, "not a regular file"));
	unlink(f->log);
	assert_int_equal(mkdir(f->log, 0700), 0);
	assert_int_equal(audit_log_open(f->log, &log, &err), -EINVAL);
	rmdir(f->log);
	/* a folder anyone can write (without the sticky bit) */
	snprintf(sub, sizeof(sub), "%s/open", f->dir);
	snprintf(subfile, sizeof(subfile), "%s/audit.jsonl", sub);
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_int_equal(chmod(sub, 0777), 0);
	assert_int_equal(audit_log_open(subfile, &log, &err), -EPERM);
	assert_non_null(strstr(err.msg, "chmod o-w"));
	assert_int_equal(chmod(sub, 01777), 0);
	assert_int_equal(audit_log_open(subfile, &log, &err), 0);
	audit_log_close(log);
	assert_int_equal(audit_log_open("", &log, &err), -EINVAL);
}

/* check_whole_lines() - every line of @path decodes; the file ends in '\n'. Return: lines. */
static int check_whole_lines(const char *path)
{
	struct audit_reader *r;
	struct audit_event ev;
	char *data;
	size_t len;
	int n = 0;

	assert_int_equal(wd_read_file(path, 1 << 30, &data, &len), 0);
	assert_true(len == 0 || data[len - 1] == '\n');
	free(data);
	assert_int_equal(audit_reader_open(path, 0, &r, NULL), 0);
	while (audit_reader_next(r, &ev) == 1) {
		audit_event_clear(&ev);
		n++;
	}
	assert_int_equal(audit_reader_skipped(r), 0);
	audit_reader_close(r);
	return n;
}

/* fill_until_error() - write events until one fails. Return: that error; *@ok counts successes. */
static int fill_until_error(const char *path, int *ok, struct wd_err *err)
{
	struct audit_log *log;
	char name[32];
	int ret;

	ret = audit_log_open(path, &log, err);
	if (ret < 0)
		return ret;
	for (*ok = 0; *ok < 100000; (*ok)++) {
		struct audit_event ev = seq_event(name, sizeof(name), 1, *ok);

		ret = audit_log_write(log, &ev, *ok % 7 ? 0 : AUDIT_WRITE_DURABLE, err);
		if (ret < 0)
			break;
	}
	audit_log_close(log);
	return ret;
}

static void test_write_failure_file_size_limit(void **state)
{
	struct fixture *f = *state;
	int status, ok = 0;
	pid_t pid;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = {10000, 10000};
		struct wd_err err = {0};
		int ret;

		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			_exit(3);
		ret = fill_until_error(f->log, &ok, &err);
		_exit(ret == -EFBIG && ok > 10 && strstr(err.msg, f->log) ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* the event that did not fit left no fragment behind */
	assert_true(check_whole_lines(f->log) > 10);
}

/*
 * Child of test_write_failure_full_and_readonly: in a private mount
 * namespace, fill a tiny tmpfs (ENOSPC), then remount it read-only (EROFS).
 */
static int full_and_readonly_child(const char *dir)
{
	char mnt[200], path[240];
	struct audit_log *log;
	struct wd_err err;
	int ok = 0, ret;

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 77;
	snprintf(mnt, sizeof(mnt), "%s/mnt", dir);
	snprintf(path, sizeof(path), "%s/audit.jsonl", mnt);
	if (mkdir(mnt, 0700) < 0 || mount("wd-test", mnt, "tmpfs", 0, "size=16k,mode=0700") < 0)
		return 77;
	ret = fill_until_error(path, &ok, &err);
	if (ret != -ENOSPC || ok < 10 || !strstr(err.msg, "No space"))
		return 10;
	if (check_whole_lines(path) != ok)
		return 11;
	if (mount(NULL, mnt, NULL, MS_REMOUNT | MS_RDONLY, NULL) < 0)
		return 77;
	ret = audit_log_open(path, &log, &err);
	if (ret != -EROFS || !strstr(err.msg, "Read-only"))
		return 12;
	return 0;
}

static void test_write_failure_full_and_readonly(void **state)
{
	struct fixture *f = *state;
	int status;
	pid_t pid;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(full_and_readonly_child(f->dir));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		skip(); /* no mount namespaces here (not root) */
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_torn_tail_is_repaired(void **state)
{
	struct fixture *f = *state;
	struct audit_event ev = {.run = "r", .type = AUDIT_TYPE_RUN, .action = "run.start"};
	static const char torn[] = "{\"ts\":\"2026-11-29T10:00:00Z\",\"run\":\"dead wri";
	struct audit_reader *r;
	struct audit_log *log;
	int got = 0;

	write_file(f->log, torn, strlen(torn), 0600);
	assert_int_equal(audit_log_open(f->log, &log, NULL), 0);
	assert_int_equal(audit_log_write(log, &ev, AUDIT_WRITE_DURABLE, NULL), 0);
	assert_int_equal(audit_log_write(log, &ev, 0, NULL), 0);
	audit_log_close(log);
	assert_int_equal(audit_reader_open(f->log, 0, &r, NULL), 0);
	while (audit_reader_next(r, &ev) == 1) {
		assert_string_equal(ev.action, "run.start");
		assert_true(ev.ts.tv_sec > 1700000000); /* stamped at write time */
		audit_event_clear(&ev);
		got++;
	}
	assert_int_equal(got, 2);
	assert_int_equal(audit_reader_skipped(r), 1);
	audit_reader_close(r);
}

static void test_durable_write(void **state)
{
	struct fixture *f = *state;
	struct audit_event ev = full_event(), back;
	struct audit_log *log;
	char *data;
	size_t len;

	ev.type = AUDIT_TYPE_RUN;
	ev.action = "run.start";
	assert_int_equal(audit_log_open(f->log, &log, NULL), 0);
	assert_int_equal(audit_log_write(log, &ev, AUDIT_WRITE_DURABLE, NULL), 0);
	audit_log_close(log);
	assert_int_equal(wd_read_file(f->log, 1 << 20, &data, &len), 0);
	assert_int_equal(audit_event_decode(data, len, &back, NULL), 0);
	assert_events_equal(&ev, &back);
	audit_event_clear(&back);
	free(data);
}

/* a count of the events in the log, every one intact */
static int count_events(const char *path, const char *action, unsigned long skipped)
{
	struct audit_event ev;
	struct audit_reader *r;
	int got = 0;

	assert_int_equal(audit_reader_open(path, 0, &r, NULL), 0);
	while (audit_reader_next(r, &ev) == 1) {
		if (!action || !strcmp(ev.action, action))
			got++;
		audit_event_clear(&ev);
	}
	assert_int_equal(audit_reader_skipped(r), skipped);
	audit_reader_close(r);
	return got;
}

static void test_from_fd(void **state)
{
	struct fixture *f = *state;
	struct audit_event ev = {.run = "r", .type = AUDIT_TYPE_NET, .action = "net.udp"};
	static const char torn[] = "{\"ts\":\"2026-11-29T10:00:00Z\",\"run\":\"dead";
	struct audit_log *log;
	struct wd_err err;
	int fd;

	/* read-write + append: adopted, a torn tail is repaired */
	write_file(f->log, torn, strlen(torn), 0600);
	fd = open(f->log, O_RDWR | O_APPEND | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(audit_log_from_fd(fd, f->log, &log, &err), 0);
	assert_string_equal(audit_log_path(log), f->log);
	assert_int_equal(audit_log_write(log, &ev, 0, NULL), 0);
	audit_log_close(log);
	assert_true(fcntl(fd, F_GETFD) < 0); /* the writer owned it and closed it */
	{
		struct audit_reader *r;
		int got = 0;

		assert_int_equal(audit_reader_open(f->log, 0, &r, NULL), 0);
		while (audit_reader_next(r, &ev) == 1) {
			assert_string_equal(ev.action, "net.udp");
			audit_event_clear(&ev);
			got++;
		}
		assert_int_equal(got, 1);
		assert_int_equal(audit_reader_skipped(r), 1);
		audit_reader_close(r);
		ev = (struct audit_event){.run = "r", .type = AUDIT_TYPE_NET, .action = "net.udp"};
	}
	/* write-only + append works too */
	fd = open(f->log, O_WRONLY | O_APPEND | O_CLOEXEC);
	assert_int_equal(audit_log_from_fd(fd, NULL, &log, NULL), 0);
	assert_int_equal(audit_log_write(log, &ev, AUDIT_WRITE_DURABLE, NULL), 0);
	audit_log_close(log);
	/* not for appending: refused, the caller keeps the descriptor */
	fd = open(f->log, O_WRONLY | O_CLOEXEC);
	assert_int_equal(audit_log_from_fd(fd, f->log, &log, &err), -EBADF);
	assert_true(fcntl(fd, F_GETFD) >= 0);
	close(fd);
	fd = open(f->log, O_RDONLY | O_CLOEXEC);
	assert_int_equal(audit_log_from_fd(fd, f->log, &log, NULL), -EBADF);
	close(fd);
	/* a file others may write: refused as by audit_log_open() */
	assert_int_equal(chmod(f->log, 0622), 0);
	fd = open(f->log, O_WRONLY | O_APPEND | O_CLOEXEC);
	assert_int_equal(audit_log_from_fd(fd, f->log, &log, &err), -EPERM);
	assert_non_null(strstr(err.msg, "chmod 600"));
	close(fd);
	assert_int_equal(chmod(f->log, 0600), 0);
	/* not a regular file */
	fd = open("/dev/null", O_WRONLY | O_APPEND | O_CLOEXEC);
	assert_int_equal(audit_log_from_fd(fd, "/dev/null", &log, NULL), -EINVAL);
	close(fd);
	assert_int_equal(audit_log_from_fd(-1, "x", &log, NULL), -EBADF);
	assert_int_equal(count_events(f->log, "net.udp", 1), 2);
}

static void test_deferred_batches(void **state)
{
	struct fixture *f = *state;
	struct audit_event ev = {.run = "r", .type = AUDIT_TYPE_NET, .action = "net.connect"};
	struct audit_log *log;
	struct stat st;

	assert_int_equal(audit_log_open(f->log, &log, NULL), 0);
	assert_int_equal(audit_log_flush(log, NULL), 0); /* nothing queued */
	for (int i = 0; i < 10; i++)
		assert_int_equal(audit_log_write(log, &ev, AUDIT_WRITE_DEFER, NULL), 0);
	assert_int_equal(audit_log_pending(log), 10);
	assert_int_equal(stat(f->log, &st), 0);
	assert_int_equal(st.st_size, 0); /* nothing written yet */
	assert_int_equal(audit_log_flush(log, NULL), 10);
	assert_int_equal(audit_log_pending(log), 0);
	assert_int_equal(count_events(f->log, NULL, 0), 10);
	/* an immediate (durable) write carries the queue with it, in order */
	assert_int_equal(audit_log_write(log, &ev, AUDIT_WRITE_DEFER, NULL), 0);
	ev.action = "run.start";
	assert_int_equal(audit_log_write(log, &ev, AUDIT_WRITE_DURABLE, NULL), 0);
	assert_int_equal(audit_log_pending(log), 0);
	assert_int_equal(count_events(f->log, "net.connect", 0), 11);
	assert_int_equal(count_events(f->log, "run.start", 0), 1);
	/* an encoding error queues nothing */
	ev.action = NULL;
	assert_int_equal(audit_log_write(log, &ev, AUDIT_WRITE_DEFER, NULL), -EINVAL);
	assert_int_equal(audit_log_pending(log), 0);
	/* close writes what is still queued */
	ev.action = "net.close";
	assert_int_equal(audit_log_write(log, &ev, AUDIT_WRITE_DEFER, NULL), 0);
	audit_log_close(log);
	assert_int_equal(count_events(f->log, "net.close", 0), 1);
}

/* audit_log_sync() syncs through the writer's descriptor: the path replaced by a FIFO (whose
 * open for writing would block) is never opened, and queued lines are written first. */
static void test_sync_by_descriptor(void **state)
{
	struct fixture *f = *state;
	struct audit_event ev = {.run = "r", .type = AUDIT_TYPE_RUN, .action = "run.exit"};
	struct audit_log *log;
	char moved[4096];

	assert_int_equal(audit_log_open(f->log, &log, NULL), 0);
	assert_int_equal(audit_log_write(log, &ev, 0, NULL), 0);
	ev.action = "net.close";
	assert_int_equal(audit_log_write(log, &ev, AUDIT_WRITE_DEFER, NULL), 0);
	snprintf(moved, sizeof(moved), "%s.1", f->log);
	assert_int_equal(rename(f->log, moved), 0);
	assert_int_equal(mkfifo(f->log, 0600), 0);
	assert_int_equal(audit_log_sync(log), 0);
	assert_int_equal(audit_log_pending(log), 0);
	audit_log_close(log);
	assert_int_equal(unlink(f->log), 0);
	assert_int_equal(rename(moved, f->log), 0);
	assert_int_equal(count_events(f->log, "run.exit", 0), 1);
	assert_int_equal(count_events(f->log, "net.close", 0), 1);
}

static void test_deferred_large_batch(void **state)
{
	struct fixture *f = *state;
	static char big[200000];
	struct audit_event ev = {.run = "r", .type = AUDIT_TYPE_NET, .action = "net.connect"};
	struct audit_log *log;

	memset(big, 'x', sizeof(big) - 1);
	ev.reason = big;
	assert_int_equal(audit_log_open(f->log, &log, NULL), 0);
	/* 20 lines of ~200 kB: the queue is flushed whenever 1 MiB would be passed */
	for (int i = 0; i < 20; i++) {
		assert_int_equal(audit_log_write(log, &ev, AUDIT_WRITE_DEFER, NULL), 0);
		assert_true(audit_log_pending(log) <= 5);
	}
	assert_true(audit_log_flush(log, NULL) > 0);
	audit_log_close(log);
	assert_int_equal(count_events(f->log, NULL, 0), 20);
}

enum { WRITERS = 8, PER_WRITER = 2000 };

static void test_concurrent_writers(void **state)
{
	struct fixture *f = *state;
	int next[WRITERS] = {0}, total = 0;
	struct audit_reader *r;
	struct audit_event ev;
	pid_t pids[WRITERS];
	char *data;
	size_t len, lines = 0;

	for (int w = 0; w < WRITERS; w++) {
		pids[w] = fork();
		assert_true(pids[w] >= 0);
		if (pids[w] == 0) {
			struct audit_log *log;
			char name[32];

			if (audit_log_open(f->log, &log, NULL) < 0)
				_exit(1);
			for (int i = 0; i < PER_WRITER; i++) {
				struct audit_event e = seq_event(name, sizeof(name), w, i);

				/* long lines make interleaving visible if it happened */
				e.reason = "......................................................."
					   "........."
					   "......................................................."
					   "........."
					   "......................................................."
					   ".........";
				if (audit_log_write(log, &e, 0, NULL) < 0)
					_exit(2);
			}
			audit_log_close(log);
			_exit(0);
		}
	}
	for (int w = 0; w < WRITERS; w++) {
		int status;

		assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	assert_int_equal(wd_read_file(f->log, 1 << 30, &data, &len), 0);
	for (size_t i = 0; i < len; i++)
		lines += data[i] == '\n';
	free(data);
	assert_int_equal(lines, WRITERS * PER_WRITER);
	assert_int_equal(audit_reader_open(f->log, 0, &r, NULL), 0);
	while (audit_reader_next(r, &ev) == 1) {
		char expect[32];
		int w = (int)ev.pid;

		assert_true(w >= 0 && w < WRITERS);
		assert_int_equal(ev.port, next[w]); /* each writer's lines in order, none lost */
		snprintf(expect, sizeof(expect), "w%d-%d", w, next[w]);
		assert_string_equal(ev.resource, expect);
		next[w]++;
		total++;
		audit_event_clear(&ev);
	}
	assert_int_equal(audit_reader_skipped(r), 0);
	audit_reader_close(r);
	assert_int_equal(total, WRITERS * PER_WRITER);
	for (int w = 0; w < WRITERS; w++)
		assert_int_equal(next[w], PER_WRITER);
}

/* expect_follow() - read from @r (waiting as needed) until the event with port @port. */
static void expect_follow(struct audit_reader *r, int64_t port)
{
	for (int waits = 0; waits < 50;) {
		struct audit_event ev;
		int ret = audit_reader_next(r, &ev);

		assert_true(ret >= 0);
		if (ret == 1) {
			int64_t got = ev.port;

			audit_event_clear(&ev);
			if (got == port)
				return;
			continue;
		}
		if (audit_reader_wait(r, 5000) == 0)
			waits += 50; /* nothing came: fail below */
		else
			waits++;
	}
	fail_msg("event %lld never arrived", (long long)port);
}

static void append_seq(const char *path, int seq)
{
	struct audit_log *log;
	char name[32];
	struct audit_event ev = seq_event(name, sizeof(name), 0, seq);

	assert_int_equal(audit_log_open(path, &log, NULL), 0);
	assert_int_equal(audit_log_write(log, &ev, 0, NULL), 0);
	audit_log_close(log);
}

static void test_follow(void **state)
{
	struct fixture *f = *state;
	struct audit_reader *r;
	struct audit_event ev;
	char other[160];
	int fd;

	/* the log does not exist yet */
	assert_int_equal(audit_reader_open(f->log, AUDIT_READER_FOLLOW, &r, NULL), 0);
	assert_int_equal(audit_reader_next(r, &ev), 0);
	assert_int_equal(audit_reader_wait(r, 0), 0);
	for (int i = 1; i <= 20; i++)
		append_seq(f->log, i);
	for (int i = 1; i <= 20; i++)
		expect_follow(r, i);
	append_seq(f->log, 21);
	expect_follow(r, 21);
	/* a line arriving in two pieces is held until complete */
	fd = open(f->log, O_WRONLY | O_APPEND | O_CLOEXEC);
	assert_true(fd >= 0);
	{
		struct wd_buf b = WD_BUF_INIT;
		char name[32];
		struct audit_event e = seq_event(name, sizeof(name), 0, 22);

		assert_int_equal(audit_event_encode(&e, &b, NULL), 0);
		assert_int_equal(wd_write_all(fd, b.data, 10), 0);
		assert_int_equal(audit_reader_next(r, &ev), 0);
		assert_int_equal(wd_write_all(fd, b.data + 10, b.len - 10), 0);
		wd_buf_free(&b);
	}
	close(fd);
	expect_follow(r, 22);
	/* truncated (copytruncate rotation): start again from the top */
	fd = open(f->log, O_WRONLY | O_TRUNC | O_CLOEXEC);
	assert_true(fd >= 0);
	close(fd);
	append_seq(f->log, 23);
	expect_follow(r, 23);
	/* replaced (rename rotation): the new file is read from its start */
	snprintf(other, sizeof(other), "%s/next.jsonl", f->dir);
	append_seq(other, 24);
	append_seq(other, 25);
	assert_int_equal(rename(other, f->log), 0);
	expect_follow(r, 24);
	expect_follow(r, 25);
	/* removed, then created again */
	assert_int_equal(unlink(f->log), 0);
	assert_int_equal(audit_reader_next(r, &ev), 0);
	append_seq(f->log, 26);
	expect_follow(r, 26);
	assert_int_equal(audit_reader_skipped(r), 0);
	audit_reader_close(r);
	assert_int_equal(audit_reader_open(f->log, 0, &r, NULL), 0);
	assert_int_equal(audit_reader_wait(r, 0), -EINVAL);
	audit_reader_close(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_roundtrip_every_field),
	    cmocka_unit_test(test_roundtrip_minimal),
	    cmocka_unit_test(test_mcp_field),
	    cmocka_unit_test(test_counts_incomplete),
	    cmocka_unit_test(test_crashed),
	    cmocka_unit_test(test_golden_key_order),
	    cmocka_unit_test(test_golden_would_deny),
	    cmocka_unit_test(test_golden_summary_fields),
	    cmocka_unit_test(test_golden_bytes),
	    cmocka_unit_test(test_timestamps),
	    cmocka_unit_test(test_nasty_strings),
	    cmocka_unit_test(test_invalid_utf8_is_replaced_and_kept),
	    cmocka_unit_test(test_decode_corrupt),
	    cmocka_unit_test(test_decode_tolerant),
	    cmocka_unit_test(test_encode_errors),
	    cmocka_unit_test_setup_teardown(test_reader_skips_corrupt, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_reader_overlong_line, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_reader_tail_100k, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_reader_missing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_open_creates_private, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_refuse_symlink, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_refuse_unsafe_files, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write_failure_file_size_limit, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write_failure_full_and_readonly, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_torn_tail_is_repaired, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_durable_write, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_from_fd, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_deferred_batches, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sync_by_descriptor, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_deferred_large_batch, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_concurrent_writers, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_follow, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
