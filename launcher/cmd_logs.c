/* cmd_logs.c - `warden logs`: show the audit log (its rotated ".1" file, then the current
 * one) as a table or raw JSON lines; filter, then tail; follow; check its chain and signed
 * run records (--verify). */
#include "launcher/cli.h"
#include "run/run.h"
#include "audit/audit.h"
#include "common/common.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Columns of the table. ACTION is as wide as the longest action we write and is never cut
 * (a longer one from a newer writer pushes the row); REASON, the last, is cut only on
 * housekeeping rows. */
enum {
	W_TIME = 23,
	W_RUN = 16,
	W_TYPE = 5,
	W_ACTION = 22,
	W_VERDICT = 8,
	W_RESOURCE = 40,
	W_HOUSEKEEPING_REASON = 60,
};

/* Lines shown before following when --tail is not given (as tail -f does). */
#define FOLLOW_DEFAULT_TAIL 10
/* Lines shown on a terminal when --tail is not given. */
#define TERMINAL_DEFAULT_TAIL 50
/* Public keys --verify takes (--key), besides the person's own. */
#define VERIFY_KEYS_MAX 8
/* Runs an ambiguous --run prefix lists. */
#define PREFIX_LIST_MAX 10

/* Rows of a run's plumbing that the table hides unless --all (docs/audit.md, "Reading"):
 * allowed events of type run that say how the run was built, not what it did. */
static const char *const housekeeping[] = {
    "run.gateway-register",
    "run.gateway-unregister",
    "run.liveness",
    "run.mcp",
};

struct logs_opts {
	const char *path;
	const char *run;
	bool denied;
	bool would; /* --would-deny */
	const char *type;
	bool json;
	bool follow;
	bool has_tail;
	size_t tail;
	bool tail_default; /* @tail is the terminal's default, not asked for */
	const char *tool;
	bool all;
	size_t matched; /* events that passed the filters */
	bool verify;
	const char *verify_file; /* --verify FILE; NULL: PATH.1 and PATH */
	const char *keys[VERIFY_KEYS_MAX];
	size_t nkeys;
};

/* Keeps the last @cap matching lines (raw bytes) for --tail with filters. */
struct ring {
	char **lines;
	size_t cap, head, count;
};

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: warden logs [--tail N] [--follow] [--json] [--run ID] [--denied] [--all]\n"
	    "                   [--would-deny] [--audit-log PATH] [--tool NAME] [--type TYPE]\n"
	    "       warden logs --verify [--key PUBKEY]... [--audit-log PATH] [FILE]\n"
	    "\n"
	    "Show the audit log: one row per event (time in UTC, run, type, action,\n"
	    "allow/DENY/would or a run's exit status, resource, reason), or the raw JSON lines\n"
	    "with --json. A rotated log's PATH.1 is read first, then PATH.\n"
	    "\n"
	    "  -n, --tail N          only the last N matching events (on a terminal, the\n"
	    "                        last %d unless --tail is given)\n"
	    "  -f, --follow          keep printing events as they are written (shows the\n"
	    "                        last %d first unless --tail is given)\n"
	    "      --json            print the log's own JSON lines (every event)\n"
	    "      --run ID          only events of run ID, or of the one run whose id\n"
	    "                        starts with ID\n"
	    "      --denied          only denied events\n"
	    "      --would-deny      only what a shadow run (warden run --shadow) let through\n"
	    "                        that its policy denies (\"decision\": \"would_deny\")\n"
	    "      --all             also the housekeeping rows the table hides (run.liveness,\n"
	    "                        run.gateway-register, run.gateway-unregister, run.mcp)\n"
	    "      --audit-log PATH  read PATH (default: $WARDEN_AUDIT_LOG, else\n"
	    "                        ${XDG_STATE_HOME:-~/.local/state}/warden/audit.jsonl)\n"
	    "      --tool NAME       only events that happened while a call of the MCP\n"
	    "                        tool NAME was in flight (their `mcp` names it)\n"
	    "      --type TYPE       only events of TYPE: run, dns, net, file, limit, mcp,\n"
	    "                        audit\n"
	    "      --verify [FILE]   check the hash chain (PATH.1 then PATH, or FILE alone)\n"
	    "                        and every signed run.exit (and a gateway daemon's\n"
	    "                        run.record); print the first broken,\n"
	    "                        removed or reordered line as FILE:LINE\n"
	    "      --key PUBKEY      with --verify: also accept run records signed by the\n"
	    "                        ed25519 key in PUBKEY (PEM); the person's own key\n"
	    "                        (${XDG_STATE_HOME:-~/.local/state}/warden/audit-key.pem)\n"
	    "                        always counts\n"
	    "  -h, --help            show this help\n"
	    "\n"
	    "Filters combine, and apply before --tail. Corrupt or torn lines are skipped\n"
	    "and counted on stderr. A log that does not exist yet is not an error.\n"
	    "Exit: 0 ok, 1 --verify found a problem, 2 usage error, ambiguous --run or\n"
	    "unreadable log.\n",
	    TERMINAL_DEFAULT_TAIL, FOLLOW_DEFAULT_TAIL);
}

