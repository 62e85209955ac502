/* test_launcher_trace_write.c - the trace writer (trace_write.c): what it writes parses with the
 * strict reader (trace_parse()) and reads back as the same trace; duplicates are folded with
 * their counts; a path with a newline, a quote or a control character reads back exactly, one
 * that is not UTF-8 is left out (never written as another path); the file name (the file itself:
 * test_launcher_outdir.c). */
#include "trace/file.h"
#include "trace/write.h"

#include <errno.h>
#include <limits.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ------------------------------------------------------------ helpers */

static char *cmd_words[] = {"/usr/bin/node", "index.js", "--flag=\"x\""};

/* A trace with @n files (paths given), two nets, env, limits. */
static void make(struct trace *t, struct trace_file_ev *files, size_t n, struct trace_net_ev *nets,
		 size_t nnets, char **env, size_t nenv)
{
	memset(t, 0, sizeof(*t));
	t->command = cmd_words;
	t->ncommand = 3;
	t->cwd = "/home/u/proj";
	t->home = "/home/u";
	t->files = files;
	t->nfiles = n;
	t->nets = nets;
	t->nnets = nnets;
	t->env = env;
	t->nenv = nenv;
	t->peak_memory_kib = 90000;
	t->peak_pids = 7;
	t->wall_ms = 12400;
}

/* format @t, parse it back into @back (trace_free() it) */
static void round_trip(const struct trace *t, struct trace *back, struct trace_write_info *wi)
{
	struct wd_buf b = WD_BUF_INIT;
	struct wd_err err = {0};

	assert_int_equal(trace_format(t, "2026-12-01T21:00:00.000000Z", &b, wi), 0);
	assert_non_null(b.data);
	if (trace_parse(b.data, b.len, "t.jsonl", back, &err)) {
		fprintf(stderr, "%s\n---\n%s", err.msg, wd_buf_cstr(&b));
		fail();
	}
	wd_buf_free(&b);
}

static const struct trace_file_ev *find_file(const struct trace *t, enum trace_op op,
					     const char *path)
{
	for (size_t i = 0; i < t->nfiles; i++)
		if (t->files[i].op == op && !strcmp(t->files[i].path, path))
			return &t->files[i];
	return NULL;
}

/* ------------------------------------------------------------ tests */

static void test_round_trip(void **state)
{
	struct trace_file_ev files[] = {
	    {"/home/u/proj/index.js", TRACE_READ, 2, "node", NULL},
	    {"/usr/bin/node", TRACE_EXEC, 1, "bash", NULL},
	    {"/home/u/proj/out", TRACE_CREATE, 1, "node", NULL},
	    {"/home/u/.curlrc", TRACE_MISSING, 3, "", NULL},
	    {"/run/user/1000/bus", TRACE_CONNECT, 1, "node", NULL},
	    {"/home/u/proj/a", TRACE_RENAME, 1, "node", NULL},
	    {"/home/u/proj/b", TRACE_REMOVE, 1, "node", NULL},
	    {"/home/u/proj/c", TRACE_WRITE, 4, "node", NULL},
	    {"/etc/hosts", TRACE_STAT, 1, "node", NULL},
	    {"/var/lib/lxd/unix.socket", TRACE_CONNECT, 2, "curl", "not named"},
	};
	struct trace_net_ev nets[] = {
	    {"registry.npmjs.org", 443, TRACE_PROTO_TLS, 3, NULL},
	    {"169.254.169.254", 80, TRACE_PROTO_HTTP, 1, "link-local address"},
	    {"only.resolved.test", 0, TRACE_PROTO_DNS, 2, NULL},
	    {"raw.test", 5432, TRACE_PROTO_RAW, 1, NULL},
	};
	char *env[] = {"PATH", "NPM_TOKEN"};
	struct trace t, back;
	struct trace_write_info wi;

	(void)state;
	make(&t, files, 10, nets, 4, env, 2);
	round_trip(&t, &back, &wi);
	assert_int_equal(back.ncommand, 3);
	for (size_t i = 0; i < 3; i++)
		assert_string_equal(back.command[i], cmd_words[i]);
	assert_string_equal(back.cwd, t.cwd);
	assert_string_equal(back.home, t.home);
	assert_int_equal(back.nfiles, 10);
	assert_int_equal(wi.files, 10);
	for (size_t i = 0; i < 10; i++) {
		const struct trace_file_ev *f = find_file(&back, files[i].op, files[i].path);

		assert_non_null(f);
		assert_int_equal(f->count, files[i].count);
		assert_string_equal(f->comm, files[i].comm);
		/* a refused connect reads back refused, a done one not */
		if (files[i].refused)
			assert_string_equal(f->refused, files[i].refused);
		else
			assert_null(f->refused);
	}
	assert_int_equal(back.nnets, 4);
	for (size_t i = 0; i < 4; i++) {
		assert_string_equal(back.nets[i].host, nets[i].host);
		assert_int_equal(back.nets[i].port, nets[i].port);
		assert_int_equal(back.nets[i].proto, nets[i].proto);
		assert_int_equal(back.nets[i].count, nets[i].count);
		if (nets[i].refused)
			assert_string_equal(back.nets[i].refused, nets[i].refused);
		else
			assert_null(back.nets[i].refused);
	}
	assert_int_equal(back.nenv, 2);
	assert_string_equal(back.env[0], "PATH");
	assert_string_equal(back.env[1], "NPM_TOKEN");
	assert_int_equal(back.peak_memory_kib, 90000);
	assert_int_equal(back.peak_pids, 7);
	assert_int_equal(back.wall_ms, 12400);
	trace_free(&back);
}

