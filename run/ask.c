/* ask.c - `warden run`'s side of network.ask: the launcher holds the person's terminal, so it
 * is who asks.
 *
 * Theory of operation. A run whose policy has network.ask registers with "asker": true when a
 * person may answer (stderr is a terminal, or stdio is relayed and an MCP client may ask its
 * user: run_ask_person()); without either the gateway denies every ask at once ("no one to
 * ask") and nothing here runs. While the program runs, the wait
 * loop calls run_ask_tick() every RUN_ASK_TICK_MS: the gateway's `asks` op lists the names it
 * holds (gateway/dnsask.c); each new one becomes a request in the person's approval store
 * (run/approval.c, the store `warden mcp` uses too) and one line on stderr naming the request
 * and the commands that answer it (`warden approve ID`, `warden deny ID`). When the wrapped
 * program is an MCP server whose client declared the elicitation capability, the client is
 * asked too: an `elicitation/create` request goes into the server's stream (elicit.h) and the
 * client's answer decides the store's request, by "MCP client (elicitation)"
 * (ask_elicited(): run_approval_elicited(), as `warden mcp` does); whichever answer comes first
 * wins, the store being the one truth. An ask that finds neither a terminal nor such a client is
 * denied at once, by "no one to ask". Each tick reads the pending requests again: a decided one is
 * sent to the gateway with the `answer` op -- for an approval, after the name (with the ask rule's
 * ports) was added to the run's policy through `replace`, so that the held query's answer and the
 * connection that follows are the policy's own. An approval is for this run only. A request whose
 * ask the gateway no longer lists (its deadline passed) is removed from the store, and said. At the
 * end run_ask_end() removes the requests still pending. A program that may write the store (a write
 * grant holding it) could approve its own asks: such a run asks no one (store_writable()).
 */
#include "run/internal.h"
#include "run/approval.h"
#include "run/elicit.h"
#include "run/gw.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* how long a tick's requests to the gateway may take */
#define ASK_GW_TIMEOUT_MS 2000

bool run_ask_wanted(const struct run *r)
{
	const struct wd_policy *p = r->input.pol;

	return p && !r->learn && ((p->ask && p->ask->nrules) || p->ask_any);
}

/* a write grant that holds the approval store would let the program write its own approvals:
 * then nobody is asked (fail closed). Return: the grant's path, or NULL */
static const char *store_writable(const struct run *r)
{
	const struct wd_policy *p = r->input.pol;
	char dir[PATH_MAX];

	if (run_approval_dir(dir, sizeof(dir)))
		return "(no state folder)";
	for (size_t i = 0; i < p->nwrite; i++) {
		const char *g = p->write[i].real ? p->write[i].real : p->write[i].path;
		size_t n = g ? strlen(g) : 0;

		if (n && !strncmp(dir, g, n) && (dir[n] == '/' || !dir[n] || !strcmp(g, "/")))
			return g;
	}
	return NULL;
}

bool run_ask_person(const struct run *r)
{
	static int said;
	const char *g;

	if (!run_ask_wanted(r) || (!isatty(STDERR_FILENO) && !r->sandbox.io.want))
		return false;
	g = store_writable(r);
	if (g && !said++)
		wd_say(stderr,
		       "warden: network.ask: the program may write %s, which holds the approval "
		       "store: no one is asked, asks are denied",
		       g);
	return !g;
}

static const char *program_name(const struct run *r)
{
	const char *p = r->input.argv && r->input.argv[0] ? r->input.argv[0] : "the program";
	const char *slash = strrchr(p, '/');

	return slash ? slash + 1 : p;
}

