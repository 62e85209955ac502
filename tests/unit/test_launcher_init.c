/* test_launcher_init.c - the trace reader (trace_file.c) and the policy it infers
 * (init_infer.c): strict errors with FILE:LINE, the folding rules, what is never granted,
 * and that what comes out parses as a policy. The file system is a list the callback reads. */
#include "trace/infer.h"
#include "trace/file.h"
#include "policy/policy.h"

#include <errno.h>
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

/* the paths that "exist" */
static const char *const *fake_fs;

static bool fake_exists(const char *path, void *ctx)
{
	(void)ctx;
	for (size_t i = 0; fake_fs && fake_fs[i]; i++) {
		size_t n = strlen(path);

		if (!strcmp(fake_fs[i], path) ||
		    (!strncmp(fake_fs[i], path, n) && fake_fs[i][n] == '/'))
			return true; /* a listed path or a folder above one */
	}
	return false;
}

static const char *const creds[] = {"~/.ssh", "~/.aws", "/etc/shadow", NULL};
static const char *const base_dirs[] = {"/usr", "/lib", "/etc/ssl", NULL};
static const char *const base_files[] = {"/etc/ld.so.cache", NULL};
static const char *const protect[] = {"/run/warden", "/srv/home/u/.local/state/warden", NULL};

static struct infer_opts opts(void)
{
	struct infer_opts o = {
	    .policy_dir = "/srv/proj",
	    .home = "/srv/home/u",
	    .cred_stores = creds,
	    .base_dirs = base_dirs,
	    .base_files = base_files,
	    .protect = protect,
	    .exists = fake_exists,
	    .source = "t.jsonl",
	    .now = "2026-12-01",
	};
	return o;
}

#define HEAD                                                                                       \
	"{\"type\":\"trace\",\"version\":1,\"command\":[\"node\",\"x.js\"],\"cwd\":\"/srv/"        \
	"proj\"}\n"

static void parse_ok(const char *text, struct trace *t)
{
	struct wd_err err = {0};
	int rc = trace_parse(text, strlen(text), "t.jsonl", t, &err);

	if (rc)
		fprintf(stderr, "unexpected: %s\n", err.msg);
	assert_int_equal(rc, 0);
}

static void parse_bad(const char *text, const char *want)
{
	struct trace t;
	struct wd_err err = {0};

	assert_int_equal(trace_parse(text, strlen(text), "t.jsonl", &t, &err), -EINVAL);
	if (!strstr(err.msg, want))
		fprintf(stderr, "got: %s\nwanted: %s\n", err.msg, want);
	assert_non_null(strstr(err.msg, want));
	trace_free(&t);
}

/* infer from @text; the YAML must parse as a policy without errors */
static void infer(const char *text, struct infer_result *res)
{
	struct trace t;
	struct infer_opts o = opts();
	struct policy_diags d;
	struct wd_policy *p = NULL;

	parse_ok(text, &t);
	assert_int_equal(infer_policy(&t, &o, res), 0);
	policy_diags_init(&d);
	if (policy_parse(res->yaml.data, res->yaml.len, "/srv/proj/policy.yaml", &p, &d) ||
	    d.errors)
		fprintf(stderr, "does not parse:\n%s\n", res->yaml.data);
	assert_int_equal(d.errors, 0);
	assert_non_null(p);
	policy_free(p);
	policy_diags_free(&d);
	trace_free(&t);
}

static bool has_line(const struct infer_result *r, const char *want)
{
	const char *s = r->yaml.data;

	for (;;) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);

		if (n >= strlen(want) && !strncmp(s, want, strlen(want)))
			return true;
		if (!nl)
			return false;
		s = nl + 1;
	}
}

#define assert_line(r, want)                                                                       \
	do {                                                                                       \
		if (!has_line(r, want))                                                            \
			fprintf(stderr, "no line starting \"%s\" in:\n%s\n", want,                 \
				(r)->yaml.data);                                                   \
		assert_true(has_line(r, want));                                                    \
	} while (0)
#define assert_no(r, want)                                                                         \
	do {                                                                                       \
		if (strstr((r)->yaml.data, want))                                                  \
			fprintf(stderr, "\"%s\" should not be in:\n%s\n", want, (r)->yaml.data);   \
		assert_null(strstr((r)->yaml.data, want));                                         \
	} while (0)

/* ------------------------------------------------------------ the reader */

static void test_trace_parse_good(void **state)
{
	struct trace t;

	(void)state;
	parse_ok(HEAD
		 "{\"type\":\"file\",\"op\":\"read\",\"path\":\"/srv/a\",\"count\":3,"
		 "\"comm\":\"cat\"}\n"
		 "\n"
		 "{\"type\":\"net\",\"host\":\"api.lab.test\",\"port\":443,\"proto\":\"tls\"}\n"
		 "{\"type\":\"net\",\"host\":\"q.lab.test\",\"proto\":\"dns\"}\n"
		 "{\"type\":\"env\",\"name\":\"PATH\"}\n"
		 "{\"type\":\"limits\",\"peak_memory_kib\":2048,\"peak_pids\":3,\"wall_ms\":10}",
		 &t);
	assert_int_equal(t.ncommand, 2);
	assert_string_equal(t.cwd, "/srv/proj");
	assert_int_equal(t.nfiles, 1);
	assert_int_equal(t.files[0].op, TRACE_READ);
	assert_int_equal(t.files[0].count, 3);
	assert_string_equal(t.files[0].comm, "cat");
	assert_int_equal(t.nnets, 2);
	assert_int_equal(t.nets[0].port, 443);
	assert_int_equal(t.nets[1].proto, TRACE_PROTO_DNS);
	assert_int_equal(t.nenv, 1);
	assert_int_equal(t.peak_memory_kib, 2048);
	trace_free(&t);
}

