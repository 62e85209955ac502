/* event.c - struct audit_event <-> one JSON line: the audit log's codec (pure, jansson). */
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
 * optional ones in the order of opt_fields[] below, then "raw". Objects in
 * jansson >= 2.8 keep insertion order, so the order on disk is the table's.
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

enum field_kind { FK_STR, FK_NUM, FK_ARGV };

struct opt_field {
	const char *key;
	enum field_kind kind;
	size_t off;   /* offset of the member in struct audit_event */
	uint32_t bit; /* FK_NUM: AUDIT_HAS_* */
	int64_t max;  /* FK_NUM: largest value accepted */
};

/* clang-format off */
#define OFF(m) offsetof(struct audit_event, m)
#define STR(k, m) {k, FK_STR, OFF(m), 0, 0}
#define NUM(k, m, b, mx) {k, FK_NUM, OFF(m), b, mx}

/* The optional fields, in the order they are written. */
static const struct opt_field opt_fields[] = {
	STR("rule", rule),
	STR("policy", policy),
	STR("policy_hash", policy_hash),
	STR("isolation", isolation),
	{"command", FK_ARGV, OFF(command), 0, 0},
	NUM("pid", pid, AUDIT_HAS_PID, INT32_MAX),
	NUM("uid", uid, AUDIT_HAS_UID, UINT32_MAX),
	STR("dst", dst),
	NUM("port", port, AUDIT_HAS_PORT, 65535),
	STR("proto", proto),
	STR("sni", sni),
	STR("host", host),
	STR("qtype", qtype),
	NUM("bytes_up", bytes_up, AUDIT_HAS_BYTES_UP, INT64_MAX),
	NUM("bytes_down", bytes_down, AUDIT_HAS_BYTES_DOWN, INT64_MAX),
	NUM("duration_ms", duration_ms, AUDIT_HAS_DURATION, INT64_MAX),
	NUM("exit", exit, AUDIT_HAS_EXIT, 255),
	NUM("signal", signal, AUDIT_HAS_SIGNAL, 127),
	NUM("denials", denials, AUDIT_HAS_DENIALS, INT64_MAX),
	NUM("limit", limit, AUDIT_HAS_LIMIT, INT64_MAX),
	NUM("usage", usage, AUDIT_HAS_USAGE, INT64_MAX),
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
 * put_str() - set @obj[@key] to @s; when @s is not UTF-8, write a readable
 * copy and keep the exact bytes in hex in @raw[@rawkey] (created on demand).
 */
static int put_str(json_t *obj, const char *key, json_t **raw, const char *rawkey, const char *s)
{
	struct wd_buf fixed = WD_BUF_INIT, hex = WD_BUF_INIT;
	size_t n = strlen(s);
	bool bad = false;
	json_t *v = NULL;
	int ret = -ENOMEM;

	for (size_t i = 0; i < n;) {
		int l = audit_utf8_seqlen(s + i, n - i);

		if (l > 0) {
			if (wd_buf_append(&fixed, s + i, (size_t)l) < 0)
				goto out;
			i += (size_t)l;
			continue;
		}
		bad = true;
		if (wd_buf_puts(&fixed, "\xef\xbf\xbd") < 0) /* U+FFFD */
			goto out;
		i++;
	}
	if (bad) {
		if (wd_buf_reserve(&hex, 2 * n) < 0)
			goto out;
		for (size_t i = 0; i < n; i++) {
			unsigned char c = (unsigned char)s[i];

			hex.data[hex.len++] = hexdig[c >> 4];
			hex.data[hex.len++] = hexdig[c & 15];
		}
		hex.data[hex.len] = '\0';
		if (!*raw && !(*raw = json_object()))
			goto out;
		if (json_object_set_new(*raw, rawkey, json_stringn(hex.data, hex.len)) < 0)
			goto out;
		v = json_stringn(fixed.data, fixed.len);
	} else {
		v = json_stringn(s, n);
	}
	if (!v) {
		ret = -EINVAL; /* cannot happen: the copy is valid UTF-8 */
		goto out;
	}
	if (json_is_array(obj)) {
		ret = json_array_append_new(obj, v) < 0 ? -ENOMEM : 0;
	} else {
		ret = json_object_set_new(obj, key, v) < 0 ? -ENOMEM : 0;
	}
out:
	wd_buf_free(&fixed);
	wd_buf_free(&hex);
	return ret;
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

static int put_argv(json_t *obj, json_t **raw, const struct audit_event *ev, struct wd_err *err)
{
	json_t *arr = json_array();
	int ret;

	if (!arr)
		return -ENOMEM;
	for (size_t i = 0; i < ev->command_len; i++) {
		char rawkey[40];

		if (!ev->command[i]) {
			ret = wd_err_set(err, -EINVAL, "audit event: command[%zu] is NULL", i);
			goto out;
		}
		snprintf(rawkey, sizeof(rawkey), "command[%zu]", i);
		ret = put_str(arr, NULL, raw, rawkey, ev->command[i]);
		if (ret < 0)
			goto out;
	}
	ret = json_object_set_new(obj, "command", arr) < 0 ? -ENOMEM : 0;
	arr = NULL;
out:
	json_decref(arr);
	return ret;
}

static int build(const struct audit_event *ev, json_t *obj, struct wd_err *err)
{
	const char *type = audit_event_type(ev);
	json_t *raw = NULL;
	char ts[40];
	int ret;

	if (!ev->run || !ev->action)
		return wd_err_set(err, -EINVAL, "audit event: %s is missing",
				  ev->run ? "action" : "run");
	if (!audit_type_name(ev->type) && !ev->type_name)
		return wd_err_set(err, -EINVAL, "audit event %s: unknown type %d", ev->action,
				  (int)ev->type);
	if (ev->ts.tv_nsec < 0 || ev->ts.tv_nsec >= 1000000000L ||
	    wd_rfc3339(&ev->ts, ts, sizeof(ts)) < 0)
		return wd_err_set(err, -EINVAL, "audit event %s: bad timestamp", ev->action);
	if (json_object_set_new(obj, "ts", json_string(ts)) < 0)
		return -ENOMEM;
	ret = put_str(obj, "run", &raw, "run", ev->run);
	if (!ret)
		ret = put_str(obj, "type", &raw, "type", type);
	if (!ret)
		ret = put_str(obj, "action", &raw, "action", ev->action);
	if (!ret && json_object_set_new(obj, "allowed", json_boolean(ev->allowed)) < 0)
		ret = -ENOMEM;
	if (!ret)
		ret = put_str(obj, "resource", &raw, "resource", ev->resource ? ev->resource : "");
	if (!ret)
		ret = put_str(obj, "reason", &raw, "reason", ev->reason ? ev->reason : "");
	for (size_t i = 0; !ret && i < WD_ARRAY_SIZE(opt_fields); i++) {
		const struct opt_field *f = &opt_fields[i];
		int64_t v;

		switch (f->kind) {
		case FK_STR:
			if (field_str(ev, f))
				ret = put_str(obj, f->key, &raw, f->key, field_str(ev, f));
			break;
		case FK_NUM:
			if (!(ev->has & f->bit))
				break;
			v = field_num(ev, f);
			if (v < 0 || v > f->max) {
				ret = wd_err_set(err, -EINVAL,
						 "audit event %s: %s %lld is out of range",
						 ev->action, f->key, (long long)v);
				break;
			}
			if (json_object_set_new(obj, f->key, json_integer(v)) < 0)
				ret = -ENOMEM;
			break;
		case FK_ARGV:
			if (ev->command)
				ret = put_argv(obj, &raw, ev, err);
			break;
		}
	}
	if (!ret && raw) {
		ret = json_object_set_new(obj, "raw", raw) < 0 ? -ENOMEM : 0;
		raw = NULL;
	}
	json_decref(raw);
	if (ret == -ENOMEM)
		wd_err_set(err, ret, "audit event: out of memory");
	return ret;
}

int audit_event_encode(const struct audit_event *ev, struct wd_buf *out, struct wd_err *err)
{
	json_t *obj = json_object();
	size_t n;
	int ret;

	if (!obj)
		return wd_err_set(err, -ENOMEM, "audit event: out of memory");
	ret = build(ev, obj, err);
	if (ret < 0)
		goto out;
	n = json_dumpb(obj, NULL, 0, JSON_COMPACT);
	if (n == 0) {
		ret = wd_err_set(err, -ENOMEM, "audit event: cannot encode");
		goto out;
	}
	if (n + 1 > AUDIT_LINE_MAX) {
		ret = wd_err_set(err, -E2BIG,
				 "audit event %s: %zu bytes, longer than the %u a line may hold",
				 ev->action, n + 1, AUDIT_LINE_MAX);
		goto out;
	}
	ret = wd_buf_reserve(out, n + 1);
	if (ret < 0) {
		wd_err_set(err, ret, "audit event: out of memory");
		goto out;
	}
	if (json_dumpb(obj, out->data + out->len, n, JSON_COMPACT) != n) {
		ret = wd_err_set(err, -ENOMEM, "audit event: cannot encode");
		out->data[out->len] = '\0';
		goto out;
	}
	out->len += n;
	out->data[out->len++] = '\n';
	out->data[out->len] = '\0';
out:
	json_decref(obj);
	return ret;
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
		free(dec);
	}
	memset(ev, 0, sizeof(*ev));
}
