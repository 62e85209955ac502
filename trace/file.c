/* file.c - the strict reader of trace files (format: file.h, docs/trace.md). */
#include "trace/file.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[TRACE_OP_N] = {
    [TRACE_READ] = "read",	 [TRACE_EXEC] = "exec",	    [TRACE_STAT] = "stat",
    [TRACE_MISSING] = "missing", [TRACE_WRITE] = "write",   [TRACE_CREATE] = "create",
    [TRACE_REMOVE] = "remove",	 [TRACE_RENAME] = "rename", [TRACE_CONNECT] = "connect",
};

static const char *const proto_names[TRACE_PROTO_N] = {
    [TRACE_PROTO_TLS] = "tls",
    [TRACE_PROTO_HTTP] = "http",
    [TRACE_PROTO_RAW] = "raw",
    [TRACE_PROTO_DNS] = "dns",
};

const char *trace_op_name(enum trace_op op)
{
	return (unsigned)op < TRACE_OP_N ? op_names[op] : "?";
}

bool trace_op_writes(enum trace_op op)
{
	return op == TRACE_WRITE || op == TRACE_CREATE || op == TRACE_REMOVE || op == TRACE_RENAME;
}

/* the line being read, for the errors */
struct rd {
	const char *name;
	int line;
	struct wd_err *err;
	bool have_header;
};

static int bad(struct rd *r, const char *fmt, const char *a, const char *b)
{
	wd_err_set(r->err, -EINVAL, "%s:%d: ", r->name, r->line);
	if (r->err) {
		size_t n = strlen(r->err->msg);

		snprintf(r->err->msg + n, sizeof(r->err->msg) - n, fmt, a, b);
		snprintf(r->err->file, sizeof(r->err->file), "%s", r->name);
		r->err->line = r->line;
	}
	return -EINVAL;
}

/* every key of @o must be in @keys (NULL-terminated) */
static int keys_known(struct rd *r, json_t *o, const char *type, const char *const *keys)
{
	const char *k;
	json_t *v;

	json_object_foreach(o, k, v)
	{
		size_t i = 0;

		while (keys[i] && strcmp(keys[i], k))
			i++;
		if (!keys[i])
			return bad(r, "unknown key \"%s\" in a \"%s\" event", k, type);
	}
	return 0;
}

static int get_str(struct rd *r, json_t *o, const char *key, bool required, const char **out)
{
	json_t *v = json_object_get(o, key);

	*out = NULL;
	if (!v)
		return required ? bad(r, "\"%s\" is missing%s", key, "") : 0;
	if (!json_is_string(v) || memchr(json_string_value(v), 0, json_string_length(v)) ||
	    !json_string_length(v))
		return bad(r, "\"%s\" must be a non-empty string without NUL%s", key, "");
	*out = json_string_value(v);
	return 0;
}

static int get_uint(struct rd *r, json_t *o, const char *key, bool required, uint64_t max,
		    uint64_t *out)
{
	json_t *v = json_object_get(o, key);

	if (!v) {
		if (required)
			return bad(r, "\"%s\" is missing%s", key, "");
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) > max)
		return bad(r, "\"%s\" must be an integer from 0 to its limit%s", key, "");
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int get_abs_path(struct rd *r, json_t *o, const char *key, char **out)
{
	const char *s;
	int rc = get_str(r, o, key, true, &s);

	if (rc)
		return rc;
	if (s[0] != '/')
		return bad(r, "\"%s\" must be an absolute path, not \"%s\"", key, s);
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

static int lookup(struct rd *r, const char *const *names, size_t n, const char *key, const char *s,
		  unsigned *out)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], s)) {
			*out = (unsigned)i;
			return 0;
		}
	return bad(r, "unknown \"%s\" value \"%s\"", key, s);
}

static int push(void **v, size_t *n, size_t size)
{
	void *p = realloc(*v, (*n + 1) * size);

	if (!p)
		return -ENOMEM;
	*v = p;
	memset((char *)p + *n * size, 0, size);
	(*n)++;
	return 0;
}

