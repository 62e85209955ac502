/* cmd_allowlist.c - `warden allowlist [RUN]` (a live run's network allowlist), `warden
 * allowlist RUN add|remove NAME...` (changed live through its gateway's `replace`), and
 * `warden allowlist approve|deny REQUEST-ID | pending` (a person decides the approval store's
 * requests): one verb, its sub-verbs dispatched by cmd_allowlist() at the bottom.
 *
 * The new policy is composed from the run's current one (its state folder's RUN_POLICY_FILE,
 * what the gateway has): parsed, its network rules changed, rendered again (the gateway reads
 * only the rules; the rest of the sandbox is fixed at start). The change runs as the run's
 * owner (live_as_owner()) under a lock of the run's folder, so two changes do not lose one
 * another; the gateway replaces the policy and closes the run's connections that the new one
 * no longer allows (docs/gateway.md); then the file is updated and the change audited in the
 * run's audit log (run.allowlist: who, what, before and after). A refusal is audited too.
 *
 * A run `warden mcp` started (started_by "mcp", or anything but "") may lose names, never gain
 * them here: an addition needs a person's approval (`warden allowlist approve|deny|pending`,
 * approval_verb() below; the approval store is run/approval.c). Fail closed.
 */
#include "run/approval.h"
#include "launcher/cli.h"
#include "run/live.h"
#include "audit/audit.h"
#include "run/gw.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#define ALLOWLIST_GW_TIMEOUT_MS 5000

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: warden allowlist [RUN]\n"
	    "       warden allowlist RUN add NAME...\n"
	    "       warden allowlist RUN remove NAME...\n"
	    "       warden allowlist approve|deny REQUEST-ID | pending\n"
	    "\n"
	    "Show a live run's network allowlist (every live run's without RUN), or change it\n"
	    "while it runs. NAME is a host (its ports 80 and 443), host:PORT, or *.suffix[:PORT];\n"
	    "remove also takes a rule as `warden allowlist RUN` prints it. Removing a name\n"
	    "closes the run's open connections to it and its DNS stops answering for it.\n"
	    "A run started by `warden mcp` may lose names here but gains one only through\n"
	    "a person's approval.\n");
}

/* ------------------------------------------------------------ composing (pure) */

enum change_op { CHANGE_ADD, CHANGE_REMOVE };

/* NAME as one network.allow rule (parsed by the policy parser itself); NULL: said in @why */
static struct wd_policy *name_rule(const char *name, char *why, size_t wsize)
{
	struct wd_buf doc = WD_BUF_INIT;
	struct policy_diags d;
	struct wd_policy *p = NULL;
	int ret;

	policy_diags_init(&d);
	ret = wd_buf_puts(&doc, "version: 1\nnetwork:\n  allow:\n    - ") ||
	      policy_json_string(&doc, name) || wd_buf_puts(&doc, "\n");
	if (!ret)
		ret = policy_parse(doc.data, doc.len, "NAME", &p, &d);
	if (ret || !p || p->nrules != 1) {
		struct wd_buf m = WD_BUF_INIT;

		policy_diags_sort(&d);
		if (d.n && !policy_diag_format(&d, 0, &m))
			snprintf(why, wsize, "'%s' is not a name to allow: %s", name,
				 wd_buf_cstr(&m));
		else
			snprintf(why, wsize, "'%s' is not a name to allow", name);
		wd_buf_free(&m);
		policy_free(p);
		p = NULL;
	}
	policy_diags_free(&d);
	wd_buf_free(&doc);
	return p;
}

/* whether rule @r is what remove NAME (@name, parsed as @q) names */
static bool named_by(const struct policy_rule *r, const char *name, const struct policy_rule *q)
{
	if (!strcmp(r->text, name))
		return true;
	if (!q || r->kind != q->kind || r->kind == POLICY_RULE_CIDR || strcmp(r->host, q->host))
		return false;
	/* host:PORT names that rule only; a bare host every rule of it */
	return strchr(name, ':') ? !strcmp(r->text, q->text) : true;
}

/* the rules of @p as "a, b" (for the audit event) */
static void rules_text(const struct policy_rule *v, size_t n, struct wd_buf *out)
{
	wd_buf_puts(out, "[");
	for (size_t i = 0; i < n; i++)
		wd_buf_printf(out, "%s%s", i ? ", " : "", v[i].text);
	wd_buf_puts(out, "]");
}