static int usage_error(const char *fmt, const char *arg)
{
	struct wd_buf b = WD_BUF_INIT;

	wd_buf_printf(&b, fmt, arg);
	wd_say(stderr, "warden logs: %s", wd_buf_cstr(&b));
	fprintf(stderr, "Try 'warden logs --help'.\n");
	wd_buf_free(&b);
	return WD_EXIT_USAGE;
}

static int parse_count(const char *s, size_t *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > SIZE_MAX / 2)
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}

static int parse_args(int argc, char **argv, struct logs_opts *o)
{
	enum {
		OPT_JSON = 256,
		OPT_RUN,
		OPT_DENIED,
		OPT_LOG,
		OPT_TOOL,
		OPT_TYPE,
		OPT_ALL,
		OPT_WOULD,
		OPT_VERIFY,
		OPT_KEY,
	};
	static const char *const types[] = {"run", "dns", "net", "file", "limit", "mcp", "audit"};
	static const struct option longopts[] = {
	    {"tail", required_argument, NULL, 'n'},
	    {"follow", no_argument, NULL, 'f'},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"run", required_argument, NULL, OPT_RUN},
	    {"denied", no_argument, NULL, OPT_DENIED},
	    {"would-deny", no_argument, NULL, OPT_WOULD},
	    {"audit-log", required_argument, NULL, OPT_LOG},
	    {"help", no_argument, NULL, 'h'},
	    {"tool", required_argument, NULL, OPT_TOOL},
	    {"type", required_argument, NULL, OPT_TYPE},
	    {"all", no_argument, NULL, OPT_ALL},
	    {"verify", no_argument, NULL, OPT_VERIFY},
	    {"key", required_argument, NULL, OPT_KEY},
	    {NULL, 0, NULL, 0},
	};
	const char *override = NULL;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":n:fh", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_count(optarg, &o->tail) < 0)
				return usage_error("--tail wants a number of lines, not '%s'",
						   optarg);
			o->has_tail = true;
			break;
		case 'f':
			o->follow = true;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_RUN:
			o->run = optarg;
			break;
		case OPT_DENIED:
			o->denied = true;
			break;
		case OPT_WOULD:
			o->would = true;
			break;
		case OPT_ALL:
			o->all = true;
			break;
		case OPT_VERIFY:
			o->verify = true;
			break;
		case OPT_KEY:
			if (!*optarg || o->nkeys == VERIFY_KEYS_MAX)
				return usage_error("--key wants a public key file (at most 8)%s",
						   "");
			o->keys[o->nkeys++] = optarg;
			break;
		case OPT_LOG:
			if (!*optarg)
				return usage_error("--audit-log wants a path%s", "");
			override = optarg;
			break;
		case OPT_TOOL:
			if (!*optarg)
				return usage_error("--tool wants a tool name%s", "");
			o->tool = optarg;
			break;
		case OPT_TYPE:
			o->type = NULL;
			for (size_t i = 0; i < WD_ARRAY_SIZE(types); i++)
				if (!strcmp(optarg, types[i]))
					o->type = types[i];
			if (!o->type)
				return usage_error(
				    "--type wants run, dns, net, file, limit, mcp or "
				    "audit, not '%s'",
				    optarg);
			break;
		case 'h':
			usage(stdout);
			return -1;
		case ':':
			return usage_error("%s wants an argument", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (o->verify && optind < argc)
		o->verify_file = argv[optind++];
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (o->nkeys && !o->verify)
		return usage_error("--key goes with --verify%s", "");
	if (o->follow && !o->has_tail) {
		o->tail = FOLLOW_DEFAULT_TAIL;
		o->has_tail = true;
	} else if (!o->has_tail && !o->json && isatty(STDOUT_FILENO)) {
		o->tail = TERMINAL_DEFAULT_TAIL;
		o->has_tail = o->tail_default = true;
	}
	o->path = run_audit_path(override);
	if (!o->path) {
		fprintf(stderr,
			"warden logs: cannot find a home folder for the audit log; set HOME "
			"or pass --audit-log PATH\n");
		return WD_EXIT_USAGE;
	}
	return 0;
}

