/* mcppin.c - pinned MCP tool definitions (mcppin.h): the canonical definition and its digest,
 * the comparison, and the pin file read and written.
 *
 * The file is JSON: {"version": 1, "accepted": RFC 3339, "command": [...], "tools": {NAME:
 * {"sha256": "sha256:...", "def": {...}}}}. Only `tools` decides; `def` lets a later
 * comparison name the fields that changed, and `command` and `accepted` are for a person. */
#include "run/mcppin.h"
#include "common/common.h"
#include "run/run.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the fields pinned, in the order a person reads them */
static const char *const fields[] = {"name", "description", "inputSchema", "annotations"};

json_t *run_mcppin_def(const json_t *tool)
{
	json_t *d;

	if (!json_is_object(tool) || !json_is_string(json_object_get(tool, "name")))
		return NULL;
	d = json_object();
	for (size_t i = 0; d && i < WD_ARRAY_SIZE(fields); i++) {
		json_t *v = json_object_get(tool, fields[i]);

		if (v && json_object_set(d, fields[i], v)) {
			json_decref(d);
			return NULL;
		}
	}
	return d;
}

int run_mcppin_digest(const json_t *tool, char out[72])
{
	json_t *d = run_mcppin_def(tool);
	char *s;
	int ret;

	if (!d)
		return json_is_object(tool) && json_is_string(json_object_get(tool, "name"))
			   ? -ENOMEM
			   : -EINVAL;
	s = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(d);
	if (!s)
		return -ENOMEM;
	ret = run_sha256_hex(s, strlen(s), out);
	free(s);
	return ret;
}

enum run_mcppin_verdict run_mcppin_compare(const json_t *pins, const json_t *tool, char *what,
					   size_t size)
{
	const char *name = json_string_value(json_object_get(tool, "name"));
	json_t *pin = name ? json_object_get(pins, name) : NULL, *def, *old;
	char digest[72];
	size_t n = 0;

	snprintf(what, size, "%s", "");
	if (!json_is_object(pin))
		return RUN_MCPPIN_NEW;
	if (!run_mcppin_digest(tool, digest) && json_is_string(json_object_get(pin, "sha256")) &&
	    !strcmp(digest, json_string_value(json_object_get(pin, "sha256"))))
		return RUN_MCPPIN_SAME;
	def = run_mcppin_def(tool);
	old = json_object_get(pin, "def");
	for (size_t i = 1; i < WD_ARRAY_SIZE(fields); i++) {
		json_t *a = json_object_get(def, fields[i]), *b = json_object_get(old, fields[i]);

		if ((a || b) && !json_equal(a, b))
			n += (size_t)snprintf(what + (n < size ? n : size), n < size ? size - n : 0,
					      "%s%s", n ? ", " : "", fields[i]);
	}
	if (!n) /* the digest differs and no field does: the pinned def was edited */
		snprintf(what, size, "the definition's digest");
	json_decref(def);
	return RUN_MCPPIN_CHANGED;
}

int run_mcppin_load(const char *path, json_t **ret, char *err, size_t size)
{
	json_error_t je;
	json_t *j, *tools;
	const char *name;
	json_t *v;
	char *data = NULL;
	size_t len = 0;
	int r = wd_read_file(path, RUN_MCPPIN_MAX, &data, &len);

	if (r) {
		snprintf(err, size, "reading the pin file %s: %s", path, strerror(-r));
		return r;
	}
	j = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	free(data);
	if (!j) {
		snprintf(err, size, "the pin file %s:%d:%d: %s", path, je.line, je.column, je.text);
		return -EINVAL;
	}
	tools = json_object_get(j, "tools");
	if (json_integer_value(json_object_get(j, "version")) != RUN_MCPPIN_VERSION ||
	    !json_is_object(tools)) {
		snprintf(err, size,
			 "the pin file %s is not a version %d pin file (an object with `version` "
			 "and `tools`)",
			 path, RUN_MCPPIN_VERSION);
		json_decref(j);
		return -EINVAL;
	}
	json_object_foreach(tools, name, v)
	{
		const char *d = json_string_value(json_object_get(v, "sha256"));

		if (!d || strncmp(d, "sha256:", 7) || strlen(d) != 71) {
			snprintf(err, size, "the pin file %s: tool `%.200s` has no sha256", path,
				 name);
			json_decref(j);
			return -EINVAL;
		}
	}
	*ret = json_incref(tools);
	json_decref(j);
	return 0;
}

int run_mcppin_format(const json_t *tools, const json_t *command, char **ret_text)
{
	json_t *out = json_object(), *pins = json_object(), *t;
	struct timespec now;
	char when[64] = "", digest[72], *text = NULL;
	size_t i;
	int r = out && pins ? 0 : -ENOMEM;

	*ret_text = NULL;
	clock_gettime(CLOCK_REALTIME, &now);
	wd_rfc3339(&now, when, sizeof(when));
	json_array_foreach(tools, i, t)
	{
		json_t *def = run_mcppin_def(t);

		if (!def || run_mcppin_digest(t, digest) ||
		    json_object_set_new(pins, json_string_value(json_object_get(t, "name")),
					json_pack("{s:s, s:o}", "sha256", digest, "def", def))) {
			r = def ? -ENOMEM : -EINVAL;
			break;
		}
	}
	if (!r && json_object_set_new(out, "version", json_integer(RUN_MCPPIN_VERSION)))
		r = -ENOMEM;
	if (!r && (json_object_set_new(out, "accepted", json_string(when)) ||
		   (command && json_object_set(out, "command", (json_t *)command)) ||
		   json_object_set(out, "tools", pins)))
		r = -ENOMEM;
	if (!r)
		text = json_dumps(out, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (!r && !text)
		r = -ENOMEM;
	if (!r) {
		/* json_dumps leaves no newline: the file ends in one */
		char *nl = realloc(text, strlen(text) + 2);

		if (!nl) {
			r = -ENOMEM;
		} else {
			text = nl;
			strcat(text, "\n");
		}
	}
	if (r)
		free(text);
	else
		*ret_text = text;
	json_decref(pins);
	json_decref(out);
	return r;
}

int run_mcppin_save(const char *path, const json_t *tools, const json_t *command, char *err,
		    size_t size)
{
	char *text = NULL;
	int r = run_mcppin_format(tools, command, &text);

	if (!r)
		r = wd_write_file_atomic(AT_FDCWD, path, text, strlen(text), WD_ATOMIC_SYNC);
	if (r)
		snprintf(err, size, "writing the pin file %s: %s", path,
			 r == -EINVAL ? "a tool without a name" : strerror(-r));
	free(text);
	return r;
}

int run_mcppin_path(const char *policy, const char *pin, char *out, size_t size)
{
	char real[PATH_MAX], *slash;
	int n;

	if (pin[0] == '/')
		n = snprintf(out, size, "%s", pin);
	else {
		if (!policy || !realpath(policy, real))
			snprintf(real, sizeof(real), "%s", policy ? policy : "./policy");
		slash = strrchr(real, '/');
		n = snprintf(out, size, "%.*s/%s", slash ? (int)(slash - real) : 1,
			     slash ? real : ".", pin);
	}
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}
