/* dnsanswer.c - one DNS query: attributed to its run, decided (decide.c:
 * gw_dns_decide()), answered and audited. Allowed names get synthetic A/AAAA
 * answers from the run's pool; names the policy does not allow get NXDOMAIN (with
 * an Extended DNS Error where the client sent EDNS) and are never asked upstream;
 * HTTPS/SVCB get an empty answer; other types of allowed names are forwarded
 * through c-ares and relayed with every address in them replaced by a synthetic
 * one (or zeroed) and the additional section dropped. Every query is one
 * "dns.query" audit event -- but for those refused over their user's DNS cap (the ceiling's
 * dns_queries_per_s, checked before anything is asked upstream), which are counted into
 * "limit.dns" summaries. */
#include "gateway/decide.h"
#include "gateway/dns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* @a as text; IPv4 without stdio (inet_ntop formats with sprintf, once per
 * answered query) */
static const char *addr_text(const struct gw_addr *a, char *out, size_t size)
{
	char *o = out;

	if (a->family != AF_INET || size < INET_ADDRSTRLEN)
		return gw_addr_str(a, out, size);
	for (int i = 0; i < 4; i++) {
		unsigned v = a->a[i];

		if (v >= 100)
			*o++ = (char)('0' + v / 100);
		if (v >= 10)
			*o++ = (char)('0' + v / 10 % 10);
		*o++ = (char)('0' + v % 10);
		*o++ = i < 3 ? '.' : '\0';
	}
	return out;
}

static void dns_event_id(struct gw_dns *dns, struct gw_run *run, const struct dns_query *q,
			 bool allowed, const char *reason, const char *rule, const char *dst,
			 const char *denial_id)
{
	char tbuf[16];
	struct audit_event ev = {
	    .type = AUDIT_TYPE_DNS,
	    .action = "dns.query",
	    .resource = q->qname,
	    .allowed = allowed,
	    .reason = reason,
	    .rule = rule,
	    /* a query whose question was not read has no type to name */
	    .qtype = q->question_ok ? gw_dns_qtype_name(q->qtype, tbuf, sizeof(tbuf)) : NULL,
	    .dst = dst,
	    .denial_id = denial_id && *denial_id ? denial_id : NULL,
	};

	/* an answered query with a denial id: a shadow run let through what its policy denies */
	if (allowed && ev.denial_id)
		ev.decision = AUDIT_WOULD_DENY;

	dns->ev->stats.dns_queries++;
	if (allowed)
		gw_audit(dns->audit, gw_run_acct(run), &ev);
	else
		gw_audit_denial(dns->audit, gw_run_acct(run),
				&ev); /* counted in the run's denials */
}

static void dns_event(struct gw_dns *dns, struct gw_run *run, const struct dns_query *q,
		      bool allowed, const char *reason, const char *rule, const char *dst)
{
	dns_event_id(dns, run, q, allowed, reason, rule, dst, NULL);
}

/* warden run's liveness check (GW_LIVENESS_NAME, HTTPS) reached the gateway
 * from inside the run: its own action, not a DNS decision. A program in the
 * run can send the same query; it is then recorded the same way. */
static void liveness_event(struct gw_dns *dns, struct gw_run *run, const char *reason)
{
	struct audit_event ev = {
	    .type = AUDIT_TYPE_RUN,
	    .action = "run.liveness",
	    .resource = GW_LIVENESS_NAME,
	    .allowed = true,
	    .reason = reason,
	};

	dns->ev->stats.dns_queries++;
	gw_audit(dns->audit, gw_run_acct(run), &ev);
}

static void tcp_send(struct gw_dnsconn *d, const uint8_t *msg, size_t len)
{
	uint8_t *o;

	if (d->outoff == d->outlen)
		d->outoff = d->outlen = 0;
	o = realloc(d->out, d->outlen + len + 2);
	if (!o) {
		d->closing = true;
		return;
	}
	d->out = o;
	o[d->outlen] = (uint8_t)(len >> 8);
	o[d->outlen + 1] = (uint8_t)len;
	memcpy(o + d->outlen + 2, msg, len);
	d->outlen += len + 2;
}