/* whether a call of MCP tool @tool was in flight when @ev happened (its mcp.calls name it) */
static bool tool_in_flight(const struct audit_event *ev, const char *tool)
{
	json_t *m = ev->mcp ? json_loads(ev->mcp, 0, NULL) : NULL, *c;
	bool found = false;
	size_t i;

	json_array_foreach(json_object_get(m, "calls"), i, c)
	{
		const char *t = json_string_value(json_object_get(c, "tool"));

		found |= t && !strcmp(t, tool);
	}
	json_decref(m);
	return found;
}

/* is_housekeeping() - an allowed event about the run's plumbing (the table hides it) */
static bool is_housekeeping(const struct audit_event *ev)
{
	if (!ev->allowed || ev->type != AUDIT_TYPE_RUN)
		return false;
	for (size_t i = 0; i < WD_ARRAY_SIZE(housekeeping); i++)
		if (!strcmp(ev->action, housekeeping[i]))
			return true;
	return false;
}

static bool matches(const struct logs_opts *o, const struct audit_event *ev)
{
	if (o->tool && !tool_in_flight(ev, o->tool))
		return false;
	if (o->run && strcmp(ev->run, o->run) != 0)
		return false;
	if (o->type && strcmp(audit_event_type(ev), o->type) != 0)
		return false;
	if (o->denied && ev->allowed)
		return false;
	if (o->would && !(ev->decision && !strcmp(ev->decision, AUDIT_WOULD_DENY)))
		return false;
	if (!o->all && !o->json && is_housekeeping(ev))
		return false;
	return true;
}

/* filtered() - whether any filter is set (else --tail may seek instead of reading all) */
static bool filtered(const struct logs_opts *o)
{
	return o->run || o->denied || o->would || o->tool || o->type || (!o->all && !o->json);
}

/*
 * put_cell() - append @s for a terminal through the one escaper (wd_esc_append(): a hostile
 * hostname cannot move the cursor or recolour the screen), cut to @width columns with "...",
 * and padded to @width when @pad. A @width of 0 means no limit.
 */
static void put_cell(struct wd_buf *b, const char *s, size_t width, bool pad)
{
	int cols = wd_esc_append(b, s, width);

	for (size_t c = cols > 0 ? (size_t)cols : 0; pad && c < width; c++)
		wd_buf_append(b, " ", 1);
}

static void print_header(void)
{
	wd_say(stdout, "%-*s  %-*s  %-*s  %-*s  %-*s  %-*s  %s", W_TIME, "TIME (UTC)", W_RUN, "RUN",
	       W_TYPE, "TYPE", W_ACTION, "ACTION", W_VERDICT, "RESULT", W_RESOURCE, "RESOURCE",
	       "REASON");
}

/* sig_abbrev() - "TERM" for 15: glibc's table, elsewhere (the macOS and Windows builds) the
 * signals whose numbers Linux and macOS share; NULL for another */
