/* pin.c - `warden mcp pin -p POLICY [--accept] [-- SERVER ARGS...]`: show a wrapped MCP server's
 * tools against the policy's pin file (mcp.pin, run/mcppin.h) and, with --accept, pin them.
 *
 * The server is untrusted: it runs under `warden run -p POLICY` like any other run (the same
 * sandbox, network and audit), with WARDEN_MCP_PIN_LEARN=1 so that its relay does not hide the
 * tools this verb is here to read (mcp.tools allow/deny still apply: a denied tool is neither
 * shown nor pinned). This verb is its MCP client: initialize, notifications/initialized,
 * tools/list (every page), then stdin closed. Each tool is compared with its pin: `+` new,
 * `~` changed (which fields), `=` the same, `-` pinned but gone. */
#include "mcp/pin.h"
#include "common/common.h"
#include "policy/policy.h"
#include "run/mcppin.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Exit statuses (warden(1)'s: 2 usage, 125 Warden failed). */
enum { PIN_OK = 0, PIN_DIFFER = 1, PIN_USAGE = 2, PIN_FAILED = 125 };

/* How long the server may take to answer all of it. */
#define PIN_TIMEOUT_MS 60000
/* Most tools/list pages read. */
#define PIN_PAGES 100

/* the server's end: its stdin, its stdout, what was read and not used yet */
struct talk {
	pid_t pid;
	int in, out;
	struct wd_buf buf;
	uint64_t deadline;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: warden mcp pin -p POLICY [--accept] [-- SERVER ARGS...]\n"
		"\n"
		"Start the MCP server (the policy's command, or SERVER) under `warden run -p\n"
		"POLICY`, list its tools and compare each with the policy's pin file (mcp.pin):\n"
		"`+` new, `~` changed, `=` as pinned, `-` pinned but gone. With --accept, the\n"
		"tools as listed now become the pin file; `warden run` hides a tool that is new\n"
		"or changed since and refuses calls of it.\n"
		"\n"
		"Exit: 0 pinned (--accept) or nothing differs; 1 something differs; 2 bad options\n"
		"or policy; 125 the server could not be asked.\n");
}

static int send_line(struct talk *t, const char *s)
{
	size_t n = strlen(s), off = 0;

	while (off < n) {
		ssize_t w = write(t->in, s + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		off += (size_t)w;
	}
	return write(t->in, "\n", 1) == 1 ? 0 : -EPIPE;
}

/* the server's answer to request @id (other lines skipped); NULL with @err on EOF, timeout,
 * or a line that is not JSON */
static json_t *answer(struct talk *t, json_int_t id, char *err, size_t size)
{
	for (;;) {
		char *nl = t->buf.len ? memchr(t->buf.data, '\n', t->buf.len) : NULL;
		struct pollfd p = {t->out, POLLIN, 0};
		char chunk[65536];
		uint64_t now = wd_mono_ns();
		ssize_t n;

		if (nl) {
			size_t len = (size_t)(nl - t->buf.data);
			json_t *j = json_loadb(t->buf.data, len, JSON_REJECT_DUPLICATES, NULL);

			memmove(t->buf.data, nl + 1, t->buf.len - len - 1);
			t->buf.len -= len + 1;
			if (j && json_integer_value(json_object_get(j, "id")) == id &&
			    !json_object_get(j, "method"))
				return j;
			json_decref(j); /* a notification, a request of the server's, a log line */
			continue;
		}
		if (now >= t->deadline) {
			snprintf(err, size, "the server did not answer within %d s",
				 PIN_TIMEOUT_MS / 1000);
			return NULL;
		}
		if (poll(&p, 1, (int)((t->deadline - now) / 1000000) + 1) < 0 && errno != EINTR) {
			snprintf(err, size, "poll: %s", strerror(errno));
			return NULL;
		}
		if (!p.revents)
			continue;
		n = read(t->out, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, size, "the server's stdout ended before its answer");
			return NULL;
		}
		if (wd_buf_append(&t->buf, chunk, (size_t)n)) {
			snprintf(err, size, "out of memory");
			return NULL;
		}
	}
}

