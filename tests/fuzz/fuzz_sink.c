/* fuzz_sink.c - libFuzzer harness: arbitrary bytes through the audit shipping sink parser
 * (audit/sink.c). A sink it accepts must format back to text it parses to the same sink,
 * and an error's offset must lie within the input. */
#include "audit/audit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct audit_sink s = {.facility = 10}, back = {.facility = 10};
	char spec[512], text[160];
	const char *why = NULL;
	size_t off = 0;

	if (size >= sizeof(spec))
		return 0;
	memcpy(spec, data, size);
	spec[size] = '\0';
	if (audit_sink_parse(spec, &s, &off, &why)) {
		if (!why || off > strlen(spec))
			abort();
		return 0;
	}
	if (audit_sink_format(&s, text, sizeof(text)) ||
	    audit_sink_parse(text, &back, &off, &why) || back.kind != s.kind ||
	    back.port != s.port || strcmp(back.path, s.path) ||
	    memcmp(back.addr, s.addr, sizeof(s.addr)))
		abort();
	(void)audit_sink_facility(spec);
	return 0;
}
