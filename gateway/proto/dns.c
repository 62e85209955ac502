/* dns.c - DNS message parsing (queries for the gateway's DNS front, responses
 * for the upstream side) and the reply composer (synthetic answers, NXDOMAIN /
 * REFUSED, EDNS with Extended DNS Errors, truncation). Pure: see proto.h.
 *
 * Theory of operation: every name is read by name_read(), the one place that
 * follows compression pointers. A pointer must point strictly before the
 * start of the run of labels it ends (so every jump goes backward and a loop
 * is impossible), never into the header, and the name may not exceed 255
 * bytes in wire form. A message is accepted only when every record the
 * header counts is present and well-formed and nothing follows the last one.
 */
#include "gateway/proto/cursor.h"
#include "gateway/proto/proto_internal.h"

#include <errno.h>
#include <string.h>

#define DNS_FLAG_QR 0x8000
#define DNS_FLAG_AA 0x0400
#define DNS_FLAG_TC 0x0200
#define DNS_FLAG_RD 0x0100
#define DNS_FLAG_RA 0x0080
#define DNS_FLAG_CD 0x0010
#define DNS_OPCODE(f) (((f) >> 11) & 0xf)
#define DNS_MAX_JUMPS 64
#define DNS_EDE_OPTION 15
#define DNS_EDE_TEXT_MAX 256

/* a name read by name_read() */
struct name {
	char text[PROTO_NAME_MAX + 1];	 /* lower-case, dotted, "" for the root */
	uint8_t wire[DNS_WIRE_NAME_MAX]; /* uncompressed, case kept */
	size_t wire_len;
	bool bad_char; /* a label byte outside the host name set */
};

/*
 * Read the name at *@off of @msg. On success *@off is just past the name where
 * it was written (past the first pointer, if any).
 */
static bool name_read(const uint8_t *msg, size_t len, size_t *off, struct name *n, const char **why)
{
	size_t pos = *off, tlen = 0;
	size_t run = pos; /* where the current run of labels began */
	bool jumped = false;
	unsigned jumps = 0;

	n->wire_len = 0;
	n->bad_char = false;
	n->text[0] = '\0';
	for (;;) {
		uint8_t b;

		if (pos >= len) {
			*why = "name runs past the message";
			return false;
		}
		b = msg[pos];
		if ((b & 0xc0) == 0xc0) {
			size_t ptr;

			if (pos + 1 >= len) {
				*why = "name runs past the message";
				return false;
			}
			ptr = (size_t)(b & 0x3f) << 8 | msg[pos + 1];
			if (ptr >= run || ptr < DNS_HEADER_LEN) {
				*why = "compression pointer not strictly backward";
				return false;
			}
			if (++jumps > DNS_MAX_JUMPS) {
				*why = "too many compression pointers";
				return false;
			}
			if (!jumped)
				*off = pos + 2;
			jumped = true;
			pos = run = ptr;
			continue;
		}
		if (b & 0xc0) {
			*why = "label longer than 63 (or extended label type)";
			return false;
		}
		/* room for this label and the root label that must follow */
		if (n->wire_len + 1 + b + (b ? 1 : 0) > DNS_WIRE_NAME_MAX) {
			*why = "name longer than 255";
			return false;
		}
		if (b == 0) {
			n->wire[n->wire_len++] = 0;
			if (!jumped)
				*off = pos + 1;
			n->text[tlen] = '\0';
			return true;
		}
		if (pos + 1 + b > len) {
			*why = "name runs past the message";
			return false;
		}
		memcpy(n->wire + n->wire_len, msg + pos, 1u + b);
		n->wire_len += 1u + b;
		if (tlen)
			n->text[tlen++] = '.';
		for (unsigned i = 1; i <= b; i++) {
			uint8_t ch = msg[pos + i];

			if (!proto_host_char(ch))
				n->bad_char = true;
			n->text[tlen++] = (char)proto_lower(ch);
		}
		pos += 1u + b;
	}
}

/* one record's fixed part after its owner name */
struct rr_fixed {
	uint16_t type, rclass;
	uint32_t ttl;
	size_t rdata_off, rdata_len;
};

/* parse one resource record at *@off, validating its rdata; advance *@off */
static bool rr_read(const uint8_t *msg, size_t len, size_t *off, struct name *owner,
		    struct rr_fixed *f, struct name *target, const char **why)
{
	struct cur c;
	size_t end;

