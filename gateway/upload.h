/* upload.h - a run's upload budgets (limits.upload_kib per name, limits.upload_total_kib for the
 * run): the accounts, looked up by name, and the pure arithmetic the relay asks before each read
 * it sends upstream (upload.c). The relay (relay.c) knows an account only through these calls. */
#ifndef WARDEN_GATEWAY_UPLOAD_H
#define WARDEN_GATEWAY_UPLOAD_H

#include "common/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* the most names one run keeps an account for; one more is refused (fail closed) */
#define GW_UPLOAD_NAMES_MAX 65536u

/* which budget bounds an account: the one with less left (the spent one, once none is) */
enum gw_upload_which {
	GW_UPLOAD_NONE = 0, /* no budget */
	GW_UPLOAD_NAME,	    /* limits.upload_kib: this name's */
	GW_UPLOAD_RUN,	    /* limits.upload_total_kib: the run's */
};

struct gw_upload;

/**
 * struct gw_uploads - one run's upload accounts
 * @cap_name:	bytes one name may be sent (0: no budget per name)
 * @cap_run:	bytes all names together may be sent (0: no budget for the run)
 * @used:	bytes charged to the run (every name's)
 * @list:	the accounts (each name's; with no budget per name, one for all)
 * @n:		how many
 * @index:	the accounts by their name's hash
 */
struct gw_uploads {
	uint64_t cap_name;
	uint64_t cap_run;
	uint64_t used;
	struct gw_upload *list;
	size_t n;
	struct wd_htable index;
};

/**
 * struct gw_upload - the bytes a run sent to one name (all its connections)
 * @next:	the run's next account
 * @run:	the run's accounts
 * @used:	bytes charged to this name
 * @name:	the name (the address's text for a connection without one)
 */
struct gw_upload {
	struct gw_upload *next;
	struct gw_uploads *run;
	uint64_t used;
	char name[];
};

/**
 * gw_uploads_set() - @u's budgets, from the policy's limits in KiB (0: none)
 * @u:		the accounts (any previous ones are kept: a replaced policy changes the budgets,
 *		never what was already sent)
 * @upload_kib:	limits.upload_kib
 * @total_kib:	limits.upload_total_kib
 */
void gw_uploads_set(struct gw_uploads *u, uint64_t upload_kib, uint64_t total_kib);

/** gw_uploads_free() - free @u's accounts (a zeroed @u is fine). */
void gw_uploads_free(struct gw_uploads *u);

/**
 * gw_uploads_get() - the account of @name in @u, made when it has none
 * @u:		the accounts
 * @name:	the connection's name (with no budget per name every name shares one account)
 * @ret:	the account (set on success only)
 * Return: 0; -ENOSPC (GW_UPLOAD_NAMES_MAX names already), -ENOMEM; 1 when @u has no budget
 * (*@ret untouched: nothing to count).
 */
int gw_uploads_get(struct gw_uploads *u, const char *name, struct gw_upload **ret);

/**
 * gw_upload_room() - bytes @a may still be sent: the least of its name's and its run's rest (pure)
 * Return: that many; UINT64_MAX without any budget.
 */
uint64_t gw_upload_room(const struct gw_upload *a);

/** gw_upload_charge() - @n bytes go to @a's name: counted in it and in the run (pure). */
void gw_upload_charge(struct gw_upload *a, uint64_t n);

/**
 * gw_upload_take() - charge @n bytes to @a if they fit in its room (pure)
 * Return: true (charged), false (they do not fit: nothing charged)
 */
static inline bool gw_upload_take(struct gw_upload *a, uint64_t n)
{
	if (n > gw_upload_room(a))
		return false;
	gw_upload_charge(a, n);
	return true;
}

/**
 * gw_upload_which() - which budget bounds @a's room: the one with less left (the name's on a
 * tie), so the one that is spent when nothing is left (pure)
 */
enum gw_upload_which gw_upload_which(const struct gw_upload *a);

/**
 * gw_upload_reason() - the text of a spent budget, for the audit (pure)
 * @a:		the account
 * @name:	the name to say (the connection's)
 * @buf:	room for it
 * @size:	its size
 * Return: @buf.
 */
const char *gw_upload_reason(const struct gw_upload *a, const char *name, char *buf, size_t size);

#endif /* WARDEN_GATEWAY_UPLOAD_H */
