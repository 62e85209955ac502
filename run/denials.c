/* denials.c - the end-of-run denial block of `warden run`: the run's denials read back from
 * the audit log (the gateway's and the launcher's, by run id, from just after run.start),
 * grouped by what was refused, each with how often, its denial id and the policy line that
 * would allow it; printed on stderr unless -q (warden(1), THE RUN, step 8). A shadow run's
 * "would_deny" events get a second block of the same shape: what the policy would have blocked. */
#include "run/denials.h"
#include "run/internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* is_host_name() - @s is a host name as network.allow takes it (folded, not an address) */
/* @s needs no quoting in a shell (the flag the block offers is pasted as it is) */
static bool shell_plain(const char *s)
{
	return *s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
			       "_./,+:@%=-") == strlen(s);
}

static bool is_host_name(const char *s);

/* an IPv4 or IPv6 address as text */
static bool is_address(const char *s)
{
	unsigned char a[16];

	return inet_pton(AF_INET, s, a) == 1 || inet_pton(AF_INET6, s, a) == 1;
}

/* A path or name goes into a YAML "..." string as it is only without these. */
static bool yaml_plain(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\')
			return false;
	return *s != '\0';
}

static bool is_host_name(const char *s)
{
	char folded[WD_NAME_MAX + 1];
	size_t last, i;

	if (wd_name_fold(s, strlen(s), 0, folded, sizeof(folded), &last) != WD_NAME_OK ||
	    strcmp(folded, s) != 0)
		return false;
	/* an all-numeric last label is an address, which network.allow names by cidr */
	for (i = last; folded[i] >= '0' && folded[i] <= '9'; i++)
		;
	return folded[i] != '\0';
}

/* the facts of one denial: what, its kind, and the line and flag that would allow it */
struct facts {
	struct wd_buf what, allow, flag;
	const char *kind;
};

static int net_facts(const struct audit_event *ev, struct facts *f)
{
	bool port = ev->has & AUDIT_HAS_PORT;
	int ret;

	if (!strcmp(ev->action, "net.udp")) {
		f->kind = "udp";
		return wd_buf_printf(&f->what, "%s:%lld", ev->dst ? ev->dst : ev->resource,
				     (long long)ev->port);
	}
	f->kind = "network";
	ret = port ? wd_buf_printf(&f->what, "%s:%lld", ev->resource, (long long)ev->port)
		   : wd_buf_puts(&f->what, ev->resource);
	if (ret < 0 || !port || !ev->reason)
		return ret;
	if (strstr(ev->reason, "(no network.allow rule matches)") && is_address(ev->resource)) {
		ret = wd_buf_printf(&f->allow, "network.allow: [{cidr: \"%s/%d\", ports: [%lld]}]",
				    ev->resource, strchr(ev->resource, ':') ? 128 : 32,
				    (long long)ev->port);
	} else if (strstr(ev->reason, "(no network.allow rule matches)") &&
		   is_host_name(ev->resource)) {
		ret = wd_buf_printf(&f->allow, "network.allow: [\"%s:%lld\"]", ev->resource,
				    (long long)ev->port);
		if (!ret)
			ret = wd_buf_printf(&f->flag, "--allow %s:%lld", ev->resource,
					    (long long)ev->port);
	} else if (strstr(ev->reason, "no cidr rule allows") && ev->dst && is_address(ev->dst)) {
		ret = wd_buf_printf(&f->allow, "network.allow: [{cidr: \"%s/%d\", ports: [%lld]}]",
				    ev->dst, strchr(ev->dst, ':') ? 128 : 32, (long long)ev->port);
	}
	return ret;
}

static int dns_facts(const struct audit_event *ev, struct facts *f)
{
	int ret;

	f->kind = "dns";
	ret = wd_buf_puts(&f->what, ev->resource);
	/* "NAME is not allowed by policy P" (not a ceiling's "NAME is ...", not a refused type) */
	if (!ret && ev->reason && strstr(ev->reason, " is not allowed by policy ") &&
	    is_host_name(ev->resource)) {
		ret = wd_buf_printf(&f->allow, "network.allow: [\"%s\"]", ev->resource);
		if (!ret)
			ret = wd_buf_printf(&f->flag, "--allow %s", ev->resource);
	}
	return ret;
}

static int file_facts(const struct audit_event *ev, struct facts *f)
{
	bool write = ev->op && (!strcmp(ev->op, "write") || !strcmp(ev->op, "create"));
	int ret;

	f->kind = write ? "file write" : "file read";
	ret = wd_buf_puts(&f->what, ev->resource);
	if (!ret && yaml_plain(ev->resource) && ev->resource[0] == '/') {
		ret = wd_buf_printf(&f->allow, "filesystem.%s: [\"%s\"]", write ? "write" : "read",
				    ev->resource);
		if (!ret && shell_plain(ev->resource))
			ret = wd_buf_printf(&f->flag, "--%s %s", write ? "write" : "read",
					    ev->resource);
	}
	return ret;
}

