/* test_proto_tls.c - unit tests for the TLS ClientHello parser and alert composer
 * (gateway/proto/tls.c): real captures from curl and openssl, every
 * fragmentation point, re-recording into small records, and crafted hellos
 * that break each rule. */
#include "common/common.h"
#include "gateway/proto/proto.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto_captures.h"

static struct tls_hello H; /* 16 KiB: not on the stack */

/* ---- a small writer to craft hellos ---- */

struct wb {
	uint8_t b[70000];
	size_t n;
};

static void w8(struct wb *w, unsigned v)
{
	w->b[w->n++] = (uint8_t)v;
}

static void w16(struct wb *w, unsigned v)
{
	w8(w, v >> 8);
	w8(w, v);
}

static void wmem(struct wb *w, const void *p, size_t n)
{
	memcpy(w->b + w->n, p, n);
	w->n += n;
}

static void put16(uint8_t *p, size_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* append a server_name extension with one host_name entry */
static void ext_sni(struct wb *e, const char *name)
{
	size_t n = strlen(name);

	w16(e, 0);
	w16(e, n + 5);
	w16(e, n + 3);
	w8(e, 0);
	w16(e, n);
	wmem(e, name, n);
}

static void ext_raw(struct wb *e, unsigned type, const void *data, size_t n)
{
	w16(e, type);
	w16(e, n);
	wmem(e, data, n);
}

/*
 * A ClientHello handshake message (header included) with GREASE cipher
 * suites and the given extension block (NULL: no extensions field at all).
 */
static size_t hello_msg(uint8_t *out, const struct wb *exts, unsigned legacy)
{
	static struct wb m;
	uint8_t random[32];

	memset(random, 0x5a, sizeof(random));
	m.n = 0;
	w8(&m, 1);
	w8(&m, 0);
	w16(&m, 0); /* length, patched below */
	w16(&m, legacy);
	wmem(&m, random, 32);
	w8(&m, 32);
	wmem(&m, random, 32);
	w16(&m, 8);
	w16(&m, 0x3a3a); /* GREASE */
	w16(&m, 0x1301);
	w16(&m, 0x1302);
	w16(&m, 0xc02f);
	w8(&m, 1);
	w8(&m, 0);
	if (exts) {
		w16(&m, exts->n);
		wmem(&m, exts->b, exts->n);
	}
	m.b[1] = (uint8_t)((m.n - 4) >> 16);
	put16(m.b + 2, m.n - 4);
	memcpy(out, m.b, m.n);
	return m.n;
}

/* wrap a handshake stream into handshake records of at most @frag bytes */
static size_t records(uint8_t *out, const uint8_t *msg, size_t n, size_t frag)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i += frag) {
		size_t k = n - i < frag ? n - i : frag;

		out[o++] = 22;
		out[o++] = 3;
		out[o++] = 1;
		out[o++] = (uint8_t)(k >> 8);
		out[o++] = (uint8_t)k;
		memcpy(out + o, msg + i, k);
		o += k;
	}
	return o;
}

static uint8_t msg[70000], rec[80000];

/* parse a one-record hello with these extensions */
static enum tls_result with_exts(const struct wb *e)
{
	size_t n = hello_msg(msg, e, 0x0303);
	size_t r = records(rec, msg, n, 16384);

	return tls_client_hello_parse(rec, r, &H);
}

/* ---- real captures ---- */

struct cap {
	const char *file;
	enum tls_result want;
	const char *sni;
	uint16_t legacy, max;
	bool alpn;
	unsigned records;
	bool ech;
};