/* the name's rule (the ask rule's ports, or 80 and 443 for "*") as one policy of one rule */
static int name_policy(const struct run *r, const char *name, struct wd_policy **ret)
{
	const struct wd_policy *p = r->input.pol;
	int m = policy_ask_match(p, name, 0);
	struct wd_buf doc = WD_BUF_INIT;
	struct policy_diags d;
	int ret_parse;

	if (m < 0)
		return -EPERM;
	if (wd_buf_puts(&doc, "version: 1\nnetwork:\n  allow:\n    - { host: ") ||
	    wd_yaml_quote(&doc, name) || wd_buf_puts(&doc, ", ports: ["))
		goto oom;
	if (m == POLICY_ASK_ANY) {
		if (wd_buf_puts(&doc, "80, 443"))
			goto oom;
	} else {
		const struct policy_rule *rule = &p->ask->rules[m];

		for (size_t i = 0; i < rule->nports; i++)
			if (wd_buf_printf(&doc, "%s%u", i ? ", " : "", rule->ports[i]) < 0)
				goto oom;
	}
	if (wd_buf_puts(&doc, "] }\n"))
		goto oom;
	policy_diags_init(&d);
	ret_parse = policy_parse(doc.data, doc.len, "ask", ret, &d);
	policy_diags_free(&d);
	wd_buf_free(&doc);
	return ret_parse;
oom:
	wd_buf_free(&doc);
	return -ENOMEM;
}

/* the run's policy with @name added (for this run), given to its gateway and kept beside its
 * record (what `warden allowlist RUN` shows). Return: 0 or -errno, @why said */
static int grant(struct run *r, const char *name, char *why, size_t wsize)
{
	const char *slash = strrchr(r->input.policy_abs, '/');
	struct wd_policy *p = NULL, *add = NULL;
	struct wd_buf text = WD_BUF_INIT;
	struct policy_diags d;
	char path[PATH_MAX + 32];
	json_t *req;
	int ret;

	policy_diags_init(&d);
	ret = policy_parse(r->input.policy_text, r->input.policy_len, "policy", &p, &d);
	policy_diags_free(&d);
	if (!ret)
		ret = name_policy(r, name, &add);
	if (!ret)
		ret = policy_merge(p, add, 0);
	if (!ret)
		ret = policy_render_yaml(p, &text) ? -ENOMEM : 0;
	policy_free(p);
	policy_free(add);
	if (ret) {
		snprintf(why, wsize, "the run's policy with %s added: %s", name, strerror(-ret));
		wd_buf_free(&text);
		return ret;
	}
	req = json_pack("{s:s, s:s, s:s, s:s%}", "op", "replace", "id", r->id, "policy_name",
			slash ? slash + 1 : r->input.policy_abs, "policy", text.data, text.len);
	ret = req ? run_gw_call(r->gateway.gw.socket, req, ASK_GW_TIMEOUT_MS, NULL, why, wsize)
		  : -ENOMEM;
	json_decref(req);
	if (ret) {
		wd_buf_free(&text);
		return ret;
	}
	free(r->input.policy_text);
	r->input.policy_text = text.data;
	r->input.policy_len = text.len;
	snprintf(path, sizeof(path), "%s/%s", r->state_dir, RUN_POLICY_FILE);
	(void)wd_write_file_atomic(AT_FDCWD, path, r->input.policy_text, r->input.policy_len, 0);
	return 0;
}

static struct run_ask *ask_known(struct run_asks *a, unsigned gw_id)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].gw_id == gw_id)
			return &a->v[i];
	return NULL;
}

/* the ports an approval of @name opens, as text ("80, 443") */
static void ports_text(const struct run *r, const char *name, char *out, size_t size)
{
	int m = policy_ask_match(r->input.pol, name, 0);
	size_t len = 0;

	out[0] = '\0';
	if (m == POLICY_ASK_ANY) {
		snprintf(out, size, "80, 443");
		return;
	}
	for (size_t i = 0; m >= 0 && i < r->input.pol->ask->rules[m].nports && len < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%u", i ? ", " : "",
					r->input.pol->ask->rules[m].ports[i]);
}

/* the gateway told at once that ask @gw_id is denied, by @by */
static void answer_deny(struct run *r, unsigned gw_id, const char *by)
{
	char ask[16], why[300];
	json_t *req;
	int ret;

	snprintf(ask, sizeof(ask), "%u", gw_id);
	req = json_pack("{s:s, s:s, s:s, s:s, s:s}", "op", "answer", "id", r->id, "ask", ask,
			"verdict", "deny", "by", by);
	ret =
	    req ? run_gw_call(r->gateway.gw.socket, req, ASK_GW_TIMEOUT_MS, NULL, why, sizeof(why))
		: -ENOMEM;
	json_decref(req);
	if (ret)
		wd_say(stderr, "warden: ask %u: the gateway did not take the answer: %s", gw_id,
		       why);
}

