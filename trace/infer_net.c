/* infer_net.c - the trace's network events in, the policy's `network:` section out: host
 * names with their ports, wildcards over many siblings, and what was seen and not granted. */
#include "trace/infer_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ network */

struct host {
	const char *name;
	uint16_t ports[16];
	unsigned nports;
	uint64_t count;
	unsigned protos; /* bit per enum trace_proto */
	bool folded;
};

/* @s has the syntax of a host name a policy rule may hold (policy/hostname.c's rules): lower-case
 * letters, digits and `-`, labels of 1 to 63 with no `-` at either end, two labels at least,
 * the last not all digits (an address). */
/* a name init may write as a host rule: common/'s syntax (wd_name_fold()), already in the
 * lower-case form a policy keeps, with two labels at least and a last label that is not all
 * digits (that is an address) */
static bool host_name_ok(const char *s)
{
	char low[WD_NAME_MAX + 1];
	size_t last = 0;
	bool digits = true;

	if (!strchr(s, '.') ||
	    wd_name_fold(s, strlen(s), 0, low, sizeof(low), &last) != WD_NAME_OK || strcmp(low, s))
		return false;
	for (const char *p = low + last; *p; p++)
		digits &= *p >= '0' && *p <= '9';
	return !digits;
}

static int labels(const char *s)
{
	int n = 1;

	for (; *s; s++)
		n += *s == '.';
	return n;
}

/* a parent a wildcard may sit on: two labels at least, three under a two-letter top label
 * (co.uk and the like; Warden has no public suffix list) */
static bool wildcard_parent_ok(const char *parent)
{
	const char *top = strrchr(parent, '.');
	int n = labels(parent);

	if (n < 2)
		return false;
	return !(top && strlen(top + 1) == 2 && n < 3);
}

static void add_port(struct host *h, uint16_t port)
{
	for (unsigned i = 0; i < h->nports; i++)
		if (h->ports[i] == port)
			return;
	if (h->nports < WD_ARRAY_SIZE(h->ports))
		h->ports[h->nports++] = port;
}

