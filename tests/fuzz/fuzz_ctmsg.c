/* fuzz_ctmsg.c - libFuzzer harness: arbitrary bytes as the kernel's answer to the UDP relay's
 * conntrack GET, through the answer parser (gateway/ctmsg.c), with the sequence number the
 * bytes carry (so that the attributes are reached); then a request composed from the parsed
 * tuple must come out whole. */
#include "gateway/ctmsg.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1); /* exact size: ASan sees any overread */
	uint8_t req[GW_CT_REQ_MAX];
	struct gw_ct_tuple t;
	uint32_t seq = 0;
	int err = 0;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (size >= 12)
		memcpy(&seq, copy + 8, 4);
	switch (gw_ct_get_parse(copy, size, seq, &t, &err)) {
	case GW_CT_OK:
		if (gw_ct_get_build(req, sizeof(req), seq, &t) <= 0)
			abort(); /* a tuple the parser gave is one a request can carry */
		break;
	case GW_CT_ERROR:
		if (err >= 0 || err < -4095)
			abort();
		break;
	case GW_CT_MALFORMED:
		break;
	}
	free(copy);
	return 0;
}
