/* policy_diags.h - internal to tests/unit: helpers that inspect a policy's
 * diagnostics (include after <cmocka.h> and policy/policy.h). */
#ifndef WARDEN_TESTS_POLICY_DIAGS_H
#define WARDEN_TESTS_POLICY_DIAGS_H

#include <stdbool.h>
#include <string.h>

/* dump() - print every diagnostic of @d, to explain a failing assertion */
static inline void dump(const struct policy_diags *d)
{
	struct wd_buf b = WD_BUF_INIT;

	for (size_t i = 0; i < d->n; i++) {
		wd_buf_reset(&b);
		policy_diag_format(d, i, &b);
		print_message("  diag: %s\n", wd_buf_cstr(&b));
	}
	wd_buf_free(&b);
}

/* has_diag() - true when @d holds a diagnostic of @level at @line:@col containing @text */
static inline bool has_diag(const struct policy_diags *d, enum policy_diag_level level, int line,
			    int col, const char *text)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].level == level && d->v[i].line == line && d->v[i].col == col &&
		    strstr(d->v[i].msg, text))
			return true;
	return false;
}

#endif
