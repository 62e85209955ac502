/* flood.h - for the hash-flood tests: names that all collide under the unkeyed FNV-1a hash
 * the gateway's and the matcher's tables used before common/hash.c, found by search as an
 * attacker would. Each test then checks that under the keyed hash they cost a few probes.
 */
#ifndef WARDEN_TEST_FLOOD_H
#define WARDEN_TEST_FLOOD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* flood_fnv1a() - 32-bit FNV-1a of @s, its offset basis plus @seed (the former name index
 * seeded it with the address family) */
static inline uint32_t flood_fnv1a(uint32_t seed, const char *s)
{
	uint32_t h = 2166136261u + seed;

	for (; *s; s++) {
		h ^= (uint8_t)*s;
		h *= 16777619u;
	}
	return h;
}

/* flood_names() - @n names "x<hex>.flood.test" whose flood_fnv1a(@seed) & @mask are all the
 * first candidate's; returns that common value */
static inline uint32_t flood_names(char (*names)[32], size_t n, uint32_t seed, uint32_t mask)
{
	uint32_t target = 0;
	size_t got = 0;

	for (uint64_t i = 0; got < n; i++) {
		char cand[32];

		snprintf(cand, sizeof(cand), "x%llx.flood.test", (unsigned long long)i);
		if (i == 0)
			target = flood_fnv1a(seed, cand) & mask;
		if ((flood_fnv1a(seed, cand) & mask) == target)
			snprintf(names[got++], sizeof(names[0]), "%s", cand);
	}
	return target;
}

#endif /* WARDEN_TEST_FLOOD_H */