static void test_trace_parse_bad(void **state)
{
	(void)state;
	parse_bad("", "t.jsonl:1: no \"trace\" line");
	parse_bad("{\"type\":\"file\",\"op\":\"read\",\"path\":\"/a\"}\n",
		  "t.jsonl:1: the first line must be the \"trace\" line");
	parse_bad(HEAD HEAD, "t.jsonl:2: a second \"trace\" line");
	parse_bad(HEAD "not json\n", "t.jsonl:2: not JSON");
	parse_bad(HEAD "[1]\n", "t.jsonl:2: expected one JSON object");
	parse_bad(HEAD "{\"type\":\"file\",\"op\":\"read\",\"path\":\"rel/a\"}\n",
		  "t.jsonl:2: \"path\" must be an absolute path, not \"rel/a\"");
	parse_bad(HEAD "{\"type\":\"file\",\"op\":\"peek\",\"path\":\"/a\"}\n",
		  "t.jsonl:2: unknown \"op\" value \"peek\"");
	parse_bad(HEAD "{\"type\":\"file\",\"op\":\"read\",\"path\":\"/a\",\"grant\":true}\n",
		  "t.jsonl:2: unknown key \"grant\" in a \"file\" event");
	parse_bad(HEAD "{\"type\":\"file\",\"op\":\"read\",\"path\":\"/a\",\"path\":\"/b\"}\n",
		  "t.jsonl:2: not JSON");
	parse_bad(HEAD "{\"type\":\"net\",\"host\":\"a.b\",\"port\":70000,\"proto\":\"tls\"}\n",
		  "t.jsonl:2: \"port\" must be an integer");
	parse_bad(HEAD "{\"type\":\"net\",\"host\":\"a.b\",\"proto\":\"tls\"}\n",
		  "t.jsonl:2: \"port\" is missing");
	parse_bad(HEAD "{\"type\":\"env\",\"name\":\"A=B\"}\n", "t.jsonl:2: an environment name");
	parse_bad(HEAD "{\"type\":\"mount\"}\n", "t.jsonl:2: unknown event type \"mount\"");
	parse_bad("{\"type\":\"trace\",\"version\":2,\"command\":[\"x\"],\"cwd\":\"/\"}\n",
		  "t.jsonl:1: trace version 2 is not known");
	parse_bad("{\"type\":\"trace\",\"version\":1,\"command\":[],\"cwd\":\"/\"}\n",
		  "\"command\" must be a non-empty list");
	parse_bad(HEAD "{\"type\":\"file\",\"op\":\"read\",\"path\":\"/a\\u0000b\"}\n",
		  "t.jsonl:2: not JSON: \\u0000 is not allowed");
	/* "refused" only on a connect, and saying why */
	parse_bad(HEAD "{\"type\":\"file\",\"op\":\"read\",\"path\":\"/a\",\"refused\":\"x\"}\n",
		  "t.jsonl:2: \"refused\" is only for a \"connect\", not a \"read\"");
	parse_bad(HEAD "{\"type\":\"file\",\"op\":\"connect\",\"path\":\"/a\",\"refused\":\"\"}\n",
		  "t.jsonl:2: \"refused\" must be a non-empty string");
	parse_bad(HEAD "{\"type\":\"file\",\"op\":\"connect\",\"path\":\"/a\",\"refused\":true}\n",
		  "t.jsonl:2: \"refused\"");
}

/* ------------------------------------------------------------ folding */

#define READ(p) "{\"type\":\"file\",\"op\":\"read\",\"path\":\"" p "\",\"comm\":\"node\"}\n"

static void test_fold_reads(void **state)
{
	static const char *const fs[] = {"/srv/proj/m/a/i.js",
					 "/srv/proj/m/b/i.js",
					 "/srv/proj/m/c/i.js",
					 "/srv/proj/m/d/i.js",
					 "/srv/proj/x.js",
					 "/srv/other/one.txt",
					 NULL};
	struct infer_result r;

	(void)state;
	fake_fs = fs;
	infer(HEAD READ("/srv/proj/m/a/i.js") READ("/srv/proj/m/b/i.js") READ("/srv/proj/m/c/i.js")
		  READ("/srv/proj/m/d/i.js") READ("/srv/proj/x.js") READ("/srv/other/one.txt"),
	      &r);
	/* four packages under ./m: one grant; x.js and a file elsewhere: themselves */
	assert_line(&r, "    - \"./m\"   # read by node: 4 paths under ./m");
	assert_line(&r, "    - \"./x.js\"   # read by node: ./x.js");
	assert_line(&r, "    - \"/srv/other/one.txt\"");
	assert_int_equal(r.nread, 3);
	assert_no(&r, "m/a");
	infer_result_free(&r);
}

static void test_fold_three_stay(void **state)
{
	static const char *const fs[] = {"/srv/proj/d/1", "/srv/proj/d/2", "/srv/proj/d/3", NULL};
	struct infer_result r;

	(void)state;
	fake_fs = fs;
	infer(HEAD READ("/srv/proj/d/1") READ("/srv/proj/d/2") READ("/srv/proj/d/3"), &r);
	assert_int_equal(r.nread, 3); /* fewer than INFER_FOLD_MIN: each alone */
	assert_line(&r, "    - \"./d/1\"");
	infer_result_free(&r);
}