static int strv_from(struct rd *r, json_t *a, const char *key, char ***out, size_t *nout)
{
	size_t i;
	json_t *v;

	if (!json_is_array(a) || !json_array_size(a))
		return bad(r, "\"%s\" must be a non-empty list of strings%s", key, "");
	json_array_foreach(a, i, v)
	{
		char *s;

		if (!json_is_string(v) || !json_string_length(v) ||
		    memchr(json_string_value(v), 0, json_string_length(v)))
			return bad(r, "\"%s\" must be a non-empty list of strings%s", key, "");
		s = strdup(json_string_value(v));
		if (!s || push((void **)out, nout, sizeof(char *))) {
			free(s);
			return -ENOMEM;
		}
		(*out)[*nout - 1] = s;
	}
	return 0;
}

static int ev_trace(struct rd *r, json_t *o, struct trace *t)
{
	static const char *const keys[] = {"type", "version", "command", "cwd",
					   "home", "started", NULL};
	uint64_t version = 0;
	const char *home;
	int rc;

	if (r->have_header)
		return bad(r, "a second \"trace\" line (one trace per file)%s%s", "", "");
	r->have_header = true;
	if ((rc = keys_known(r, o, "trace", keys)) ||
	    (rc = get_uint(r, o, "version", true, 99, &version)))
		return rc;
	if (version != 1) {
		char v[24];

		snprintf(v, sizeof(v), "%llu", (unsigned long long)version);
		return bad(r,
			   "trace version %s is not known; expected 1 (a newer warden wrote it?)%s",
			   v, "");
	}
	if (!json_object_get(o, "command"))
		return bad(r, "\"command\" is missing%s%s", "", "");
	if ((rc = strv_from(r, json_object_get(o, "command"), "command", &t->command,
			    &t->ncommand)) ||
	    (rc = get_abs_path(r, o, "cwd", &t->cwd)))
		return rc;
	if ((rc = get_str(r, o, "home", false, &home)))
		return rc;
	if (home && home[0] != '/')
		return bad(r, "\"home\" must be an absolute path, not \"%s\"%s", home, "");
	t->home = strdup(home ? home : "");
	return t->home ? 0 : -ENOMEM;
}

static int ev_file(struct rd *r, json_t *o, struct trace *t)
{
	static const char *const keys[] = {"type", "op", "path", "count", "comm", "refused", NULL};
	struct trace_file_ev *e;
	const char *op, *comm, *refused;
	unsigned which = 0;
	int rc;

	if ((rc = keys_known(r, o, "file", keys)) || (rc = get_str(r, o, "op", true, &op)) ||
	    (rc = lookup(r, op_names, TRACE_OP_N, "op", op, &which)) ||
	    (rc = get_str(r, o, "comm", false, &comm)) ||
	    (rc = get_str(r, o, "refused", false, &refused)))
		return rc;
	if (refused && which != TRACE_CONNECT)
		return bad(r, "\"refused\" is only for a \"connect\", not a \"%s\"%s", op, "");
	if ((rc = push((void **)&t->files, &t->nfiles, sizeof(*t->files))))
		return rc;
	e = &t->files[t->nfiles - 1];
	e->op = (enum trace_op)which;
	e->count = 1;
	snprintf(e->comm, sizeof(e->comm), "%s", comm ? comm : "");
	if (refused && !(e->refused = strdup(refused)))
		return -ENOMEM;
	if ((rc = get_abs_path(r, o, "path", &e->path)) ||
	    (rc = get_uint(r, o, "count", false, UINT64_MAX >> 1, &e->count)))
		return rc;
	return 0;
}