/* the MCP client asked about @k too (elicit.h); false when it could not be */
static bool ask_client(struct run *r, struct run_ask *k)
{
	struct wd_buf line = WD_BUF_INIT;
	char ports[128];
	bool ok;

	ports_text(r, k->name, ports, sizeof(ports));
	ok = !run_elicit_request(&line, r->id, k->gw_id, program_name(r), k->name, ports) &&
	     !run_elicit_queue(&r->sandbox.io, line.data, line.len);
	wd_buf_free(&line);
	return ok;
}

/* a new ask of the gateway: a request in the store, a line for the person, the MCP client
 * asked when it can be; with no one to ask (no terminal, no such client), denied at once */
static void ask_new(struct run *r, unsigned gw_id, const char *name, unsigned timeout_s)
{
	struct run_asks *a = &r->asks;
	struct run_approval_req q = {0};
	struct run_ask *k;
	char why[300];
	int ret;

	if (!isatty(STDERR_FILENO) && !run_elicit_can(&r->sandbox.io)) {
		answer_deny(r, gw_id, "no one to ask (no terminal, no eliciting MCP client)");
		wd_say(stderr,
		       "warden: ask: %s wants %s: no one to ask (no terminal, no MCP client that "
		       "elicits): denied",
		       program_name(r), name);
		return;
	}
	if (a->n == RUN_ASKS_MAX)
		return; /* the gateway holds at most as many: its deadline answers */
	if (a->store < 0 && run_approval_open_mine(&a->store, why, sizeof(why))) {
		if (!a->store_said)
			wd_say(stderr, "warden: ask: the approval store: %s; asks time out", why);
		a->store_said = true;
		a->store = -1;
		return;
	}
	snprintf(q.name, sizeof(q.name), "%s", name);
	snprintf(q.run, sizeof(q.run), "%s", r->id);
	q.server_pid = getpid();
	ret = run_approval_create(a->store, &q);
	if (ret) {
		wd_say(stderr, "warden: ask: the approval store: %s", strerror(-ret));
		return;
	}
	k = &a->v[a->n++];
	*k = (struct run_ask){.gw_id = gw_id, .timeout_s = timeout_s};
	snprintf(k->req, sizeof(k->req), "%s", q.id);
	snprintf(k->name, sizeof(k->name), "%s", name);
	k->elicited = run_elicit_can(&r->sandbox.io) && ask_client(r, k);
	wd_say(stderr,
	       "warden: ask %s: %s wants %s \xe2\x80\x94 `warden approve %s` or `warden deny %s` "
	       "(%u s)",
	       k->req, program_name(r), k->name, k->req, k->req, timeout_s);
}

/* @k is done: out of the list and the store; a question the MCP client still shows is
 * withdrawn (notifications/cancelled) */
static void ask_drop(struct run *r, struct run_asks *a, struct run_ask *k)
{
	struct wd_buf line = WD_BUF_INIT;

	if (k->elicited && run_elicit_can(&r->sandbox.io) &&
	    !run_elicit_cancel(&line, r->id, k->gw_id, "answered elsewhere, or its time passed"))
		(void)run_elicit_queue(&r->sandbox.io, line.data, line.len);
	wd_buf_free(&line);
	if (a->store >= 0)
		(void)run_approval_remove(a->store, k->req);
	*k = a->v[--a->n];
}

