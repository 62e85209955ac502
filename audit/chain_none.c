/* chain_none.c - audit_log_chain() for builds without libcrypto (the portable core's cross
 * builds, tests/cross): the writer stays unchained, so `warden logs --verify` on Linux reports
 * such a log as "not chained" instead of trusting it. The native build links chain.c. */
#include "audit/audit.h"

void audit_log_chain(struct audit_log *log)
{
	(void)log;
}