static const struct cap caps[] = {
    {"tls12-curl.bin", TLS_OK, "allowed.test", 0x0303, 0x0303, true, 1, false},
    {"tls13-curl.bin", TLS_OK, "allowed.test", 0x0303, 0x0304, true, 1, false},
    {"tls12-openssl.bin", TLS_OK, "allowed.test", 0x0303, 0x0303, false, 1, false},
    {"tls13-openssl.bin", TLS_OK, "allowed.test", 0x0303, 0x0304, false, 1, false},
    {"tls13-openssl-nosni.bin", TLS_ABSENT, "", 0x0303, 0x0304, false, 1, false},
    {"tls13-openssl-frag.bin", TLS_OK, "allowed.test", 0x0303, 0x0304, true, 3, false},
    /* Debian's Chromium: GREASE ECH (0xfe0d), X25519MLKEM768 key share, ALPS */
    {"tls13-chromium-ech.bin", TLS_OK, "allowed.test", 0x0303, 0x0304, true, 1, true},
};

static void test_captures(void **state)
{
	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(caps); i++) {
		size_t len;
		uint8_t *b = capture(caps[i].file, &len);

		assert_int_equal(tls_client_hello_parse(b, len, &H), caps[i].want);
		assert_string_equal(H.sni, caps[i].sni);
		assert_int_equal(H.sni_len, strlen(caps[i].sni));
		assert_int_equal(H.legacy_version, caps[i].legacy);
		assert_int_equal(H.max_version, caps[i].max);
		assert_int_equal(H.has_alpn, caps[i].alpn);
		assert_int_equal(H.has_ech, caps[i].ech);
		assert_int_equal(H.n_records, caps[i].records);
		assert_int_equal(H.hello_len, len);
		assert_true(H.is_tls);
		free(b);
	}
}

/* every proper prefix is NEED_MORE, the whole is the final answer */
static void test_every_prefix(void **state)
{
	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(caps); i++) {
		size_t len;
		uint8_t *b = capture(caps[i].file, &len);

		for (size_t k = 0; k < len; k++) {
			uint8_t *copy = malloc(k ? k : 1); /* exact size: ASan sees overreads */

			memcpy(copy, b, k);
			if (tls_client_hello_parse(copy, k, &H) != TLS_NEED_MORE)
				fail_msg("%s: prefix %zu is not NEED_MORE", caps[i].file, k);
			free(copy);
		}
		assert_int_equal(tls_client_hello_parse(b, len, &H), caps[i].want);
		free(b);
	}
}

/* the curl 1.3 hello re-recorded into 1, 2, 7, 100 and 300-byte records */
static void test_rerecorded(void **state)
{
	static const size_t frags[] = {1, 2, 3, 4, 5, 7, 100, 300};
	size_t len;
	uint8_t *b = capture("tls13-curl.bin", &len);
	size_t mlen = len - 5;

	(void)state;
	for (size_t f = 0; f < WD_ARRAY_SIZE(frags); f++) {
		size_t r = records(rec, b + 5, mlen, frags[f]);

		assert_int_equal(tls_client_hello_parse(rec, r, &H), TLS_OK);
		assert_string_equal(H.sni, "allowed.test");
		assert_int_equal(H.n_records, (mlen + frags[f] - 1) / frags[f]);
		assert_int_equal(H.hello_len, r);
		if (frags[f] == 7) {
			for (size_t k = 0; k < r; k++)
				assert_int_equal(tls_client_hello_parse(rec, k, &H), TLS_NEED_MORE);
		}
	}
	free(b);
}

/* the handshake message split into two records at every possible point */
static void test_two_records_every_split(void **state)
{
	static const char *const files[] = {"tls13-curl.bin", "tls13-chromium-ech.bin"};

	(void)state;
	for (size_t f = 0; f < WD_ARRAY_SIZE(files); f++) {
		size_t len;
		uint8_t *b = capture(files[f], &len);
		size_t mlen = len - 5;

		for (size_t k = 1; k < mlen; k++) {
			size_t r = records(rec, b + 5, k, k);

			r += records(rec + r, b + 5 + k, mlen - k, mlen);
			if (tls_client_hello_parse(rec, r, &H) != TLS_OK)
				fail_msg("%s split at %zu: %s", files[f], k, H.why);
			assert_string_equal(H.sni, "allowed.test");
			assert_int_equal(H.has_ech, f == 1);
			assert_int_equal(H.n_records, 2);
			assert_int_equal(H.hello_len, r);
			assert_int_equal(tls_client_hello_parse(rec, r - 1, &H), TLS_NEED_MORE);
			assert_int_equal(tls_client_hello_parse(rec, k + 5, &H), TLS_NEED_MORE);
		}
		free(b);
	}
}

