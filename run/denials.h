/* denials.h - the end-of-run denial block of `warden run` (run/denials.c): what a run was
 * refused, grouped, with the policy line that would allow it; a shadow run's block of what its
 * policy would have refused (its "would_deny" events) is made the same way. Internal to run/. */
#ifndef WD_RUN_DENIALS_H
#define WD_RUN_DENIALS_H

#include "audit/audit.h"
#include "common/common.h"

#include <stddef.h>
#include <stdint.h>

/* At most this many lines in the block (its head and "and N more" included). */
#define RUN_DENIALS_MAX_LINES 10

/**
 * struct run_denial - one group of like denials
 * @what:	what was refused, as a person names it: "other.test:443", "/etc/shadow"
 * @kind:	"network", "dns", "file read", "file write", "limit", "udp", ...
 * @count:	how many times
 * @id:		the last denial id the gateway gave one of them ("" when none: DNS, files)
 * @allow:	the policy line that would allow it (`network.allow: ["other.test:443"]`), or
 *		"" when no line can (a ceiling, the SSRF guard, UDP)
 * @flag:	the `warden run` flag that would ("--allow other.test:443"), or ""
 * @why:	the reason of the first one, when there is no @allow
 */
struct run_denial {
	char *what;
	const char *kind;
	uint64_t count;
	char id[40];
	char *allow;
	char *flag;
	char *why;
};

/**
 * struct run_denials - the denials of one run, in the order first seen
 * @v:		the groups (@n of them)
 * @total:	every denial counted, those in no group (a summary without a name) too
 * @would:	set by the caller: count a shadow run's would-be denials (allowed events with
 *		"decision": "would_deny") instead of denials
 */
struct run_denials {
	struct run_denial *v;
	size_t n, cap;
	uint64_t total;
	bool would;
};

/**
 * run_denials_add() - count @ev when it is a denial (network, DNS, file, limit); pure
 * @d:	the groups
 * @ev:	an event of the run (allowed ones and the run's own are ignored; with @d->would only
 *	the would-be denials count)
 *
 * Return: 0, or -ENOMEM.
 */
int run_denials_add(struct run_denials *d, const struct audit_event *ev);

/**
 * run_denials_render() - the block as lines, not yet escaped (wd_say() each one); pure
 * @d:		the groups
 * @run_id:	the run's id, for `warden logs --run ID --denied`
 * @gw_denied:	how many denials the gateway counted (-1: unknown); more than the log
 *		showed (a daemon writes its own log) gets a line saying where the rest are
 *		(pass -1 with @d->would: the gateway counts no would-be denials)
 * @out:	one line after another, each ending in '\n'; at most RUN_DENIALS_MAX_LINES
 *
 * Return: the number of lines (0: nothing was denied), or -ENOMEM.
 */
int run_denials_render(const struct run_denials *d, const char *run_id, int64_t gw_denied,
		       struct wd_buf *out);

/** run_denials_free() - release the groups; @d may be NULL. */
void run_denials_free(struct run_denials *d);

#endif