static void test_never_fold_wide(void **state)
{
	static const char *const fs[] = {"/srv/home/u/a", "/srv/home/u/b",
					 "/srv/home/u/c", "/srv/home/u/d",
					 "/srv/home/u/e", "/opt/1",
					 "/opt/2",	  "/opt/3",
					 "/opt/4",	  "/etc/a",
					 "/etc/b",	  "/etc/c",
					 "/etc/d",	  NULL};
	struct infer_result r;

	(void)state;
	fake_fs = fs;
	infer(HEAD READ("/srv/home/u/a") READ("/srv/home/u/b") READ("/srv/home/u/c")
		  READ("/srv/home/u/d") READ("/srv/home/u/e") READ("/opt/1") READ("/opt/2")
		      READ("/opt/3") READ("/opt/4") READ("/etc/a") READ("/etc/b") READ("/etc/c")
			  READ("/etc/d"),
	      &r);
	/* the home folder, a top folder, and what holds the runtime base are never one grant */
	assert_no(&r, "- \"~\"");
	assert_no(&r, "- \"/opt\"");
	assert_no(&r, "- \"/etc\"");
	assert_line(&r, "    - \"~/a\"");
	assert_line(&r, "    - \"/opt/1\"");
	assert_line(&r, "    - \"/etc/d\"");
	assert_int_equal(r.nread, 13);
	infer_result_free(&r);
}

static void test_skipped_paths(void **state)
{
	static const char *const fs[] = {"/srv/proj/x", NULL};
	struct infer_result r;

	(void)state;
	fake_fs = fs;
	infer(
	    HEAD READ("/usr/lib/x.so") READ("/etc/ld.so.cache") READ("/proc/self/maps") READ(
		"/tmp/scratch") READ("/dev/null") READ("/etc/resolv.conf") READ("/run/warden/etc/x")
		READ(
		    "/srv/proj/x") "{\"type\":\"file\",\"op\":\"missing\",\"path\":\"/srv/proj/"
				   "nope\"}\n"
				   "{\"type\":\"file\",\"op\":\"stat\",\"path\":\"/srv/home/u\"}\n",
	    &r);
	assert_int_equal(r.nread, 1);
	assert_line(&r, "    - \"./x\"");
	assert_no(&r, "/usr");
	assert_no(&r, "nope");
	assert_no(&r, "/proc");
	infer_result_free(&r);
}

static void test_tmp(void **state)
{
	static const char *const fs[] = {"/tmp/host-file", "/tmp/made/x", NULL};
	struct infer_result r;

	(void)state;
	fake_fs = fs;
	/* a learning sandbox shows the host's /tmp (issue 27): a host file read there is
	 * granted, and so is a folder the program made there (through its current folder's
	 * grant: it went to the host), as a folder */
	infer(HEAD READ("/tmp/host-file") "{\"type\":\"file\",\"op\":\"create\",\"path\":\"/tmp/"
					  "made\"}\n" READ(
					      "/tmp/made/x") "{\"type\":\"file\",\"op\":\"write\","
							     "\"path\":\"/tmp/made/x\"}\n",
	      &r);
	assert_line(&r, "    - \"/tmp/host-file\"");
	assert_line(&r, "    - \"/tmp/made/\"");
	assert_int_equal(r.nread, 1);
	assert_int_equal(r.nwrite, 1);
	infer_result_free(&r);
}

/* ------------------------------------------------------------ what is never granted */

static void test_credentials_commented(void **state)
{
	static const char *const fs[] = {"/srv/home/u/.ssh/id_ed25519", "/srv/proj/x", NULL};
	struct infer_result r;

	(void)state;
	fake_fs = fs;
	infer(HEAD READ("/srv/proj/x") "{\"type\":\"file\",\"op\":\"read\",\"path\":\"/srv/home/u/"
				       ".ssh/id_ed25519\","
				       "\"comm\":\"ssh\"}\n"
				       "{\"type\":\"file\",\"op\":\"read\",\"path\":\"/etc/"
				       "shadow\",\"comm\":\"x\"}\n",
	      &r);
	assert_line(&r, "    # - { path: \"~/.ssh/id_ed25519\", sensitive: true }   # read by ssh "
			"(credential store ~/.ssh)");
	assert_line(&r, "    # - { path: \"/etc/shadow\", sensitive: true }");
	assert_line(&r, "    - \"./x\"");
	assert_int_equal(r.nread, 1);
	assert_non_null(strstr(r.warnings.data, "credential store was read and is not granted: "
						"/srv/home/u/.ssh/id_ed25519 (by ssh)"));
	infer_result_free(&r);
}

/* unix sockets: one the learning sandbox refused is never granted (commented, with a warning);
 * one the person named is granted with a comment saying it is a socket; a folder holding a
 * socket the program reached is never folded into one grant; a write grant that holds one
 * says so */
#define CONNECT(p, why)                                                                            \
	"{\"type\":\"file\",\"op\":\"connect\",\"path\":\"" p "\",\"comm\":\"docker\"" why "}\n"