static const char *sig_abbrev(int sig)
{
#ifdef __GLIBC__
	return sigabbrev_np(sig);
#else
	switch (sig) {
	case 1:
		return "HUP";
	case 2:
		return "INT";
	case 3:
		return "QUIT";
	case 6:
		return "ABRT";
	case 9:
		return "KILL";
	case 11:
		return "SEGV";
	case 13:
		return "PIPE";
	case 14:
		return "ALRM";
	case 15:
		return "TERM";
	default:
		return NULL;
	}
#endif
}

/* verdict() - the RESULT cell: allow or DENY ("would": a shadow run let through what its policy
 * denies); for run.exit the program's status ("exit 56",
 * "SIGKILL"), and "FAIL 125" when warden itself ended the run */
static const char *verdict(const struct audit_event *ev, char *buf, size_t size)
{
	const char *abbrev;

	if (ev->type != AUDIT_TYPE_RUN || strcmp(ev->action, "run.exit") != 0 ||
	    !(ev->has & AUDIT_HAS_EXIT))
		return ev->decision && !strcmp(ev->decision, AUDIT_WOULD_DENY) ? "would"
		       : ev->allowed					       ? "allow"
									       : "DENY";
	if ((ev->has & AUDIT_HAS_SIGNAL) && ev->signal > 0 && ev->signal < 65 &&
	    (abbrev = sig_abbrev((int)ev->signal)))
		snprintf(buf, size, "SIG%s", abbrev);
	else if (ev->has & AUDIT_HAS_SIGNAL)
		snprintf(buf, size, "sig %lld", (long long)ev->signal);
	else
		snprintf(buf, size, "%s %lld", ev->allowed ? "exit" : "FAIL", (long long)ev->exit);
	return buf;
}

static void print_row(const struct audit_event *ev)
{
	struct wd_buf row = WD_BUF_INIT, res = WD_BUF_INIT;
	char when[64] = "?", result[32];
	int cols;
	struct tm tm;

	if (gmtime_r(&ev->ts.tv_sec, &tm))
		snprintf(when, sizeof(when), "%04d-%02d-%02d %02d:%02d:%02d.%03ld",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec, (ev->ts.tv_nsec / 1000000) % 1000);
	if (ev->type == AUDIT_TYPE_FILE && strlen(ev->resource) > W_RESOURCE) {
		/* a path's end names the file: cut its start (at a character's first byte) */
		const char *t = ev->resource + strlen(ev->resource) - (W_RESOURCE - 3);

		while (*t && ((unsigned char)*t & 0xc0) == 0x80)
			t++;
		wd_buf_printf(&res, "...%s", t);
	} else {
		wd_buf_puts(&res, ev->resource);
	}
	if ((ev->has & AUDIT_HAS_PORT) && ev->type == AUDIT_TYPE_NET)
		wd_buf_printf(&res, ":%lld", (long long)ev->port);
	put_cell(&row, when, W_TIME, true);
	wd_buf_puts(&row, "  ");
	put_cell(&row, ev->run, W_RUN, true);
	wd_buf_puts(&row, "  ");
	put_cell(&row, audit_event_type(ev), W_TYPE, true);
	wd_buf_puts(&row, "  ");
	cols = wd_esc_append(&row, ev->action, 0); /* whole: never cut */
	for (int c = cols > 0 ? cols : 0; c < W_ACTION; c++)
		wd_buf_append(&row, " ", 1);
	wd_buf_puts(&row, "  ");
	put_cell(&row, verdict(ev, result, sizeof(result)), W_VERDICT, true);
	wd_buf_puts(&row, "  ");
	put_cell(&row, wd_buf_cstr(&res), W_RESOURCE, true);
	wd_buf_puts(&row, "  ");
	put_cell(&row, ev->reason, is_housekeeping(ev) ? W_HOUSEKEEPING_REASON : 0, false);
	while (row.len && row.data[row.len - 1] == ' ')
		row.len--;
	wd_buf_append(&row, "\n", 1);
	fwrite(row.data, 1, row.len, stdout);
	wd_buf_free(&row);
	wd_buf_free(&res);
}