/* the Chromium hello re-recorded into 1, 2, 3, 7 and 100-byte records, every prefix
 * of the 7-byte version NEED_MORE: the outer SNI and the ECH flag survive */
static void test_chromium_rerecorded(void **state)
{
	static const size_t frags[] = {1, 2, 3, 7, 100};
	size_t len;
	uint8_t *b = capture("tls13-chromium-ech.bin", &len);
	size_t mlen = len - 5;

	(void)state;
	for (size_t f = 0; f < WD_ARRAY_SIZE(frags); f++) {
		size_t r = records(rec, b + 5, mlen, frags[f]);

		assert_int_equal(tls_client_hello_parse(rec, r, &H), TLS_OK);
		assert_string_equal(H.sni, "allowed.test");
		assert_true(H.has_ech);
		assert_int_equal(H.n_records, (mlen + frags[f] - 1) / frags[f]);
		if (frags[f] == 7)
			for (size_t k = 0; k < r; k++)
				assert_int_equal(tls_client_hello_parse(rec, k, &H), TLS_NEED_MORE);
	}
	free(b);
}

/* records after the hello (CCS, early data) are not part of it */
static void test_following_records(void **state)
{
	size_t len;
	uint8_t *b = capture("tls12-curl.bin", &len);
	static const uint8_t ccs[] = {20, 3, 3, 0, 1, 1};

	(void)state;
	memcpy(rec, b, len);
	memcpy(rec + len, ccs, sizeof(ccs));
	assert_int_equal(tls_client_hello_parse(rec, len + sizeof(ccs), &H), TLS_OK);
	assert_int_equal(H.hello_len, len);
	/* split version too */
	memcpy(msg, b + 5, len - 5);
	{
		size_t r = records(rec, msg, len - 5, 50);

		memcpy(rec + r, ccs, sizeof(ccs));
		assert_int_equal(tls_client_hello_parse(rec, r + sizeof(ccs), &H), TLS_OK);
		assert_int_equal(H.hello_len, r);
	}
	free(b);
}

static void test_not_tls(void **state)
{
	static const uint8_t sslv2[] = {0x80, 0x2e, 0x01, 0x00, 0x02};
	static const uint8_t get[] = "GET / HTTP/1.1\r\n";
	static const uint8_t appdata[] = {23, 3, 3, 0, 1, 0};

	(void)state;
	assert_int_equal(tls_client_hello_parse(sslv2, sizeof(sslv2), &H), TLS_ABSENT);
	assert_false(H.is_tls);
	assert_int_equal(tls_client_hello_parse(get, 1, &H), TLS_ABSENT);
	assert_int_equal(tls_client_hello_parse(appdata, sizeof(appdata), &H), TLS_ABSENT);
	assert_int_equal(tls_client_hello_parse(NULL, 0, &H), TLS_NEED_MORE);
}

struct raw_case {
	const char *what;
	uint8_t bytes[16];
	size_t n;
	enum tls_result want;
};