static void test_sockets(void **state)
{
	static const char *const fs[] = {"/srv/home/u/.rd/docker.sock",
					 "/var/lib/incus/unix.socket",
					 "/srv/svc/app.sock",
					 "/srv/svc/a",
					 "/srv/svc/b",
					 "/srv/svc/c",
					 "/srv/svc/d",
					 "/srv/proj/dev.sock",
					 NULL};
	struct infer_result r;

	(void)state;
	fake_fs = fs;
	infer(HEAD CONNECT("/srv/home/u/.rd/docker.sock", ",\"refused\":\"not named\"")
		  CONNECT("/var/lib/incus/unix.socket",
			  ",\"refused\":\"not named\"") CONNECT("/srv/svc/app.sock", "")
		      READ("/srv/svc/a") READ("/srv/svc/b") READ("/srv/svc/c") READ("/srv/svc/d")
			  CONNECT("/srv/proj/dev.sock",
				  "") "{\"type\":\"file\",\"op\":\"create\",\"path\":\"/srv/proj/"
				      "out\",\"comm\":\"sh\"}\n",
	      &r);
	/* refused: commented out, never a grant, a warning each */
	assert_line(&r,
		    "    # - \"~/.rd/docker.sock\"   # a unix socket docker tried to connect to: "
		    "refused in the trace, not granted");
	assert_line(&r, "    # - \"/var/lib/incus/unix.socket\"   # a unix socket docker");
	assert_no(&r, "    - \"~/.rd");
	assert_no(&r, "    - \"/var/lib/incus");
	assert_non_null(strstr(r.warnings.data,
			       "a unix socket was refused in the trace and is not "
			       "granted: /srv/home/u/.rd/docker.sock (by docker)"));
	assert_non_null(strstr(r.warnings.data, "/var/lib/incus/unix.socket"));
	/* named: its own line, saying it is a socket; its four neighbours are not folded with it */
	assert_line(&r, "    - \"/srv/svc/app.sock\"   # a unix socket: connected to by docker");
	assert_line(&r, "    - \"/srv/svc/a\"");
	assert_no(&r, "    - \"/srv/svc\"");
	/* the current folder's write grant holds the socket there: said */
	assert_line(&r,
		    "    - \"./\"   # written by sh: 1 path under . (create 1); it holds the unix "
		    "socket ./dev.sock, which docker connected to");
	infer_result_free(&r);
}

/* the learning sandbox masks credential stores: a key the host has looked missing there; a
 * key the host has not is a probe, and says nothing */
static void test_credentials_masked(void **state)
{
	static const char *const fs[] = {"/srv/home/u/.ssh/id_ed25519", "/srv/proj/x", NULL};
	struct infer_result r;

	(void)state;
	fake_fs = fs;
	infer(HEAD READ("/srv/proj/x") "{\"type\":\"file\",\"op\":\"missing\",\"path\":"
				       "\"/srv/home/u/.ssh/id_ed25519\",\"comm\":\"cat\"}\n"
				       "{\"type\":\"file\",\"op\":\"missing\",\"path\":"
				       "\"/srv/home/u/.aws/credentials\",\"comm\":\"aws\"}\n",
	      &r);
	assert_line(&r, "    # - { path: \"~/.ssh/id_ed25519\", sensitive: true }   # read by cat "
			"(credential store ~/.ssh)");
	assert_no(&r, ".aws");
	assert_int_equal(r.nread, 1);
	assert_non_null(strstr(r.warnings.data, "credential store was read and is not granted: "
						"/srv/home/u/.ssh/id_ed25519 (by cat)"));
	infer_result_free(&r);
}

static void test_forged_paths(void **state)
{
	static const char *const fs[] = {"/srv/proj/x", NULL};
	struct infer_result r;

	(void)state;
	fake_fs = fs;
	/* a path with a newline and one with a quote: neither becomes an extra YAML line or key */
	infer(HEAD READ("/srv/proj/x") READ("/srv/proj/a\\n    - /") READ("/srv/proj/q\\\"x")
		  READ("/srv/proj/../../etc/shadow"),
	      &r);
	assert_no(&r, "    - /\n");
	assert_no(&r, "a\n");
	assert_non_null(strstr(r.warnings.data, "control characters"));
	/* the .. walk is undone before the checks: a credential store, not granted */
	assert_line(&r, "    # - { path: \"/etc/shadow\"");
	/* the quote is escaped (and the path is gone from the disk: not granted) */
	assert_int_equal(r.nread, 1);
	infer_result_free(&r);
}

/* ------------------------------------------------------------ names that are not plain YAML */

/* what a trace can choose (a path, a process name, a host, a refusal, an env name) never
 * becomes a policy line of its own: @text's policy parses, and holds exactly these grants */
static struct wd_policy *infer_parsed(const char *text, struct infer_result *res)
{
	struct trace t;
	struct infer_opts o = opts();
	struct policy_diags d;
	struct wd_policy *p = NULL;

	parse_ok(text, &t);
	assert_int_equal(infer_policy(&t, &o, res), 0);
	policy_diags_init(&d);
	if (policy_parse(res->yaml.data, res->yaml.len, "/srv/proj/policy.yaml", &p, &d) ||
	    d.errors) {
		fprintf(stderr, "does not parse:\n%s\n", res->yaml.data);
		for (size_t i = 0; i < d.n; i++)
			fprintf(stderr, "%d:%d: %s\n", d.v[i].line, d.v[i].col, d.v[i].msg);
	}
	assert_int_equal(d.errors, 0);
	assert_non_null(p);
	policy_diags_free(&d);
	trace_free(&t);
	return p;
}

static bool granted(const struct policy_grant *g, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(g[i].path, path))
			return true;
	return false;
}

#define FILE_EV(op, p, comm)                                                                       \
	"{\"type\":\"file\",\"op\":\"" op "\",\"path\":\"" p "\",\"comm\":\"" comm "\"}\n"

/* a process name is the program's to choose (prctl(PR_SET_NAME)); it is written in a comment,
 * and a line break in it (\n in a forged trace; \r and U+2028 even from the recorder, which
 * cuts /proc/PID/comm at its first \n) must not end that comment */