/* `warden run -q -p POLICY [-- CMD...]` with pipes for stdin and stdout */
static int spawn(struct talk *t, const char *policy, char **cmd, int ncmd)
{
	char self[PATH_MAX], **argv;
	int inp[2], outp[2], k = 0;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return -errno;
	self[n] = '\0';
	argv = calloc((size_t)ncmd + 8, sizeof(*argv));
	if (!argv)
		return -ENOMEM;
	argv[k++] = self;
	argv[k++] = (char *)"run";
	argv[k++] = (char *)"-q";
	argv[k++] = (char *)"-p";
	argv[k++] = (char *)policy;
	if (ncmd)
		argv[k++] = (char *)"--";
	for (int i = 0; i < ncmd; i++)
		argv[k++] = cmd[i];
	if (pipe2(inp, O_CLOEXEC) || pipe2(outp, O_CLOEXEC)) {
		free(argv);
		return -errno;
	}
	t->pid = fork();
	if (t->pid == 0) {
		if (dup2(inp[0], 0) < 0 || dup2(outp[1], 1) < 0)
			_exit(125);
		setenv("WARDEN_MCP_PIN_LEARN", "1", 1);
		execv(self, argv);
		dprintf(2, "warden mcp pin: exec %s: %s\n", self, strerror(errno));
		_exit(125);
	}
	free(argv);
	close(inp[0]);
	close(outp[1]);
	t->in = inp[1];
	t->out = outp[0];
	return t->pid < 0 ? -errno : 0;
}

/* the server's tools: initialize, initialized, every tools/list page into @tools */
static int ask(struct talk *t, json_t *tools, char *err, size_t size)
{
	char line[1024];
	json_t *a;
	const char *cursor = NULL;
	char *cur = NULL;
	int ret = 0;

	snprintf(line, sizeof(line),
		 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
		 "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{"
		 "\"name\":\"warden-mcp-pin\",\"version\":\"%s\"}}}",
		 WARDEN_VERSION);
	if (send_line(t, line) || !(a = answer(t, 1, err, size))) {
		if (!err[0])
			snprintf(err, size, "the server's stdin closed");
		return -EIO;
	}
	if (!json_object_get(a, "result")) {
		snprintf(err, size, "the server refused initialize");
		json_decref(a);
		return -EIO;
	}
	json_decref(a);
	if (send_line(t, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}")) {
		snprintf(err, size, "the server's stdin closed");
		return -EIO;
	}
	for (json_int_t id = 2; id < 2 + PIN_PAGES && !ret; id++) {
		json_t *req = json_pack("{s:s, s:I, s:s}", "jsonrpc", "2.0", "id", id, "method",
					"tools/list");
		json_t *page;
		char *s;
		size_t i;

		if (req && cursor)
			json_object_set_new(req, "params", json_pack("{s:s}", "cursor", cursor));
		s = req ? json_dumps(req, JSON_COMPACT) : NULL;
		json_decref(req);
		if (!s || send_line(t, s)) {
			free(s);
			snprintf(err, size, "the server's stdin closed");
			ret = -EIO;
			break;
		}
		free(s);
		a = answer(t, id, err, size);
		page = json_object_get(json_object_get(a, "result"), "tools");
		if (!json_is_array(page)) {
			if (a)
				snprintf(err, size, "the server's tools/list answer has no tools");
			json_decref(a);
			ret = -EIO;
			break;
		}
		for (i = 0; i < json_array_size(page); i++)
			json_array_append(tools, json_array_get(page, i));
		cursor =
		    json_string_value(json_object_get(json_object_get(a, "result"), "nextCursor"));
		free(cur);
		cur = cursor ? strdup(cursor) : NULL;
		cursor = cur;
		json_decref(a);
		if (!cursor)
			break;
	}
	free(cur);
	return ret;
}

/* the server's stdin closed, its run waited for (stopped after 10 s) */
static void finish(struct talk *t)
{
	int status;

	wd_closep(&t->in);
	for (int i = 0; i < 100; i++) {
		if (waitpid(t->pid, &status, WNOHANG) == t->pid)
			goto out;
		nanosleep(&(struct timespec){0, 100000000}, NULL);
	}
	kill(t->pid, SIGTERM);
	waitpid(t->pid, &status, 0);
out:
	wd_closep(&t->out);
	wd_buf_free(&t->buf);
}