static void send_reply(struct gw_dns *dns, const struct gw_replyto *rt, const uint8_t *msg,
		       size_t len)
{
	struct iovec iov = {.iov_base = (void *)msg, .iov_len = len};
	union pktinfo_buf cbuf;
	struct msghdr mh = {
	    .msg_name = (void *)&rt->peer,
	    .msg_namelen = rt->plen,
	    .msg_iov = &iov,
	    .msg_iovlen = 1,
	    .msg_control = cbuf.buf,
	};

	(void)dns;
	if (rt->fd < 0) {
		if (rt->conn)
			tcp_send(rt->conn, msg, len);
		return;
	}
	if (rt->batch && len <= UDP_MSG_MAX) {
		gw_udp_out_queue(rt->batch, rt, msg, len);
		return;
	}
	mh.msg_controllen = gw_udp_pktinfo(&rt->local, &cbuf);
	/* best effort, as UDP is: an answer the kernel refuses is lost, the client asks again */
	(void)sendmsg(rt->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static void reply(struct gw_dns *dns, const struct gw_replyto *rt, const struct dns_query *q,
		  const struct dns_reply *r)
{
	uint8_t out[UDP_MSG_MAX];
	struct dns_reply rr = *r;
	int n;

	rr.tcp = rt->fd < 0;
	n = dns_reply_compose(q, &rr, out, sizeof(out));
	if (n > 0)
		send_reply(dns, rt, out, (size_t)n);
}

/* replace or remove the addresses of an upstream answer, in place */
static size_t scrub(struct gw_run *run, const struct dns_query *q, uint8_t *m, size_t len)
{
	struct dns_response resp;
	struct dns_rr_iter it;
	struct dns_rr rr;
	size_t cut = len;

	if (dns_response_parse(m, len, &resp) != DNS_OK)
		return 0;
	m[0] = (uint8_t)(q->id >> 8);
	m[1] = (uint8_t)q->id;
	/* echo the question as the client wrote it (same bytes but for case) */
	if (resp.counts[0] == 1 && len >= DNS_HEADER_LEN + q->qname_wire_len &&
	    !strncasecmp((const char *)m + DNS_HEADER_LEN, (const char *)q->qname_wire,
			 q->qname_wire_len))
		memcpy(m + DNS_HEADER_LEN, q->qname_wire, q->qname_wire_len);
	dns_rr_iter_init(&it, &resp);
	for (;;) {
		size_t at = it.off;

		if (dns_rr_next(m, len, &it, &rr) != DNS_OK)
			break;
		if (rr.section == DNS_SECTION_ADDITIONAL) {
			/* glue and OPT: dropped (pointers only point backwards) */
			cut = at;
			m[10] = m[11] = 0;
			break;
		}
		if (rr.type == DNS_TYPE_A || rr.type == DNS_TYPE_AAAA) {
			int fam = rr.type == DNS_TYPE_A ? AF_INET : AF_INET6;
			struct gw_addr a = {0};

			/* a shadow run's names are learn mode's (decide.h, "shadow mode") */
			if ((run->learn || run->shadow
				 ? !gw_learn_allows(run->policy, rr.name, 0, NULL)
				 : gw_name_allowed(run->policy, rr.name) < 0) ||
			    gw_synth_get(&run->synth, fam, rr.name, &a) < 0)
				memset(a.a, 0, sizeof(a.a));
			memcpy(m + rr.rdata.off, a.a, fam == AF_INET ? 4 : 16);
		}
	}
	return cut;
}

/* cut a reply to the client's UDP size: header and question only, TC set */
static size_t fit_udp(const struct dns_query *q, uint8_t *m, size_t len)
{
	size_t limit = 512, qend = DNS_HEADER_LEN + q->qname_wire_len + 4;

	if (q->edns.present && q->edns.udp_size > limit)
		limit = q->edns.udp_size;
	if (len <= limit || qend > len)
		return len;
	m[2] |= 0x02; /* TC */
	memset(m + 6, 0, 6);
	return qend;
}

static void dnsq_free(struct gw_dnsq *dq)
{
	if (dq->rt.conn && dq->rt.conn->pending == dq)
		dq->rt.conn->pending = NULL;
	gw_run_put(dq->dns->runs, dq->run);
	free(dq);
}

static void forwarded(struct gw_forward *f, int status, const uint8_t *abuf, size_t alen)
{
	struct gw_dnsq *dq = (struct gw_dnsq *)f; /* its first member */
	struct gw_dns *dns = dq->dns;
	struct gw_dnsconn *conn = dq->rt.conn;
	size_t n = 0;

	if (status == -ECANCELED) {
		dnsq_free(dq);
		return;
	}
	if (abuf && alen > DNS_HEADER_LEN) {
		uint8_t *m = malloc(alen);

		if (m) {
			memcpy(m, abuf, alen);
			n = scrub(dq->run, &dq->q, m, alen);
			if (n && dq->rt.fd >= 0)
				n = fit_udp(&dq->q, m, n);
			if (n && (dq->rt.fd >= 0 || conn))
				send_reply(dns, &dq->rt, m, n);
			free(m);
		}
	}
	if (!n && (dq->rt.fd >= 0 || conn)) {
		struct dns_reply r = {.rcode = DNS_RCODE_SERVFAIL};

		reply(dns, &dq->rt, &dq->q, &r);
	}
	dnsq_free(dq);
	if (conn && !conn->busy)
		conn->resume(conn); /* the queries that waited behind this one */
}

/* an allowed A/AAAA query: the run's synthetic address for the name (@did: a shadow run's
 * would-be denial id, else "") */
static void answer_synthetic(struct gw_dns *dns, struct gw_run *run, const struct gw_replyto *rt,
			     const struct dns_query *q, const char *why, const char *rule_text,
			     const char *did)
{
	struct dns_answer ans = {.type = q->qtype, .ttl = GW_DNS_TTL};
	struct dns_reply r = {0};
	char reason[600], atxt[INET6_ADDRSTRLEN];
	struct gw_addr a;
	int fam = q->qtype == DNS_TYPE_A ? AF_INET : AF_INET6;
	int sr = gw_synth_get(&run->synth, fam, q->qname, &a);

	if (sr < 0) {
		snprintf(reason, sizeof(reason), "no synthetic address for %s: %s", q->qname,
			 sr == -ENOSPC ? "the run's pool is exhausted" : strerror(-sr));
		r.rcode = DNS_RCODE_SERVFAIL;
		r.ede = true;
		r.ede_code = DNS_EDE_OTHER;
		r.ede_text = reason;
		reply(dns, rt, q, &r);
		dns_event(dns, run, q, false, reason, rule_text, NULL);
		return;
	}
	memcpy(ans.addr, a.a, gw_addr_len(fam));
	r.rcode = DNS_RCODE_NOERROR;
	r.aa = true;
	r.answers = &ans;
	r.n_answers = 1;
	reply(dns, rt, q, &r);
	dns_event_id(dns, run, q, true, why, rule_text, addr_text(&a, atxt, sizeof(atxt)), did);
}

/* an allowed query of another type: asked upstream, answered when c-ares is (@did: a shadow
 * run's would-be denial id, else "") */
static void forward(struct gw_dns *dns, struct gw_run *run, const struct gw_replyto *rt,
		    const struct dns_query *q, const char *why, const char *rule_text,
		    const char *did)
{
	struct gw_dnsq *dq = calloc(1, sizeof(*dq));

	if (!dq) {
		struct dns_reply r = {.rcode = DNS_RCODE_SERVFAIL};

		reply(dns, rt, q, &r);
		return;
	}
	dq->dns = dns;
	dq->run = run;
	/* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): FORWARD only under a run's policy */
	run->refs++;
	dq->q = *q;
	dq->rt = *rt;
	dq->rt.batch = NULL; /* answered later, on its own */
	if (rt->conn)
		rt->conn->pending = dq;
	dns_event_id(dns, run, q, true, why, rule_text, NULL, did);
	dq->fwd.cb = forwarded;
	gw_resolver_forward(dns->res, q->qname, q->qtype, &dq->fwd);
}

/* an allowed query over its uid's DNS cap (the ceiling's dns_queries_per_s): REFUSED (with an
 * Extended DNS Error that says why, where the client sent EDNS) without asking upstream, and
 * counted for a summary event ("limit.dns"), never audited one by one: a flood is what it is for */
static void refuse_over_cap(struct gw_dns *dns, struct gw_run *run, const struct gw_replyto *rt,
			    const struct dns_query *q)
{
	/* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): FORWARD only under a run */
	const struct wd_policy *p = run->policy;
	struct dns_reply r = {.rcode = DNS_RCODE_REFUSED, .ede = true, .ede_code = DNS_EDE_OTHER};
	char why[400], tbuf[16];
	struct audit_event ev = {
	    .type = AUDIT_TYPE_LIMIT,
	    .action = "limit.dns",
	    .resource = q->qname,
	    .allowed = false,
	    .reason = why,
	    .qtype = gw_dns_qtype_name(q->qtype, tbuf, sizeof(tbuf)),
	};

	snprintf(why, sizeof(why),
		 "user DNS query limit reached: uid %u may have %llu queries a second asked "
		 "upstream (the host's ceiling %s); refused",
		 (unsigned)run->uid, (unsigned long long)p->caps[POLICY_CAP_DNS_QUERIES_PER_S],
		 p->caps_from[POLICY_CAP_DNS_QUERIES_PER_S]);
	r.ede_text = why;
	reply(dns, rt, q, &r);
	dns->ev->stats.dns_queries++;
	gw_audit_count(dns->audit, gw_run_acct(run), &ev, why);
}

/* a new name past its wildcard parent's DNS exfiltration budget (gw_dns_decide_budget()):
 * "limit.dns_exfil", in full for the window's first refusal under that parent, then counted into
 * a summary so that an exfiltration loop cannot flood the log */
static void budget_event(struct gw_dns *dns, struct gw_run *run, const struct dns_query *q,
			 const struct gw_dns_verdict *v, const char *why, const char *rule,
			 const char *did)
{
	char tbuf[16];
	struct audit_event ev = {
	    .type = AUDIT_TYPE_LIMIT,
	    .action = "limit.dns_exfil",
	    .resource = q->qname,
	    .allowed = false,
	    .reason = why,
	    .rule = rule,
	    .qtype = gw_dns_qtype_name(q->qtype, tbuf, sizeof(tbuf)),
	    .denial_id = did[0] ? did : NULL,
	};

	dns->ev->stats.dns_queries++;
	if (v->first)
		gw_audit_denial(dns->audit, gw_run_acct(run), &ev);
	else
		gw_audit_count(dns->audit, gw_run_acct(run), &ev,
			       "new names past their wildcard parent's DNS exfiltration budget "
			       "(limits.dns_label_kib_per_min); refused");
}

/* learn mode: a name the run resolved (answered or forwarded), or was refused by the host's
 * ceiling, in the run's table (proto dns: reported only if it is never connected to) */
static void learn_note(struct gw_run *run, const struct dns_query *q,
		       const struct gw_dns_verdict *v, const char *why)
{
	/* an SRV service name (_svc._proto.NAME) is no host name: NAME's own queries say it */
	if (q->qtype == DNS_TYPE_SRV)
		return;
	if (v->action == GW_DNS_SYNTHETIC || v->action == GW_DNS_FORWARD)
		(void)gw_learn_note(&run->learned, q->qname, 0, GW_LEARN_DNS, NULL);
	else if (v->reason == GW_DR_CEILING)
		(void)gw_learn_note(&run->learned, q->qname, 0, GW_LEARN_DNS, why);
}

/* @f decided into @v: for a shadow run as gw_dns_decide_shadow(), with the policy's denial's
 * text in @would_why and a denial id in @did when it was let through; else gw_dns_decide() */
static void decide(struct gw_dns *dns, struct gw_run *run, const struct gw_dns_facts *f,
		   struct gw_dns_verdict *v, char *would_why, size_t size, char *did)
{
	struct gw_dns_verdict would;
	char buf[600];

	if (!run || !run->shadow) {
		gw_dns_decide(f, v);
		gw_dns_decide_budget(f, v);
		return;
	}
	if (!gw_dns_decide_shadow(f, v, &would)) {
		/* the DNS exfiltration budget is the policy's too: a shadow run lets it through */
		would = *v;
		gw_dns_decide_budget(f, &would);
		if (would.reason != GW_DR_DNS_BUDGET)
			return;
	}
	/* NOT_ALLOWED's text names no peer */
	snprintf(would_why, size, "%s",
		 gw_dns_reason_text(&would, f->q, run->policy_name, NULL, buf, sizeof(buf)));
	gw_new_denial_id(dns->ev, did, 16);
}

/* a denial of @q with @why: NXDOMAIN with an Extended DNS Error (blocked) that carries a denial
 * id, audited as dns.query */
static void deny_now(struct gw_dns *dns, struct gw_run *run, const struct gw_replyto *rt,
		     const struct dns_query *q, const char *why)
{
	struct dns_reply r = {
	    .rcode = DNS_RCODE_NXDOMAIN, .ede = true, .ede_code = DNS_EDE_BLOCKED};
	char ede[1400], did[16];

	gw_new_denial_id(dns->ev, did, sizeof(did));
	snprintf(ede, sizeof(ede), "%s (id %s)", why, did);
	r.ede_text = ede;
	reply(dns, rt, q, &r);
	dns_event_id(dns, run, q, false, why, NULL, NULL, did);
}

void gw_dns_held_answer(struct gw_dns *dns, struct gw_run *run, const struct gw_replyto *rt,
			const struct dns_query *q, bool allow, const char *why)
{
	char reason[1200];
	int rule;

	if (!allow || run->dead) {
		deny_now(dns, run, rt, q, allow ? "the run ended while its ask was pending" : why);
		return;
	}
	/* the launcher added the name to the run's policy before it answered: decided by it */
	rule = gw_name_allowed(run->policy, q->qname);
	if (rule < 0) {
		snprintf(reason, sizeof(reason),
			 "%s was approved, but policy %s does not allow it (the host's ceiling, or "
			 "the policy was not replaced): denied",
			 q->qname, run->policy_name);
		deny_now(dns, run, rt, q, reason);
		return;
	}
	answer_synthetic(dns, run, rt, q, why, run->policy->rules[rule].text, "");
}

/* network.ask (dnsask.c): a denied query of a name a person may be asked about is held, or
 * denied at once when no one can answer. Return: true when this took the query. */
static bool ask_step(struct gw_dns *dns, struct gw_run *run, const struct gw_replyto *rt,
		     const struct gw_dns_facts *f, const struct gw_dns_verdict *v, const char *why)
{
	const struct dns_query *q = f->q;
	char rule[300], reason[1200];
	int m = -1, ret;

	switch (gw_ask_decide(f, v, run->asker, rt->fd < 0, &m)) {
	case GW_ASK_NONE:
		return false;
	case GW_ASK_NOBODY:
		snprintf(reason, sizeof(reason),
			 "%s; network.ask names it, but no one to ask (the run's launcher has no "
			 "terminal): denied at once",
			 why);
		deny_now(dns, run, rt, q, reason);
		return true;
	case GW_ASK_TCP:
		snprintf(reason, sizeof(reason),
			 "%s; network.ask names it, but only queries over UDP are held for a "
			 "person: denied",
			 why);
		deny_now(dns, run, rt, q, reason);
		return true;
	case GW_ASK_HOLD:
		break;
	}
	snprintf(rule, sizeof(rule), "%s",
		 m == POLICY_ASK_ANY ? "*" : run->policy->ask->rules[m].text);
	ret = gw_dns_ask_hold(dns, run, rt, q, rule);
	if (!ret)
		return true;
	snprintf(reason, sizeof(reason), "%s; network.ask names it, but %s: denied", why,
		 ret == -ENOSPC	 ? "its ask holds as many queries as it may"
		 : ret == -EBUSY ? "the run has as many asks pending as it may"
				 : "out of memory");
	deny_now(dns, run, rt, q, reason);
	return true;
}

/* one query: decided (gw_dns_decide()), answered and audited */
void gw_dns_query(struct gw_dns *dns, const uint8_t *msg, size_t len, const struct gw_replyto *rt,
		  const struct gw_addr *peer)
{
	struct dns_query q;
	struct dns_reply r = {0};
	struct gw_dns_verdict v;
	struct gw_dns_facts f = {.parsed = dns_query_parse(msg, len, &q), .q = &q};
	struct gw_run *run = gw_run_find_ingress(dns->runs, &rt->local, peer);
	char reason[600], ede[700], did[16] = "", would[600] = "", rule_buf[600];
	const char *why, *rule_text = NULL;

	f.policy = run ? run->policy : NULL;
	f.upstream = gw_resolver_ok(dns->res);
	f.learn = run && run->learn;
	f.calls = run ? &run->mcp : NULL;
	f.budget = run && !run->learn ? &run->dnsbudget : NULL;
	f.now = dns->ev->now;
	decide(dns, run, &f, &v, would, sizeof(would), did);
	if (run)
		run->dns_queries++;
	why = would[0] ? would
		       : gw_dns_reason_text(&v, &q, run ? run->policy_name : "", peer, reason,
					    sizeof(reason));
	if (f.learn && v.learn)
		/* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): f.learn only with a run */
		learn_note(run, &q, &v, why);
	/* gw_dns_decide() names a rule, and allows, only under f.policy, the run's (decide.h:
	 * "no run: REFUSED" comes first; test_gw_decide's "no run" case) */
	if (v.rule >= 0)
		/* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): see above */
		rule_text = gw_tools_rule_text(run->policy, v.tool, v.rule, v.tools, rule_buf,
					       sizeof(rule_buf));
	if (run && ask_step(dns, run, rt, &f, &v, why))
		return;
	switch (v.action) {
	case GW_DNS_SILENT:
		break;
	case GW_DNS_RCODE:
		r.rcode = v.rcode;
		/* a run's denial gets an id a person can quote, in the EDE text and the event,
		 * as a refused connection's 403 does */
		if (run && !v.allowed)
			gw_new_denial_id(dns->ev, did, sizeof(did));
		if (v.ede) {
			r.ede = true;
			r.ede_code = v.ede_code;
			r.ede_text = why;
			if (did[0]) {
				snprintf(ede, sizeof(ede), "%s (id %s)", why, did);
				r.ede_text = ede;
			}
		}
		reply(dns, rt, &q, &r);
		break;
	case GW_DNS_EMPTY:
	case GW_DNS_LIVENESS:
		r.rcode = DNS_RCODE_NOERROR;
		r.aa = true;
		reply(dns, rt, &q, &r);
		break;
	case GW_DNS_SYNTHETIC:
		answer_synthetic(dns, run, rt, &q, why, rule_text, did);
		return;
	case GW_DNS_FORWARD:
		/* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): FORWARD only under a run */
		if (!gw_runs_dns_take(dns->runs, run))
			refuse_over_cap(dns, run, rt, &q);
		else
			forward(dns, run, rt, &q, why, rule_text, did);
		return;
	}
	if (v.action == GW_DNS_LIVENESS)
		liveness_event(dns, run, why);
	else if (v.reason == GW_DR_DNS_BUDGET)
		budget_event(dns, run, &q, &v, why, rule_text, did);
	else
		dns_event_id(dns, run, &q, v.allowed, why, rule_text, NULL, did);
}
