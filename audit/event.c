/* event.c - struct audit_event <-> one JSON line, the audit log's codec: what both
 * directions share (the table of optional fields, the type names, the UTF-8 rule) and
 * audit_event_clear(). The hand encoder is encode.c (it earned its place in the profile:
 * PERFORMANCE.md), the jansson decoder decode.c; both are pure. */
#include "audit/event_internal.h"

#include <stdlib.h>
#include <string.h>

/*
 * Theory of operation
 *
 * An event is a flat JSON object written with JSON_COMPACT. The seven core
 * keys come first (ts, run, type, action, allowed, resource, reason), then the
 * optional ones in the order of audit_opt_fields[] below, then "raw". The encoder
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

/* clang-format off */
#define OFF(m) offsetof(struct audit_event, m)
#define STR(k, m) {k, FK_STR, OFF(m), 0, 0}
#define NUM(k, m, b, mx) {k, FK_NUM, OFF(m), b, mx}
#define BOOL(k, m, b) {k, FK_BOOL, OFF(m), b, 0}

/* The optional fields, in the order they are written. */
const struct opt_field audit_opt_fields[] = {
	STR("rule", rule),
	STR("policy", policy),
	STR("policy_hash", policy_hash),
	STR("isolation", isolation),
	STR("mode", mode),
	{"command", FK_ARGV, OFF(command), 0, 0},
	NUM("pid", pid, AUDIT_HAS_PID, INT32_MAX),
	NUM("uid", uid, AUDIT_HAS_UID, UINT32_MAX),
	STR("user", user),
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
	BOOL("crashed", crashed, AUDIT_HAS_CRASHED),
	STR("denial_id", denial_id),
	STR("decision", decision),
	{"mcp", FK_JSON, OFF(mcp), 0, 0},
	STR("op", op),
	NUM("proc_pid", proc_pid, AUDIT_HAS_PROC_PID, INT32_MAX),
	STR("comm", comm),
	{"learn", FK_BOOL, OFF(learn), 0, 0},
	{"shadow", FK_BOOL, OFF(shadow), 0, 0},
	STR("root", root),
	NUM("events", events, AUDIT_HAS_EVENTS, INT64_MAX),
	STR("key", key),
	NUM("lines", lines, AUDIT_HAS_LINES, INT64_MAX),
	STR("last_line", last_line),
};

_Static_assert(WD_ARRAY_SIZE(audit_opt_fields) == AUDIT_N_OPT_FIELDS,
	       "AUDIT_N_OPT_FIELDS (event_internal.h) must count audit_opt_fields[]");

static const char *const type_names[] = {
	[AUDIT_TYPE_RUN] = "run",
	[AUDIT_TYPE_DNS] = "dns",
	[AUDIT_TYPE_NET] = "net",
	[AUDIT_TYPE_FILE] = "file",
	[AUDIT_TYPE_LIMIT] = "limit",
};
/* clang-format on */

const char *audit_type_name(enum audit_type type)
{
	if ((unsigned)type >= WD_ARRAY_SIZE(type_names))
		return NULL;
	return type_names[type];
}

enum audit_type audit_type_from_name(const char *name)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(type_names); i++)
		if (type_names[i] && !strcmp(type_names[i], name))
			return (enum audit_type)i;
	return AUDIT_TYPE_OTHER;
}

const char *audit_event_type(const struct audit_event *ev)
{
	const char *name = audit_type_name(ev->type);

	if (name)
		return name;
	return ev->type_name ? ev->type_name : "?";
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
		free(dec->mcp);
		free(dec);
	}
	memset(ev, 0, sizeof(*ev));
}
