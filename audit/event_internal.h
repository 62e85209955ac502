/* event_internal.h - what audit/'s encoder (encode.c) and decoder (decode.c) share: the
 * table of optional fields (event.c) and what a decoded event owns. Not installed; nothing
 * outside audit/ includes it.
 */
#ifndef WARDEN_AUDIT_EVENT_INTERNAL_H
#define WARDEN_AUDIT_EVENT_INTERNAL_H

#include "audit/audit.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

enum field_kind { FK_STR, FK_NUM, FK_ARGV, FK_BOOL, FK_COUNTS, FK_JSON };

struct opt_field {
	const char *key;
	enum field_kind kind;
	size_t off;   /* offset of the member in struct audit_event */
	uint32_t bit; /* FK_NUM, FK_BOOL: AUDIT_HAS_* */
	int64_t max;  /* FK_NUM: largest value accepted */
};

/* The optional fields, in the order they are written (event.c, which checks at compile time
 * that the table holds exactly AUDIT_N_OPT_FIELDS: a field added there must count here). */
#define AUDIT_N_OPT_FIELDS 41
extern const struct opt_field audit_opt_fields[];

/* What a decoded event owns: the parsed tree (its strings) and the argv array. */
struct decoded {
	json_t *root;
	const char **argv;
	struct audit_count *names;
	char *mcp; /* FK_JSON: the value dumped compact again */
};

/* audit_type_from_name() - the type whose name is @name, or AUDIT_TYPE_OTHER (event.c). */
enum audit_type audit_type_from_name(const char *name);

#endif /* WARDEN_AUDIT_EVENT_INTERNAL_H */