/**
 * struct change - one `add` or `remove` of names
 * @op:		add or remove
 * @names:	the names
 * @n:		how many
 * @actor:	who asks (the caller's uid, kept across live_as_owner())
 * @refused:	why the change is refused before it is composed (a run `warden mcp`
 *		started gains no name here), or NULL
 * @done:	scratch for live_as_owner()
 */
struct change {
	enum change_op op;
	char **names;
	int n;
	uid_t actor;
	const char *refused;
	struct wd_buf done;
};

/* compose @text + @ch into @out; @before/@after the rules as text. Return: 0 (nothing to do
 * is 0 with @out empty and @why saying so), or -EINVAL with @why */
static int compose(const char *text, size_t len, const struct change *ch, struct wd_buf *out,
		   struct wd_buf *before, struct wd_buf *after, char *why, size_t wsize)
{
	struct policy_diags d;
	struct wd_policy *p = NULL;
	struct {
		struct wd_policy *p; /* NAME as a policy of one rule */
	} *add = NULL;
	struct policy_rule *v = NULL, *saved;
	size_t nv = 0, nsaved, cap;
	int ret = 0, changed = 0;

	policy_diags_init(&d);
	ret = policy_parse(text, len, "policy", &p, &d);
	policy_diags_free(&d);
	if (ret) {
		snprintf(why, wsize, "the run's policy does not parse any more: %s",
			 strerror(-ret));
		return -EINVAL;
	}
	cap = p->nrules + (size_t)ch->n;
	v = calloc(cap ? cap : 1, sizeof(*v));
	add = calloc((size_t)ch->n, sizeof(*add));
	if (!v || !add) {
		ret = -ENOMEM;
		snprintf(why, wsize, "out of memory");
		goto out;
	}
	memcpy(v, p->rules, p->nrules * sizeof(*v));
	nv = p->nrules;
	rules_text(v, nv, before);
	for (int i = 0; i < ch->n; i++) {
		const char *name = ch->names[i];
		struct policy_rule *q;
		size_t k = 0, removed = 0;

		add[i].p = name_rule(name, why, wsize);
		if (!add[i].p && (ch->op == CHANGE_ADD || !strchr(name, '/'))) {
			ret = -EINVAL;
			goto out;
		}
		q = add[i].p ? &add[i].p->rules[0] : NULL;
		if (ch->op == CHANGE_ADD) {
			bool have = false;

			for (size_t j = 0; j < nv; j++)
				have |= !strcmp(v[j].text, q->text);
			if (have)
				continue;
			v[nv++] = *q;
			changed++;
			continue;
		}
		for (size_t j = 0; j < nv; j++) {
			if (named_by(&v[j], name, q))
				removed++;
			else
				v[k++] = v[j];
		}
		nv = k;
		if (!removed) {
			/* still allowed by a wider rule? say which, and change nothing */
			int at = q && q->kind != POLICY_RULE_CIDR
				     ? policy_match(p, q->host, q->ports[0])
				     : -1;

			if (at >= 0)
				snprintf(why, wsize,
					 "%s is not a rule of the run's allowlist; it is allowed "
					 "by `%s`: remove that",
					 name, p->rules[at].text);
			else
				snprintf(why, wsize, "%s is not in the run's allowlist", name);
			ret = -ENOENT;
			goto out;
		}
		changed += (int)removed;
	}
	rules_text(v, nv, after);
	if (!changed) {
		snprintf(why, wsize, "nothing to change: already allowed");
		goto out;
	}
	saved = p->rules;
	nsaved = p->nrules;
	p->rules = v;
	p->nrules = nv;
	ret = policy_render_yaml(p, out);
	p->rules = saved;
	p->nrules = nsaved;
	if (ret)
		snprintf(why, wsize, "out of memory");
out:
	for (int i = 0; add && i < ch->n; i++)
		policy_free(add[i].p);
	free(add);
	free(v);
	policy_free(p);
	return ret;
}

/* ------------------------------------------------------------ the change, as the owner */

