/* allowlist.c - set_egress_allowlist and the approvals glue: a name removed applies at
 * once (and to a live run); a name added becomes a request in the approval store that a
 * person decides, through the client's elicitation or `warden allowlist approve|deny`. */
#include "mcp/internal.h"
#include "run/elicit.h"
#include "run/run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------ set_egress_allowlist */

/* `warden allowlist RUN remove NAME`, or with @approved `RUN add NAME --approved ID`
 * (cmd_allowlist.c): 0, or the reason in @why */
static int live_change(struct mcp_server *m, const char *run, const char *name,
		       const char *approved, char *why, size_t wsize)
{
	int p[2], st = 0;
	ssize_t n;
	size_t got = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		dup2(null, 0);
		dup2(p[1], 1);
		dup2(p[1], 2);
		if (approved)
			execl(m->self, m->self, "allowlist", run, "add", name, "--approved",
			      approved, (char *)NULL);
		else
			execl(m->self, m->self, "allowlist", run, "remove", name, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	why[0] = '\0';
	while (got + 1 < wsize && (n = read(p[0], why + got, wsize - 1 - got)) > 0)
		got += (size_t)n;
	why[got] = '\0';
	while (got && (why[got - 1] == '\n'))
		why[--got] = '\0';
	close(p[0]);
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

static struct mcp_add *add_slot(struct mcp_server *m)
{
	for (size_t i = 0; i < MCP_MAX_ADDS; i++)
		if (!m->adds[i].used)
			return &m->adds[i];
	return NULL;
}

/* a person's decision on @req (by @by): applied to new runs, audited, the file removed */
static void decide(struct mcp_server *m, struct run_approval_req *req, bool yes, const char *by,
		   json_t *added, json_t *refused)
{
	struct wd_policy *p = NULL, **v;
	char why[512];

	/* a live run gets an approved name through `warden allowlist RUN add NAME --approved ID`,
	 * which checks the store: the request approved (by elicitation: recorded so first) */
	if (yes && req->run[0]) {
		int ret = run_approval_decide(m->approval_fd, req->id, true, by);

		if (!ret || ret == -EALREADY)
			ret = live_change(m, req->run, req->name, req->id, why, sizeof(why));
		mcp_audit(m, "mcp.allowlist.approve", req->run, req->name, !ret,
			  ret ? "request %s: approved by %s, but the live run did not take it: %s"
			      : "request %s: approved by %s; the live run may reach it now%s",
			  req->id, by, ret ? why : "");
	}
	run_approval_remove(m->approval_fd, req->id);
	if (!yes) {
		mcp_audit(m, "mcp.allowlist.deny", req->run, req->name, false,
			  "request %s: refused by %s; the name stays out", req->id, by);
		if (refused)
			json_array_append_new(refused,
					      json_pack("{s:s, s:s, s:s}", "name", req->name,
							"request", req->id, "why", "refused"));
		return;
	}
	if (mcp_one_rule(req->name, &p, why, sizeof(why))) {
		mcp_audit(m, "mcp.allowlist.deny", req->run, req->name, false,
			  "request %s: approved by %s but not a valid entry: %s", req->id, by, why);
		return;
	}
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	v = realloc(m->added, (m->nadded + 1) * sizeof(*v));
	if (!v) {
		policy_free(p);
		return;
	}
	m->added = v;
	m->added[m->nadded++] = p;
	/* an approved name is no longer removed */
	for (size_t i = 0; i < m->nremoved; i++)
		if (mcp_same_target(&m->removed[i]->rules[0], &p->rules[0])) {
			policy_free(m->removed[i]);
			m->removed[i--] = m->removed[--m->nremoved];
		}
	if (mcp_derive(m, why, sizeof(why))) {
		mcp_audit(m, "mcp.allowlist.deny", req->run, req->name, false,
			  "request %s: approved by %s but the policy for new runs could not be "
			  "made: %s",
			  req->id, by, why);
		m->nadded--;
		policy_free(p);
		return;
	}
	mcp_audit(m, "mcp.allowlist.approve", req->run, req->name, true,
		  "request %s: approved by %s; new runs of this server may reach %s", req->id, by,
		  p->rules[0].text);
	if (added)
		json_array_append_new(added,
				      json_pack("{s:s, s:s, s:s}", "name", req->name, "request",
						req->id, "rule", p->rules[0].text));
}

/* The question for the additions @a waits on, built from exactly the requests an acceptance
 * decides (a->req[0..n-1]), each shown as the rule decide() adds: wildcards first, then address
 * ranges, each marked, then plain names; numbered, and their count said at the start and the
 * end, so a display that cuts the text shows that it does. docs/mcp.md gives the form. */
static int ask_text(const struct mcp_add *a, struct wd_buf *out, char *why, size_t wsize)
{
	static const struct {
		enum policy_rule_kind kind;
		const char *mark;
	} order[] = {
	    {POLICY_RULE_WILDCARD, "WILDCARD "},
	    {POLICY_RULE_CIDR, "IP RANGE "},
	    {POLICY_RULE_HOST, ""},
	};
	struct wd_policy *p[MCP_ASK_MAX_NAMES] = {0};
	struct wd_buf esc = WD_BUF_INIT;
	size_t shown = 0;
	int ret = 0;

	if (a->n > MCP_ASK_MAX_NAMES)
		return -E2BIG;
	for (size_t i = 0; i < a->n && !ret; i++)
		ret = mcp_one_rule(a->req[i].name, &p[i], why, wsize);
	if (!ret)
		ret = wd_buf_printf(out,
				    "The agent asks Warden to let its sandboxed commands reach %zu "
				    "network %s. Accepting adds exactly %s, for new runs of this "
				    "server, and nothing else:\n",
				    a->n, a->n == 1 ? "entry" : "entries",
				    a->n == 1 ? "this one" : "these");
	for (size_t o = 0; o < WD_ARRAY_SIZE(order) && !ret; o++)
		for (size_t i = 0; i < a->n && !ret; i++) {
			const struct policy_rule *r = &p[i]->rules[0];
			const char *mark = order[o].mark;
			bool one = r->kind == POLICY_RULE_CIDR &&
				   r->prefix == (r->family == AF_INET ? 32u : 128u);

			if (r->kind != order[o].kind)
				continue;
			if (one)
				mark = "IP ADDRESS ";
			/* a rule's text passed the policy's name syntax; escaped all the same, as
			 * every text from an agent that a person reads (wd_esc()) */
			ret =
			    wd_buf_printf(out, "  %zu. %s%s", ++shown, mark, wd_esc(&esc, r->text));
			if (!ret && r->kind == POLICY_RULE_WILDCARD)
				ret = wd_buf_printf(out, " (any name under %s)",
						    wd_esc(&esc, r->host));
			else if (!ret && r->kind == POLICY_RULE_CIDR && !one)
				ret = wd_buf_puts(out, " (any address in it)");
			if (!ret)
				ret = wd_buf_puts(out, "\n");
		}
	if (!ret && shown != a->n) {
		snprintf(why, wsize, "%zu of %zu entries placed", shown, a->n);
		ret = -EINVAL;
	}
	if (!ret)
		ret = wd_buf_printf(out, "Allow %s%zu?", a->n == 1 ? "this " : "all ", a->n);
	for (size_t i = 0; i < a->n; i++)
		policy_free(p[i]);
	wd_buf_free(&esc);
	if (ret == -ENOMEM)
		snprintf(why, wsize, "no memory");
	return ret;
}

void mcp_add_drop(struct mcp_add *a)
{
	json_decref(a->call);
	memset(a, 0, sizeof(*a));
}

json_t *mcp_set_allowlist(struct mcp_server *m, json_t *id, json_t *args)
{
	json_t *add = json_object_get(args, "add"), *rem = json_object_get(args, "remove");
	json_t *jrun = json_object_get(args, "run"), *w;
	json_t *removed = NULL, *pending = NULL, *refused = NULL;
	const char *run = jrun ? json_string_value(jrun) : "";
	struct wd_policy *p;
	struct mcp_add *a = NULL;
	char why[512], msg[1024] = "";
	size_t i, ask_bytes = 0;

	if (!json_array_size(add) && !json_array_size(rem))
		return mcp_tool_error(
		    "set_egress_allowlist: nothing to do: give `add` or `remove`");
	if (jrun && !mcp_run_by_id(m, run))
		return mcp_tool_error("set_egress_allowlist: `%s` is not a live run of this server "
				      "(list_runs)",
				      run);
	/* every name is checked before anything changes; the names to add fit one question that
	 * shows every one of them (their number is bounded by the argument table) */
	json_array_foreach(add, i, w) ask_bytes += json_string_length(w);
	if (ask_bytes > MCP_ASK_MAX_BYTES)
		return mcp_tool_error(
		    "set_egress_allowlist: `add` holds %zu bytes of names; one request may ask for "
		    "at most %d names of at most %d bytes in all, so that the person is shown "
		    "every "
		    "one of them: ask in smaller requests. Nothing was changed",
		    ask_bytes, MCP_ASK_MAX_NAMES, MCP_ASK_MAX_BYTES);
	for (int pass = 0; pass < 2; pass++)
		json_array_foreach(pass ? rem : add, i, w)
		{
			if (mcp_one_rule(json_string_value(w), &p, why, sizeof(why)))
				return mcp_tool_error("set_egress_allowlist: %s[%zu] `%s`: %s",
						      pass ? "remove" : "add", i,
						      json_string_value(w), why);
			policy_free(p);
		}
	if (json_array_size(add) && !m->base->mcp_allowlist_locked) {
		a = add_slot(m);
		if (!a)
			return mcp_tool_error("set_egress_allowlist: %d requests wait for a person "
					      "already",
					      MCP_MAX_ADDS);
	}
	removed = json_array();
	pending = json_array();
	refused = json_array();

	/* removals: at once */
	json_array_foreach(rem, i, w)
	{
		const char *name = json_string_value(w);
		struct wd_policy **v;
		json_t *e;
		int still;

		p = NULL;
		if (mcp_one_rule(name, &p, why, sizeof(why)))
			continue; /* checked above: not reached */
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		v = realloc(m->removed, (m->nremoved + 1) * sizeof(*v));
		if (!v) {
			policy_free(p);
			continue;
		}
		m->removed = v;
		m->removed[m->nremoved++] = p;
		for (size_t k = 0; k < m->nadded; k++)
			if (mcp_same_target(&m->added[k]->rules[0], &p->rules[0])) {
				policy_free(m->added[k]);
				m->added[k--] = m->added[--m->nadded];
			}
		e = json_pack("{s:s, s:s}", "name", name, "applies_to", "new runs");
		mcp_audit(m, "mcp.allowlist.remove", run, name, true,
			  "removed by the agent: new runs of this server do not get %s", name);
		if (*run) {
			int ret = live_change(m, run, name, NULL, why, sizeof(why));

			json_object_set_new(e, "live", json_boolean(!ret));
			if (ret) {
				json_object_set_new(e, "live_error", json_string(why));
				mcp_audit(m, "mcp.allowlist.remove", run, name, false,
					  "the live run %s keeps %s: warden allowlist failed: %s",
					  run, name, why);
			}
		}
		/* a pattern may still cover it */
		still = p->rules[0].kind == POLICY_RULE_CIDR
			    ? -ENOENT
			    : policy_match_name(m->base, p->rules[0].host);
		if (still >= 0 && !mcp_is_removed(m, &m->base->rules[still]))
			json_object_set_new(e, "still_allowed_by",
					    json_string(m->base->rules[still].text));
		json_array_append_new(removed, e);
	}
	if (json_array_size(rem) && mcp_derive(m, why, sizeof(why))) {
		json_decref(removed);
		json_decref(pending);
		json_decref(refused);
		return mcp_tool_error("set_egress_allowlist: %s", why);
	}

	/* additions: refused when locked; else requests that wait for a person */
	if (json_array_size(add) && m->base->mcp_allowlist_locked) {
		json_array_foreach(add, i, w)
		{
			mcp_audit(m, "mcp.allowlist.refuse", run, json_string_value(w), false,
				  "the policy says mcp.allowlist: locked: no name can be added");
			json_array_append_new(refused,
					      json_pack("{s:s, s:s}", "name", json_string_value(w),
							"why", "mcp.allowlist: locked"));
		}
		json_decref(removed);
		json_decref(pending);
		json_decref(refused);
		return mcp_tool_error(
		    "set_egress_allowlist: refused: the policy locks the allowlist "
		    "(mcp.allowlist: locked); nothing was added%s",
		    json_array_size(rem) ? " (the removals were applied)" : "");
	}
	if (a) {
		memset(a, 0, sizeof(*a));
		json_array_foreach(add, i, w)
		{
			struct run_approval_req *q = &a->req[a->n];
			int ret;

			snprintf(q->name, sizeof(q->name), "%s", json_string_value(w));
			snprintf(q->run, sizeof(q->run), "%s", run);
			q->server_pid = getpid();
			ret = run_approval_create(m->approval_fd, q);
			if (ret) {
				mcp_audit(m, "mcp.allowlist.refuse", run, q->name, false,
					  "the request could not be stored: %s", strerror(-ret));
				json_array_append_new(refused,
						      json_pack("{s:s, s:s}", "name", q->name,
								"why", strerror(-ret)));
				continue;
			}
			mcp_audit(m, "mcp.allowlist.request", run, q->name, false,
				  "request %s: the agent asks to add %s; pending a person's "
				  "approval",
				  q->id, q->name);
			run_approval_announce(stderr, q);
			json_array_append_new(
			    pending, json_pack("{s:s, s:s}", "name", q->name, "request", q->id));
			snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
				 "%spending approval %s", a->n ? "; " : "", q->id);
			a->n++;
		}
		if (a->n)
			a->used = true;
	}
	if (a && a->used && m->s.elicitation) {
		/* the client asks its user; the call is answered with the decision */
		struct wd_buf text = WD_BUF_INIT;
		int ret;

		ret = ask_text(a, &text, why, sizeof(why));
		if (ret)
			mcp_audit(m, "mcp.allowlist.request", run, "", false,
				  "the question could not be made (%s): the requests stay pending "
				  "for a terminal",
				  why);
		/* the question as network.ask builds it (run/elicit.h), with our message */
		if (!ret &&
		    !mcp_request(&m->s, "elicitation/create",
				 run_elicit_params(wd_buf_cstr(&text), "approve", "Allow all",
						   "true allows exactly the entries listed, for "
						   "new runs"),
				 &a->elicit)) {
			wd_buf_free(&text);
			a->call = json_incref(id);
			json_decref(removed);
			json_decref(pending);
			json_decref(refused);
			return NULL;
		}
		wd_buf_free(&text);
	}
	if (!msg[0])
		snprintf(msg, sizeof(msg), "%s",
			 json_array_size(rem) ? "removed" : "nothing added");
	else
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
			 ": a person runs `warden allowlist approve REQUEST-ID` (or deny) at a "
			 "terminal; until then the names stay out");
	return mcp_tool_result(json_pack("{s:o, s:o, s:o, s:s}", "removed", removed, "pending",
					 pending, "refused", refused, "message", msg));
}