static void test_record_layer(void **state)
{
	static const struct raw_case cases[] = {
	    {"version 2.x", {22, 2}, 2, TLS_MALFORMED},
	    {"version 3.5", {22, 3, 5}, 3, TLS_MALFORMED},
	    {"version 3.1 partial", {22, 3, 1}, 3, TLS_NEED_MORE},
	    {"empty record", {22, 3, 1, 0, 0}, 5, TLS_MALFORMED},
	    {"record > 2^14", {22, 3, 1, 0x40, 0x01}, 5, TLS_MALFORMED},
	    {"not ClientHello", {22, 3, 1, 0, 4, 2, 0, 0, 0}, 9, TLS_MALFORMED},
	    {"hello > 16 KiB", {22, 3, 1, 0, 4, 1, 0, 0x40, 0}, 9, TLS_MALFORMED},
	    {"hello 16380 partial", {22, 3, 1, 0, 4, 1, 0, 0x3f, 0xfc}, 9, TLS_NEED_MORE},
	    {"trailing in record", {22, 3, 1, 0, 6, 1, 0, 0, 0, 9, 9}, 11, TLS_MALFORMED},
	    {"not ClientHello, seen early", {22, 3, 1, 0, 2, 2, 0}, 7, TLS_MALFORMED},
	    {"hs header split", {22, 3, 1, 0, 2, 1, 0, 22, 3, 1, 0, 1, 0}, 13, TLS_NEED_MORE},
	    {"alert mid-hello", {22, 3, 1, 0, 2, 1, 0, 21, 3, 1, 0, 2, 2, 40}, 14, TLS_MALFORMED},
	};

	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(cases); i++) {
		enum tls_result r = tls_client_hello_parse(cases[i].bytes, cases[i].n, &H);

		if (r != cases[i].want)
			fail_msg("%s: got %d want %d", cases[i].what, r, cases[i].want);
	}
}

static void test_grease_and_facts(void **state)
{
	static struct wb e;
	static const uint8_t alpn[] = {0, 3, 2, 'h', '2'};
	static const uint8_t sv[] = {6, 0x7a, 0x7a, 3, 4, 3, 3};

	(void)state;
	e.n = 0;
	ext_raw(&e, 0x0a0a, "", 0); /* GREASE, empty */
	ext_sni(&e, "WWW.Example.COM.");
	ext_raw(&e, 16, alpn, sizeof(alpn));
	ext_raw(&e, 43, sv, sizeof(sv));
	ext_raw(&e, 0xfe0d, "\0\1\2", 3);
	ext_raw(&e, 0xdada, "x", 1); /* GREASE with data */
	assert_int_equal(with_exts(&e), TLS_OK);
	assert_string_equal(H.sni, "www.example.com");
	assert_true(H.has_alpn);
	assert_true(H.has_ech);
	assert_int_equal(H.max_version, 0x0304);
	assert_int_equal(H.n_extensions, 6);
}

static void test_absent(void **state)
{
	static struct wb e;
	size_t n;

	(void)state;
	/* no extensions field at all (TLS 1.0 style) */
	n = hello_msg(msg, NULL, 0x0301);
	assert_int_equal(tls_client_hello_parse(rec, records(rec, msg, n, 16384), &H), TLS_ABSENT);
	assert_int_equal(H.legacy_version, 0x0301);
	/* extensions but none is server_name */
	e.n = 0;
	ext_raw(&e, 23, "", 0);
	assert_int_equal(with_exts(&e), TLS_ABSENT);
	/* an empty extension block */
	e.n = 0;
	assert_int_equal(with_exts(&e), TLS_ABSENT);
}

struct name_case {
	const char *name;
	enum tls_result want;
	const char *sni;
};

