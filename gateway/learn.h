/* learn.h - what a run in learn mode reached (internal header; learn.c, pure): a deduplicated,
 * bounded table (host, port, proto) -> count, with the refusal reason of what was refused, and
 * its answer to the control op `learned` (docs/gateway.md, "Learn mode"). */
#ifndef WARDEN_GATEWAY_LEARN_H
#define WARDEN_GATEWAY_LEARN_H

#include "common/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_t;

/* Entries a run's table holds; what comes after is counted in @dropped. */
#define GW_LEARN_MAX 4096
/* Longest host kept (a DNS name is at most 253 bytes; an address literal fewer). */
#define GW_LEARN_HOST_MAX 255
/* Longest refusal reason kept (longer ones are cut). */
#define GW_LEARN_WHY_MAX 300

/* How a name was known (the `proto` of an entry). */
enum gw_learn_proto {
	GW_LEARN_TLS = 0, /* TLS SNI */
	GW_LEARN_HTTP,	  /* HTTP Host, a proxy request or a CONNECT */
	GW_LEARN_RAW,	  /* raw TCP, by the name the gateway's DNS answered (or an address) */
	GW_LEARN_DNS,	  /* resolved; reported only for names never connected to */
	GW_LEARN_N,
};

/**
 * struct gw_learn_entry - one (host, port, proto)
 * @count:	attempts (connections, or queries for GW_LEARN_DNS)
 * @allowed:	attempts that were allowed
 * @port:	the port (0 for GW_LEARN_DNS)
 * @proto:	enum gw_learn_proto
 * @refused:	the reason of the latest refusal (NULL: none was refused)
 * @host:	the name (lower-case, no trailing dot) or an address literal
 */
struct gw_learn_entry {
	uint64_t count;
	uint64_t allowed;
	uint16_t port;
	uint8_t proto;
	char *refused;
	char host[];
};

/**
 * struct gw_learn - one run's table (a zeroed struct is an empty table)
 * @idx:	entries by (host, port, proto)
 * @hosts:	entries other than GW_LEARN_DNS by host (which names were connected to)
 * @v:		the entries in the order first seen, @n of them
 * @n:		see @v
 * @cap:	allocated room in @v
 * @dropped:	attempts not recorded: the table was full (or memory ran out)
 */
struct gw_learn {
	struct wd_htable idx;
	struct wd_htable hosts;
	struct gw_learn_entry **v;
	size_t n;
	size_t cap;
	uint64_t dropped;
};

/**
 * gw_learn_note() - record one attempt
 * @l:		the table
 * @host:	a host name (compared case-insensitively, one trailing dot ignored) or an
 *		address literal; at most GW_LEARN_HOST_MAX bytes
 * @port:	the port (ignored for GW_LEARN_DNS)
 * @proto:	how the name was known
 * @refused:	NULL: allowed; else why it was refused
 *
 * Return: 0; -E2BIG (the table holds GW_LEARN_MAX entries: counted in @l->dropped); -EINVAL
 * (no host, too long, bad @proto); -ENOMEM (counted in @l->dropped).
 */
int gw_learn_note(struct gw_learn *l, const char *host, uint16_t port, enum gw_learn_proto proto,
		  const char *refused);

/**
 * gw_learn_json() - the table as the `learned` op answers it: an array of
 * {"host", "port", "proto", "count"[, "refused"]} in the order first seen; a GW_LEARN_DNS entry
 * only when no other entry has its host, with "port": 0; "refused" only when every attempt
 * was refused
 * @l:		the table
 *
 * Return: a new array (json_decref()), or NULL (out of memory).
 */
struct json_t *gw_learn_json(struct gw_learn *l);

/** gw_learn_proto_name() - "tls", "http", "raw", "dns" (NULL out of range). */
const char *gw_learn_proto_name(enum gw_learn_proto p);

/** gw_learn_free() - release what @l holds; it is an empty table again. @l may be NULL. */
void gw_learn_free(struct gw_learn *l);

#endif /* WARDEN_GATEWAY_LEARN_H */
