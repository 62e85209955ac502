/* fuzz_audit.c - libFuzzer harness for audit_event_decode(): any bytes in; a decoded
 * event must re-encode, and its encoding must be a fixed point of decode+encode. */
#include "audit/audit.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wd_buf once = WD_BUF_INIT, twice = WD_BUF_INIT;
	struct audit_event ev, again;
	struct wd_err err;

	if (audit_event_decode((const char *)data, size, &ev, &err) < 0)
		return 0;
	/* Whatever decodes encodes (unless it grew past a line's limit)... */
	if (audit_event_encode(&ev, &once, NULL) == 0) {
		/* ...and decoding that line gives an event that encodes the same. */
		if (audit_event_decode(once.data, once.len, &again, NULL) < 0)
			abort();
		if (audit_event_encode(&again, &twice, NULL) < 0)
			abort();
		if (once.len != twice.len || memcmp(once.data, twice.data, once.len) != 0)
			abort();
		audit_event_clear(&again);
	}
	audit_event_clear(&ev);
	wd_buf_free(&once);
	wd_buf_free(&twice);
	return 0;
}
