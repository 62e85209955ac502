/* dnsask.c - network.ask: a run's A/AAAA queries of a name outside its allow rules but inside
 * network.ask, held while a person is asked.
 *
 * Theory of operation. gw_dns_query() (dnsanswer.c) asks gw_ask_decide() (pure) about a query
 * it denied; HOLD brings it here. An ask is one name of one run: the first query makes it (a
 * "dns.ask" event says it is held, and its deadline is armed: network.ask_timeout, default
 * 30 s), later queries of the name (AAAA beside A, a client's retries) join it, up to
 * GW_ASK_HELD_MAX. Nothing blocks: the queries wait in the ask, the loop goes on. The run's
 * launcher, which holds the person's terminal, polls the `asks` op (ctlops.c), makes an
 * approval request of each new ask, and sends the person's decision with the `answer` op: for
 * "allow" it first adds the name to the run's policy (`replace`), so that the answer is the
 * policy's own synthetic address and the connection that follows is allowed by the same rule.
 * An ask ends once: answered (gw_dns_ask_answer()), or at its deadline (gw_dns_ask_expired():
 * denied, "no answer in N s"); each held query is then answered through @dns->held_answer
 * (dnsanswer.c's gw_dns_held_answer(): this file calls nothing of dnsanswer.c's, so the two
 * make no circle) and audited as a dns.query. A proxy request (CONNECT, absolute-form) of an ask
 * name is held the same way (gw_dns_ask_hold_conn(), from conn.c) and goes on through
 * @dns->conn_answer: decided again under the run's policy, or denied. Only UDP queries are held (a
 * TCP connection may close under a held query); the launcher says at registration whether a person
 * can answer at all (`asker`), and without one gw_ask_decide() denies at once. The asks take a
 * reference on their run: a run that ends with asks pending is answered "denied" at their deadline.
 */
#include "gateway/decide.h"
#include "gateway/dns.h"
#include "gateway/tcp.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_S 1000000000ull

static void ask_event(struct gw_ask *a, bool allowed, const char *reason)
{
	struct audit_event ev = {
	    .type = AUDIT_TYPE_DNS,
	    .action = "dns.ask",
	    .resource = a->name,
	    .allowed = allowed,
	    .reason = reason,
	    .rule = a->rule,
	};

	gw_audit(a->dns->audit, gw_run_acct(a->run), &ev);
}

static struct gw_ask *ask_find(struct gw_dns *dns, const struct gw_run *run, const char *name,
			       unsigned id)
{
	for (struct gw_ask *a = dns->asks; a; a = a->next)
		if (a->run == run && (name ? !strcmp(a->name, name) : a->id == id))
			return a;
	return NULL;
}

/* unlink and free @a (its queries answered or dropped before) */
static void ask_free(struct gw_ask *a)
{
	struct gw_dns *dns = a->dns;

	for (struct gw_ask **pp = &dns->asks; *pp; pp = &(*pp)->next)
		if (*pp == a) {
			*pp = a->next;
			break;
		}
	gw_timer_cancel(&dns->ev->timers, &a->timer);
	if (a->run->nasks)
		a->run->nasks--;
	gw_run_put(dns->runs, a->run);
	free(a);
}

/* the ask's end: each held query answered and each held request gone on, @why the denial's
 * reason. The requests are taken out first: going on may close one (gw_dns_ask_unhold()). */
static void ask_end(struct gw_ask *a, bool allow, const char *why)
{
	struct gw_dns *dns = a->dns;
	struct gw_conn *conns[GW_ASK_HELD_MAX];
	unsigned n = a->nconns;
	bool dead = a->run->dead;

	for (unsigned i = 0; i < a->nheld; i++)
		dns->held_answer(dns, a->run, &a->held[i].rt, &a->held[i].q, allow, why);
	memcpy(conns, a->conns, n * sizeof(struct gw_conn *));
	a->nconns = 0;
	ask_free(a);
	for (unsigned i = 0; i < n; i++)
		dns->conn_answer(conns[i], allow && !dead,
				 allow ? "the run ended while its ask was pending" : why);
}

/* the pending ask of @name for @run, else a new one (audited, its timer armed). Return: 0,
 * -EBUSY (the run has GW_ASKS_MAX pending), -ENOMEM */
static int ask_get(struct gw_dns *dns, struct gw_run *run, const char *name, const char *rule,
		   struct gw_ask **ret)
{
	struct gw_ask *a = ask_find(dns, run, name, 0);
	char reason[1200];

	if (a) {
		*ret = a;
		return 0;
	}
	if (run->nasks >= GW_ASKS_MAX)
		return -EBUSY;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->dns = dns;
	a->run = run;
	a->id = ++dns->ask_seq ? dns->ask_seq : ++dns->ask_seq; /* never 0 */
	snprintf(a->name, sizeof(a->name), "%s", name);
	snprintf(a->rule, sizeof(a->rule), "network.ask: %s", rule);
	a->timeout_s = policy_ask_timeout_s(run->policy);
	a->deadline = dns->ev->now + (uint64_t)a->timeout_s * NS_PER_S;
	gw_timer_init(&a->timer, GW_T_ASK, a);
	if (gw_timer_arm(&dns->ev->timers, &a->timer, a->deadline)) {
		free(a);
		return -ENOMEM;
	}
	run->refs++;
	run->nasks++;
	a->next = dns->asks;
	dns->asks = a;
	snprintf(reason, sizeof(reason),
		 "%s is not allowed by policy %s; network.ask holds it while a person is "
		 "asked (ask %u, up to %u s)",
		 a->name, run->policy_name, a->id, a->timeout_s);
	ask_event(a, false, reason);
	*ret = a;
	return 0;
}

