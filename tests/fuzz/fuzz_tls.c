/* fuzz_tls.c - libFuzzer harness for the TLS ClientHello parser: must never
 * crash, and its answers must be self-consistent (a complete hello is
 * NEED_MORE one byte short, the SNI is a normalised name). */
#include "gateway/proto/proto.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct tls_hello h, h2;

static void check_sni(const struct tls_hello *o)
{
	if (o->sni_len == 0 || o->sni_len > PROTO_NAME_MAX || strlen(o->sni) != o->sni_len)
		abort();
	for (size_t i = 0; i < o->sni_len; i++) {
		char c = o->sni[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		      c == '.'))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum tls_result r = tls_client_hello_parse(data, size, &h);
	uint8_t alert[TLS_ALERT_LEN];

	switch (r) {
	case TLS_OK:
		check_sni(&h);
		/* fall through */
	case TLS_ABSENT:
		if (!h.is_tls)
			break;
		if (h.hello_len == 0 || h.hello_len > size)
			abort();
		/* the same bytes alone give the same answer; one fewer is NEED_MORE */
		if (tls_client_hello_parse(data, h.hello_len, &h2) != r)
			abort();
		if (r == TLS_OK && strcmp(h.sni, h2.sni))
			abort();
		if (tls_client_hello_parse(data, h.hello_len - 1, &h2) != TLS_NEED_MORE)
			abort();
		if (tls_alert_compose(alert, sizeof(alert), TLS_ALERT_ACCESS_DENIED,
				      h.legacy_version) != TLS_ALERT_LEN)
			abort();
		break;
	case TLS_MALFORMED:
		if (!h.why)
			abort();
		break;
	case TLS_NEED_MORE:
		break;
	}
	return 0;
}