static void audit_change(const struct live_run *lr, const struct change *ch, bool allowed,
			 const char *reason)
{
	struct audit_event ev = {0};
	struct audit_log *log = NULL;
	struct passwd pw, *pwr = NULL;
	struct wd_buf res = WD_BUF_INIT;
	char pwbuf[1024];
	struct wd_err err;

	if (!lr->rec.audit[0])
		return;
	for (int i = 0; i < ch->n; i++)
		wd_buf_printf(&res, "%s%s", i ? " " : "", ch->names[i]);
	if (getpwuid_r(ch->actor, &pw, pwbuf, sizeof(pwbuf), &pwr) || !pwr)
		pwr = NULL;
	ev.run = lr->rec.id;
	ev.type = AUDIT_TYPE_RUN;
	ev.action = "run.allowlist";
	ev.resource = wd_buf_cstr(&res);
	ev.allowed = allowed;
	ev.reason = reason;
	ev.policy = lr->rec.policy;
	ev.mode = lr->rec.mode;
	ev.has = AUDIT_HAS_PID | AUDIT_HAS_UID;
	ev.pid = getpid();
	ev.uid = ch->actor;
	ev.user = pwr ? pw.pw_name : NULL;
	wd_err_clear(&err);
	if (audit_log_open(lr->rec.audit, &log, &err) ||
	    (audit_log_chain(log), audit_log_write(log, &ev, AUDIT_WRITE_DURABLE, &err)))
		wd_say(stderr, "warden allowlist: audit: %s", err.msg);
	audit_log_close(log);
	wd_buf_free(&res);
}

/* the whole change, as the run's owner; its message on stdout/stderr. Return: 0 or -errno */
static int change_fn(const struct live_run *lr, void *arg, struct wd_buf *out)
{
	struct change *ch = arg;
	struct wd_buf pol = WD_BUF_INIT, before = WD_BUF_INIT, after = WD_BUF_INIT;
	struct wd_buf reason = WD_BUF_INIT;
	char why[1200] = "", *text = NULL;
	json_t *req = NULL;
	size_t len;
	int dfd, ret;

	(void)out;
	dfd = open(lr->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd < 0 || flock(dfd, LOCK_EX) < 0) {
		ret = -errno;
		wd_say(stderr, "warden allowlist: %s: %s", lr->dir, strerror(errno));
		goto out;
	}
	ret = live_policy_read(lr, &text, &len);
	if (ret) {
		wd_say(stderr, "warden allowlist: run %s: its policy (%s/%s): %s", lr->rec.id,
		       lr->dir, RUN_POLICY_FILE, strerror(-ret));
		goto out;
	}
	ret = compose(text, len, ch, &pol, &before, &after, why, sizeof(why));
	if (!ret && !pol.len) {
		wd_say(stdout, "warden allowlist: run %s: %s", lr->rec.id, why);
		goto out;
	}
	if (ret) {
		wd_say(stderr, "warden allowlist: run %s: %s", lr->rec.id, why);
		wd_buf_printf(&reason, "uid %u: %s refused: %s", (unsigned)ch->actor,
			      ch->op == CHANGE_ADD ? "add" : "remove", why);
		audit_change(lr, ch, false, wd_buf_cstr(&reason));
		goto out;
	}
	req = json_pack("{s:s, s:s, s:s%, s:s}", "op", "replace", "id", lr->rec.id, "policy",
			pol.data, pol.len, "policy_name",
			lr->rec.policy_name[0] ? lr->rec.policy_name : "policy");
	ret = req ? run_gw_call(lr->rec.gw_socket, req, ALLOWLIST_GW_TIMEOUT_MS, NULL, why,
				sizeof(why))
		  : -ENOMEM;
	if (ret) {
		/* nothing changed: the gateway keeps the old policy */
		wd_say(stderr, "warden allowlist: run %s: the gateway refused: %s", lr->rec.id,
		       why);
		wd_buf_printf(&reason, "uid %u: %s refused by the gateway: %s", (unsigned)ch->actor,
			      ch->op == CHANGE_ADD ? "add" : "remove", why);
		audit_change(lr, ch, false, wd_buf_cstr(&reason));
		goto out;
	}
	ret = live_policy_write(lr, pol.data, pol.len);
	if (ret)
		wd_say(stderr,
		       "warden allowlist: run %s: the gateway has the new allowlist, but %s/%s "
		       "could not be updated: %s",
		       lr->rec.id, lr->dir, RUN_POLICY_FILE, strerror(-ret));
	wd_buf_printf(&reason, "uid %u %s; before: %s; after: %s", (unsigned)ch->actor,
		      ch->op == CHANGE_ADD ? "added" : "removed (its open connections closed)",
		      wd_buf_cstr(&before), wd_buf_cstr(&after));
	audit_change(lr, ch, true, wd_buf_cstr(&reason));
	wd_say(stdout, "warden allowlist: run %s: %s", lr->rec.id, wd_buf_cstr(&after));
out:
	json_decref(req);
	free(text);
	wd_buf_free(&pol);
	wd_buf_free(&before);
	wd_buf_free(&after);
	wd_buf_free(&reason);
	if (dfd >= 0)
		close(dfd); /* the lock goes with it */
	return ret;
}

