/* chain_none.c - audit_log_chain() and audit_crypto_init(_brief)() for builds without libcrypto
 * (the portable core's cross builds, tests/cross): the writer stays unchained, so `warden logs
 * --verify` on Linux reports such a log as "not chained" instead of trusting it. The native build
 * links chain.c and compiles this file empty (WD_AUDIT_CHAINED), so that its checks still see it.
 */
#include "audit/audit.h"

#ifndef WD_AUDIT_CHAINED
void audit_log_chain(struct audit_log *log)
{
	(void)log;
}

void audit_crypto_init(void)
{
}

void audit_crypto_init_brief(void)
{
}
#endif