static void test_names(void **state)
{
	static char l63[64], l64[65], n253[254], n254[255], n254dot[256];
	static struct wb e;
	const struct name_case cases[] = {
	    {"allowed.test", TLS_OK, "allowed.test"},
	    {"a", TLS_OK, "a"},
	    {"x_y-z.example", TLS_OK, "x_y-z.example"},
	    {"allowed.test.", TLS_OK, "allowed.test"},
	    {l63, TLS_OK, l63},
	    {l64, TLS_MALFORMED, ""},
	    {n253, TLS_OK, n253},
	    {n254, TLS_MALFORMED, ""},
	    {n254dot, TLS_MALFORMED, ""},
	    {"", TLS_MALFORMED, ""},
	    {".", TLS_MALFORMED, ""},
	    {"a..b", TLS_MALFORMED, ""},
	    {".a", TLS_MALFORMED, ""},
	    {"a b", TLS_MALFORMED, ""},
	    {"a/b", TLS_MALFORMED, ""},
	    {"a\xc3\xa9", TLS_MALFORMED, ""},
	    {"10.0.0.1", TLS_MALFORMED, ""},
	    {"1.2.3", TLS_MALFORMED, ""},
	    {"0x7f000001", TLS_MALFORMED, ""},
	    {"example.0x1F", TLS_MALFORMED, ""},
	    {"::1", TLS_MALFORMED, ""},
	    {"[::1]", TLS_MALFORMED, ""},
	    {"123.example", TLS_OK, "123.example"},
	    {"example.123x", TLS_OK, "example.123x"},
	};

	(void)state;
	memset(l63, 'a', 63);
	memset(l64, 'a', 64);
	for (int i = 0; i < 253; i++)
		n253[i] = i % 2 ? '.' : 'b';
	memcpy(n254, n253, 253);
	memcpy(n254 + 251, "bbb", 3); /* 254 chars, last label "bbb" */
	memcpy(n254dot, n254, 254);
	n254dot[254] = '.';
	for (size_t i = 0; i < WD_ARRAY_SIZE(cases); i++) {
		enum tls_result r;

		e.n = 0;
		ext_sni(&e, cases[i].name);
		r = with_exts(&e);
		if (r != cases[i].want)
			fail_msg("name \"%s\": got %d want %d", cases[i].name, r, cases[i].want);
		if (r == TLS_OK)
			assert_string_equal(H.sni, cases[i].sni);
		else
			assert_non_null(H.why);
	}
	/* a NUL inside the name */
	e.n = 0;
	ext_raw(&e, 0,
		"\0\x08\0\0\x05"
		"ab\0cd",
		10);
	assert_int_equal(with_exts(&e), TLS_MALFORMED);
}

struct ext_case {
	const char *what;
	const uint8_t *data;
	size_t n;
};