/* a refusal decided before anything is composed, audited as the run's owner */
static int refuse_fn(const struct live_run *lr, void *arg, struct wd_buf *out)
{
	const struct change *ch = arg;
	struct wd_buf reason = WD_BUF_INIT;

	(void)out;
	wd_buf_printf(&reason, "uid %u: %s refused: %s", (unsigned)ch->actor,
		      ch->op == CHANGE_ADD ? "add" : "remove", ch->refused);
	audit_change(lr, ch, false, wd_buf_cstr(&reason));
	wd_buf_free(&reason);
	return 0;
}

/* ------------------------------------------------------------ show */

/* the rules of @lr's policy, one a line, into @out (as the owner: its file) */
static int show_fn(const struct live_run *lr, void *arg, struct wd_buf *out)
{
	struct policy_diags d;
	struct wd_policy *p = NULL;
	char *text = NULL;
	size_t len;
	int ret;

	(void)arg;
	ret = live_policy_read(lr, &text, &len);
	if (ret)
		return ret;
	policy_diags_init(&d);
	ret = policy_parse(text, len, "policy", &p, &d);
	policy_diags_free(&d);
	free(text);
	if (ret)
		return ret;
	for (size_t i = 0; i < p->nrules && !ret; i++)
		ret = wd_buf_printf(out, "%s\n", p->rules[i].text);
	policy_free(p);
	return ret;
}

static int show(const struct live_run *lr, bool header)
{
	struct wd_buf b = WD_BUF_INIT;
	int ret = live_as_owner(lr, show_fn, NULL, &b);

	if (ret) {
		wd_say(stderr, "warden allowlist: run %s: its policy: %s", lr->rec.id,
		       strerror(-ret));
		wd_buf_free(&b);
		return WD_EXIT_INTERNAL;
	}
	if (header)
		wd_say(stdout, "run %s (%s):", lr->rec.id,
		       lr->rec.policy_name[0] ? lr->rec.policy_name : "policy");
	if (!b.len)
		wd_say(stdout, "%s(nothing: every name is denied)", header ? "  " : "");
	for (char *l = b.data, *nl; l && *l; l = nl + 1) {
		nl = strchr(l, '\n');
		if (!nl)
			break;
		wd_say(stdout, "%s%.*s", header ? "  " : "", (int)(nl - l), l);
	}
	wd_buf_free(&b);
	return WD_EXIT_OK;
}

static int show_all(void)
{
	struct live_run *v = NULL;
	struct wd_err err;
	size_t n;
	int ret = WD_EXIT_OK;

	wd_err_clear(&err);
	if (live_runs_find(&v, &n, &err)) {
		wd_say(stderr, "warden allowlist: %s", err.msg);
		return WD_EXIT_INTERNAL;
	}
	if (!n)
		printf("no live runs\n");
	for (size_t i = 0; i < n; i++)
		if (v[i].state != LIVE_ENDING && show(&v[i], true))
			ret = WD_EXIT_INTERNAL;
	free(v);
	return ret;
}

/* ------------------------------------------------------------ one run */

static const struct {
	const char *word;
	enum change_op op;
} ops[] = {
    {"add", CHANGE_ADD},
    {"remove", CHANGE_REMOVE},
};

static const char *const approval_words[] = {"approve", "deny", "pending"};

/* show run @id's allowlist (@op < 0), or change it: @op on @names (@n), @approved the approval
 * store's request that allows an addition to a run `warden mcp` started (or NULL). Return: the
 * exit status */