static int cmp_u16(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

static void rule_text(struct wd_buf *b, const char *name, uint16_t *ports, unsigned n)
{
	qsort(ports, n, sizeof(*ports), cmp_u16);
	if (n == 2 && ports[0] == 80 && ports[1] == 443) {
		infer_yaml_quote(b, name);
	} else if (n == 1) {
		wd_buf_printf(b, "\"%s:%u\"", name, ports[0]);
	} else {
		wd_buf_puts(b, "{ host: ");
		infer_yaml_quote(b, name);
		wd_buf_puts(b, ", ports: [");
		for (unsigned i = 0; i < n; i++)
			wd_buf_printf(b, "%s%u", i ? ", " : "", ports[i]);
		wd_buf_puts(b, "] }");
	}
}

static const char *const proto_word[TRACE_PROTO_N] = {"TLS", "HTTP", "raw TCP", "DNS"};

int infer_emit_network(struct infer_ctx *c, struct wd_buf *b)
{
	struct host *h = calloc(c->t->nnets + 1, sizeof(*h));
	struct wd_buf notes = {0};
	size_t nh = 0;
	bool header = false;

	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < c->t->nnets; i++) {
		const struct trace_net_ev *e = &c->t->nets[i];
		struct wd_buf e1 = WD_BUF_INIT, e2 = WD_BUF_INIT;
		size_t k = 0;

		if (e->refused) {
			wd_buf_printf(
			    &notes, "  #   %s:%u (%s): refused during the trace\n",
			    infer_said(&e1, infer_printable_utf8(e->host) ? e->host : "?"), e->port,
			    infer_said(&e2, e->refused));
			wd_buf_free(&e1);
			wd_buf_free(&e2);
			infer_warn(c, "not granted: %s:%u was refused during the trace (%s)",
				   infer_printable_utf8(e->host) ? e->host : "?", e->port,
				   e->refused);
			continue;
		}
		if (!host_name_ok(e->host)) {
			wd_buf_printf(
			    &notes,
			    "  #   %s:%u: an address or not a host name; write a "
			    "{ cidr: ..., ports: [...] } rule if it is meant\n",
			    infer_said(&e1, infer_printable_utf8(e->host) ? e->host : "?"),
			    e->port);
			wd_buf_free(&e1);
			continue;
		}
		if (e->proto == TRACE_PROTO_DNS) {
			wd_buf_printf(&notes, "  #   %s: resolved, never connected to\n", e->host);
			continue;
		}
		while (k < nh && strcmp(h[k].name, e->host))
			k++;
		if (k == nh)
			h[nh++].name = e->host;
		add_port(&h[k], e->port);
		h[k].count += e->count;
		h[k].protos |= 1u << e->proto;
	}
	for (size_t i = 0; i < nh; i++) {
		const char *parent = strchr(h[i].name, '.') + 1;
		struct host w = {.name = parent};
		unsigned siblings = 0;
		char names[256] = "";

		if (h[i].folded || !wildcard_parent_ok(parent))
			continue;
		for (size_t k = i; k < nh; k++)
			siblings += !h[k].folded && !strcmp(strchr(h[k].name, '.') + 1, parent);
		if (siblings < INFER_WILDCARD_MIN)
			continue;
		for (size_t k = i; k < nh; k++) {
			if (h[k].folded || strcmp(strchr(h[k].name, '.') + 1, parent))
				continue;
			for (unsigned p = 0; p < h[k].nports; p++)
				add_port(&w, h[k].ports[p]);
			w.count += h[k].count;
			h[k].folded = true;
			if (strlen(names) + strlen(h[k].name) + 8 < sizeof(names))
				snprintf(names + strlen(names), sizeof(names) - strlen(names),
					 "%s%s", names[0] ? ", " : "", h[k].name);
		}
		if (!header)
			wd_buf_puts(b, "network:\n  allow:\n");
		header = true;
		wd_buf_printf(b, "    # *.%s: %u names below %s were reached (%s)\n", parent,
			      siblings, parent, names);
		wd_buf_puts(b, "    - ");
		if (w.nports == 1) {
			wd_buf_printf(b, "\"*.%s:%u\"", parent, w.ports[0]);
		} else {
			qsort(w.ports, w.nports, sizeof(*w.ports), cmp_u16);
			wd_buf_printf(b, "{ host: \"*.%s\", ports: [", parent);
			for (unsigned p = 0; p < w.nports; p++)
				wd_buf_printf(b, "%s%u", p ? ", " : "", w.ports[p]);
			wd_buf_puts(b, "] }");
		}
		wd_buf_printf(b, "   # %llu connections\n", (unsigned long long)w.count);
		c->res->nallow++;
	}
	for (size_t i = 0; i < nh; i++) {
		const char *sep = "";

		if (h[i].folded)
			continue;
		if (!header)
			wd_buf_puts(b, "network:\n  allow:\n");
		header = true;
		wd_buf_puts(b, "    - ");
		rule_text(b, h[i].name, h[i].ports, h[i].nports);
		wd_buf_puts(b, "   # ");
		for (int p = 0; p < TRACE_PROTO_N; p++)
			if (h[i].protos & (1u << p)) {
				wd_buf_printf(b, "%s%s", sep, proto_word[p]);
				sep = "/";
			}
		wd_buf_printf(b, ", %llu %s\n", (unsigned long long)h[i].count,
			      h[i].count == 1 ? "connection" : "connections");
		c->res->nallow++;
	}
	if (notes.len) {
		wd_buf_puts(b, header ? "" : "network:\n");
		wd_buf_puts(b, "  # Seen during the trace and not granted:\n");
		wd_buf_append(b, notes.data, notes.len);
		if (!header)
			wd_buf_puts(b, "  allow: []\n");
	}
	wd_buf_free(&notes);
	free(h);
	return 0;
}
