/* encode.c - struct audit_event -> one JSON line, written by hand (no jansson on the
 * gateway's hot path: PERFORMANCE.md). The order of the keys and the "raw" rule are
 * event.c's theory of operation. */
#include "audit/event_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char hexdig[] = "0123456789abcdef";

/*
 * The encoder writes the line by hand, straight into the caller's buffer (no
 * JSON tree, no allocation once the buffer has grown): the gateway encodes one
 * event per DNS query. Its output is byte for byte what jansson's
 * json_dumpb(JSON_COMPACT) wrote for the same object: '"' and '\\' escaped,
 * \b \f \n \r \t by name, other control characters as \u00XX (uppercase hex),
 * everything else (also '/', DEL and valid UTF-8) as it is.
 */
struct enc {
	struct wd_buf *b;
	int ret; /* first error; once set, nothing more is written */
};

static inline bool room(struct enc *e, size_t n);

#define WD_INLINE inline __attribute__((always_inline))

static WD_INLINE void put(struct enc *e, const void *p, size_t n)
{
	if (!room(e, n))
		return;
	memcpy(e->b->data + e->b->len, p, n);
	e->b->len += n;
}

#define PUTS(e, lit) put(e, lit, sizeof(lit) - 1)

/* room for @n more bytes (and the NUL) in the buffer; false once an error is set */
static WD_INLINE bool room(struct enc *e, size_t n)
{
	if (e->ret)
		return false;
	if (e->b->len + n + 1 > e->b->cap && (e->ret = wd_buf_reserve(e->b, n)) < 0)
		return false;
	return true;
}

/* a byte JSON takes as it is: printable ASCII but '"' and '\\' */
static inline bool plain(unsigned char c)
{
	return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/* plain() for 8 bytes at once: no byte < 0x20, >= 0x80, '"' or '\\' */
static inline bool plain8(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');

	/* (x - ones) & ~x & high is non-zero iff some byte of x is zero */
	return !(((w - ones * 0x20) | ((q - ones) & ~q) | ((b - ones) & ~b) | w) & high);
}

/* escape() - the JSON string body of the @n bytes at @s, written at @o (room
 * for 6 * @n bytes: \u00XX is the longest form of one byte); returns the end.
 * Sets *@bad when @s is not valid UTF-8. */
static char *escape(char *o, const char *s, size_t n, bool *bad)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	while (p < end) {
		unsigned char c = *p;
		int l;

		if (plain(c)) {
			/* a run of bytes that need no escaping, 8 at a time where it can */
			while (end - p >= 8) {
				uint64_t w;

				memcpy(&w, p, 8);
				if (!plain8(w))
					break;
				memcpy(o, &w, 8);
				o += 8;
				p += 8;
			}
			while (p < end && plain(*p))
				*o++ = (char)*p++;
			continue;
		}
		if (c >= 0x80) {
			l = wd_utf8_seqlen((const char *)p, (size_t)(end - p));
			if (l > 0) {
				memcpy(o, p, (size_t)l);
				o += l;
				p += l;
			} else {
				memcpy(o, "\xef\xbf\xbd", 3); /* U+FFFD */
				o += 3;
				*bad = true;
				p++;
			}
			continue;
		}
		*o++ = '\\';
		switch (c) {
		case '"':
		case '\\':
			*o++ = (char)c;
			break;
		case '\b':
			*o++ = 'b';
			break;
		case '\f':
			*o++ = 'f';
			break;
		case '\n':
			*o++ = 'n';
			break;
		case '\r':
			*o++ = 'r';
			break;
		case '\t':
			*o++ = 't';
			break;
		default:
			memcpy(o, "u00", 3);
			o[3] = "0123456789ABCDEF"[c >> 4];
			o[4] = "0123456789ABCDEF"[c & 15];
			o += 5;
			break;
		}
		p++;
	}
	return o;
}

/* "@s" (quoted, escaped); true when @s was not valid UTF-8 */
static bool put_quoted(struct enc *e, const char *s)
{
	size_t n = strlen(s);
	bool bad = false;
	char *o;

	if (n > (SIZE_MAX - 8) / 6 || !room(e, 6 * n + 2)) {
		if (!e->ret)
			e->ret = -ENOMEM;
		return false;
	}
	o = e->b->data + e->b->len;
	*o++ = '"';
	o = escape(o, s, n, &bad);
	*o++ = '"';
	e->b->len = (size_t)(o - e->b->data);
	return bad;
}

static bool utf8_valid(const char *s)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n;) {
		int l;

		if ((unsigned char)s[i] < 0x80) {
			i++;
			continue;
		}
		l = wd_utf8_seqlen(s + i, n - i);
		if (l <= 0)
			return false;
		i += (size_t)l;
	}
	return true;
}