static void test_malformed_extensions(void **state)
{
	static struct wb e;
	/* server_name extension bodies */
	static const uint8_t two_entries[] = {0,   14, 0, 0, 4,	  'a', '.', 'b',
					      'c', 0,  0, 3, 'x', '.', 'y'};
	static const uint8_t not_host[] = {0, 6, 1, 0, 3, 'a', '.', 'b'};
	static const uint8_t list_short[] = {0, 5, 0, 0, 3, 'a', '.', 'b'};
	static const uint8_t list_long[] = {0, 9, 0, 0, 3, 'a', '.', 'b'};
	static const uint8_t name_long[] = {0, 6, 0, 0, 9, 'a', '.', 'b'};
	static const uint8_t empty_list[] = {0, 0};
	static const struct ext_case sni[] = {
	    {"two entries", two_entries, sizeof(two_entries)},
	    {"not host_name", not_host, sizeof(not_host)},
	    {"list shorter than ext", list_short, sizeof(list_short)},
	    {"list longer than ext", list_long, sizeof(list_long)},
	    {"name longer than list", name_long, sizeof(name_long)},
	    {"empty list", empty_list, sizeof(empty_list)},
	    {"empty extension", empty_list, 0},
	};
	static const uint8_t alpn_bad[] = {0, 3, 3, 'h', '2'};
	static const uint8_t alpn_zero[] = {0, 1, 0};
	static const uint8_t sv_odd[] = {3, 3, 4, 3};
	static const uint8_t sv_grease[] = {2, 0x2a, 0x2a};

	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(sni); i++) {
		e.n = 0;
		ext_raw(&e, 0, sni[i].data, sni[i].n);
		if (with_exts(&e) != TLS_MALFORMED)
			fail_msg("server_name %s is not MALFORMED", sni[i].what);
	}
	e.n = 0;
	ext_raw(&e, 16, alpn_bad, sizeof(alpn_bad));
	assert_int_equal(with_exts(&e), TLS_MALFORMED);
	e.n = 0;
	ext_raw(&e, 16, alpn_zero, sizeof(alpn_zero));
	assert_int_equal(with_exts(&e), TLS_MALFORMED);
	e.n = 0;
	ext_raw(&e, 43, sv_odd, sizeof(sv_odd));
	assert_int_equal(with_exts(&e), TLS_MALFORMED);
	e.n = 0;
	ext_raw(&e, 43, sv_grease, sizeof(sv_grease));
	assert_int_equal(with_exts(&e), TLS_MALFORMED);

	/* duplicate server_name, duplicate anything */
	e.n = 0;
	ext_sni(&e, "a.test");
	ext_sni(&e, "b.test");
	assert_int_equal(with_exts(&e), TLS_MALFORMED);
	e.n = 0;
	ext_sni(&e, "a.test");
	ext_raw(&e, 23, "", 0);
	ext_raw(&e, 23, "", 0);
	assert_int_equal(with_exts(&e), TLS_MALFORMED);
	assert_string_equal(H.why, "duplicate extension");
	/* pre_shared_key must be last */
	e.n = 0;
	ext_raw(&e, 41, "", 0);
	ext_sni(&e, "a.test");
	assert_int_equal(with_exts(&e), TLS_MALFORMED);
	e.n = 0;
	ext_sni(&e, "a.test");
	ext_raw(&e, 41, "", 0);
	assert_int_equal(with_exts(&e), TLS_OK);
	/* extension length runs past the block */
	e.n = 0;
	ext_sni(&e, "a.test");
	w16(&e, 23);
	w16(&e, 10);
	assert_int_equal(with_exts(&e), TLS_MALFORMED);
	/* half an extension header */
	e.n = 0;
	ext_sni(&e, "a.test");
	w8(&e, 0);
	assert_int_equal(with_exts(&e), TLS_MALFORMED);
	/* 129 distinct extensions */
	e.n = 0;
	for (unsigned t = 100; t < 229; t++)
		ext_raw(&e, t, "", 0);
	assert_int_equal(with_exts(&e), TLS_MALFORMED);
	e.n = 0;
	for (unsigned t = 100; t < 228; t++)
		ext_raw(&e, t, "", 0);
	assert_int_equal(with_exts(&e), TLS_ABSENT);
}

/* a length field that lies, at every length field of a real hello */
static void test_lying_lengths(void **state)
{
	size_t len;
	uint8_t *b = capture("tls12-curl.bin", &len);

	(void)state;
	/* the extensions block length sits right after compression methods */
	{
		size_t off = 5 + 4 + 2 + 32;
		size_t ext_at;

		off += 1 + b[off];
		off += 2 + ((size_t)b[off] << 8 | b[off + 1]);
		off += 1 + b[off];
		ext_at = off;
		for (int delta = -3; delta <= 3; delta++) {
			size_t v = ((size_t)b[ext_at] << 8 | b[ext_at + 1]) + (size_t)delta;

			if (!delta)
				continue;
			memcpy(rec, b, len);
			put16(rec + ext_at, v);
			assert_int_equal(tls_client_hello_parse(rec, len, &H), TLS_MALFORMED);
		}
	}
	/* handshake length one short or long of the record */
	memcpy(rec, b, len);
	rec[8]--;
	assert_int_equal(tls_client_hello_parse(rec, len, &H), TLS_MALFORMED);
	/* session id length 33 */
	memcpy(rec, b, len);
	rec[5 + 4 + 2 + 32] = 33;
	assert_int_equal(tls_client_hello_parse(rec, len, &H), TLS_MALFORMED);
	/* legacy versions out of range */
	memcpy(rec, b, len);
	rec[10] = 0;
	assert_int_equal(tls_client_hello_parse(rec, len, &H), TLS_MALFORMED);
	rec[10] = 4;
	assert_int_equal(tls_client_hello_parse(rec, len, &H), TLS_MALFORMED);
	free(b);
}