static void test_dedup(void **state)
{
	struct trace_file_ev files[] = {
	    {"/p/a", TRACE_READ, 2, "cat", NULL}, {"/p/b", TRACE_READ, 1, "cat", NULL},
	    {"/p/a", TRACE_READ, 5, "sh", NULL},  {"/p/a", TRACE_WRITE, 1, "sh", NULL},
	    {"/p/a", TRACE_READ, 0, "x", NULL}, /* a count of 0 is one access */
	};
	struct trace_net_ev nets[] = {
	    {"a.test", 443, TRACE_PROTO_TLS, 1, NULL},
	    {"a.test", 80, TRACE_PROTO_HTTP, 1, NULL},
	    {"a.test", 443, TRACE_PROTO_TLS, 4, NULL},
	};
	char *env[] = {"PATH", "HOME", "PATH"};
	struct trace t, back;
	struct trace_write_info wi;
	const struct trace_file_ev *f;

	(void)state;
	make(&t, files, 5, nets, 3, env, 3);
	round_trip(&t, &back, &wi);
	assert_int_equal(back.nfiles, 3);
	f = find_file(&back, TRACE_READ, "/p/a");
	assert_non_null(f);
	assert_int_equal(f->count, 8);
	assert_string_equal(f->comm, "cat"); /* the first one's */
	assert_int_equal(find_file(&back, TRACE_WRITE, "/p/a")->count, 1);
	assert_int_equal(back.nnets, 2);
	assert_int_equal(back.nets[0].count, 5);
	assert_int_equal(back.nenv, 2);
	trace_free(&back);
}

static void test_forged_paths(void **state)
{
	/* a newline that would start a forged line, quotes, a tab, an escape, a backslash */
	static const char *const odd[] = {
	    "/p/x\n{\"type\":\"file\",\"op\":\"read\",\"path\":\"/etc/shadow\"}",
	    "/p/\"quoted\"",
	    "/p/tab\there",
	    "/p/esc\x1b[31m",
	    "/p/back\\slash",
	    "/p/caf\xc3\xa9",
	};
	struct trace_file_ev files[8];
	struct trace t, back;
	struct trace_write_info wi;

	(void)state;
	for (size_t i = 0; i < 6; i++)
		files[i] = (struct trace_file_ev){(char *)odd[i], TRACE_READ, 1, "sh", NULL};
	/* not UTF-8: a lone continuation byte, and an overlong '/' */
	files[6] = (struct trace_file_ev){"/p/bad\x80"
					  "name",
					  TRACE_READ, 1, "sh", NULL};
	files[7] = (struct trace_file_ev){"/p/over\xc0\xaf"
					  "etc",
					  TRACE_READ, 1, "sh", NULL};
	make(&t, files, 8, NULL, 0, NULL, 0);
	round_trip(&t, &back, &wi);
	assert_int_equal(wi.bad_utf8, 2);
	assert_int_equal(back.nfiles, 6);
	for (size_t i = 0; i < 6; i++)
		assert_string_equal(back.files[i].path, odd[i]);
	assert_null(find_file(&back, TRACE_READ, "/etc/shadow"));
	trace_free(&back);
}

static void test_odd_command_and_comm(void **state)
{
	char *cmd[] = {"/bin/sh", "-c", "echo \xff\xfe"};
	struct trace_file_ev files[] = {{"/p/a", TRACE_READ, 1, "bad\xff", NULL}};
	struct trace t, back;

	(void)state;
	make(&t, files, 1, NULL, 0, NULL, 0);
	t.command = cmd;
	round_trip(&t, &back, NULL);
	assert_string_equal(back.command[2], "echo \xef\xbf\xbd\xef\xbf\xbd");
	assert_string_equal(back.files[0].comm, ""); /* a comm that is not UTF-8: left out */
	trace_free(&back);
}

