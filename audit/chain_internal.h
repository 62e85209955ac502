/* chain_internal.h - what the writer (writer.c) and the chain (chain.c) share: the hook that
 * makes a writer chained. The writer calls the digest through a pointer, so the portable core
 * (tests/cross) builds writer.c without libcrypto. Not installed; nothing outside audit/
 * includes it. */
#ifndef WARDEN_AUDIT_CHAIN_INTERNAL_H
#define WARDEN_AUDIT_CHAIN_INTERNAL_H

#include "audit/audit.h"

/* the digest a chained writer hashes lines with (audit_sha256()) */
typedef void (*audit_digest_fn)(const void *p, size_t len, uint8_t out[AUDIT_HASH_LEN]);

/**
 * audit_writer_set_digest() - chain @log's lines with @fn (writer.c)
 * @log:	writer
 * @fn:		the digest; NULL turns the chain off
 */
void audit_writer_set_digest(struct audit_log *log, audit_digest_fn fn);

#endif /* WARDEN_AUDIT_CHAIN_INTERNAL_H */
