/* write.c - the trace writer of `warden trace` (write.h): lines through jansson,
 * deduplicated, and where the default file goes (outdir.c makes it). */
#include "trace/write.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Room kept for the net, env and limits lines when file lines are cut to fit the reader. */
#define TRACE_TAIL_RESERVE (4u << 20)

static const char *const proto_names[TRACE_PROTO_N] = {
    [TRACE_PROTO_TLS] = "tls",
    [TRACE_PROTO_HTTP] = "http",
    [TRACE_PROTO_RAW] = "raw",
    [TRACE_PROTO_DNS] = "dns",
};

/* The length of the valid UTF-8 sequence at @s (@n bytes left), or 0 when it is not one
 * (overlong forms, surrogates and code points past U+10FFFF are not, as for jansson). */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0], cp, len;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, cp = c & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (unsigned i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

static bool utf8_ok(const char *s)
{
	size_t n = strlen(s);

	for (size_t i = 0, k; i < n; i += k) {
		k = utf8_seq((const unsigned char *)s + i, n - i);
		if (!k)
			return false;
	}
	return true;
}

/* @s as a JSON string, each byte of a bad sequence replaced by U+FFFD. */
static json_t *lossy_string(const char *s)
{
	struct wd_buf b = WD_BUF_INIT;
	size_t n = strlen(s);
	json_t *j;

	for (size_t i = 0, k; i < n; i += k) {
		k = utf8_seq((const unsigned char *)s + i, n - i);
		if (k ? wd_buf_append(&b, s + i, k) : wd_buf_puts(&b, "\xef\xbf\xbd")) {
			wd_buf_free(&b);
			return NULL;
		}
		k = k ? k : 1;
	}
	j = json_stringn(b.data ? b.data : "", b.len);
	wd_buf_free(&b);
	return j;
}

/* @o as one line of @out; @o is released. Return: 0 or -ENOMEM. */
static int put_line(struct wd_buf *out, json_t *o)
{
	char *s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	int ret = s ? 0 : -ENOMEM;

	if (s && (wd_buf_puts(out, s) || wd_buf_puts(out, "\n")))
		ret = -ENOMEM;
	free(s);
	json_decref(o);
	return ret;
}

/* "key": @v, failing on a NULL @v (out of memory). Return: 0 or -ENOMEM. */
static int set(json_t *o, const char *key, json_t *v)
{
	if (!o || !v || json_object_set_new(o, key, v)) {
		json_decref(v);
		return -ENOMEM;
	}
	return 0;
}

static int header(const struct trace *t, const char *started, struct wd_buf *out)
{
	json_t *o = json_object(), *cmd = json_array();
	int ret = set(o, "type", json_string("trace"));

	if (!ret)
		ret = set(o, "version", json_integer(1));
	for (size_t i = 0; !ret && i < t->ncommand; i++) {
		json_t *w = lossy_string(t->command[i]);

		if (!cmd || !w || json_array_append_new(cmd, w))
			ret = -ENOMEM;
	}
	if (!ret) {
		ret = set(o, "command", cmd);
		cmd = NULL;
	}
	if (!ret)
		ret = set(o, "cwd", json_string(t->cwd));
	if (!ret && t->home && t->home[0])
		ret = set(o, "home", json_string(t->home));
	if (!ret && started && started[0])
		ret = set(o, "started", json_string(started));
	json_decref(cmd);
	if (ret) {
		json_decref(o);
		return ret;
	}
	return put_line(out, o);
}

/* one (op, path) of the files, its count summed over its duplicates */
struct file_agg {
	const struct trace_file_ev *first;
	uint64_t count;
};

static bool file_eq(const void *item, const void *key)
{
	const struct trace_file_ev *a = ((const struct file_agg *)item)->first, *b = key;

	return a->op == b->op && !a->refused == !b->refused && !strcmp(a->path, b->path);
}

static uint64_t file_hash(const struct trace_file_ev *e)
{
	return wd_hash_str(e->path) ^ ((uint64_t)e->op * 0x9e3779b97f4a7c15ull) ^
	       (uint64_t)(e->refused != NULL);
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	uint64_t max = UINT64_MAX >> 1; /* what the reader takes */

	return a > max - b ? max : a + b;
}

static int file_line(const struct file_agg *a, struct wd_buf *out)
{
	json_t *o = json_object();
	int ret = set(o, "type", json_string("file"));

	if (!ret)
		ret = set(o, "op", json_string(trace_op_name(a->first->op)));
	if (!ret)
		ret = set(o, "path", json_string(a->first->path));
	if (!ret && a->count != 1)
		ret = set(o, "count", json_integer((json_int_t)a->count));
	if (!ret && a->first->refused && a->first->op == TRACE_CONNECT)
		ret = set(o, "refused",
			  json_string(a->first->refused[0] && utf8_ok(a->first->refused)
					  ? a->first->refused
					  : "refused"));
	/* a comm that is not UTF-8 (prctl can set any bytes) is left out: it is a label */
	if (!ret && a->first->comm[0] && utf8_ok(a->first->comm))
		ret = set(o, "comm", json_string(a->first->comm));
	if (ret) {
		json_decref(o);
		return ret;
	}
	return put_line(out, o);
}

static int files(const struct trace *t, struct wd_buf *out, struct trace_write_info *info)
{
	struct file_agg *agg = calloc(t->nfiles ? t->nfiles : 1, sizeof(*agg));
	struct wd_htable h = {0};
	size_t n = 0;
	int ret = agg ? 0 : -ENOMEM;

	for (size_t i = 0; !ret && i < t->nfiles; i++) {
		const struct trace_file_ev *e = &t->files[i];
		uint64_t hash;
		struct file_agg *a;

		if (!e->path || e->path[0] != '/' || (unsigned)e->op >= TRACE_OP_N)
			continue;
		if (!utf8_ok(e->path)) {
			info->bad_utf8++;
			continue;
		}
		hash = file_hash(e);
		a = wd_htable_find(&h, hash, file_eq, e);
		if (a) {
			a->count = add_sat(a->count, e->count ? e->count : 1);
			continue;
		}
		agg[n] = (struct file_agg){e, e->count ? e->count : 1};
		ret = wd_htable_insert(&h, hash, &agg[n]);
		n++;
	}
	for (size_t i = 0; !ret && i < n; i++) {
		if (out->len > TRACE_MAX_BYTES - TRACE_TAIL_RESERVE) {
			info->too_big += n - i;
			break;
		}
		ret = file_line(&agg[i], out);
		if (!ret)
			info->files++;
	}
	wd_htable_free(&h);
	free(agg);
	return ret;
}

static bool net_same(const struct trace_net_ev *a, const struct trace_net_ev *b)
{
	return a->port == b->port && a->proto == b->proto && !strcmp(a->host, b->host);
}

static int net_line(const struct trace *t, size_t i, struct wd_buf *out)
{
	const struct trace_net_ev *e = &t->nets[i];
	uint64_t count = e->count ? e->count : 1;
	const char *refused = e->refused;
	json_t *o;
	int ret;

	/* the first of its kind only, with the counts of the later ones (few names: n^2) */
	for (size_t k = 0; k < i; k++)
		if (t->nets[k].host && net_same(&t->nets[k], e))
			return 0;
	for (size_t k = i + 1; k < t->nnets; k++)
		if (t->nets[k].host && net_same(&t->nets[k], e)) {
			count = add_sat(count, t->nets[k].count ? t->nets[k].count : 1);
			refused = refused ? refused : t->nets[k].refused;
		}
	o = json_object();
	ret = set(o, "type", json_string("net"));
	if (!ret)
		ret = set(o, "host", json_string(e->host));
	if (!ret && e->proto != TRACE_PROTO_DNS)
		ret = set(o, "port", json_integer(e->port));
	if (!ret)
		ret = set(o, "proto", json_string(proto_names[e->proto]));
	if (!ret && count != 1)
		ret = set(o, "count", json_integer((json_int_t)count));
	if (!ret && refused && refused[0])
		ret = set(o, "refused", lossy_string(refused));
	if (ret) {
		json_decref(o);
		return ret;
	}
	return put_line(out, o) ? -ENOMEM : 1;
}

static int env_line(const struct trace *t, size_t i, struct wd_buf *out)
{
	json_t *o;
	int ret;

	for (size_t k = 0; k < i; k++)
		if (!strcmp(t->env[k], t->env[i]))
			return 0;
	o = json_object();
	ret = set(o, "type", json_string("env"));
	if (!ret)
		ret = set(o, "name", json_string(t->env[i]));
	if (ret) {
		json_decref(o);
		return ret;
	}
	return put_line(out, o) ? -ENOMEM : 1;
}

static int limits_line(const struct trace *t, struct wd_buf *out)
{
	json_t *o;
	int ret;

	if (!t->peak_memory_kib && !t->peak_pids && !t->wall_ms && !t->stdio_jsonrpc)
		return 0;
	o = json_object();
	ret = set(o, "type", json_string("limits"));
	if (!ret && t->peak_memory_kib)
		ret = set(o, "peak_memory_kib", json_integer((json_int_t)t->peak_memory_kib));
	if (!ret && t->peak_pids)
		ret = set(o, "peak_pids",
			  json_integer(
			      (json_int_t)(t->peak_pids > (1u << 22) ? (1u << 22) : t->peak_pids)));
	if (!ret && t->wall_ms)
		ret = set(o, "wall_ms", json_integer((json_int_t)t->wall_ms));
	if (!ret && t->stdio_jsonrpc)
		ret = set(o, "stdio_jsonrpc", json_true());
	if (ret) {
		json_decref(o);
		return ret;
	}
	return put_line(out, o);
}

int trace_format(const struct trace *t, const char *started, struct wd_buf *out,
		 struct trace_write_info *info)
{
	struct trace_write_info own = {0};
	int ret;

	info = info ? info : &own;
	memset(info, 0, sizeof(*info));
	if (!t->ncommand || !t->command || !t->cwd || t->cwd[0] != '/' || !utf8_ok(t->cwd) ||
	    (t->home && t->home[0] && (t->home[0] != '/' || !utf8_ok(t->home))))
		return -EINVAL;
	for (size_t i = 0; i < t->ncommand; i++)
		if (!t->command[i] || !t->command[i][0])
			return -EINVAL;
	ret = header(t, started, out);
	if (!ret)
		ret = files(t, out, info);
	for (size_t i = 0; !ret && i < t->nnets; i++) {
		const struct trace_net_ev *e = &t->nets[i];

		/* what the gateway said is JSON already; anything else is not a net event */
		if (!e->host || !e->host[0] || !utf8_ok(e->host) ||
		    (unsigned)e->proto >= TRACE_PROTO_N ||
		    (e->proto != TRACE_PROTO_DNS && !e->port))
			continue;
		ret = net_line(t, i, out);
		info->nets += ret > 0;
		ret = ret < 0 ? ret : 0;
	}
	for (size_t i = 0; !ret && i < t->nenv; i++) {
		if (!t->env[i] || !t->env[i][0] || strchr(t->env[i], '=') || !utf8_ok(t->env[i]))
			continue;
		ret = env_line(t, i, out);
		info->env += ret > 0;
		ret = ret < 0 ? ret : 0;
	}
	if (!ret)
		ret = limits_line(t, out);
	for (size_t i = 0; !ret && i < json_array_size(t->tools); i++) {
		json_t *def = json_array_get(t->tools, i), *o;

		/* the recorder's canonical definitions (run/mcppin.h): one line each */
		if (!json_is_string(json_object_get(def, "name")))
			continue;
		o = json_pack("{s:s, s:O}", "type", "tool", "def", def);
		ret = o ? put_line(out, o) : -ENOMEM;
	}
	return ret;
}

int trace_file_name(const char *argv0, time_t now, char *out, size_t size)
{
	const char *base = argv0 ? strrchr(argv0, '/') : NULL;
	char name[65], stamp[32];
	struct tm tm;
	size_t n = 0;
	int len;

	base = base ? base + 1 : argv0 ? argv0 : "";
	for (; *base && n < sizeof(name) - 1; base++) {
		char c = *base;
		bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';

		if (!plain)
			c = '_';
		name[n++] = c;
	}
	name[n] = '\0';
	if (!n)
		snprintf(name, sizeof(name), "trace");
	if (name[0] == '.')
		name[0] = '_';
	if (!gmtime_r(&now, &tm) || !strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm))
		return -EINVAL;
	len = snprintf(out, size, "%s-%s.jsonl", stamp, name);
	return len < 0 || (size_t)len >= size ? -ENAMETOOLONG : 0;
}

int trace_default_dir(char *out, size_t size)
{
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	int n;

	if (state && state[0] == '/') {
		n = snprintf(out, size, "%s/warden/traces", state);
	} else {
		if (!home || home[0] != '/') {
			struct passwd *pw = getpwuid(getuid());

			home = pw && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
		}
		if (!home)
			return -ENOENT;
		n = snprintf(out, size, "%s/.local/state/warden/traces", home);
	}
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}