/* a decided request: the name granted for this run (an approval), the gateway told */
static void ask_decided(struct run *r, struct run_ask *k, const struct run_approval_req *q)
{
	bool allow = q->state == RUN_APPROVAL_APPROVED;
	char why[600] = "", ask[16];
	json_t *req;
	int ret = 0;

	if (allow)
		ret = grant(r, k->name, why, sizeof(why));
	if (ret) {
		wd_say(stderr, "warden: ask %s: approved, but %s could not be added: %s; denied",
		       k->req, k->name, why);
		allow = false;
	}
	snprintf(ask, sizeof(ask), "%u", k->gw_id);
	req = json_pack("{s:s, s:s, s:s, s:s, s:s}", "op", "answer", "id", r->id, "ask", ask,
			"verdict", allow ? "allow" : "deny", "by",
			q->decided_by[0] ? q->decided_by : "a person");
	ret =
	    req ? run_gw_call(r->gateway.gw.socket, req, ASK_GW_TIMEOUT_MS, NULL, why, sizeof(why))
		: -ENOMEM;
	json_decref(req);
	if (ret)
		wd_say(stderr, "warden: ask %s: the gateway did not take the answer: %s", k->req,
		       why);
	else
		wd_say(stderr, "warden: ask %s: %s %s for this run", k->req,
		       allow ? "approved" : "denied", k->name);
}

/* the MCP client answered the elicitation of ask @seq (the relay took it off the client's
 * stream): the store's request decided by "MCP client (elicitation)" and answered as `warden
 * approve` would be; an ask decided or gone already stays as it is (the first answer won) */
static void ask_elicited(struct run *r, unsigned seq, bool allow)
{
	struct run_asks *a = &r->asks;
	struct run_ask *k = ask_known(a, seq);
	struct run_approval_req q;
	int ret;

	if (!k || !k->elicited || a->store < 0)
		return; /* decided, timed out or never asked this way: the first answer stands */
	k->elicited = false; /* answered: nothing to withdraw */
	ret = run_approval_elicited(a->store, k->req, allow, &q);
	if (ret == -EALREADY || ret == -ENOENT)
		return; /* a terminal answered first: the tick applies that answer */
	if (ret) {
		wd_say(stderr, "warden: ask %s: the MCP client's answer: the approval store: %s",
		       k->req, strerror(-ret));
		return;
	}
	if (q.state == RUN_APPROVAL_PENDING)
		return;
	ask_decided(r, k, &q);
	ask_drop(r, a, k);
}

void run_ask_tick(struct run *r)
{
	struct run_asks *a = &r->asks;
	json_t *req = json_pack("{s:s, s:s}", "op", "asks", "id", r->id), *ans = NULL, *v, *it;
	bool listed[RUN_ASKS_MAX] = {false}, allow;
	char why[300];
	unsigned seq;
	size_t i;

	/* the MCP client's answers first: they decide before the store is read below */
	while (run_elicit_take(&r->sandbox.io, &seq, &allow))
		ask_elicited(r, seq, allow);

	if (!req ||
	    run_gw_call(r->gateway.gw.socket, req, ASK_GW_TIMEOUT_MS, &ans, why, sizeof(why))) {
		json_decref(req);
		return; /* the gateway's deadlines answer what waits */
	}
	json_decref(req);
	v = json_object_get(ans, "asks");
	json_array_foreach(v, i, it)
	{
		json_int_t id = json_integer_value(json_object_get(it, "ask"));
		const char *name = json_string_value(json_object_get(it, "name"));
		json_int_t t = json_integer_value(json_object_get(it, "timeout_s"));
		struct run_ask *k;

		if (id <= 0 || id > UINT_MAX || !name)
			continue;
		k = ask_known(a, (unsigned)id);
		if (!k) {
			ask_new(r, (unsigned)id, name, (unsigned)(t > 0 ? t : 0));
			k = ask_known(a, (unsigned)id);
		}
		if (k)
			listed[k - a->v] = true;
	}
	json_decref(ans);
	for (i = a->n; i-- > 0;) {
		struct run_ask *k = &a->v[i];
		struct run_approval_req q;

		if (!listed[i]) {
			wd_say(stderr, "warden: ask %s: no answer in %u s: %s denied", k->req,
			       k->timeout_s, k->name);
			ask_drop(r, a, k);
			continue;
		}
		if (a->store < 0 || run_approval_read(a->store, k->req, &q) ||
		    q.state == RUN_APPROVAL_PENDING)
			continue;
		ask_decided(r, k, &q);
		ask_drop(r, a, k);
	}
}

void run_ask_end(struct run *r)
{
	struct run_asks *a = &r->asks;

	while (a->n)
		ask_drop(r, a, &a->v[a->n - 1]);
	wd_closep(&a->store);
}