static int limit_facts(const struct audit_event *ev, struct facts *f)
{
	static const struct {
		const char *action, *key;
		int64_t unit;
	} keys[] = {
	    {"limit.memory", "memory_mb", 1 << 20},
	    {"limit.time", "timeout_s", 1000},
	    {"limit.pids", "pids", 1},
	};
	int ret;

	f->kind = "limit";
	ret = wd_buf_puts(&f->what, ev->action);
	for (size_t i = 0; !ret && i < WD_ARRAY_SIZE(keys); i++)
		if (!strcmp(ev->action, keys[i].action) && (ev->has & AUDIT_HAS_LIMIT)) {
			long long now = ev->limit / keys[i].unit;

			ret = wd_buf_printf(&f->allow, "limits.%s: %lld  (now %lld)", keys[i].key,
					    2 * now, now);
		}
	return ret;
}

static char *dup_or_null(const struct wd_buf *b, int *ret)
{
	char *s = strdup(b->len ? wd_buf_cstr(b) : "");

	if (!s)
		*ret = -ENOMEM;
	return s;
}

static int add_group(struct run_denials *d, struct facts *f, const struct audit_event *ev)
{
	struct run_denial *g;
	int ret = 0;

	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 8;
		struct run_denial *v = realloc(d->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		d->v = v;
		d->cap = cap;
	}
	g = &d->v[d->n];
	memset(g, 0, sizeof(*g));
	g->kind = f->kind;
	g->what = dup_or_null(&f->what, &ret);
	g->allow = dup_or_null(&f->allow, &ret);
	g->flag = dup_or_null(&f->flag, &ret);
	g->why = strdup(ev->reason ? ev->reason : "");
	if (ret < 0 || !g->why) {
		free(g->what);
		free(g->allow);
		free(g->flag);
		free(g->why);
		return -ENOMEM;
	}
	d->n++;
	return 0;
}

int run_denials_add(struct run_denials *d, const struct audit_event *ev)
{
	uint64_t count = (ev->has & AUDIT_HAS_COUNT) && ev->count > 0 ? (uint64_t)ev->count : 1;
	struct facts f = {WD_BUF_INIT, WD_BUF_INIT, WD_BUF_INIT, NULL};
	struct run_denial *g = NULL;
	int ret;

	if (d->would ? !ev->decision || strcmp(ev->decision, AUDIT_WOULD_DENY)
		     : ev->allowed || ev->learn)
		return 0;
	switch (ev->type) {
	case AUDIT_TYPE_NET:
		ret = net_facts(ev, &f);
		break;
	case AUDIT_TYPE_DNS:
		ret = dns_facts(ev, &f);
		break;
	case AUDIT_TYPE_FILE:
		ret = file_facts(ev, &f);
		break;
	case AUDIT_TYPE_LIMIT:
		ret = limit_facts(ev, &f);
		break;
	case AUDIT_TYPE_RUN:
	case AUDIT_TYPE_OTHER:
	default:
		return 0;
	}
	d->total += count;
	if (ret < 0 || !f.what.len) /* a summary of accesses without a name: counted only */
		goto out;
	for (size_t i = 0; i < d->n && !g; i++)
		if (d->v[i].kind == f.kind && !strcmp(d->v[i].what, wd_buf_cstr(&f.what)))
			g = &d->v[i];
	if (!g) {
		ret = add_group(d, &f, ev);
		if (ret < 0)
			goto out;
		g = &d->v[d->n - 1];
	}
	g->count += count;
	if (ev->denial_id && strlen(ev->denial_id) < sizeof(g->id))
		strcpy(g->id, ev->denial_id);
out:
	wd_buf_free(&f.what);
	wd_buf_free(&f.allow);
	wd_buf_free(&f.flag);
	return ret < 0 ? ret : 0;
}

/* one group: its line, and the line that says how to allow it (or why not) */
static int render_group(const struct run_denial *g, bool would, struct wd_buf *out)
{
	int ret;

	ret = wd_buf_printf(out, "  %s  %s, %llu time%s%s%s\n", g->what, g->kind,
			    (unsigned long long)g->count, g->count == 1 ? "" : "s",
			    !g->id[0] ? ""
			    : would   ? ", would-be denial id "
				      : ", denial id ",
			    g->id);
	if (ret < 0)
		return ret;
	if (g->allow[0] && g->flag && g->flag[0])
		return wd_buf_printf(out, "    to allow it: %s (or warden run %s)\n", g->allow,
				     g->flag);
	if (g->allow[0])
		return wd_buf_printf(out, "    to allow it: %s\n", g->allow);
	if (!strcmp(g->kind, "udp"))
		return wd_buf_puts(out, "    no policy line allows it: UDP other than DNS is "
					"not relayed\n");
	return wd_buf_printf(out, "    no policy line allows it: %.100s\n", g->why);
}