static void test_refused_input(void **state)
{
	struct wd_buf b = WD_BUF_INIT;
	struct trace t;

	(void)state;
	make(&t, NULL, 0, NULL, 0, NULL, 0);
	t.cwd = "relative";
	assert_int_equal(trace_format(&t, NULL, &b, NULL), -EINVAL);
	t.cwd = "/ok";
	t.ncommand = 0;
	assert_int_equal(trace_format(&t, NULL, &b, NULL), -EINVAL);
	wd_buf_free(&b);
}

/* the JSON-RPC flag reads back as written, alone on the limits line too */
static void test_stdio_jsonrpc(void **state)
{
	struct wd_buf b = WD_BUF_INIT;
	struct trace t, back;
	struct wd_err err = {0};

	(void)state;
	make(&t, NULL, 0, NULL, 0, NULL, 0);
	t.peak_memory_kib = t.peak_pids = t.wall_ms = 0;
	t.stdio_jsonrpc = true;
	assert_int_equal(trace_format(&t, NULL, &b, NULL), 0);
	assert_non_null(strstr(wd_buf_cstr(&b), "\"stdio_jsonrpc\":true"));
	assert_int_equal(trace_parse(b.data, b.len, "t", &back, &err), 0);
	assert_true(back.stdio_jsonrpc);
	trace_free(&back);
	wd_buf_free(&b);
}

static void test_no_limits_line(void **state)
{
	struct wd_buf b = WD_BUF_INIT;
	struct trace t, back;
	struct wd_err err = {0};

	(void)state;
	make(&t, NULL, 0, NULL, 0, NULL, 0);
	t.peak_memory_kib = t.peak_pids = t.wall_ms = 0;
	assert_int_equal(trace_format(&t, NULL, &b, NULL), 0);
	assert_null(strstr(wd_buf_cstr(&b), "limits"));
	assert_null(strstr(wd_buf_cstr(&b), "started"));
	assert_int_equal(trace_parse(b.data, b.len, "t", &back, &err), 0);
	trace_free(&back);
	wd_buf_free(&b);
}

static void test_file_name(void **state)
{
	char out[128];

	(void)state;
	/* 2026-12-01T21:00:00Z */
	assert_int_equal(trace_file_name("/usr/bin/node", 1796158800, out, sizeof(out)), 0);
	assert_string_equal(out, "20261201T210000Z-node.jsonl");
	assert_int_equal(trace_file_name("./my prog;rm -rf", 1796158800, out, sizeof(out)), 0);
	assert_string_equal(out, "20261201T210000Z-my_prog_rm_-rf.jsonl");
	assert_int_equal(trace_file_name("/x/.hidden", 1796158800, out, sizeof(out)), 0);
	assert_string_equal(out, "20261201T210000Z-_hidden.jsonl");
	assert_int_equal(trace_file_name("/x/", 1796158800, out, sizeof(out)), 0);
	assert_string_equal(out, "20261201T210000Z-trace.jsonl");
	assert_int_equal(trace_file_name("node", 1796158800, out, 10), -ENAMETOOLONG);
}

/* the MCP tools a trace recorded: one "tool" line each, read back as written */
static void test_tools(void **state)
{
	struct wd_buf b = WD_BUF_INIT;
	struct trace t, back;
	struct wd_err err = {0};

	(void)state;
	make(&t, NULL, 0, NULL, 0, NULL, 0);
	t.tools = json_pack("[{s:s, s:s}, {s:s, s:{s:b}}, {s:i}]", "name", "echo", "description",
			    "Echo \"it\"\nback", "name", "add", "annotations", "readOnlyHint", 1,
			    "name", 3);
	assert_non_null(t.tools);
	assert_int_equal(trace_format(&t, NULL, &b, NULL), 0);
	assert_int_equal(trace_parse(b.data, b.len, "t", &back, &err), 0);
	/* the one without a string name is not written */
	assert_int_equal(json_array_size(back.tools), 2);
	assert_true(json_equal(json_array_get(back.tools, 0), json_array_get(t.tools, 0)));
	assert_true(json_equal(json_array_get(back.tools, 1), json_array_get(t.tools, 1)));
	json_decref(t.tools);
	trace_free(&back);
	wd_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),	  cmocka_unit_test(test_dedup),
	    cmocka_unit_test(test_forged_paths),  cmocka_unit_test(test_odd_command_and_comm),
	    cmocka_unit_test(test_refused_input), cmocka_unit_test(test_no_limits_line),
	    cmocka_unit_test(test_stdio_jsonrpc), cmocka_unit_test(test_file_name),
	    cmocka_unit_test(test_tools),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
