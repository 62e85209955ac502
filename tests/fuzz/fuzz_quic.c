/* fuzz_quic.c - libFuzzer harness for a QUIC client's Initial packets (gateway/proto/quic.c,
 * gateway/quicsniff.c): must never crash or read past its input. The first byte chooses: even, the
 * rest is up to four datagrams, each a 2-byte big-endian length and its bytes, fed to one flow
 * (headers, packet protection, coalesced packets, reassembly across datagrams); odd, the rest is
 * decrypted Initial payloads the same way, fed to the frame parser and the CRYPTO stream (the
 * paths a fuzzer cannot reach through AES-GCM). A verdict of OK always names a host; MALFORMED
 * and ABSENT always say why. */
#include "gateway/quicsniff.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t work[65536];
static struct tls_hello th;
static struct gw_quic_flow flow;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool frames;
	const char *why = NULL;
	enum quic_result r = QUIC_NEED_MORE;

	if (!size)
		return 0;
	frames = data[0] & 1;
	data++;
	size--;
	memset(&flow, 0, sizeof(flow));
	for (int i = 0; i < 4 && size >= 2 && r == QUIC_NEED_MORE; i++) {
		size_t n = (size_t)data[0] << 8 | data[1];
		uint8_t *copy;

		data += 2;
		size -= 2;
		n = n < size ? n : size;
		/* a copy of exactly @n bytes: ASan sees a read past the datagram */
		copy = malloc(n ? n : 1);
		if (!copy)
			abort();
		memcpy(copy, data, n);
		if (frames) {
			r = quic_initial_frames(copy, n, &flow.crypto, &why);
			if (r == QUIC_OK)
				r = quic_crypto_hello(&flow.crypto, &th);
			else if (!why)
				abort();
		} else {
			r = gw_quic_datagram(&flow, copy, n, work, sizeof(work), &th, &why);
			if ((r == QUIC_MALFORMED || r == QUIC_ABSENT) && !why)
				abort();
		}
		free(copy);
		data += n;
		size -= n;
	}
	if (r == QUIC_OK && !th.sni[0])
		abort();
	return 0;
}