static int ev_net(struct rd *r, json_t *o, struct trace *t)
{
	static const char *const keys[] = {"type",  "host",    "port", "proto",
					   "count", "refused", NULL};
	struct trace_net_ev *e;
	const char *host, *proto, *refused;
	uint64_t port = 0;
	unsigned which = 0;
	int rc;

	if ((rc = keys_known(r, o, "net", keys)) || (rc = get_str(r, o, "host", true, &host)) ||
	    (rc = get_str(r, o, "proto", true, &proto)) ||
	    (rc = lookup(r, proto_names, TRACE_PROTO_N, "proto", proto, &which)) ||
	    (rc = get_uint(r, o, "port", which != TRACE_PROTO_DNS, 65535, &port)) ||
	    (rc = get_str(r, o, "refused", false, &refused)))
		return rc;
	if (which != TRACE_PROTO_DNS && !port)
		return bad(r, "\"port\" must be 1 to 65535 for a connection%s%s", "", "");
	if ((rc = push((void **)&t->nets, &t->nnets, sizeof(*t->nets))))
		return rc;
	e = &t->nets[t->nnets - 1];
	e->port = (uint16_t)port;
	e->proto = (enum trace_proto)which;
	e->count = 1;
	e->host = strdup(host);
	e->refused = refused ? strdup(refused) : NULL;
	if (!e->host || (refused && !e->refused))
		return -ENOMEM;
	return get_uint(r, o, "count", false, UINT64_MAX >> 1, &e->count);
}

static int ev_env(struct rd *r, json_t *o, struct trace *t)
{
	static const char *const keys[] = {"type", "name", NULL};
	const char *name;
	char *s;
	int rc;

	if ((rc = keys_known(r, o, "env", keys)) || (rc = get_str(r, o, "name", true, &name)))
		return rc;
	for (const char *p = name; *p; p++)
		if (*p == '=')
			return bad(r, "an environment name may not hold '=': \"%s\"%s", name, "");
	s = strdup(name);
	if (!s || push((void **)&t->env, &t->nenv, sizeof(char *))) {
		free(s);
		return -ENOMEM;
	}
	t->env[t->nenv - 1] = s;
	return 0;
}

static int ev_limits(struct rd *r, json_t *o, struct trace *t)
{
	static const char *const keys[] = {"type",    "peak_memory_kib", "peak_pids",
					   "wall_ms", "stdio_jsonrpc",	 NULL};
	json_t *rpc = json_object_get(o, "stdio_jsonrpc");
	int rc;

	if (rpc && !json_is_boolean(rpc))
		return bad(r, "\"stdio_jsonrpc\" must be true or false%s%s", "", "");
	t->stdio_jsonrpc = json_is_true(rpc);
	if ((rc = keys_known(r, o, "limits", keys)) ||
	    (rc =
		 get_uint(r, o, "peak_memory_kib", false, UINT64_MAX >> 12, &t->peak_memory_kib)) ||
	    (rc = get_uint(r, o, "peak_pids", false, 1u << 22, &t->peak_pids)))
		return rc;
	return get_uint(r, o, "wall_ms", false, UINT64_MAX >> 12, &t->wall_ms);
}

#define TRACE_STR_(x) #x
#define TRACE_STR(x) TRACE_STR_(x)

/* a tool's canonical definition: an object of "name" (a string of 1..TRACE_TOOL_NAME_MAX bytes),
 * and optionally "description" (a string), "inputSchema" (an object), "annotations" (an object);
 * nothing else, and one line per name (the recorder writes each name once) */
static int ev_tool(struct rd *r, json_t *o, struct trace *t)
{
	static const char *const keys[] = {"type", "def", NULL};
	static const char *const def_keys[] = {"name", "description", "inputSchema", "annotations",
					       NULL};
	json_t *def = json_object_get(o, "def"), *v;
	const char *name, *k;
	size_t i;
	int rc;

	if ((rc = keys_known(r, o, "tool", keys)))
		return rc;
	if (!json_is_object(def))
		return bad(r, "\"def\" must be an object (a tool's definition)%s%s", "", "");
	if ((rc = keys_known(r, def, "tool def", def_keys)))
		return rc;
	name = json_string_value(json_object_get(def, "name"));
	if (!name || !name[0] || strlen(name) > TRACE_TOOL_NAME_MAX)
		return bad(r, "a tool's \"name\" must be a string of 1 to %s bytes%s",
			   TRACE_STR(TRACE_TOOL_NAME_MAX), "");
	if ((v = json_object_get(def, "description")) && !json_is_string(v))
		return bad(r, "a tool's \"description\" must be a string%s%s", "", "");
	if (((v = json_object_get(def, "inputSchema")) && !json_is_object(v)) ||
	    ((v = json_object_get(def, "annotations")) && !json_is_object(v)))
		return bad(r, "a tool's \"inputSchema\" and \"annotations\" must be objects%s%s",
			   "", "");
	if (!t->tools && !(t->tools = json_array()))
		return -ENOMEM;
	if (json_array_size(t->tools) >= TRACE_TOOLS_MAX)
		return bad(r, "more than %s tools%s", TRACE_STR(TRACE_TOOLS_MAX), "");
	json_array_foreach(t->tools, i, v)
	{
		k = json_string_value(json_object_get(v, "name"));
		if (k && !strcmp(k, name))
			return bad(r, "the tool \"%s\" is listed twice%s", name, "");
	}
	return json_array_append(t->tools, def) ? -ENOMEM : 0;
}