static void test_comm_stays_comment(void **state)
{
	static const char *const fs[] = {"/srv/proj/x",	  "/srv/proj/y",    "/srv/proj/z",
					 "/srv/proj/log", "/srv/proj/log2", NULL};
	struct infer_result r;
	struct wd_policy *p;

	(void)state;
	fake_fs = fs;
	p = infer_parsed(HEAD FILE_EV("read", "/srv/proj/x", "\\n    - /srv\\n#")
			     FILE_EV("read", "/srv/proj/y", "\\r    - /etc\\r#")
				 FILE_EV("read", "/srv/proj/z", "\\u2028    - /o\\u2028#")
				     FILE_EV("write", "/srv/proj/log", "\\n    - /srv\\n#")
					 FILE_EV("write", "/srv/proj/log2", "\\r    - /home\\r#"),
			 &r);
	assert_int_equal(p->nread, 3);
	assert_true(granted(p->read, p->nread, "./x"));
	assert_true(granted(p->read, p->nread, "./y"));
	assert_true(granted(p->read, p->nread, "./z"));
	assert_int_equal(p->nwrite, 2);
	assert_true(granted(p->write, p->nwrite, "./log"));
	assert_true(granted(p->write, p->nwrite, "./log2"));
	policy_free(p);
	infer_result_free(&r);
	/* positive control: a plain name is in its comment */
	p = infer_parsed(HEAD FILE_EV("read", "/srv/proj/x", "sh"), &r);
	assert_int_equal(p->nread, 1);
	assert_line(&r, "    - \"./x\"   # read by sh: ./x");
	policy_free(p);
	infer_result_free(&r);
}

static void test_names_stay_quoted(void **state)
{
	static const char *const fs[] = {
	    "/srv/a/#x", "/srv/a/a: b",		  "/srv/a/*s",	       "/srv/b/&a",    "/srv/b/!t",
	    "/srv/b/-d", "/srv/c/l\xe2\x80\xa8m", "/srv/c/n\xc2\x85o", "/srv/c/t\tab", NULL};
	struct infer_result r;
	struct wd_policy *p;

	(void)state;
	fake_fs = fs;
	/* grants whose names YAML reads specially unquoted (#, ": ", a leading *, &, !, -, the
	 * line breaks U+2028 and U+0085, a tab); a refusal and a host that would end their
	 * comment; env names a policy cannot hold */
	p = infer_parsed(
	    HEAD FILE_EV("read", "/srv/a/#x", "sh") FILE_EV("read", "/srv/a/a: b", "sh") FILE_EV(
		"read", "/srv/a/*s",
		"sh") FILE_EV("read", "/srv/b/&a",
			      "sh") FILE_EV("read", "/srv/b/!t",
					    "sh") FILE_EV("read", "/srv/b/-d",
							  "sh") FILE_EV("read", "/srv/c/l\\u2028m",
									"sh")
		FILE_EV("read", "/srv/c/n\\u0085o", "sh") FILE_EV(
		    "read", "/srv/c/t\\tab",
		    "sh") "{\"type\":\"net\",\"host\":\"api.lab.test\",\"port\":443,\"proto\":"
			  "\"tls\"}\n"
			  "{\"type\":\"net\",\"host\":\"10.1.1.1\",\"port\":80,\"proto\":\"http\","
			  "\"refused\":\"x\\n    - evil.test\\n#\"}\n"
			  "{\"type\":\"net\",\"host\":\"x\\u2028    - "
			  "evil2.test\\u2028#\",\"port\":80,"
			  "\"proto\":\"http\"}\n"
			  "{\"type\":\"env\",\"name\":\"-X\"}\n{\"type\":\"env\",\"name\":\"*Y\"}\n"
			  "{\"type\":\"env\",\"name\":\"#Z\"}\n{\"type\":\"env\",\"name\":"
			  "\"A\\nB\"}\n"
			  "{\"type\":\"env\",\"name\":\"OK\"}\n",
	    &r);
	/* the grants are the traced paths, whole, and nothing else */
	assert_int_equal(p->nread, 8);
	assert_true(granted(p->read, p->nread, "/srv/a/#x"));
	assert_true(granted(p->read, p->nread, "/srv/a/a: b"));
	assert_true(granted(p->read, p->nread, "/srv/a/*s"));
	assert_true(granted(p->read, p->nread, "/srv/b/&a"));
	assert_true(granted(p->read, p->nread, "/srv/b/!t"));
	assert_true(granted(p->read, p->nread, "/srv/b/-d"));
	assert_true(granted(p->read, p->nread, "/srv/c/l\xe2\x80\xa8m"));
	assert_true(granted(p->read, p->nread, "/srv/c/n\xc2\x85o"));
	assert_int_equal(p->nwrite, 0);
	assert_int_equal(p->nrules, 1);
	assert_int_equal(p->nenv_allow, 1);
	assert_string_equal(p->env_allow[0], "OK");
	/* the tab is no grant, and said so */
	assert_non_null(strstr(r.warnings.data, "control characters"));
	policy_free(p);
	infer_result_free(&r);
}

/* ------------------------------------------------------------ writes */

static void test_writes(void **state)
{
	static const char *const fs[] = {"/srv/proj/log.txt", "/srv/proj/src/a.c", NULL};
	struct infer_result r;

	(void)state;
	fake_fs = fs;
	infer(HEAD READ("/srv/proj/src/a.c") "{\"type\":\"file\",\"op\":\"write\",\"path\":\"/srv/"
					     "proj/log.txt\"}\n"
					     "{\"type\":\"file\",\"op\":\"create\",\"path\":\"/srv/"
					     "proj/build\"}\n"
					     "{\"type\":\"file\",\"op\":\"create\",\"path\":\"/srv/"
					     "proj/build/a.o\"}\n"
					     "{\"type\":\"file\",\"op\":\"create\",\"path\":\"/srv/"
					     "proj/build/obj/b.o\"}\n"
					     "{\"type\":\"file\",\"op\":\"create\",\"path\":\"/srv/"
					     "home/u/.hist\"}\n"
					     "{\"type\":\"file\",\"op\":\"write\",\"path\":\"/usr/"
					     "lib/x\"}\n",
	      &r);
	assert_line(&r, "  write:");
	assert_line(&r, "    - \"./build/\"");	/* made by the program, then used: a folder */
	assert_line(&r, "    - \"./log.txt\""); /* only written: the file */
	assert_line(&r, "    - \"./src/a.c\"");
	assert_int_equal(r.nwrite, 2);
	assert_no(&r, "obj");
	assert_no(&r, "- \"~\"");
	assert_non_null(
	    strstr(r.warnings.data, "/srv/home/u/.hist needs the whole of /srv/home/u"));
	assert_non_null(strstr(r.warnings.data, "/usr/lib/x lies in the runtime base"));
	infer_result_free(&r);
}