/* the client's user answered @req (approve: @yes): recorded in the store first, then decided
 * as the store holds it; a request the store cannot record is refused (fail closed) */
static void elicited(struct mcp_server *m, struct run_approval_req *req, bool yes, json_t *added,
		     json_t *refused)
{
	struct run_approval_req now;
	int ret = run_approval_elicited(m->approval_fd, req->id, yes, &now);

	if (!ret || ret == -EALREADY) {
		decide(m, &now, now.state == RUN_APPROVAL_APPROVED,
		       now.decided_by[0] ? now.decided_by : RUN_APPROVAL_BY_ELICIT, added, refused);
		return;
	}
	mcp_audit(m, "mcp.allowlist.deny", req->run, req->name, false,
		  "request %s: answered by %s, but the approval store could not record it (%s); "
		  "the name stays out",
		  req->id, RUN_APPROVAL_BY_ELICIT, strerror(-ret));
	run_approval_remove(m->approval_fd, req->id);
	json_array_append_new(refused, json_pack("{s:s, s:s, s:s}", "name", req->name, "request",
						 req->id, "why", strerror(-ret)));
}

void mcp_tool_answer(void *ctx, json_t *id, const json_t *result, const json_t *error)
{
	struct mcp_server *m = ctx;
	json_t *added, *refused;
	struct mcp_add *a = NULL;
	bool yes;

	for (size_t i = 0; i < MCP_MAX_ADDS && !a; i++)
		if (m->adds[i].used && m->adds[i].elicit && json_is_integer(id) &&
		    json_integer_value(id) == m->adds[i].elicit)
			a = &m->adds[i];
	if (!a)
		return; /* no question of ours: dropped */
	if (error || !json_is_object(result)) {
		/* the client could not ask: the requests stay pending for a terminal */
		json_t *pending = json_array();
		char msg[1024] = "";

		for (size_t i = 0; i < a->n; i++) {
			json_array_append_new(pending,
					      json_pack("{s:s, s:s}", "name", a->req[i].name,
							"request", a->req[i].id));
			snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
				 "%spending approval %s", i ? "; " : "", a->req[i].id);
		}
		mcp_answer(m, a->call,
			   mcp_tool_result(json_pack("{s:[], s:o, s:[], s:s}", "removed", "pending",
						     pending, "refused", "message", msg)));
		json_decref(a->call);
		a->call = NULL;
		a->elicit = 0;
		return;
	}
	/* read and recorded as network.ask's answers are: the store decides each request by
	 * RUN_APPROVAL_BY_ELICIT, unless a terminal decided it first (that decision stands) */
	yes = run_elicit_verdict_of(result, error, "approve") == RUN_ELICIT_ALLOW;
	added = json_array();
	refused = json_array();
	for (size_t i = 0; i < a->n; i++)
		elicited(m, &a->req[i], yes, added, refused);
	mcp_answer(
	    m, a->call,
	    mcp_tool_result(json_pack("{s:[], s:o, s:[], s:o, s:s}", "removed", "added", added,
				      "pending", "refused", refused, "message",
				      !yes ? "refused: the names stay out"
				      : json_array_size(refused)
					  ? "approved, but not every name was added (see refused)"
					  : "approved: new runs may reach the names")));
	mcp_add_drop(a);
}

/* the store, read on each tick: decisions made at a terminal */
void mcp_poll_decisions(struct mcp_server *m)
{
	for (size_t i = 0; i < MCP_MAX_ADDS; i++) {
		struct mcp_add *a = &m->adds[i];
		size_t left = 0;

		if (!a->used || a->call)
			continue;
		for (size_t k = 0; k < a->n; k++) {
			struct run_approval_req now;
			int ret;

			if (!a->req[k].id[0])
				continue;
			ret = run_approval_read(m->approval_fd, a->req[k].id, &now);
			if (ret == -ENOENT) {
				mcp_audit(m, "mcp.allowlist.deny", a->req[k].run, a->req[k].name,
					  false,
					  "request %s: its file was removed; the name stays out",
					  a->req[k].id);
				a->req[k].id[0] = '\0';
				continue;
			}
			if (ret || now.state == RUN_APPROVAL_PENDING) {
				left++;
				continue;
			}
			decide(m, &now, now.state == RUN_APPROVAL_APPROVED,
			       now.decided_by[0] ? now.decided_by : "a terminal", NULL, NULL);
			a->req[k].id[0] = '\0';
		}
		if (!left)
			mcp_add_drop(a);
	}
}