int gw_dns_ask_hold(struct gw_dns *dns, struct gw_run *run, const struct gw_replyto *rt,
		    const struct dns_query *q, const char *rule)
{
	struct gw_ask *a = ask_find(dns, run, q->qname, 0);
	struct gw_held *h;
	int ret;

	if (a && a->nheld == GW_ASK_HELD_MAX)
		return -ENOSPC;
	ret = ask_get(dns, run, q->qname, rule, &a);
	if (ret)
		return ret;
	h = &a->held[a->nheld++];
	h->q = *q;
	h->rt = *rt;
	h->rt.batch = NULL; /* answered later, on its own */
	return 0;
}

int gw_dns_ask_hold_conn(struct gw_dns *dns, struct gw_run *run, const char *name, const char *rule,
			 struct gw_conn *c)
{
	struct gw_ask *a = ask_find(dns, run, name, 0);
	int ret;

	if (a && a->nconns == GW_ASK_HELD_MAX)
		return -ENOSPC;
	ret = ask_get(dns, run, name, rule, &a);
	if (ret)
		return ret;
	a->conns[a->nconns++] = c;
	return 0;
}

void gw_dns_ask_unhold(struct gw_dns *dns, const struct gw_conn *c)
{
	for (struct gw_ask *a = dns->asks; a; a = a->next)
		for (unsigned i = 0; i < a->nconns; i++)
			if (a->conns[i] == c) {
				a->conns[i] = a->conns[--a->nconns];
				return;
			}
}

int gw_dns_ask_answer(struct gw_dns *dns, struct gw_run *run, unsigned id, bool allow,
		      const char *by)
{
	struct gw_ask *a = ask_find(dns, run, NULL, id);
	char reason[1200], why[1200];

	if (!a)
		return -ENOENT;
	snprintf(reason, sizeof(reason), "%s by %s for this run (ask %u)",
		 allow ? "approved" : "denied", by, a->id);
	ask_event(a, allow, reason);
	snprintf(why, sizeof(why),
		 "%s is not allowed by policy %s; network.ask held it and a person denied it: "
		 "denied by %s (ask %u)",
		 a->name, run->policy_name, by, a->id);
	ask_end(a, allow, allow ? reason : why);
	return 0;
}

void gw_dns_ask_expired(struct gw_ask *a)
{
	char reason[1200];

	snprintf(reason, sizeof(reason),
		 "%s is not allowed by policy %s; network.ask held it, no answer in %u s: denied "
		 "(ask %u)",
		 a->name, a->run->policy_name, a->timeout_s, a->id);
	ask_event(a, false, reason);
	ask_end(a, false, reason);
}

struct json_t *gw_dns_asks_json(struct gw_dns *dns, const struct gw_run *run)
{
	json_t *v = json_array();

	for (struct gw_ask *a = dns->asks; a && v; a = a->next) {
		uint64_t left = a->deadline > dns->ev->now ? a->deadline - dns->ev->now : 0;

		if (a->run != run)
			continue;
		if (json_array_append_new(v,
					  json_pack("{s:I, s:s, s:s, s:I, s:I}", "ask",
						    (json_int_t)a->id, "name", a->name, "rule",
						    a->rule, "timeout_s", (json_int_t)a->timeout_s,
						    "left_ms", (json_int_t)(left / 1000000u)))) {
			json_decref(v);
			return NULL;
		}
	}
	return v;
}

void gw_dns_asks_free(struct gw_dns *dns)
{
	while (dns->asks) {
		struct gw_ask *a = dns->asks;

		/* unlinked here, so the list moves on whatever ask_free() finds */
		dns->asks = a->next;
		a->next = NULL;
		ask_free(a);
	}
}

/* network.ask: a proxy request (CONNECT, absolute-form) denied because no rule names its host,
 * which network.ask names, is held while a person is asked (dnsask.c), its deadline the ask's;
 * gw_conn_ask_answer() goes on (conn.c). Return: true when held. */
bool gw_conn_ask_hold(struct gw_conn *c, const struct gw_tcp_verdict *v)
{
	const struct wd_policy *p = c->run->policy;
	int m;

	if ((v->reason != GW_TR_NO_RULE && v->reason != GW_TR_TOOL_ONLY) || c->socks || !c->host ||
	    !c->run->asker || c->run->learn || !c->t->dns)
		return false;
	m = policy_ask_match(p, c->host, v->port);
	if (m < 0 || gw_dns_ask_hold_conn(c->t->dns, c->run, c->host,
					  m == POLICY_ASK_ANY ? "*" : p->ask->rules[m].text, c))
		return false;
	c->asked = true;
	gw_disarm(c->t->ev, &c->timer);
	return true;
}