/* ------------------------------------------------------------ network, env, limits */

#define NET(h, p) "{\"type\":\"net\",\"host\":\"" h "\",\"port\":" #p ",\"proto\":\"tls\"}\n"

static void test_network(void **state)
{
	struct infer_result r;

	(void)state;
	fake_fs = NULL;
	infer(HEAD NET("a.cdn.lab.test", 443) NET("b.cdn.lab.test", 443) NET("c.cdn.lab.test", 443)
		  NET("d.cdn.lab.test", 443) NET("api.lab.test", 443) NET("api.lab.test", 80) NET(
		      "db.lab.test", 5432) NET("db.lab.test", 5433) NET("x.co.uk", 443)
		      NET("y.co.uk", 443) NET("z.co.uk", 443) NET("w.co.uk", 443) NET(
			  "10.0.0.1",
			  443) "{\"type\":\"net\",\"host\":\"169.254.169.254\",\"port\":80,"
			       "\"proto\":\"http\","
			       "\"refused\":\"link-local\"}\n"
			       "{\"type\":\"net\",\"host\":\"only.lab.test\",\"proto\":\"dns\"}\n",
	      &r);
	assert_line(&r, "    - \"*.cdn.lab.test:443\"");
	assert_line(&r, "    - \"api.lab.test\""); /* 80 and 443: the bare name */
	assert_line(&r, "    - { host: \"db.lab.test\", ports: [5432, 5433] }");
	assert_line(&r, "    - \"x.co.uk:443\""); /* never *.co.uk */
	assert_no(&r, "*.co.uk");
	assert_no(&r, "- \"a.cdn");
	assert_no(&r, "- \"10.0.0.1");
	assert_no(&r, "- \"169.254");
	assert_no(&r, "- \"only.lab.test");
	assert_line(&r, "  #   169.254.169.254:80 (link-local): refused during the trace");
	assert_line(&r, "  #   only.lab.test: resolved, never connected to");
	infer_result_free(&r);
}

/* names the policy's host syntax refuses are notes, not rules (found by fuzz_trace_file:
 * `b..dn.lab.test` became a rule the policy parser refused: an empty label) */
static void test_network_bad_names(void **state)
{
	struct infer_result r;
	struct wd_policy *p;

	(void)state;
	fake_fs = NULL;
	p = infer_parsed(HEAD NET("b..dn.lab.test", 443) NET(".x.lab.test", 443)
			     NET("-a.lab.test", 443) NET("a-.lab.test", 443)
				 NET("a_b.lab.test", 443) NET("ok-1.lab.test", 443),
			 &r);
	/* positive control: the one good name is the one rule */
	assert_int_equal(p->nrules, 1);
	assert_line(&r, "    - \"ok-1.lab.test:443\"");
	assert_line(&r, "  #   b..dn.lab.test:443: an address or not a host name");
	assert_line(&r, "  #   a_b.lab.test:443: an address or not a host name");
	policy_free(p);
	infer_result_free(&r);
}

static void test_env_limits(void **state)
{
	struct infer_result r;

	(void)state;
	fake_fs = NULL;
	infer(HEAD
	      "{\"type\":\"env\",\"name\":\"PATH\"}\n{\"type\":\"env\",\"name\":\"GH_TOKEN\"}\n"
	      "{\"type\":\"env\",\"name\":\"PATH\"}\n"
	      "{\"type\":\"limits\",\"peak_memory_kib\":90000,\"peak_pids\":7,"
	      "\"wall_ms\":12400}\n",
	      &r);
	assert_line(&r, "    - GH_TOKEN   # looks like a secret");
	assert_line(&r, "    - PATH");
	/* a short trace's figures times the margin are under the floors: the floors win, the
	 * comment keeps what was measured */
	assert_line(&r, "  memory_mb: 256   # peak 88 MiB seen, times 2, rounded up, at least 256");
	assert_line(&r, "  pids: 64   # 7 processes and threads at most, times 2, at least 64");
	assert_line(&r, "  timeout_s: 60   # ran 12.4 s, times 3, rounded up, at least 60");
	infer_result_free(&r);
	infer(HEAD "{\"type\":\"limits\",\"peak_memory_kib\":400000,\"peak_pids\":50,"
		   "\"wall_ms\":40000}\n",
	      &r);
	assert_line(&r,
		    "  memory_mb: 1000   # peak 391 MiB seen, times 2, rounded up, at least 256");
	assert_line(&r, "  pids: 100   # 50 processes and threads at most, times 2, at least 64");
	assert_line(&r, "  timeout_s: 200   # ran 40.0 s, times 3, rounded up, at least 60");
	infer_result_free(&r);
}

/* issue 27: a program that spoke JSON-RPC on its stdio (an MCP server) gets no timeout, with a
 * comment saying why; memory and pids keep their floors. Control: the same trace without the
 * flag gets the floor timeout. */