int run_denials_render(const struct run_denials *d, const char *run_id, int64_t gw_denied,
		       struct wd_buf *out)
{
	uint64_t shown = 0, unseen, all, more;
	size_t lines = 1, i;
	int ret;

	unseen =
	    gw_denied > 0 && (uint64_t)gw_denied > d->total ? (uint64_t)gw_denied - d->total : 0;
	if (!d->total && !unseen)
		return 0;
	all = d->total + unseen;
	if (d->would)
		ret = wd_buf_printf(out,
				    "warden run: shadow run: the policy would have blocked %llu "
				    "access%s (let through; all of them: warden logs --run %s "
				    "--would-deny)\n",
				    (unsigned long long)all, all == 1 ? "" : "es", run_id);
	else
		ret =
		    wd_buf_printf(out,
				  "warden run: %llu denial%s in this run (all of them: warden logs "
				  "--run %s --denied)\n",
				  (unsigned long long)all, all == 1 ? "" : "s", run_id);
	/* two lines a group; the last line is kept for "and N more" when some do not fit */
	for (i = 0; !ret && i < d->n; i++) {
		size_t room = RUN_DENIALS_MAX_LINES - lines - (unseen ? 1 : 0);

		if (room < 2 || (i + 1 < d->n && room < 3))
			break;
		ret = render_group(&d->v[i], d->would, out);
		lines += 2;
		shown += d->v[i].count;
	}
	more = d->total > shown ? d->total - shown : 0;
	if (!ret && more) {
		ret = wd_buf_printf(out, "  and %llu more: warden logs --run %s --%s\n",
				    (unsigned long long)more, run_id,
				    d->would ? "would-deny" : "denied");
		lines++;
	}
	if (!ret && unseen) {
		ret = wd_buf_printf(out,
				    "  %llu more denied by the gateway, in its own audit log "
				    "(warden logs --audit-log ITS-LOG --run %s)\n",
				    (unsigned long long)unseen, run_id);
		lines++;
	}
	return ret < 0 ? ret : (int)lines;
}

void run_denials_free(struct run_denials *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].what);
		free(d->v[i].allow);
		free(d->v[i].flag);
		free(d->v[i].why);
	}
	free(d->v);
	memset(d, 0, sizeof(*d));
}

/* read_events() - add the denials of run @id in @path to @d and its would-be denials to @w, from
 * @pos when given (-ESTALE: @path is not the file @pos is in). Return: 0 or -errno. */
static int read_events(const char *path, const struct audit_log_pos *pos, const char *id,
		       struct run_denials *d, struct run_denials *w)
{
	struct audit_reader *rd;
	struct audit_event ev;
	int ret;

	ret = audit_reader_open(path, 0, &rd, NULL);
	if (ret < 0)
		return ret;
	if (pos)
		ret = audit_reader_seek(rd, pos);
	while (ret == 0 && (ret = audit_reader_next(rd, &ev)) == 1) {
		ret = strcmp(ev.run, id) ? 0 : run_denials_add(d, &ev);
		if (!ret && !strcmp(ev.run, id))
			ret = run_denials_add(w, &ev);
		audit_event_clear(&ev);
	}
	audit_reader_close(rd);
	return ret;
}

/* the lines of @out said on stderr, each escaped (wd_say()) */
static void say_lines(struct wd_buf *out)
{
	for (char *line = out->data, *nl; line && (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		wd_say(stderr, "%s", line);
	}
}

void run_denials_report(struct run *r, const struct run_counts *c)
{
	struct run_denials d = {0}, w = {.would = true};
	struct wd_buf out = WD_BUF_INIT, wout = WD_BUF_INIT;
	const char *path = audit_log_path(r->audit.log);
	char *old = NULL;
	int ret;

	if (r->o.quiet || r->learner || !r->audit.has_pos)
		return;
	/* after a rotation run.start is in the ".1" file: read it from there, then the path */
	ret = read_events(path, &r->audit.start_pos, r->id, &d, &w);
	if (ret == -ESTALE && asprintf(&old, "%s" AUDIT_ROTATED_SUFFIX, path) > 0) {
		ret = read_events(old, &r->audit.start_pos, r->id, &d, &w);
		if (ret == 0)
			ret = read_events(path, NULL, r->id, &d, &w);
	}
	/* a shadow run's block first: what it is for */
	if (ret == 0 && run_denials_render(&w, r->id, -1, &wout) > 0)
		say_lines(&wout);
	if (ret == 0 && run_denials_render(&d, r->id, c ? c->denied : -1, &out) > 0) {
		say_lines(&out);
	} else if (ret < 0 && c && c->denied > 0) {
		wd_say(stderr,
		       "warden run: %lld denial%s in this run (warden logs --run %s --denied); "
		       "the audit log could not be read back: %s",
		       (long long)c->denied, c->denied == 1 ? "" : "s", r->id, strerror(-ret));
	}
	free(old);
	wd_buf_free(&out);
	wd_buf_free(&wout);
	run_denials_free(&d);
	run_denials_free(&w);
}