/* one line per tool against the old pins; Return: how many differ */
static int report(const json_t *tools, const json_t *old)
{
	const char *name;
	json_t *t, *v, *now = json_object();
	char what[200];
	int differ = 0;
	size_t i;

	json_array_foreach(tools, i, t)
	{
		const char *n = json_string_value(json_object_get(t, "name"));
		enum run_mcppin_verdict vd;

		if (!n)
			continue;
		json_object_set_new(now, n, json_true());
		vd = old ? run_mcppin_compare(old, t, what, sizeof(what)) : RUN_MCPPIN_NEW;
		if (vd == RUN_MCPPIN_SAME)
			wd_say(stdout, "= %s", n);
		else if (vd == RUN_MCPPIN_NEW)
			wd_say(stdout, "+ %s  (new)", n);
		else
			wd_say(stdout, "~ %s  (changed: %s)", n, what);
		differ += vd != RUN_MCPPIN_SAME;
	}
	json_object_foreach((json_t *)old, name, v)
	{
		if (!json_object_get(now, name)) {
			wd_say(stdout, "- %s  (pinned, no longer listed)", name);
			differ++;
		}
	}
	json_decref(now);
	return differ;
}

int mcp_pin_main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"policy", required_argument, NULL, 'p'},
	    {"accept", no_argument, NULL, 'A'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *policy = NULL;
	bool accept = false;
	struct wd_policy *p = NULL;
	struct policy_diags d;
	struct talk t = {.in = -1, .out = -1};
	json_t *tools = NULL, *old = NULL, *cmd = NULL;
	char path[PATH_MAX], err[PATH_MAX + 300] = "";
	int c, ret, differ;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:h", opts, NULL)) != -1) {
		if (c == 'p')
			policy = optarg;
		else if (c == 'A')
			accept = true;
		else {
			usage(c == 'h' ? stdout : stderr);
			return c == 'h' ? PIN_OK : PIN_USAGE;
		}
	}
	if (!policy || (optind < argc && strcmp(argv[optind - 1], "--"))) {
		usage(stderr);
		return PIN_USAGE;
	}
	policy_diags_init(&d);
	ret = policy_load(policy, NULL, &p, &d);
	policy_diags_free(&d);
	if (ret) {
		wd_say(stderr,
		       "warden mcp pin: %s is not a valid policy (`warden policy check %s`)",
		       policy, policy);
		return PIN_USAGE;
	}
	if (!p->mcp_pin) {
		wd_say(stderr,
		       "warden mcp pin: %s has no mcp.pin; add `mcp: { pin: tools.pin.json }` (a "
		       "file beside the policy)",
		       policy);
		policy_free(p);
		return PIN_USAGE;
	}
	if (run_mcppin_path(policy, p->mcp_pin, path, sizeof(path))) {
		wd_say(stderr, "warden mcp pin: mcp.pin: the path is too long");
		policy_free(p);
		return PIN_USAGE;
	}
	ret = run_mcppin_load(path, &old, err, sizeof(err));
	if (ret && ret != -ENOENT) {
		wd_say(stderr, "warden mcp pin: %s", err);
		policy_free(p);
		return PIN_USAGE;
	}
	err[0] = '\0';
	tools = json_array();
	t.deadline = wd_mono_ns() + (uint64_t)PIN_TIMEOUT_MS * 1000000;
	signal(SIGPIPE, SIG_IGN);
	ret = tools ? spawn(&t, policy, argv + optind, argc - optind) : -ENOMEM;
	if (!ret)
		ret = ask(&t, tools, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "starting `warden run`: %s", strerror(-ret));
	if (t.pid > 0)
		finish(&t);
	if (ret) {
		wd_say(stderr, "warden mcp pin: %s", err);
		ret = PIN_FAILED;
		goto out;
	}
	differ = report(tools, old);
	if (!accept) {
		if (differ)
			wd_say(stdout,
			       "%d differ from %s; accept them with: warden mcp pin --accept -p %s",
			       differ, path, policy);
		else
			wd_say(stdout, "all %zu tools as pinned in %s", json_array_size(tools),
			       path);
		ret = differ || !old ? PIN_DIFFER : PIN_OK;
		goto out;
	}
	cmd = json_array();
	for (int i = optind; cmd && i < argc; i++)
		json_array_append_new(cmd, json_string(argv[i]));
	for (size_t i = 0; cmd && !json_array_size(cmd) && i < p->ncommand; i++)
		json_array_append_new(cmd, json_string(p->command[i]));
	ret = run_mcppin_save(path, tools, cmd, err, sizeof(err));
	if (ret) {
		wd_say(stderr, "warden mcp pin: %s", err);
		ret = PIN_FAILED;
		goto out;
	}
	wd_say(stdout, "pinned %zu tools into %s", json_array_size(tools), path);
	ret = PIN_OK;
out:
	json_decref(cmd);
	json_decref(tools);
	json_decref(old);
	policy_free(p);
	return ret;
}