static void test_limits_jsonrpc(void **state)
{
	struct infer_result r;
	struct wd_policy *p;

	(void)state;
	fake_fs = NULL;
	p = infer_parsed(HEAD "{\"type\":\"limits\",\"peak_memory_kib\":30000,\"peak_pids\":9,"
			      "\"wall_ms\":800,\"stdio_jsonrpc\":true}\n",
			 &r);
	assert_int_equal(p->limits.timeout_s, 0);
	assert_int_equal(p->limits.memory_mb, 256);
	assert_int_equal(p->limits.pids, 64);
	assert_no(&r, "\n  timeout_s:");
	assert_line(&r,
		    "  # timeout_s: none. It spoke JSON-RPC on stdin and stdout (an MCP server)");
	assert_line(&r,
		    "  # lives as long as its client, and the trace's 0.8 s say nothing of that.");
	assert_line(&r, "  memory_mb: 256   # peak 30 MiB seen, times 2, rounded up, at least 256");
	policy_free(p);
	infer_result_free(&r);
	p = infer_parsed(HEAD "{\"type\":\"limits\",\"peak_memory_kib\":30000,\"peak_pids\":9,"
			      "\"wall_ms\":800,\"stdio_jsonrpc\":false}\n",
			 &r);
	assert_int_equal(p->limits.timeout_s, 60);
	policy_free(p);
	infer_result_free(&r);
	/* only the flag and the wall time: the comment, and no empty `limits:` key */
	p = infer_parsed(HEAD "{\"type\":\"limits\",\"wall_ms\":800,\"stdio_jsonrpc\":true}\n", &r);
	assert_int_equal(p->limits.timeout_s, 0);
	assert_line(&r, "# limits:");
	policy_free(p);
	infer_result_free(&r);
	parse_bad(HEAD "{\"type\":\"limits\",\"stdio_jsonrpc\":1}\n",
		  "\"stdio_jsonrpc\" must be true or false");
}

/* a trace whose every env name is one a policy cannot hold: the policy still parses (found by
 * fuzz_trace_file: "env:\n  allow:\n" with only comments below is an empty value) */
static void test_env_none_valid(void **state)
{
	struct infer_result r;

	(void)state;
	fake_fs = NULL;
	infer(HEAD "{\"type\":\"env\",\"name\":\"-X\"}\n{\"type\":\"env\",\"name\":\"1Y\"}\n", &r);
	assert_line(&r, "    # (a variable whose name a policy cannot hold)");
	infer_result_free(&r);
	/* positive control: one valid name beside them */
	infer(HEAD "{\"type\":\"env\",\"name\":\"-X\"}\n{\"type\":\"env\",\"name\":\"OK\"}\n", &r);
	assert_line(&r, "    - OK");
	infer_result_free(&r);
}

/* a trace whose only file events are refused sockets or credential stores: the
 * `filesystem:` section holds only comments, and the policy still parses (found by
 * fuzz_trace_file: "filesystem:" with only comments below is an empty value) */
static void test_files_only_comments(void **state)
{
	static const char *const fs[] = {"/srv/home/u/.ssh/id_ed25519", "/srv/proj/x", NULL};
	struct infer_result r;

	(void)state;
	fake_fs = fs;
	infer(HEAD CONNECT("/srv/home/u/.rd/docker.sock", ",\"refused\":\"not named\""), &r);
	assert_line(&r, "    # - \"~/.rd/docker.sock\"");
	assert_int_equal(r.nread, 0);
	infer_result_free(&r);
	infer(HEAD READ("/srv/home/u/.ssh/id_ed25519"), &r);
	assert_line(&r, "    # - { path: \"~/.ssh/id_ed25519\"");
	infer_result_free(&r);
	/* positive control: with a grant beside them, the section is a mapping as before */
	infer(HEAD READ("/srv/home/u/.ssh/id_ed25519") READ("/srv/proj/x"), &r);
	assert_line(&r, "filesystem:");
	assert_line(&r, "    - \"./x\"");
	infer_result_free(&r);
}

/* env names YAML reads as null or a boolean unquoted stay names (found by fuzz_trace_file:
 * `- Null` is an empty value) */
static void test_env_yaml_words(void **state)
{
	static const char *const words[] = {"NULL", "Null", "OK",   "n",
					    "null", "off",  "true", "yes"};
	struct infer_result r;
	struct wd_policy *p;

	(void)state;
	fake_fs = NULL;
	p = infer_parsed(HEAD "{\"type\":\"env\",\"name\":\"Null\"}\n"
			      "{\"type\":\"env\",\"name\":\"NULL\"}\n"
			      "{\"type\":\"env\",\"name\":\"null\"}\n"
			      "{\"type\":\"env\",\"name\":\"true\"}\n"
			      "{\"type\":\"env\",\"name\":\"yes\"}\n"
			      "{\"type\":\"env\",\"name\":\"off\"}\n"
			      "{\"type\":\"env\",\"name\":\"n\"}\n"
			      "{\"type\":\"env\",\"name\":\"OK\"}\n",
			 &r);
	assert_int_equal(p->nenv_allow, 8);
	for (size_t i = 0; i < 8; i++)
		assert_string_equal(p->env_allow[i], words[i]);
	/* positive control: a plain name is written as before */
	assert_line(&r, "    - OK");
	policy_free(p);
	infer_result_free(&r);
}

static void test_nice_up(void **state)
{
	(void)state;
	assert_int_equal(infer_nice_up(0), 1);
	assert_int_equal(infer_nice_up(1), 1);
	assert_int_equal(infer_nice_up(3), 5);
	assert_int_equal(infer_nice_up(14), 20);
	assert_int_equal(infer_nice_up(176), 200);
	assert_int_equal(infer_nice_up(201), 500);
	assert_int_equal(infer_nice_up(501), 1000);
}