static void test_hello_size_limit(void **state)
{
	static struct wb e;
	size_t n;

	(void)state;
	/* padding up to exactly 16384 bytes of message is fine, one more is not */
	for (int extra = 0; extra <= 1; extra++) {
		size_t base;

		e.n = 0;
		ext_sni(&e, "allowed.test");
		base = hello_msg(msg, &e, 0x0303);
		w16(&e, 21);
		w16(&e, TLS_HELLO_MAX - base - 4 + (size_t)extra);
		memset(e.b + e.n, 0, TLS_HELLO_MAX - base - 4 + (size_t)extra);
		e.n += TLS_HELLO_MAX - base - 4 + (size_t)extra;
		n = hello_msg(msg, &e, 0x0303);
		assert_int_equal(n, TLS_HELLO_MAX + (size_t)extra);
		assert_int_equal(tls_client_hello_parse(rec, records(rec, msg, n, 16384), &H),
				 extra ? TLS_MALFORMED : TLS_OK);
		assert_int_equal(tls_client_hello_parse(rec, records(rec, msg, n, 1000), &H),
				 extra ? TLS_MALFORMED : TLS_OK);
	}
}

static void test_compression_and_ciphers(void **state)
{
	static struct wb e;
	size_t n, off;

	(void)state;
	e.n = 0;
	ext_sni(&e, "a.test");
	n = hello_msg(msg, &e, 0x0303);
	off = 4 + 2 + 32 + 1 + 32; /* cipher suites length */
	msg[off + 1] = 7;	   /* odd */
	assert_int_equal(tls_client_hello_parse(rec, records(rec, msg, n, 16384), &H),
			 TLS_MALFORMED);
	n = hello_msg(msg, &e, 0x0303);
	msg[off + 2 + 8 + 1] = 1; /* the one compression method is not null */
	assert_int_equal(tls_client_hello_parse(rec, records(rec, msg, n, 16384), &H),
			 TLS_MALFORMED);
}

static void test_alert(void **state)
{
	uint8_t out[16];
	static const uint8_t want[] = {21, 3, 3, 0, 2, 2, 49};
	static const uint8_t want10[] = {21, 3, 1, 0, 2, 2, 112};

	(void)state;
	assert_int_equal(tls_alert_compose(out, sizeof(out), TLS_ALERT_ACCESS_DENIED, 0x0303),
			 TLS_ALERT_LEN);
	assert_memory_equal(out, want, sizeof(want));
	assert_int_equal(tls_alert_compose(out, 7, TLS_ALERT_UNRECOGNIZED_NAME, 0x0301), 7);
	assert_memory_equal(out, want10, sizeof(want10));
	assert_int_equal(tls_alert_compose(out, 16, TLS_ALERT_ACCESS_DENIED, 0x0304), 7);
	assert_int_equal(out[2], 3);
	assert_int_equal(tls_alert_compose(out, 6, TLS_ALERT_ACCESS_DENIED, 0x0303), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_captures),
	    cmocka_unit_test(test_every_prefix),
	    cmocka_unit_test(test_rerecorded),
	    cmocka_unit_test(test_two_records_every_split),
	    cmocka_unit_test(test_chromium_rerecorded),
	    cmocka_unit_test(test_following_records),
	    cmocka_unit_test(test_not_tls),
	    cmocka_unit_test(test_record_layer),
	    cmocka_unit_test(test_grease_and_facts),
	    cmocka_unit_test(test_absent),
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_malformed_extensions),
	    cmocka_unit_test(test_lying_lengths),
	    cmocka_unit_test(test_hello_size_limit),
	    cmocka_unit_test(test_compression_and_ciphers),
	    cmocka_unit_test(test_alert),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
