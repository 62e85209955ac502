/* fuzz_toolcalls.c - libFuzzer harness: arbitrary bytes through the stdio MCP tracker of
 * `warden run` (run/toolcalls.c) in both directions, in chunks the input chooses, as the relay
 * feeds it (again from where a feed stopped); the reports are made on the way and at the end. */
#include "run/toolcalls.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run_toolcalls t;
	json_t *j, *denials = json_pack("{s:i}", "read_file", 2);
	size_t i = 0;

	run_toolcalls_init(&t);
	/* each chunk: one byte (bit 0 the direction, the rest its length / 2 + 1), its bytes */
	while (i < size) {
		enum mcp_dir d = data[i] & 1 ? MCP_S2C : MCP_C2S;
		size_t n = (size_t)(data[i] >> 1) * 2 + 1;

		i++;
		if (n > size - i)
			n = size - i;
		while (n) {
			bool changed = false;
			size_t used =
			    run_toolcalls_feed(&t, d, (const char *)data + i, n, &changed);

			if (!used || used > n)
				abort(); /* the contract: 1..len */
			if (changed) {
				j = run_toolcalls_calls_json(&t);
				json_decref(j);
			}
			i += used;
			n -= used;
		}
	}
	j = run_toolcalls_exit_json(&t, denials);
	json_decref(j);
	if (size && data[0] == 'S')
		run_toolcalls_stop(&t, "fuzz");
	j = run_toolcalls_calls_json(&t);
	json_decref(j);
	json_decref(denials);
	run_toolcalls_free(&t);
	return 0;
}