static void print_event(const struct logs_opts *o, const struct audit_event *ev, const char *line,
			size_t len)
{
	if (o->json) {
		fwrite(line, 1, len, stdout);
		fputc('\n', stdout);
	} else {
		print_row(ev);
	}
}

static int ring_push(struct ring *r, const char *line, size_t len)
{
	char *copy = strndup(line, len);

	if (!copy)
		return -ENOMEM;
	if (r->count == r->cap) {
		free(r->lines[r->head]);
		r->lines[r->head] = copy;
		r->head = (r->head + 1) % r->cap;
	} else {
		r->lines[(r->head + r->count++) % r->cap] = copy;
	}
	return 0;
}

static void ring_flush(const struct logs_opts *o, struct ring *r)
{
	if (!r->cap)
		return;
	for (size_t i = 0; i < r->count; i++) {
		char *line = r->lines[(r->head + i) % r->cap];
		struct audit_event ev;

		if (audit_event_decode(line, strlen(line), &ev, NULL) == 0) {
			print_event(o, &ev, line, strlen(line));
			audit_event_clear(&ev);
		}
		free(line);
	}
	r->count = r->head = 0;
}

static void report_skipped(unsigned long now, unsigned long *reported)
{
	unsigned long n = now - *reported;

	if (!n)
		return;
	fflush(stdout);
	wd_say(stderr, "warden logs: skipped %lu %scorrupt line%s", n, *reported ? "more " : "",
	       n == 1 ? "" : "s");
	*reported = now;
}

/* drain() - print (or keep for --tail) every event available now. Return: 0 or -errno. */
static int drain(struct logs_opts *o, struct audit_reader *r, struct ring *ring)
{
	struct audit_event ev;
	const char *line;
	size_t len;
	int ret;

	while ((ret = audit_reader_next(r, &ev)) == 1) {
		if (matches(o, &ev)) {
			o->matched++;
			line = audit_reader_line(r, &len);
			if (ring)
				ret = ring_push(ring, line, len);
			else
				print_event(o, &ev, line, len);
		}
		audit_event_clear(&ev);
		if (ret < 0)
			return ret;
	}
	return ret;
}

static int follow(struct logs_opts *o, struct audit_reader *r, unsigned long *reported)
{
	int ret;

	for (;;) {
		fflush(stdout);
		ret = audit_reader_wait(r, -1);
		if (ret < 0)
			return ret;
		ret = drain(o, r, NULL);
		if (ret < 0)
			return ret;
		report_skipped(audit_reader_skipped(r), reported);
	}
}

/* add_run() - note run id @id in @ids (distinct, at most PREFIX_LIST_MAX + 1 kept) */
static void add_run(char **ids, size_t *n, const char *id)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(ids[i], id))
			return;
	if (*n <= PREFIX_LIST_MAX && (ids[*n] = strdup(id)))
		(*n)++;
}

/* scan_runs() - the run ids in @path that start with @prefix, into @ids. Return: 0 or -errno. */
static int scan_runs(const char *path, const char *prefix, char **ids, size_t *n)
{
	struct audit_reader *r;
	struct audit_event ev;
	size_t plen = strlen(prefix);
	int ret;

	ret = audit_reader_open(path, 0, &r, NULL);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return ret;
	while ((ret = audit_reader_next(r, &ev)) == 1) {
		if (!strncmp(ev.run, prefix, plen) && *ev.run)
			add_run(ids, n, ev.run);
		audit_event_clear(&ev);
	}
	audit_reader_close(r);
	return ret;
}

/*
 * resolve_run() - --run ID as `warden kill` takes it: the run whose id is ID, else the one
 * run whose id starts with ID; several: a usage error listing them. @o->run is replaced by
 * the whole id (static storage). Return: 0, or WD_EXIT_USAGE.
 */
