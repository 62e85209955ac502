/* report.c - the bottom of a run: what every stage may use to speak and to record itself (a
 * failure with its step and fix, a progress note, a WARDEN_TIMING stamp, the state record
 * saved). It calls no stage, so no stage file calls back up into the driver (run.c).
 */
#include "run/internal.h"
#include "common/common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* WARDEN_TIMING=1: print how long each stage took (for docs/run.md's measurements). */
void run_stamp(const char *stage)
{
	static uint64_t last;
	static int on = -1;
	uint64_t now = wd_mono_ns();

	if (on < 0)
		on = getenv("WARDEN_TIMING") != NULL;
	if (on && last)
		wd_say(stderr, "warden run: timing: %-10s %7.2f ms", stage,
		       (double)(now - last) / 1e6);
	last = now;
}

int run_fail(struct run *r, const char *step, const char *fix, const char *fmt, ...)
{
	char cause[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cause, sizeof(cause), fmt, ap);
	va_end(ap);
	wd_say(stderr, "warden run: %s: %s", step, cause);
	if (fix)
		wd_say(stderr, "  fix: %s", fix);
	snprintf(r->audit.fail_reason, sizeof(r->audit.fail_reason), "%s: %s", step, cause);
	return RUN_EXIT_WARDEN;
}

void run_note(const struct run *r, const char *fmt, ...)
{
	struct wd_buf b = WD_BUF_INIT;
	va_list ap;

	if (r->o.quiet)
		return;
	va_start(ap, fmt);
	wd_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	wd_say(stderr, "warden run: %s", wd_buf_cstr(&b));
	wd_buf_free(&b);
}

int run_state_save(struct run *r)
{
	int ret = run_record_save(r->runs_dir, &r->rec);

	if (!ret)
		r->rec_saved = true;
	return ret;
}
