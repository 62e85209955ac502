/* chain_internal.h - what the writer (writer.c) and the chain (chain.c) share: the hook that
 * makes a writer chained. The writer calls the digest through a pointer: writer.c itself calls
 * no libcrypto. Not installed; nothing outside audit/ includes it. */
#ifndef WARDEN_AUDIT_CHAIN_INTERNAL_H
#define WARDEN_AUDIT_CHAIN_INTERNAL_H

#include "audit/audit.h"

#include <sys/types.h>

/* the digest a chained writer hashes lines with (audit_sha256()) */
typedef void (*audit_digest_fn)(const void *p, size_t len, uint8_t out[AUDIT_HASH_LEN]);

/**
 * audit_writer_set_digest() - chain @log's lines with @fn (writer.c)
 * @log:	writer
 * @fn:		the digest; NULL turns the chain off
 */
void audit_writer_set_digest(struct audit_log *log, audit_digest_fn fn);

/*
 * the anchor a signing writer puts first in a new file (anchor.c): the whole chained line
 * (ending in "\n") for the file that goes on from @rotated, appended to @out.
 * Return: 1 with the line, 0 when none is due (no @rotated, or empty), or -errno.
 */
typedef int (*audit_anchor_fn)(const void *ctx, const char *rotated, struct wd_buf *out);

/**
 * audit_writer_set_anchor() - begin each new file of @log with @fn's anchor (writer.c); when
 * the file is empty now, write it at once
 * @log:	writer (opened by path and chained, else nothing is ever due)
 * @fn:		composes the anchor; NULL: none
 * @ctx:	its argument (the key)
 * @err:	filled on error; may be NULL
 * Return: 0, or a negative errno (the anchor due now failed).
 */
int audit_writer_set_anchor(struct audit_log *log, audit_anchor_fn fn, const void *ctx,
			    struct wd_err *err);

/**
 * audit_read_last_line() - the last line of the file open on @fd (lastline.c)
 * @fd:		the file, open for reading
 * @size:	its size
 * @out:	the line without its newline (a torn last line as it is); reset first
 * Return: 0, or a negative errno (-E2BIG: longer than AUDIT_LINE_MAX).
 */
int audit_read_last_line(int fd, off_t size, struct wd_buf *out);

#endif /* WARDEN_AUDIT_CHAIN_INTERNAL_H */
