/* upload.c - a run's upload budgets: an account per name it sent bytes to (one for all names
 * when only the run's total is budgeted), each charged as the relay reads client bytes that go
 * upstream -- before they are written, so concurrent connections to one name never pass its
 * budget together -- and the arithmetic of what is left. Bytes charged but never written (a
 * connection that broke with bytes in its pipe) stay charged: the budget errs on the side of
 * sending less. */
#include "gateway/upload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gw_uploads_set(struct gw_uploads *u, uint64_t upload_kib, uint64_t total_kib)
{
	u->cap_name = upload_kib * 1024u;
	u->cap_run = total_kib * 1024u;
}

void gw_uploads_free(struct gw_uploads *u)
{
	struct gw_upload *a = u->list, *next;

	for (; a; a = next) {
		next = a->next;
		free(a);
	}
	u->list = NULL;
	u->n = 0;
	wd_htable_free(&u->index);
}

static bool name_eq(const void *item, const void *key)
{
	return !strcmp(((const struct gw_upload *)item)->name, key);
}

int gw_uploads_get(struct gw_uploads *u, const char *name, struct gw_upload **ret)
{
	struct gw_upload *a;
	uint64_t hash;
	size_t len;

	if (!u->cap_name && !u->cap_run)
		return 1;
	if (!u->cap_name)
		name = ""; /* the run's total only: one account for every name */
	hash = wd_hash_str(name);
	a = wd_htable_find(&u->index, hash, name_eq, name);
	if (a) {
		*ret = a;
		return 0;
	}
	if (u->n >= GW_UPLOAD_NAMES_MAX)
		return -ENOSPC;
	len = strlen(name);
	a = calloc(1, sizeof(*a) + len + 1);
	if (!a)
		return -ENOMEM;
	memcpy(a->name, name, len + 1);
	if (wd_htable_insert(&u->index, hash, a)) {
		free(a);
		return -ENOMEM;
	}
	a->run = u;
	a->next = u->list;
	u->list = a;
	u->n++;
	*ret = a;
	return 0;
}

uint64_t gw_upload_room(const struct gw_upload *a)
{
	const struct gw_uploads *u = a->run;
	uint64_t room = UINT64_MAX;

	if (u->cap_name)
		room = a->used < u->cap_name ? u->cap_name - a->used : 0;
	if (u->cap_run) {
		uint64_t r = u->used < u->cap_run ? u->cap_run - u->used : 0;

		if (r < room)
			room = r;
	}
	return room;
}

void gw_upload_charge(struct gw_upload *a, uint64_t n)
{
	a->used += n;
	a->run->used += n;
}

enum gw_upload_which gw_upload_which(const struct gw_upload *a)
{
	const struct gw_uploads *u = a->run;
	uint64_t name_rest, run_rest;

	if (!u->cap_run)
		return u->cap_name ? GW_UPLOAD_NAME : GW_UPLOAD_NONE;
	if (!u->cap_name)
		return GW_UPLOAD_RUN;
	name_rest = a->used < u->cap_name ? u->cap_name - a->used : 0;
	run_rest = u->used < u->cap_run ? u->cap_run - u->used : 0;
	return name_rest <= run_rest ? GW_UPLOAD_NAME : GW_UPLOAD_RUN;
}

const char *gw_upload_reason(const struct gw_upload *a, const char *name, char *buf, size_t size)
{
	const struct gw_uploads *u = a->run;

	if (gw_upload_which(a) == GW_UPLOAD_RUN)
		snprintf(buf, size,
			 "upload budget spent: the run sent %llu bytes upstream, "
			 "limits.upload_total_kib allows %llu",
			 (unsigned long long)u->used, (unsigned long long)u->cap_run);
	else
		snprintf(buf, size,
			 "upload budget spent: %s was sent %llu bytes, limits.upload_kib "
			 "allows %llu",
			 name, (unsigned long long)a->used, (unsigned long long)u->cap_name);
	return buf;
}