static void test_starter_parses(void **state)
{
	struct wd_buf b = WD_BUF_INIT;
	struct policy_diags d;
	struct wd_policy *p = NULL;

	(void)state;
	assert_int_equal(infer_starter(&b, "2026-12-01"), 0);
	policy_diags_init(&d);
	assert_int_equal(policy_parse(b.data, b.len, "policy.yaml", &p, &d), 0);
	assert_int_equal(d.errors, 0);
	policy_free(p);
	policy_diags_free(&d);
	wd_buf_free(&b);
}

/* an MCP server's tools in a trace: read strictly, pinned by the policy init writes */
static void test_mcp_tools(void **state)
{
	struct trace t;
	struct infer_opts o = opts();
	struct infer_result res;
	struct policy_diags d;
	struct wd_policy *p = NULL;
	const char *text =
	    HEAD "{\"type\":\"limits\",\"stdio_jsonrpc\":true}\n"
		 "{\"type\":\"tool\",\"def\":{\"name\":\"echo\",\"description\":\"Echo\","
		 "\"inputSchema\":{\"type\":\"object\"}}}\n"
		 "{\"type\":\"tool\",\"def\":{\"name\":\"add\",\"annotations\":{}}}\n";

	(void)state;
	parse_ok(text, &t);
	assert_int_equal(json_array_size(t.tools), 2);
	o.pin = "policy.pin.json";
	assert_int_equal(infer_policy(&t, &o, &res), 0);
	assert_non_null(strstr(res.yaml.data, "mcp:\n"));
	assert_non_null(strstr(res.yaml.data, "  pin: \"policy.pin.json\"\n"));
	assert_non_null(strstr(res.yaml.data, "The 2 MCP tools"));
	policy_diags_init(&d);
	assert_int_equal(policy_parse(res.yaml.data, res.yaml.len, "/srv/proj/policy.yaml", &p, &d),
			 0);
	assert_int_equal(d.errors, 0);
	assert_string_equal(p->mcp_pin, "policy.pin.json");
	policy_free(p);
	policy_diags_free(&d);
	infer_result_free(&res);
	/* no pin file (-o -): a comment says how to make one */
	o.pin = NULL;
	assert_int_equal(infer_policy(&t, &o, &res), 0);
	assert_null(strstr(res.yaml.data, "\nmcp:"));
	assert_non_null(strstr(res.yaml.data, "# mcp:\n#   pin: FILE   # it listed 2 MCP tools"));
	infer_result_free(&res);
	trace_free(&t);
	/* no tools: no mcp key */
	parse_ok(HEAD, &t);
	o.pin = "policy.pin.json";
	assert_int_equal(infer_policy(&t, &o, &res), 0);
	assert_null(strstr(res.yaml.data, "mcp"));
	infer_result_free(&res);
	trace_free(&t);
	parse_bad(HEAD "{\"type\":\"tool\",\"def\":{\"description\":\"x\"}}\n",
		  "t.jsonl:2: a tool's \"name\" must be a string of 1 to 200 bytes");
	parse_bad(HEAD "{\"type\":\"tool\",\"def\":{\"name\":\"\"}}\n", "a tool's \"name\"");
	parse_bad(HEAD "{\"type\":\"tool\",\"def\":[]}\n", "t.jsonl:2: \"def\" must be an object");
	parse_bad(HEAD "{\"type\":\"tool\",\"def\":{\"name\":\"a\",\"title\":\"x\"}}\n",
		  "t.jsonl:2: unknown key \"title\" in a \"tool def\" event");
	parse_bad(HEAD "{\"type\":\"tool\",\"def\":{\"name\":\"a\"},\"x\":1}\n",
		  "unknown key \"x\" in a \"tool\" event");
	parse_bad(HEAD "{\"type\":\"tool\",\"def\":{\"name\":\"a\",\"description\":1}}\n",
		  "a tool's \"description\" must be a string");
	parse_bad(HEAD "{\"type\":\"tool\",\"def\":{\"name\":\"a\",\"inputSchema\":\"s\"}}\n",
		  "must be objects");
	parse_bad(HEAD "{\"type\":\"tool\",\"def\":{\"name\":\"a\"}}\n"
		       "{\"type\":\"tool\",\"def\":{\"name\":\"a\"}}\n",
		  "t.jsonl:3: the tool \"a\" is listed twice");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_trace_parse_good),
	    cmocka_unit_test(test_trace_parse_bad),
	    cmocka_unit_test(test_fold_reads),
	    cmocka_unit_test(test_fold_three_stay),
	    cmocka_unit_test(test_never_fold_wide),
	    cmocka_unit_test(test_skipped_paths),
	    cmocka_unit_test(test_tmp),
	    cmocka_unit_test(test_credentials_commented),
	    cmocka_unit_test(test_credentials_masked),
	    cmocka_unit_test(test_sockets),
	    cmocka_unit_test(test_forged_paths),
	    cmocka_unit_test(test_comm_stays_comment),
	    cmocka_unit_test(test_names_stay_quoted),
	    cmocka_unit_test(test_writes),
	    cmocka_unit_test(test_network),
	    cmocka_unit_test(test_network_bad_names),
	    cmocka_unit_test(test_env_limits),
	    cmocka_unit_test(test_limits_jsonrpc),
	    cmocka_unit_test(test_env_none_valid),
	    cmocka_unit_test(test_files_only_comments),
	    cmocka_unit_test(test_env_yaml_words),
	    cmocka_unit_test(test_nice_up),
	    cmocka_unit_test(test_starter_parses),
	    cmocka_unit_test(test_mcp_tools),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