	if (!name_read(msg, len, off, owner, why))
		return false;
	if (owner->bad_char) {
		*why = "record owner name has characters outside a host name";
		return false;
	}
	cur_init(&c, msg, len);
	c.off = *off;
	f->type = cur_u16(&c);
	f->rclass = cur_u16(&c);
	f->ttl = cur_u32(&c);
	f->rdata_len = cur_u16(&c);
	f->rdata_off = c.off;
	if (!cur_skip(&c, f->rdata_len)) {
		*why = "record runs past the message (counts or rdlength lie)";
		return false;
	}
	end = c.off;
	switch (f->type) {
	case DNS_TYPE_A:
		if (f->rdata_len != 4) {
			*why = "A rdata is not 4 bytes";
			return false;
		}
		break;
	case DNS_TYPE_AAAA:
		if (f->rdata_len != 16) {
			*why = "AAAA rdata is not 16 bytes";
			return false;
		}
		break;
	case DNS_TYPE_CNAME: {
		size_t p = f->rdata_off;

		if (!name_read(msg, len, &p, target, why))
			return false;
		if (p != end || target->bad_char) {
			*why = "CNAME rdata is not exactly one host name";
			return false;
		}
		break;
	}
	default:
		break;
	}
	*off = end;
	return true;
}

/* an OPT record's fields and options (RFC 6891 §6.1) */
static bool opt_read(const uint8_t *msg, const struct name *owner, const struct rr_fixed *f,
		     struct dns_edns *e, const char **why)
{
	struct cur c;

	if (e->present) {
		*why = "more than one OPT record";
		return false;
	}
	if (owner->wire_len != 1) {
		*why = "OPT owner is not the root";
		return false;
	}
	e->present = true;
	e->udp_size = f->rclass;
	e->ext_rcode = (uint8_t)(f->ttl >> 24);
	e->version = (uint8_t)(f->ttl >> 16);
	e->do_bit = f->ttl & 0x8000;
	cur_init(&c, msg + f->rdata_off, f->rdata_len);
	while (cur_remaining(&c)) {
		cur_u16(&c);
		if (!cur_skip(&c, cur_u16(&c))) {
			*why = "EDNS option runs past the OPT record";
			return false;
		}
		e->n_options++;
	}
	return true;
}

/* walk the answer, authority and additional sections from *@off */
static bool sections_read(const uint8_t *msg, size_t len, size_t *off, const uint16_t counts[3],
			  struct dns_edns *edns, const char **why)
{
	struct name owner, target;
	struct rr_fixed f;

	for (int s = 0; s < 3; s++) {
		for (unsigned i = 0; i < counts[s]; i++) {
			if (!rr_read(msg, len, off, &owner, &f, &target, why))
				return false;
			if (f.type != DNS_TYPE_OPT)
				continue;
			if (s != DNS_SECTION_ADDITIONAL) {
				*why = "OPT record outside the additional section";
				return false;
			}
			if (!opt_read(msg, &owner, &f, edns, why))
				return false;
		}
	}
	if (*off != len) {
		*why = "bytes after the last record";
		return false;
	}
	return true;
}

static enum dns_result qbad(struct dns_query *out, uint16_t rcode, const char *why)
{
	out->rcode_hint = rcode;
	out->why = why;
	return DNS_MALFORMED;
}

enum dns_result dns_query_parse(const uint8_t *buf, size_t len, struct dns_query *out)
{
	struct name qn;
	struct cur c;
	uint16_t counts[4];
	size_t off;

	memset(out, 0, sizeof(*out));
	if (len < DNS_HEADER_LEN)
		return qbad(out, DNS_RCODE_FORMERR, "shorter than a DNS header");
	cur_init(&c, buf, len);
	out->id = cur_u16(&c);
	out->flags = cur_u16(&c);
	for (int i = 0; i < 4; i++)
		counts[i] = cur_u16(&c);
	if (out->flags & DNS_FLAG_QR)
		return qbad(out, DNS_RCODE_FORMERR, "QR set: a response, not a query");
	out->header_ok = true;
	out->rd = out->flags & DNS_FLAG_RD;
	out->cd = out->flags & DNS_FLAG_CD;
	if (DNS_OPCODE(out->flags) != 0)
		return qbad(out, DNS_RCODE_NOTIMP, "opcode is not QUERY");
	if (out->flags & DNS_FLAG_TC)
		return qbad(out, DNS_RCODE_FORMERR, "TC set in a query");
	if (counts[0] != 1)
		return qbad(out, DNS_RCODE_FORMERR, "QDCOUNT is not 1");

