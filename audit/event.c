/* event.c - struct audit_event <-> one JSON line: the audit log's codec (pure; a hand
 * encoder, jansson for decoding). */
#include "audit/audit.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Theory of operation
 *
 * An event is a flat JSON object written with JSON_COMPACT. The seven core
 * keys come first (ts, run, type, action, allowed, resource, reason), then the
 * optional ones in the order of opt_fields[] below, then "raw". The encoder
 * writes them in that order by hand (see audit_event_encode()); the decoder
 * does not depend on the order.
 *
 * Strings are bytes in C but must be UTF-8 in JSON. A string that is not
 * valid UTF-8 is written with U+FFFD in place of each bad byte, and its exact
 * bytes go under "raw" as lowercase hex, keyed by field name ("resource",
 * "command[2]"). A reader that ignores "raw" sees a readable, valid string; the
 * decoder below puts the exact bytes back, so nothing an attacker sends (a DNS
 * name with stray bytes) is lost or turns the log invalid.
 *
 * The decoder ignores keys it does not know (newer writers add fields) and
 * refuses duplicate keys (an "allowed" written twice is not an audit record).
 */

enum field_kind { FK_STR, FK_NUM, FK_ARGV, FK_BOOL, FK_COUNTS };

struct opt_field {
	const char *key;
	enum field_kind kind;
	size_t off;   /* offset of the member in struct audit_event */
	uint32_t bit; /* FK_NUM, FK_BOOL: AUDIT_HAS_* */
	int64_t max;  /* FK_NUM: largest value accepted */
};

/* clang-format off */
#define OFF(m) offsetof(struct audit_event, m)
#define STR(k, m) {k, FK_STR, OFF(m), 0, 0}
#define NUM(k, m, b, mx) {k, FK_NUM, OFF(m), b, mx}
#define BOOL(k, m, b) {k, FK_BOOL, OFF(m), b, 0}

/* The optional fields, in the order they are written. */
static const struct opt_field opt_fields[] = {
	STR("rule", rule),
	STR("policy", policy),
	STR("policy_hash", policy_hash),
	STR("isolation", isolation),
	STR("mode", mode),
	{"command", FK_ARGV, OFF(command), 0, 0},
	NUM("pid", pid, AUDIT_HAS_PID, INT32_MAX),
	NUM("uid", uid, AUDIT_HAS_UID, UINT32_MAX),
	STR("dst", dst),
	NUM("port", port, AUDIT_HAS_PORT, 65535),
	STR("proto", proto),
	STR("sni", sni),
	{"ech", FK_BOOL, OFF(ech), 0, 0},
	STR("host", host),
	STR("qtype", qtype),
	NUM("bytes_up", bytes_up, AUDIT_HAS_BYTES_UP, INT64_MAX),
	NUM("bytes_down", bytes_down, AUDIT_HAS_BYTES_DOWN, INT64_MAX),
	NUM("duration_ms", duration_ms, AUDIT_HAS_DURATION, INT64_MAX),
	NUM("exit", exit, AUDIT_HAS_EXIT, 255),
	NUM("signal", signal, AUDIT_HAS_SIGNAL, 127),
	NUM("denials", denials, AUDIT_HAS_DENIALS, INT64_MAX),
	NUM("count", count, AUDIT_HAS_COUNT, INT64_MAX),
	{"names", FK_COUNTS, OFF(names), 0, INT64_MAX},
	NUM("limit", limit, AUDIT_HAS_LIMIT, INT64_MAX),
	NUM("usage", usage, AUDIT_HAS_USAGE, INT64_MAX),
	BOOL("counts_incomplete", counts_incomplete, AUDIT_HAS_COUNTS_INCOMPLETE),
	STR("denial_id", denial_id),
};

static const char *const type_names[] = {
	[AUDIT_TYPE_RUN] = "run",
	[AUDIT_TYPE_DNS] = "dns",
	[AUDIT_TYPE_NET] = "net",
	[AUDIT_TYPE_FILE] = "file",
	[AUDIT_TYPE_LIMIT] = "limit",
};
/* clang-format on */