static int resolve_run(struct logs_opts *o, const char *old)
{
	static char whole[128];
	char *ids[PREFIX_LIST_MAX + 1];
	size_t n = 0;
	bool exact = false;
	int ret = 0;

	if (!o->run)
		return 0;
	if (old)
		ret = scan_runs(old, o->run, ids, &n);
	if (ret == 0)
		ret = scan_runs(o->path, o->run, ids, &n);
	for (size_t i = 0; i < n; i++)
		exact |= !strcmp(ids[i], o->run);
	if (ret == 0 && n == 1 && !exact && strlen(ids[0]) < sizeof(whole)) {
		strcpy(whole, ids[0]);
		o->run = whole;
	} else if (ret == 0 && n > 1 && !exact) {
		wd_say(stderr, "warden logs: --run %s is ambiguous; it starts the ids of:", o->run);
		for (size_t i = 0; i < n && i < PREFIX_LIST_MAX; i++)
			wd_say(stderr, "  %s", ids[i]);
		if (n > PREFIX_LIST_MAX)
			fprintf(stderr, "  and more\n");
		fprintf(stderr, "Give more of the id.\n");
		ret = WD_EXIT_USAGE;
	}
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	return ret < 0 ? 0 : ret; /* an unreadable log is reported when it is read */
}

/* read_rotated() - the events of the rotated file @old, into @ring (or printed) */
static int read_rotated(struct logs_opts *o, const char *old, struct ring *ring,
			unsigned long *skipped)
{
	struct audit_reader *r = NULL;
	struct wd_err err = {0};
	int ret;

	ret = audit_reader_open(old, 0, &r, &err);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0) {
		wd_say(stderr, "warden logs: %s", err.msg);
		return ret;
	}
	ret = drain(o, r, ring);
	*skipped = audit_reader_skipped(r);
	audit_reader_close(r);
	return ret;
}

/* load_keys() - the person's own key (when there is one) and the --key files. Return: how
 * many, or -1 (said on stderr) */
static int load_keys(const struct logs_opts *o, struct audit_key **keys)
{
	const char *own = run_audit_key_path();
	struct wd_err err = {0};
	int n = 0;

	if (own && access(own, F_OK) == 0) {
		if (audit_key_load(own, false, &keys[n], &err) < 0) {
			wd_say(stderr, "warden logs: %s", err.msg);
			return -1;
		}
		n++;
	}
	for (size_t i = 0; i < o->nkeys; i++) {
		if (audit_key_load(o->keys[i], false, &keys[n], &err) < 0) {
			wd_say(stderr, "warden logs: %s", err.msg);
			while (n > 0)
				audit_key_free(keys[--n]);
			return -1;
		}
		n++;
	}
	return n;
}

/* verify() - `warden logs --verify`: exit 0 (intact), 1 (a problem, named), 2 (unreadable) */
static int verify(const struct logs_opts *o, const char *old)
{
	static const char *const words[] = {
	    [AUDIT_VERIFY_OK] = "ok",
	    [AUDIT_VERIFY_BROKEN] = "broken chain",
	    [AUDIT_VERIFY_UNCHAINED] = "not chained",
	    [AUDIT_VERIFY_BAD_SIG] = "bad signature",
	    [AUDIT_VERIFY_UNKNOWN_KEY] = "unknown key",
	    [AUDIT_VERIFY_BAD_ROOT] = "bad run root",
	    [AUDIT_VERIFY_NO_ANCHOR] = "missing anchor",
	    [AUDIT_VERIFY_BAD_ANCHOR] = "bad anchor",
	};
	struct audit_key *keys[VERIFY_KEYS_MAX + 1] = {0};
	struct audit_verify_result res;
	struct wd_err err = {0};
	const char *paths[2];
	size_t npaths = 0;
	struct stat st;
	int nkeys, ret, status;

	if (o->verify_file) {
		paths[npaths++] = o->verify_file;
	} else {
		if (stat(old, &st) == 0)
			paths[npaths++] = old;
		paths[npaths++] = o->path;
	}
	nkeys = load_keys(o, keys);
	if (nkeys < 0)
		return WD_EXIT_USAGE;
	ret = audit_verify(paths, npaths, keys, (size_t)nkeys, &res, &err);
	if (ret < 0) {
		wd_say(stderr, "warden logs: %s", err.msg);
		status = WD_EXIT_USAGE;
	} else if (res.status != AUDIT_VERIFY_OK) {
		wd_say(stderr, "%s:%llu: %s: %s", res.file, (unsigned long long)res.line,
		       words[res.status], res.why);
		status = 1;
	} else {
		wd_say(stdout,
		       "warden logs: %s: OK: %llu lines chained, %llu signed run records verified, "
		       "%llu signed anchors (%llu run.exit unsigned, %llu whose run began in an "
		       "earlier file, %llu lines before the chain began)",
		       paths[npaths - 1], (unsigned long long)(res.lines - res.unchained),
		       (unsigned long long)res.runs, (unsigned long long)res.anchors,
		       (unsigned long long)res.unsigned_exits, (unsigned long long)res.partial,
		       (unsigned long long)res.unchained);
		status = WD_EXIT_OK;
	}
	for (int i = 0; i < nkeys; i++)
		audit_key_free(keys[i]);
	return status;
}