	off = DNS_HEADER_LEN;
	if (!name_read(buf, len, &off, &qn, &out->why))
		return qbad(out, DNS_RCODE_FORMERR, out->why);
	c.off = off;
	out->qtype = cur_u16(&c);
	out->qclass = cur_u16(&c);
	if (!cur_ok(&c))
		return qbad(out, DNS_RCODE_FORMERR, "question runs past the message");
	memcpy(out->qname_wire, qn.wire, qn.wire_len);
	out->qname_wire_len = qn.wire_len;
	out->question_ok = true;
	/* the text form, also for messages when the rest fails: from the wire
	 * labels, so that a byte outside a host name (a '.' inside a label too)
	 * shows as '?' and the text cannot pass for another name */
	{
		size_t t = 0;

		for (size_t w = 0; w < qn.wire_len && qn.wire[w]; w += 1u + qn.wire[w]) {
			if (t && t < PROTO_NAME_MAX)
				out->qname[t++] = '.';
			for (size_t k = 1; k <= qn.wire[w] && t < PROTO_NAME_MAX; k++) {
				uint8_t ch = qn.wire[w + k];

				out->qname[t++] =
				    (char)(proto_host_char(ch) ? proto_lower(ch) : '?');
			}
		}
		out->qname[t] = '\0';
	}
	off = c.off;
	if (!sections_read(buf, len, &off, counts + 1, &out->edns, &out->why))
		return qbad(out, DNS_RCODE_FORMERR, out->why);
	if (out->edns.present && out->edns.version != 0)
		return qbad(out, DNS_RCODE_BADVERS, "EDNS version is not 0");
	if (qn.bad_char)
		return qbad(out, DNS_RCODE_REFUSED,
			    "query name has characters outside a host name");
	return DNS_OK;
}

enum dns_result dns_tcp_frame(const uint8_t *buf, size_t len, size_t *msg_off, size_t *msg_len)
{
	size_t n;

	if (len < 2)
		return DNS_NEED_MORE;
	n = (size_t)buf[0] << 8 | buf[1];
	if (n < DNS_HEADER_LEN)
		return DNS_MALFORMED;
	if (len - 2 < n)
		return DNS_NEED_MORE;
	*msg_off = 2;
	*msg_len = n;
	return DNS_OK;
}

static enum dns_result rbad(struct dns_response *out, const char *why)
{
	out->why = why;
	return DNS_MALFORMED;
}

enum dns_result dns_response_parse(const uint8_t *buf, size_t len, struct dns_response *out)
{
	struct name qn;
	struct cur c;
	size_t off;

	memset(out, 0, sizeof(*out));
	if (len < DNS_HEADER_LEN)
		return rbad(out, "shorter than a DNS header");
	cur_init(&c, buf, len);
	out->id = cur_u16(&c);
	out->flags = cur_u16(&c);
	for (int i = 0; i < 4; i++)
		out->counts[i] = cur_u16(&c);
	out->tc = out->flags & DNS_FLAG_TC;
	if (!(out->flags & DNS_FLAG_QR))
		return rbad(out, "QR clear: a query, not a response");
	if (DNS_OPCODE(out->flags) != 0)
		return rbad(out, "opcode is not QUERY");
	if (out->counts[0] > 1)
		return rbad(out, "QDCOUNT above 1");
	off = DNS_HEADER_LEN;
	if (out->counts[0]) {
		if (!name_read(buf, len, &off, &qn, &out->why))
			return DNS_MALFORMED;
		if (qn.bad_char)
			return rbad(out, "question name has characters outside a host name");
		memcpy(out->qname, qn.text, sizeof(out->qname));
		c.off = off;
		out->qtype = cur_u16(&c);
		out->qclass = cur_u16(&c);
		if (!cur_ok(&c))
			return rbad(out, "question runs past the message");
		off = c.off;
	}
	out->rr_off = off;
	if (!sections_read(buf, len, &off, out->counts + 1, &out->edns, &out->why))
		return DNS_MALFORMED;
	out->rcode = (uint16_t)((out->flags & 0xf) | (unsigned)out->edns.ext_rcode << 4);
	return DNS_OK;
}

