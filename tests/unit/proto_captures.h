/* proto_captures.h - internal to tests/unit: loads the real messages captured in
 * tests/proto/captures/ (include after <cmocka.h>). */
#ifndef WARDEN_TESTS_PROTO_CAPTURES_H
#define WARDEN_TESTS_PROTO_CAPTURES_H

#include "common/common.h"

#include <stdint.h>
#include <stdio.h>

/* capture() - the bytes of capture @name (malloc'd; free them); fails the test if unreadable */
static inline uint8_t *capture(const char *name, size_t *len)
{
	char path[512];
	char *data = NULL;

	snprintf(path, sizeof(path), "%s/tests/proto/captures/%s", WD_SOURCE_DIR, name);
	assert_int_equal(wd_read_file(path, 1 << 20, &data, len), 0);
	return (uint8_t *)data;
}

#endif