/* ,"key":"value"; true when @s was not valid UTF-8 */
static WD_INLINE bool put_str(struct enc *e, const char *key, const char *s)
{
	PUTS(e, ",\"");
	put(e, key, strlen(key));
	PUTS(e, "\":");
	return put_quoted(e, s);
}

static void put_int(struct enc *e, int64_t v)
{
	char d[24];
	size_t i = sizeof(d);
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	do
		d[--i] = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		d[--i] = '-';
	put(e, d + i, sizeof(d) - i);
}

/* the exact bytes of @s in hex, as a member of "raw" */
static void put_raw(struct enc *e, bool *first, const char *key, size_t idx, bool indexed,
		    const char *s)
{
	if (*first)
		PUTS(e, ",\"raw\":{\"");
	else
		PUTS(e, ",\"");
	*first = false;
	put(e, key, strlen(key));
	if (indexed) {
		PUTS(e, "[");
		put_int(e, (int64_t)idx);
		PUTS(e, "]");
	}
	PUTS(e, "\":\"");
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char h[2] = {hexdig[*p >> 4], hexdig[*p & 15]};

		put(e, h, 2);
	}
	PUTS(e, "\"");
}

/* Numbers and strings of @ev at a table entry's offset. */
static const char *field_str(const struct audit_event *ev, const struct opt_field *f)
{
	return *(const char *const *)((const char *)ev + f->off);
}

static int64_t field_num(const struct audit_event *ev, const struct opt_field *f)
{
	return *(const int64_t *)((const char *)ev + f->off);
}

/* check() - what the encoder refuses, before anything is written */
static int check(const struct audit_event *ev, struct wd_err *err)
{
	if (!ev->run || !ev->action)
		return wd_err_set(err, -EINVAL, "audit event: %s is missing",
				  ev->run ? "action" : "run");
	if (!audit_type_name(ev->type) && !ev->type_name)
		return wd_err_set(err, -EINVAL, "audit event %s: unknown type %d", ev->action,
				  (int)ev->type);
	if (ev->ts.tv_nsec < 0 || ev->ts.tv_nsec >= 1000000000L)
		return wd_err_set(err, -EINVAL, "audit event %s: bad timestamp", ev->action);
	for (size_t i = 0; i < AUDIT_N_OPT_FIELDS; i++) {
		const struct opt_field *f = &audit_opt_fields[i];
		int64_t v;

		if (f->kind == FK_NUM && (ev->has & f->bit)) {
			v = field_num(ev, f);
			if (v < 0 || v > f->max)
				return wd_err_set(err, -EINVAL,
						  "audit event %s: %s %lld is out of range",
						  ev->action, f->key, (long long)v);
		}
		if (f->kind == FK_ARGV && ev->command)
			for (size_t k = 0; k < ev->command_len; k++)
				if (!ev->command[k])
					return wd_err_set(err, -EINVAL,
							  "audit event: command[%zu] is NULL", k);
	}
	/* mcp is JSON text written as it is: one object on one line, valid UTF-8 */
	if (ev->mcp) {
		size_t n = strlen(ev->mcp);

		if (n < 2 || ev->mcp[0] != '{' || ev->mcp[n - 1] != '}' ||
		    memchr(ev->mcp, '\n', n) || !utf8_valid(ev->mcp))
			return wd_err_set(err, -EINVAL, "audit event %s: mcp is not a JSON object",
					  ev->action);
	}
	/* names are object keys: no raw copy, so valid UTF-8; no duplicates */
	for (size_t k = 0; ev->names && k < ev->names_len; k++) {
		const char *n = ev->names[k].name;

		if (!n || !*n || !utf8_valid(n) || ev->names[k].count < 0)
			return wd_err_set(err, -EINVAL, "audit event %s: names[%zu] is invalid",
					  ev->action, k);
		for (size_t j = 0; j < k; j++)
			if (!strcmp(ev->names[j].name, n))
				return wd_err_set(err, -EINVAL,
						  "audit event %s: names has %s twice", ev->action,
						  n);
	}
	return 0;
}

