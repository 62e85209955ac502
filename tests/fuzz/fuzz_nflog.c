/* fuzz_nflog.c - libFuzzer harness: arbitrary bytes as one datagram read from an
 * NFLOG netlink socket, through the gateway's NFLOG parser (gateway/nflog.c). */
#include "gateway/ev.h"
#include "gateway/nflog.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gw_nflog_pkt p;
	size_t off = 0, last = 0;
	uint8_t *copy = malloc(size ? size : 1); /* exact size: ASan sees any overread */
	enum gw_nflog_result r;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	while ((r = gw_nflog_next(copy, size, &off, &p)) != GW_NFLOG_END) {
		if (r == GW_NFLOG_MALFORMED)
			break;
		if (off <= last || off > size)
			abort(); /* must always move forward, within the buffer */
		last = off;
	}
	free(copy);
	return 0;
}