int cmd_logs(int argc, char **argv)
{
	struct logs_opts o = {0};
	struct audit_reader *r = NULL;
	struct ring ring = {0};
	unsigned long reported = 0, old_skipped = 0, old_reported = 0;
	struct wd_err err = {0};
	struct stat st;
	char *old = NULL;
	bool have_old;
	int ret, status = WD_EXIT_OK;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? WD_EXIT_OK : ret;
	if (asprintf(&old, "%s" AUDIT_ROTATED_SUFFIX, o.path) < 0)
		return WD_EXIT_INTERNAL;
	if (o.verify) {
		status = verify(&o, old);
		free(old);
		return status;
	}
	have_old = stat(old, &st) == 0;
	ret = resolve_run(&o, have_old ? old : NULL);
	if (ret) {
		free(old);
		return ret;
	}
	if (stat(o.path, &st) < 0 && errno == ENOENT && !have_old) {
		wd_say(stderr, "warden logs: no audit log at %s yet%s", o.path,
		       o.follow ? "; waiting for it" : "");
		if (!o.follow) {
			free(old);
			return WD_EXIT_OK;
		}
	}
	ret = audit_reader_open(o.path, o.follow ? AUDIT_READER_FOLLOW : 0, &r, &err);
	if (ret == -ENOENT && have_old) {
		ret = 0; /* only the rotated file (the next writer makes the path again) */
	} else if (ret < 0) {
		wd_say(stderr, "warden logs: %s", err.msg);
		free(old);
		return WD_EXIT_USAGE;
	}
	if (o.has_tail) {
		/* Without filters and a rotated file, start near the end instead of reading all. */
		if ((!filtered(&o) && !have_old) || o.tail == 0) {
			if (r)
				ret = audit_reader_tail(r, o.tail);
			have_old = false;
		}
		if (ret == 0 && o.tail > 0) {
			ring.cap = o.tail;
			ring.lines = calloc(o.tail, sizeof(*ring.lines));
			if (!ring.lines)
				ret = -ENOMEM;
		}
	}
	if (!o.json)
		print_header();
	if (ret == 0 && have_old && (!o.has_tail || ring.cap))
		ret = read_rotated(&o, old, o.has_tail ? &ring : NULL, &old_skipped);
	if (ret == 0 && r && (!o.has_tail || ring.cap))
		ret = drain(&o, r, o.has_tail ? &ring : NULL);
	ring_flush(&o, &ring);
	report_skipped(old_skipped, &old_reported);
	if (r)
		report_skipped(audit_reader_skipped(r), &reported);
	if (ret == 0 && o.tail_default && o.matched > o.tail) {
		fflush(stdout);
		fprintf(stderr,
			"warden logs: the last %zu of %zu events (all of them: --tail %zu, or pipe "
			"the output)\n",
			o.tail, o.matched, o.matched);
	}
	if (ret == 0 && o.follow && r)
		ret = follow(&o, r, &reported);
	if (ret < 0) {
		fflush(stdout);
		wd_say(stderr, "warden logs: reading %s: %s", o.path, strerror(-ret));
		status = WD_EXIT_USAGE;
	}
	free(ring.lines);
	free(old);
	audit_reader_close(r);
	return status;
}