/* the "raw" object: exact bytes of every string that was not valid UTF-8 */
static void put_raws(struct enc *e, const struct audit_event *ev, const char *type)
{
	const char *core[][2] = {{"run", ev->run},
				 {"type", type},
				 {"action", ev->action},
				 {"resource", ev->resource ? ev->resource : ""},
				 {"reason", ev->reason ? ev->reason : ""}};
	bool first = true;

	for (size_t i = 0; i < WD_ARRAY_SIZE(core); i++)
		if (!utf8_valid(core[i][1]))
			put_raw(e, &first, core[i][0], 0, false, core[i][1]);
	for (size_t i = 0; i < AUDIT_N_OPT_FIELDS; i++) {
		const struct opt_field *f = &audit_opt_fields[i];

		if (f->kind == FK_STR && field_str(ev, f) && !utf8_valid(field_str(ev, f)))
			put_raw(e, &first, f->key, 0, false, field_str(ev, f));
		if (f->kind == FK_ARGV && ev->command)
			for (size_t k = 0; k < ev->command_len; k++)
				if (!utf8_valid(ev->command[k]))
					put_raw(e, &first, "command", k, true, ev->command[k]);
	}
	if (!first)
		PUTS(e, "}");
}

int audit_event_encode(const struct audit_event *ev, struct wd_buf *out, struct wd_err *err)
{
	struct enc e = {.b = out};
	size_t start = out->len;
	const char *type;
	bool bad = false;
	char ts[28];
	int ret;

	ret = check(ev, err);
	if (ret < 0)
		return ret;
	if (wd_rfc3339(&ev->ts, ts, sizeof(ts)) < 0)
		return wd_err_set(err, -EINVAL, "audit event %s: bad timestamp", ev->action);
	type = audit_event_type(ev);
	room(&e, 1024); /* most lines fit: one allocation check instead of many */
	PUTS(&e, "{\"ts\":\"");
	put(&e, ts, 27);
	PUTS(&e, "\"");
	bad |= put_str(&e, "run", ev->run);
	bad |= put_str(&e, "type", type);
	bad |= put_str(&e, "action", ev->action);
	if (ev->allowed)
		PUTS(&e, ",\"allowed\":true");
	else
		PUTS(&e, ",\"allowed\":false");
	bad |= put_str(&e, "resource", ev->resource ? ev->resource : "");
	bad |= put_str(&e, "reason", ev->reason ? ev->reason : "");
	for (size_t i = 0; i < AUDIT_N_OPT_FIELDS; i++) {
		const struct opt_field *f = &audit_opt_fields[i];

		switch (f->kind) {
		case FK_STR:
			if (field_str(ev, f))
				bad |= put_str(&e, f->key, field_str(ev, f));
			break;
		case FK_NUM:
			if (!(ev->has & f->bit))
				break;
			PUTS(&e, ",\"");
			put(&e, f->key, strlen(f->key));
			PUTS(&e, "\":");
			put_int(&e, field_num(ev, f));
			break;
		case FK_BOOL:
			/* with a bit: written when the bit is set, true or false; without
			 * one: written only when true ("ech") */
			if (f->bit ? !(ev->has & f->bit)
				   : !*(const bool *)((const char *)ev + f->off))
				break;
			PUTS(&e, ",\"");
			put(&e, f->key, strlen(f->key));
			if (*(const bool *)((const char *)ev + f->off))
				PUTS(&e, "\":true");
			else
				PUTS(&e, "\":false");
			break;
		case FK_COUNTS:
			if (!ev->names)
				break;
			PUTS(&e, ",\"names\":{");
			for (size_t k = 0; k < ev->names_len; k++) {
				if (k)
					PUTS(&e, ",");
				put_quoted(&e, ev->names[k].name);
				PUTS(&e, ":");
				put_int(&e, ev->names[k].count);
			}
			PUTS(&e, "}");
			break;
		case FK_JSON:
			if (!field_str(ev, f))
				break;
			PUTS(&e, ",\"");
			put(&e, f->key, strlen(f->key));
			PUTS(&e, "\":");
			put(&e, field_str(ev, f), strlen(field_str(ev, f)));
			break;
		case FK_ARGV:
			if (!ev->command)
				break;
			PUTS(&e, ",\"command\":[");
			for (size_t k = 0; k < ev->command_len; k++) {
				if (k)
					PUTS(&e, ",");
				bad |= put_quoted(&e, ev->command[k]);
			}
			PUTS(&e, "]");
			break;
		}
	}
	if (bad)
		put_raws(&e, ev, type);
	PUTS(&e, "}\n");
	if (!e.ret && out->len - start > AUDIT_LINE_MAX)
		e.ret = wd_err_set(err, -E2BIG,
				   "audit event %s: %zu bytes, longer than the %u a line may hold",
				   ev->action, out->len - start, AUDIT_LINE_MAX);
	else if (e.ret == -ENOMEM)
		wd_err_set(err, e.ret, "audit event: out of memory");
	if (e.ret) {
		out->len = start;
		if (out->data)
			out->data[start] = '\0';
		return e.ret;
	}
	out->data[out->len] = '\0';
	return 0;
}