static const struct {
	const char *type;
	int (*fn)(struct rd *r, json_t *o, struct trace *t);
} types[] = {
    {"trace", ev_trace}, {"file", ev_file},	{"net", ev_net},
    {"env", ev_env},	 {"limits", ev_limits}, {"tool", ev_tool},
};

static int one_line(struct rd *r, const char *s, size_t n, struct trace *t)
{
	json_error_t je;
	json_t *o = json_loadb(s, n, JSON_REJECT_DUPLICATES, &je);
	const char *type = NULL;
	int rc;

	if (!o)
		return bad(r, "not JSON: %s%s", je.text, "");
	if (!json_is_object(o)) {
		json_decref(o);
		return bad(r, "expected one JSON object per line%s%s", "", "");
	}
	rc = get_str(r, o, "type", true, &type);
	if (!rc && !r->have_header && strcmp(type, "trace"))
		rc = bad(r, "the first line must be the \"trace\" line, not \"%s\"%s", type, "");
	for (size_t i = 0; !rc && i < WD_ARRAY_SIZE(types); i++)
		if (!strcmp(types[i].type, type)) {
			rc = types[i].fn(r, o, t);
			type = NULL;
			break;
		}
	if (!rc && type)
		rc = bad(
		    r, "unknown event type \"%s\" (expected trace, file, net, env, limits, tool)%s",
		    type, "");
	json_decref(o);
	return rc;
}

int trace_parse(const char *buf, size_t len, const char *name, struct trace *t, struct wd_err *err)
{
	struct rd r = {.name = name, .err = err};
	size_t at = 0;

	memset(t, 0, sizeof(*t));
	while (at < len) {
		const char *nl = memchr(buf + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (buf + at)) : len - at;
		/* a last line without its newline is never blank: at < len */
		bool blank = nl && (!n || (n == 1 && buf[at] == '\r'));

		r.line++;
		if (!blank) {
			int rc = one_line(&r, buf + at, n, t);

			if (rc)
				return rc;
		}
		at += n + 1;
	}
	if (!r.have_header) {
		r.line = 1;
		return bad(&r, "no \"trace\" line: this is not a warden trace%s%s", "", "");
	}
	return 0;
}

int trace_load(const char *path, struct trace *t, struct wd_err *err)
{
	char *data = NULL;
	size_t len = 0;
	int rc;

	memset(t, 0, sizeof(*t));
	rc = wd_read_file(path, TRACE_MAX_BYTES, &data, &len);
	if (rc < 0)
		return wd_err_set(err, rc, "cannot read the trace %s: %s%s", path, strerror(-rc),
				  rc == -EFBIG ? " (larger than 64 MiB)" : "");
	rc = trace_parse(data, len, path, t, err);
	free(data);
	return rc;
}

void trace_free(struct trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->ncommand; i++)
		free(t->command[i]);
	free(t->command);
	for (size_t i = 0; i < t->nfiles; i++) {
		free(t->files[i].path);
		free(t->files[i].refused);
	}
	free(t->files);
	for (size_t i = 0; i < t->nnets; i++) {
		free(t->nets[i].host);
		free(t->nets[i].refused);
	}
	free(t->nets);
	for (size_t i = 0; i < t->nenv; i++)
		free(t->env[i]);
	free(t->env);
	free(t->cwd);
	free(t->home);
	json_decref(t->tools);
	memset(t, 0, sizeof(*t));
}
