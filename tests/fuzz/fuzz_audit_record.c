/* fuzz_audit_record.c - libFuzzer harness: arbitrary bytes as an audit line through the parts
 * of `warden logs --verify` that read a signed run record's layout (audit/sign.c): the signed
 * bytes (the line without its trailing "sig" and "prev" members) must be a prefix of the line
 * closed by "}", and base64 decoding must never write past what it reports. */
#include "audit/audit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wd_buf part = WD_BUF_INIT, raw = WD_BUF_INIT;
	const char *line = (const char *)data;
	uint8_t sig[64];

	if (audit_line_signed_part(line, size, &part, sig) == 0) {
		if (part.len < 2 || part.len > size || part.data[part.len - 1] != '}' ||
		    memcmp(part.data, line, part.len - 1))
			abort();
	}
	if (audit_unbase64(line, size, &raw) == 0 && raw.len > size / 4 * 3)
		abort();
	wd_buf_free(&part);
	wd_buf_free(&raw);
	return 0;
}