static int change_run(const char *id, int op, char **names, int n, const char *approved)
{
	struct change ch = {.actor = getuid(), .done = WD_BUF_INIT};
	struct live_run lr;
	struct wd_err err;
	int ret;

	wd_err_clear(&err);
	ret = live_run_get(id, &lr, &err);
	if (ret) {
		wd_say(stderr, "warden allowlist: %s", err.msg);
		return ret == -ENOENT || ret == -EINVAL ? WD_EXIT_USAGE : WD_EXIT_INTERNAL;
	}
	if (op < 0)
		return show(&lr, false);
	if (lr.state != LIVE_RUNNING) {
		wd_say(stderr, "warden allowlist: run %s is %s: nothing to change", lr.rec.id,
		       live_state_name(lr.state));
		return WD_EXIT_USAGE;
	}
	ch.op = (enum change_op)op;
	ch.names = names;
	ch.n = n;
	if (ch.op == CHANGE_ADD && lr.rec.started_by[0]) {
		char why[400];

		/* an agent must not widen its own sandbox: a name reaches such a run only with a
		 * person's approval from the approval store (approval.c) */
		ret = approved ? run_approval_check(approved, lr.rec.id, ch.names[0], ch.n, why,
						    sizeof(why))
			       : run_approval_ask(lr.rec.id, lr.rec.started_by, ch.names, ch.n, why,
						  sizeof(why));
		if (ret) {
			wd_say(stderr, "warden allowlist: %s", why);
			ch.refused = why;
			live_as_owner(&lr, refuse_fn, &ch, &ch.done); /* audited in the run's log */
			wd_buf_free(&ch.done);
			return ret == -EINPROGRESS || ret == -EPERM ? WD_EXIT_FOUND : WD_EXIT_USAGE;
		}
	}
	ret = live_as_owner(&lr, change_fn, &ch, &ch.done);
	wd_buf_free(&ch.done);
	if (!ret)
		return WD_EXIT_OK;
	return ret == -EINVAL || ret == -ENOENT ? WD_EXIT_USAGE : WD_EXIT_FOUND;
}

/* ------------------------------------------------------------ approve, deny, pending */

static void approval_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: warden approve REQUEST-ID    (or: warden allowlist approve REQUEST-ID)\n"
	    "       warden deny REQUEST-ID       (or: warden allowlist deny REQUEST-ID)\n"
	    "       warden allowlist pending\n"
	    "\n"
	    "Decide the requests of the approval store: the names a run's network.ask holds\n"
	    "while `warden run` asks (approved: for that run only), and those of `warden mcp`'s\n"
	    "tool set_egress_allowlist. Nothing is added until a person approves. `pending`\n"
	    "lists them (id, name, run, the asking process's pid, age); so does `warden "
	    "status`.\n");
}

static int print_one(const struct run_approval_req *req, void *arg)
{
	unsigned *n = arg;
	bool live = req->server_pid > 0 && kill(req->server_pid, 0) == 0;

	if (req->state != RUN_APPROVAL_PENDING)
		return 0;
	if (!(*n)++)
		wd_say(stdout, "%-32s  %-30s  %-12s  %-8s  %s", "REQUEST", "NAME", "RUN", "SERVER",
		       "AGE");
	wd_say(stdout, "%-32s  %-30s  %-12s  %-8d  %llds%s", req->id, req->name,
	       req->run[0] ? req->run : "(new runs)", (int)req->server_pid,
	       (long long)time(NULL) - req->created, live ? "" : "  (its server is gone)");
	return 0;
}

/* `warden allowlist approve|deny ID`, `warden allowlist pending`: a person at a terminal decides
 * the requests `warden mcp`'s agent made to add names. The server that asked notices the
 * decision, applies it and audits it; without a server (`warden allowlist RUN add` of a run
 * `warden mcp` started) an approval is applied here (change_run()). @argv[0] is the sub-verb.
 * Return: the exit status (0; 1 no such pending request; 2 usage; 125 the store failed) */