/* What a decoded event owns: the parsed tree (its strings) and the argv array. */
struct decoded {
	json_t *root;
	const char **argv;
	struct audit_count *names;
};

const char *audit_type_name(enum audit_type type)
{
	if ((unsigned)type >= WD_ARRAY_SIZE(type_names))
		return NULL;
	return type_names[type];
}

const char *audit_event_type(const struct audit_event *ev)
{
	const char *name = audit_type_name(ev->type);

	if (name)
		return name;
	return ev->type_name ? ev->type_name : "?";
}

int audit_utf8_seqlen(const char *p, size_t n)
{
	const unsigned char *s = (const unsigned char *)p;
	unsigned char lo = 0x80, hi = 0xbf;
	int len;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (n < (size_t)len)
		return 0;
	/* The second byte's range rules out overlongs, surrogates and > U+10FFFF. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (int i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

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
			l = audit_utf8_seqlen((const char *)p, (size_t)(end - p));
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
		l = audit_utf8_seqlen(s + i, n - i);
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
	for (size_t i = 0; i < WD_ARRAY_SIZE(opt_fields); i++) {
		const struct opt_field *f = &opt_fields[i];
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
	for (size_t i = 0; i < WD_ARRAY_SIZE(opt_fields); i++) {
		const struct opt_field *f = &opt_fields[i];

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
	for (size_t i = 0; i < WD_ARRAY_SIZE(opt_fields); i++) {
		const struct opt_field *f = &opt_fields[i];

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

/* ---- decoding ---- */

static bool digits(const char *s, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

/* parse_rfc3339() - "YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)" to a timespec. */
static bool parse_rfc3339(const char *s, struct timespec *out)
{
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
	long nsec = 0;
	struct tm tm = {0};
	time_t t;

	if (strlen(s) < 20 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) ||
	    s[7] != '-' || !digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
	    !digits(s + 11, 2, &h) || s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' ||
	    !digits(s + 17, 2, &sec))
		return false;
	s += 19;
	if (*s == '.') {
		long scale = 100000000L;
		int nd = 0;

		for (s++; *s >= '0' && *s <= '9'; s++, nd++)
			if (nd < 9) {
				nsec += (*s - '0') * scale;
				scale /= 10;
			}
		if (nd == 0)
			return false;
	}
	if (*s == 'Z' || *s == 'z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		sign = *s == '+' ? 1 : -1;
		if (!digits(s + 1, 2, &oh) || s[3] != ':' || !digits(s + 4, 2, &om) || oh > 23 ||
		    om > 59)
			return false;
		s += 6;
	} else {
		return false;
	}
	if (*s || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return false;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = timegm(&tm);
	out->tv_sec = t - sign * (oh * 3600 + om * 60);
	out->tv_nsec = nsec;
	return true;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* unhex() - a jansson string holding the bytes @hex encodes, or NULL. */
static json_t *unhex(const char *hex, size_t n)
{
	json_t *v;
	char *b;

	if (n % 2)
		return NULL;
	b = malloc(n / 2 + 1);
	if (!b)
		return NULL;
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
			free(b);
			return NULL;
		}
		b[i] = (char)(hi << 4 | lo);
	}
	v = json_stringn_nocheck(b, n / 2);
	free(b);
	return v;
}

static bool raw_key_is_string(const char *key)
{
	static const char *const core[] = {"run", "type", "action", "resource", "reason"};

	for (size_t i = 0; i < WD_ARRAY_SIZE(core); i++)
		if (!strcmp(key, core[i]))
			return true;
	for (size_t i = 0; i < WD_ARRAY_SIZE(opt_fields); i++)
		if (opt_fields[i].kind == FK_STR && !strcmp(key, opt_fields[i].key))
			return true;
	return false;
}

/* apply_raw() - put the exact bytes kept under "raw" back into @root. */
static int apply_raw(json_t *root, struct wd_err *err)
{
	json_t *raw = json_object_get(root, "raw"), *v;
	const char *key;

	if (!raw || json_is_null(raw))
		return 0;
	if (!json_is_object(raw))
		return wd_err_set(err, -EBADMSG, "\"raw\" is not an object");
	json_object_foreach(raw, key, v)
	{
		json_t *cmd = json_object_get(root, "command"), *bytes;

		if (!json_is_string(v))
			return wd_err_set(err, -EBADMSG, "raw.%s is not a string", key);
		bytes = unhex(json_string_value(v), json_string_length(v));
		if (!bytes)
			return wd_err_set(err, -EBADMSG, "raw.%s is not hex", key);
		if (raw_key_is_string(key)) {
			if (json_object_set_new(root, key, bytes) < 0)
				return -ENOMEM;
			continue;
		}
		if (!strncmp(key, "command[", 8) && key[8] >= '0' && key[8] <= '9') {
			char *end;
			unsigned long idx = strtoul(key + 8, &end, 10);

			if (!strcmp(end, "]") && json_is_array(cmd) && idx < json_array_size(cmd)) {
				if (json_array_set_new(cmd, idx, bytes) < 0)
					return -ENOMEM;
				continue;
			}
		}
		json_decref(bytes); /* a raw copy of a field we do not know: ignore it */
	}
	return 0;
}

/* get_str() - @key as a string: required ones must be there, others may be absent or null. */
static int get_str(json_t *root, const char *key, bool required, const char **out,
		   struct wd_err *err)
{
	json_t *v = json_object_get(root, key);

	if (!v || json_is_null(v)) {
		if (required)
			return wd_err_set(err, -EBADMSG, "\"%s\" is missing", key);
		return 0;
	}
	if (!json_is_string(v))
		return wd_err_set(err, -EBADMSG, "\"%s\" is not a string", key);
	*out = json_string_value(v);
	return 0;
}

static int get_opt(json_t *root, const struct opt_field *f, struct audit_event *ev,
		   struct decoded *dec, struct wd_err *err)
{
	json_t *v = json_object_get(root, f->key), *item;
	json_int_t num;
	size_t i;

	if (!v || json_is_null(v))
		return 0;
	switch (f->kind) {
	case FK_STR:
		return get_str(root, f->key, false, (const char **)((char *)ev + f->off), err);
	case FK_NUM:
		if (!json_is_integer(v))
			return wd_err_set(err, -EBADMSG, "\"%s\" is not an integer", f->key);
		num = json_integer_value(v);
		if (num < 0 || num > f->max)
			return wd_err_set(err, -EBADMSG, "\"%s\" is out of range", f->key);
		*(int64_t *)((char *)ev + f->off) = num;
		ev->has |= f->bit;
		return 0;
	case FK_COUNTS: {
		const char *key;

		if (!json_is_object(v))
			return wd_err_set(err, -EBADMSG, "\"%s\" is not an object", f->key);
		dec->names = calloc(json_object_size(v) + 1, sizeof(*dec->names));
		if (!dec->names)
			return -ENOMEM;
		i = 0;
		json_object_foreach(v, key, item)
		{
			if (!json_is_integer(item) || json_integer_value(item) < 0 || !*key)
				return wd_err_set(err, -EBADMSG, "\"%s\" holds a bad count",
						  f->key);
			dec->names[i].name = key;
			dec->names[i].count = json_integer_value(item);
			i++;
		}
		ev->names = dec->names;
		ev->names_len = i;
		return 0;
	}
	case FK_ARGV:
		if (!json_is_array(v))
			return wd_err_set(err, -EBADMSG, "\"%s\" is not an array", f->key);
		dec->argv = calloc(json_array_size(v) + 1, sizeof(*dec->argv));
		if (!dec->argv)
			return -ENOMEM;
		json_array_foreach(v, i, item)
		{
			if (!json_is_string(item))
				return wd_err_set(err, -EBADMSG, "\"%s\" holds a non-string",
						  f->key);
			dec->argv[i] = json_string_value(item);
		}
		ev->command = dec->argv;
		ev->command_len = json_array_size(v);
		return 0;
	case FK_BOOL:
		if (!json_is_boolean(v))
			return wd_err_set(err, -EBADMSG, "\"%s\" is not a boolean", f->key);
		*(bool *)((char *)ev + f->off) = json_is_true(v);
		ev->has |= f->bit;
		return 0;
	}
	return -EINVAL;
}

static int extract(json_t *root, struct audit_event *ev, struct decoded *dec, struct wd_err *err)
{
	const char *ts = NULL;
	json_t *allowed;
	int ret;

	if (!json_is_object(root))
		return wd_err_set(err, -EBADMSG, "not a JSON object");
	ret = apply_raw(root, err);
	if (ret < 0)
		return ret;
	ret = get_str(root, "ts", true, &ts, err);
	if (!ret && (!ts || !parse_rfc3339(ts, &ev->ts)))
		ret = wd_err_set(err, -EBADMSG, "\"ts\" is not an RFC 3339 time");
	if (!ret)
		ret = get_str(root, "run", true, &ev->run, err);
	if (!ret)
		ret = get_str(root, "type", true, &ev->type_name, err);
	if (!ret)
		ret = get_str(root, "action", true, &ev->action, err);
	if (!ret)
		ret = get_str(root, "resource", false, &ev->resource, err);
	if (!ret)
		ret = get_str(root, "reason", false, &ev->reason, err);
	if (ret < 0)
		return ret;
	allowed = json_object_get(root, "allowed");
	if (!json_is_boolean(allowed))
		return wd_err_set(err, -EBADMSG, "\"allowed\" is %s",
				  allowed ? "not a boolean" : "missing");
	ev->allowed = json_is_true(allowed);
	if (!ev->resource)
		ev->resource = "";
	if (!ev->reason)
		ev->reason = "";
	ev->type = AUDIT_TYPE_OTHER;
	for (size_t i = 0; i < WD_ARRAY_SIZE(type_names); i++)
		if (type_names[i] && ev->type_name && !strcmp(type_names[i], ev->type_name))
			ev->type = (enum audit_type)i;
	for (size_t i = 0; i < WD_ARRAY_SIZE(opt_fields); i++) {
		ret = get_opt(root, &opt_fields[i], ev, dec, err);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int audit_event_decode(const char *line, size_t len, struct audit_event *ret_ev, struct wd_err *err)
{
	struct audit_event ev = {0};
	struct decoded *dec;
	json_error_t jerr;
	int ret;

	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	if (len == 0)
		return wd_err_set(err, -EBADMSG, "empty line");
	if (memchr(line, '\n', len))
		return wd_err_set(err, -EBADMSG, "more than one line");
	dec = calloc(1, sizeof(*dec));
	if (!dec)
		return wd_err_set(err, -ENOMEM, "out of memory");
	dec->root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!dec->root) {
		ret = wd_err_set(err, -EBADMSG, "not JSON: %s (column %d)", jerr.text, jerr.column);
		goto out;
	}
	ret = extract(dec->root, &ev, dec, err);
	if (ret == -ENOMEM)
		wd_err_set(err, ret, "out of memory");
	if (ret < 0)
		goto out;
	ev.priv = dec;
	*ret_ev = ev;
	return 0;
out:
	json_decref(dec->root);
	free(dec->argv);
	free(dec->names);
	free(dec);
	return ret;
}

void audit_event_clear(struct audit_event *ev)
{
	struct decoded *dec;

	if (!ev)
		return;
	dec = ev->priv;
	if (dec) {
		json_decref(dec->root);
		free(dec->argv);
		free(dec->names);
		free(dec);
	}
	memset(ev, 0, sizeof(*ev));
}