void dns_rr_iter_init(struct dns_rr_iter *it, const struct dns_response *resp)
{
	it->off = resp->rr_off;
	for (int i = 0; i < 3; i++)
		it->left[i] = resp->counts[i + 1];
}

enum dns_result dns_rr_next(const uint8_t *buf, size_t len, struct dns_rr_iter *it,
			    struct dns_rr *rr)
{
	struct name owner, target;
	struct rr_fixed f;
	const char *why;
	size_t off = it->off;
	int s = 0;

	while (s < 3 && it->left[s] == 0)
		s++;
	if (s == 3)
		return DNS_ABSENT;
	memset(rr, 0, sizeof(*rr));
	if (!rr_read(buf, len, &off, &owner, &f, &target, &why))
		return DNS_MALFORMED;
	rr->section = (enum dns_section)s;
	memcpy(rr->name, owner.text, sizeof(rr->name));
	rr->type = f.type;
	rr->rclass = f.rclass;
	rr->ttl = f.ttl;
	rr->rdata = (struct proto_span){f.rdata_off, f.rdata_len};
	if (f.type == DNS_TYPE_A || f.type == DNS_TYPE_AAAA)
		memcpy(rr->addr, buf + f.rdata_off, f.rdata_len);
	else if (f.type == DNS_TYPE_CNAME)
		memcpy(rr->target, target.text, sizeof(rr->target));
	it->left[s]--;
	it->off = off;
	return DNS_OK;
}

/* big-endian writer over the caller's buffer; sizes are checked up front, the
 * bound here is a second line of defence */
struct wr {
	uint8_t *p;
	size_t size;
	size_t at;
	bool over;
};

static void putn(struct wr *w, const void *s, size_t n)
{
	if (w->over || n > w->size - w->at) {
		w->over = true;
		return;
	}
	if (n)
		memcpy(w->p + w->at, s, n);
	w->at += n;
}

static void put8(struct wr *w, uint8_t v)
{
	putn(w, &v, 1);
}

static void put16(struct wr *w, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};

	putn(w, b, 2);
}

static void put32(struct wr *w, uint32_t v)
{
	put16(w, (uint16_t)(v >> 16));
	put16(w, (uint16_t)v);
}