static int approval_verb(int argc, char **argv)
{
	char dir[4096], by[64];
	struct run_approval_req req;
	struct wd_err err;
	bool approve;
	int fd, ret;

	if (argc < 1 || cli_wants_help(argc, argv)) {
		approval_usage(argc < 1 ? stderr : stdout);
		return argc < 1 ? WD_EXIT_USAGE : WD_EXIT_OK;
	}
	if (run_approval_dir(dir, sizeof(dir))) {
		fprintf(stderr, "warden allowlist: no state folder: set HOME or XDG_STATE_HOME\n");
		return WD_EXIT_USAGE;
	}
	wd_err_clear(&err);
	ret = run_approval_open(dir, &fd, &err);
	if (ret) {
		wd_say(stderr, "warden allowlist: %s", err.msg);
		return WD_EXIT_INTERNAL;
	}
	if (!strcmp(argv[0], "pending") && argc == 1) {
		unsigned n = 0;

		ret = run_approval_list(fd, print_one, &n);
		close(fd);
		if (ret) {
			wd_say(stderr, "warden allowlist: %s: %s", dir, strerror(-ret));
			return WD_EXIT_INTERNAL;
		}
		if (!n)
			printf("no request is pending\n");
		return WD_EXIT_OK;
	}
	if ((strcmp(argv[0], "approve") && strcmp(argv[0], "deny")) || argc != 2) {
		close(fd);
		approval_usage(stderr);
		return WD_EXIT_USAGE;
	}
	approve = !strcmp(argv[0], "approve");
	if (!run_approval_id_valid(argv[1])) {
		close(fd);
		wd_say(stderr,
		       "warden allowlist: `%s` is not a request id (32 hex digits; "
		       "`warden allowlist pending` lists them)",
		       argv[1]);
		return WD_EXIT_USAGE;
	}
	snprintf(by, sizeof(by), "a terminal (uid %u, pid %d)", (unsigned)getuid(), (int)getpid());
	ret = run_approval_read(fd, argv[1], &req);
	if (!ret)
		ret = run_approval_decide(fd, argv[1], approve, by);
	close(fd);
	if (ret == -ENOENT) {
		wd_say(stderr,
		       "warden allowlist: no request %s is pending (decided already, or "
		       "its server ended)",
		       argv[1]);
		return WD_EXIT_FOUND;
	}
	if (ret == -EALREADY) {
		wd_say(stderr, "warden allowlist: request %s was decided already", argv[1]);
		return WD_EXIT_FOUND;
	}
	if (ret) {
		wd_say(stderr, "warden allowlist: request %s: %s", argv[1], strerror(-ret));
		return WD_EXIT_INTERNAL;
	}
	if (req.server_pid > 0) {
		wd_say(stdout,
		       "%s %s for %s; the process that asked (pid %d) applies it within a second",
		       approve ? "approved" : "denied", req.name,
		       req.run[0] ? req.run : "new runs of its warden mcp", (int)req.server_pid);
		return WD_EXIT_OK;
	}
	/* asked by `warden allowlist RUN add` (no server): the decision is applied here */
	ret = WD_EXIT_OK;
	if (approve && req.run[0]) {
		char *names[] = {req.name, NULL};

		ret = change_run(req.run, CHANGE_ADD, names, 1, req.id);
		if (!ret)
			wd_say(stdout, "approved %s: run %s may reach it now", req.name, req.run);
	} else {
		wd_say(stdout, "denied %s for run %s", req.name, req.run);
	}
	if (run_approval_dir(dir, sizeof(dir)) == 0 && run_approval_open(dir, &fd, &err) == 0) {
		run_approval_remove(fd, req.id);
		close(fd);
	}
	return ret;
}

/* ------------------------------------------------------------ warden approve|deny ID */

int cmd_approve(int argc, char **argv)
{
	return approval_verb(argc, argv); /* argv[0] is "approve" */
}

int cmd_deny(int argc, char **argv)
{
	return approval_verb(argc, argv);
}

/* ------------------------------------------------------------ the verb */

int cmd_allowlist(int argc, char **argv)
{
	const char *approved = NULL;
	int op = -1;

	if (cli_wants_help(argc, argv)) {
		usage(stdout);
		return WD_EXIT_OK;
	}
	/* RUN add NAME --approved REQUEST-ID: an approved request of the approval store */
	if (argc >= 6 && !strcmp(argv[argc - 2], "--approved")) {
		approved = argv[argc - 1];
		argc -= 2;
	}
	for (size_t i = 0; argc > 1 && i < WD_ARRAY_SIZE(approval_words); i++)
		if (!strcmp(argv[1], approval_words[i]))
			return approval_verb(argc - 1, argv + 1);
	if (argc == 1)
		return show_all();
	if (argv[1][0] == '-' || argc == 3) {
		usage(stderr);
		return WD_EXIT_USAGE;
	}
	if (argc > 3) {
		for (size_t i = 0; i < WD_ARRAY_SIZE(ops); i++)
			if (!strcmp(argv[2], ops[i].word))
				op = (int)ops[i].op;
		if (op < 0) {
			wd_say(stderr, "warden allowlist: '%s': add or remove", argv[2]);
			usage(stderr);
			return WD_EXIT_USAGE;
		}
	}
	return change_run(argv[1], argc == 2 ? -1 : op, argv + 3, argc - 3, approved);
}
