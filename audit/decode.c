/* decode.c - one JSON line -> struct audit_event (jansson), the exact bytes under "raw"
 * put back; unknown keys ignored, duplicate keys refused (event.c's theory of
 * operation). */
#include "audit/event_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	for (size_t i = 0; i < AUDIT_N_OPT_FIELDS; i++)
		if (audit_opt_fields[i].kind == FK_STR && !strcmp(key, audit_opt_fields[i].key))
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
	case FK_JSON:
		if (!json_is_object(v))
			return wd_err_set(err, -EBADMSG, "\"%s\" is not an object", f->key);
		dec->mcp = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
		if (!dec->mcp)
			return -ENOMEM;
		*(const char **)((char *)ev + f->off) = dec->mcp;
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
	if (!ret && (!ts || wd_rfc3339_parse(ts, &ev->ts) < 0))
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
	if (ev->type_name)
		ev->type = audit_type_from_name(ev->type_name);
	for (size_t i = 0; i < AUDIT_N_OPT_FIELDS; i++) {
		ret = get_opt(root, &audit_opt_fields[i], ev, dec, err);
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
	free(dec->mcp);
	free(dec);
	return ret;
}