/* NOLINTNEXTLINE(readability-non-const-parameter): written through w.p */
int dns_reply_compose(const struct dns_query *q, const struct dns_reply *r, uint8_t *out,
		      size_t size)
{
	size_t qlen, opt_len = 0, text_len = 0, ans_len = 0, limit, base;
	uint16_t flags;
	struct wr w = {out, size, 0, false};
	bool tc = false;

	if (!q || !r || !out || !q->header_ok || r->rcode > 0xfff)
		return -EINVAL;
	if (r->rcode > 0xf && !q->edns.present)
		return -EINVAL;
	if (r->n_answers && (!q->question_ok || !r->answers))
		return -EINVAL;
	for (size_t i = 0; i < r->n_answers; i++) {
		if (r->answers[i].type == DNS_TYPE_A)
			ans_len += 2 + 10 + 4;
		else if (r->answers[i].type == DNS_TYPE_AAAA)
			ans_len += 2 + 10 + 16;
		else
			return -EINVAL;
	}
	qlen = q->question_ok ? q->qname_wire_len + 4 : 0;
	if (q->edns.present) {
		opt_len = 11;
		if (r->ede) {
			text_len = r->ede_text ? strnlen(r->ede_text, DNS_EDE_TEXT_MAX) : 0;
			opt_len += 4 + 2 + text_len;
		}
	}
	if (r->tcp)
		limit = 65535;
	else if (q->edns.present)
		limit = q->edns.udp_size > 512 ? q->edns.udp_size : 512;
	else
		limit = 512;
	if (limit > size)
		limit = size;
	base = DNS_HEADER_LEN + qlen + opt_len;
	if (base > limit && text_len) {
		/* keep the EDE code, shorten its text */
		size_t over = base - limit;

		text_len = over < text_len ? text_len - over : 0;
		opt_len = 11 + 4 + 2 + text_len;
		base = DNS_HEADER_LEN + qlen + opt_len;
	}
	if (base > limit)
		return -ENOSPC;
	if (base + ans_len > limit)
		tc = true;

	flags =
	    DNS_FLAG_QR | DNS_FLAG_RA | (q->flags & (DNS_FLAG_RD | DNS_FLAG_CD)) | (r->rcode & 0xf);
	if (r->aa)
		flags |= DNS_FLAG_AA;
	if (tc)
		flags |= DNS_FLAG_TC;
	put16(&w, q->id);
	put16(&w, flags);
	put16(&w, q->question_ok ? 1 : 0);
	put16(&w, tc ? 0 : (uint16_t)r->n_answers);
	put16(&w, 0);
	put16(&w, q->edns.present ? 1 : 0);
	if (q->question_ok) {
		putn(&w, q->qname_wire, q->qname_wire_len);
		put16(&w, q->qtype);
		put16(&w, q->qclass);
	}
	for (size_t i = 0; !tc && i < r->n_answers; i++) {
		const struct dns_answer *a = &r->answers[i];
		uint16_t alen = a->type == DNS_TYPE_A ? 4 : 16;

		put16(&w, 0xc000 | DNS_HEADER_LEN); /* the question's name */
		put16(&w, a->type);
		put16(&w, q->qclass);
		put32(&w, a->ttl);
		put16(&w, alen);
		putn(&w, a->addr, alen);
	}
	if (q->edns.present) {
		put8(&w, 0); /* root */
		put16(&w, DNS_TYPE_OPT);
		put16(&w, DNS_OUR_UDP_SIZE);
		put32(&w, (uint32_t)(r->rcode >> 4) << 24 | (q->edns.do_bit ? 0x8000u : 0));
		put16(&w, (uint16_t)(opt_len - 11));
		if (r->ede) {
			size_t t0;

			put16(&w, DNS_EDE_OPTION);
			put16(&w, (uint16_t)(2 + text_len));
			put16(&w, r->ede_code);
			t0 = w.at;
			if (text_len)
				putn(&w, r->ede_text, text_len);
			for (size_t i = t0; i < w.at; i++)
				if (w.p[i] < 0x20 || w.p[i] > 0x7e)
					w.p[i] = '?';
		}
	}
	if (w.over)
		return -ENOSPC;
	return (int)w.at;
}

/* NOLINTNEXTLINE(readability-non-const-parameter): written through w.p */
int dns_query_compose(uint16_t id, const char *name, uint16_t qtype, uint8_t *out, size_t size)
{
	char norm[PROTO_NAME_MAX + 1];
	struct wr w = {out, size, 0, false};
	const char *why = NULL, *label;
	size_t n;

	if (!name || !out)
		return -EINVAL;
	n = strnlen(name, PROTO_NAME_MAX + 2);
	if (proto_host_parse((const uint8_t *)name, n, 0, norm, &why) != PROTO_HOST_NAME)
		return -EINVAL;
	n = strlen(norm);
	/* header, the name's labels (n + 1 bytes) and its root label, type, class */
	if (size < DNS_HEADER_LEN + n + 2 + 4)
		return -ENOSPC;
	put16(&w, id);
	put16(&w, DNS_FLAG_RD);
	put16(&w, 1); /* QDCOUNT */
	put16(&w, 0);
	put16(&w, 0);
	put16(&w, 0);
	for (label = norm;;) {
		const char *dot = strchr(label, '.');
		size_t len = dot ? (size_t)(dot - label) : strlen(label);

		put8(&w, (uint8_t)len);
		putn(&w, label, len);
		if (!dot)
			break;
		label = dot + 1;
	}
	put8(&w, 0); /* the root */
	put16(&w, qtype);
	put16(&w, DNS_CLASS_IN);
	return w.over ? -ENOSPC : (int)w.at;
}

/* length of @s without one trailing dot */
static size_t bare_len(const char *s)
{
	size_t n = strlen(s);

	return n && s[n - 1] == '.' ? n - 1 : n;
}

bool dns_name_equal(const char *a, const char *b)
{
	size_t n = bare_len(a);

	if (n != bare_len(b))
		return false;
	for (size_t i = 0; i < n; i++)
		if (proto_lower((uint8_t)a[i]) != proto_lower((uint8_t)b[i]))
			return false;
	return true;
}
