/* toolcalls.c - a run's MCP tool calls in flight and its denials per tool (toolcalls.h), as
 * the launcher's stdio tracker reports them (run/toolcalls.c; the `warden mcp` server is mcp/).
 * Pure.
 *
 * The launcher's relay sends the whole set of calls in flight at every change (a call
 * started, ended, cancelled; attribution off: none), so the gateway keeps no history: the set
 * replaces the last one, and its JSON text is built once here and attached as it is to every
 * network and DNS event of the run (auditrl.c) until the next change. A denial while calls are
 * in flight counts once for each distinct tool among them: it happened during each. */
#include "gateway/toolcalls.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool hex64(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
			return false;
	return n == 64;
}

int gw_toolcalls_calls_check(const json_t *calls, char *why, size_t size)
{
	const json_t *c, *v;
	size_t i;

	if (!json_is_array(calls) || json_array_size(calls) > GW_TOOLCALLS_CALLS) {
		snprintf(why, size, "`calls` must be an array of at most %d calls",
			 GW_TOOLCALLS_CALLS);
		return -EINVAL;
	}
	json_array_foreach(calls, i, c)
	{
		const char *tool = json_string_value(json_object_get(c, "tool"));
		const char *sha = json_string_value(json_object_get(c, "args_sha256"));

		v = json_object_get(c, "call_id");
		if (!json_is_object(c) || json_object_size(c) != 3 || !tool ||
		    json_string_length(json_object_get(c, "tool")) > GW_TOOLCALLS_NAME_MAX ||
		    !sha || !hex64(sha) ||
		    !(json_is_integer(v) ||
		      (json_is_string(v) && json_string_length(v) <= GW_TOOLCALLS_NAME_MAX))) {
			snprintf(why, size,
				 "calls[%zu] must be {\"tool\": NAME, \"call_id\": ID, "
				 "\"args_sha256\": HEX}",
				 i);
			return -EINVAL;
		}
	}
	return 0;
}

/* @name's slot in the run's table of tools; GW_TOOLCALLS_OTHER when the table is full and it is
 * not there. An unknown tool never shares a slot with a named one: a slot's name is what a
 * tool's network rules are matched against (decide.c), so a call of tool #65 counted as a call
 * of tool #64 would open #64's names to it. */
static unsigned tool_slot(struct gw_toolcalls *m, const char *name)
{
	unsigned i;

	for (i = 0; i < m->ntools; i++)
		if (!strcmp(m->tool[i].name, name))
			return i;
	if (m->ntools == GW_TOOLCALLS_TOOLS)
		return GW_TOOLCALLS_OTHER;
	snprintf(m->tool[m->ntools].name, sizeof(m->tool[0].name), "%s", name);
	return m->ntools++;
}

/* the calls in flight become @calls: a call still in flight keeps its denials; one that ended
 * with denials goes to @m->ended */
static void calls_move(struct gw_toolcalls *m, const json_t *calls)
{
	unsigned n = 0;
	size_t i;
	const json_t *c;
	json_t *nid[GW_TOOLCALLS_CALLS] = {0}, *nden[GW_TOOLCALLS_CALLS] = {0};
	uint64_t nmore[GW_TOOLCALLS_CALLS] = {0};

	json_decref(m->ended);
	m->ended = NULL;
	json_array_foreach(calls, i, c)
	{
		json_t *id = json_object_get(c, "call_id");

		if (n == GW_TOOLCALLS_CALLS)
			break;
		nid[n] = json_incref(id);
		for (unsigned k = 0; k < m->ncalls; k++) {
			if (!m->call[k].id || !json_equal(m->call[k].id, id))
				continue;
			nden[n] = m->call[k].denials; /* moved */
			nmore[n] = m->call[k].more;
			m->call[k].denials = NULL;
			json_decref(m->call[k].id);
			m->call[k].id = NULL;
			break;
		}
		n++;
	}
	for (unsigned k = 0; k < m->ncalls; k++) {
		if (m->call[k].id && m->call[k].denials) {
			if (!m->ended)
				m->ended = json_array();
			json_array_append_new(m->ended,
					      json_pack("{s:O, s:O, s:I}", "call_id", m->call[k].id,
							"denials", m->call[k].denials, "more",
							(json_int_t)m->call[k].more));
		}
		json_decref(m->call[k].id);
		json_decref(m->call[k].denials);
	}
	for (unsigned k = 0; k < n; k++) {
		m->call[k].id = nid[k];
		m->call[k].denials = nden[k];
		m->call[k].more = nmore[k];
	}
	m->ncalls = n;
}

int gw_toolcalls_set(struct gw_toolcalls *m, const json_t *calls)
{
	size_t n = json_array_size(calls), i;
	const json_t *c, *last;
	json_t *j;

	calls_move(m, calls);
	free(m->json);
	m->json = NULL;
	m->ninflight = 0;
	if (!n)
		return 0;
	json_array_foreach(calls, i, c)
	{
		unsigned s = tool_slot(m, json_string_value(json_object_get(c, "tool")));
		bool seen = false;

		for (unsigned k = 0; k < m->ninflight; k++)
			seen |= m->inflight[k] == s;
		if (!seen)
			m->inflight[m->ninflight++] = s;
	}
	last = json_array_get(calls, n - 1);
	j = json_pack("{s:O, s:O, s:I, s:O}", "tool", json_object_get(last, "tool"), "call_id",
		      json_object_get(last, "call_id"), "in_flight", (json_int_t)n, "calls",
		      (json_t *)calls);
	m->json = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!m->json) {
		m->ninflight = 0;
		return -ENOMEM;
	}
	return 0;
}

void gw_toolcalls_denial(struct gw_toolcalls *m, const char *resource, unsigned port,
			 const char *denial_id, const char *reason)
{
	if (!m->json)
		return;
	for (unsigned k = 0; k < m->ninflight; k++) {
		if (m->inflight[k] < m->ntools)
			m->tool[m->inflight[k]].denials++;
		else
			m->other_denials++;
	}
	for (unsigned k = 0; k < m->ncalls; k++) {
		json_t *d;

		if (!m->call[k].denials)
			m->call[k].denials = json_array();
		if (json_array_size(m->call[k].denials) >= GW_TOOLCALLS_CALL_DENIALS) {
			m->call[k].more++;
			continue;
		}
		d = json_pack("{s:s, s:i, s:s, s:s}", "resource", resource ? resource : "", "port",
			      (int)port, "denial_id", denial_id ? denial_id : "", "reason",
			      reason ? reason : "");
		if (!d || json_array_append_new(m->call[k].denials, d))
			m->call[k].more++;
	}
}

json_t *gw_toolcalls_denials_json(const struct gw_toolcalls *m)
{
	json_t *j = json_object();

	for (unsigned i = 0; j && i < m->ntools; i++)
		json_object_set_new(j, m->tool[i].name,
				    json_integer((json_int_t)m->tool[i].denials));
	if (j && m->other_denials)
		json_object_set_new(j, GW_TOOLCALLS_OTHER_NAME,
				    json_integer((json_int_t)m->other_denials));
	return j;
}

void gw_toolcalls_free(struct gw_toolcalls *m)
{
	for (unsigned k = 0; k < m->ncalls; k++) {
		json_decref(m->call[k].id);
		json_decref(m->call[k].denials);
	}
	json_decref(m->ended);
	free(m->json);
	memset(m, 0, sizeof(*m));
}
