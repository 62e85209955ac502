/* trace_forge.c - a traced program that tries to forge what `warden trace` records, for
 * tests/integration/trace_spoof.sh (issue 16: the trace must hold what the program reached,
 * never what it made the recorder read).
 *
 * Usage: trace_forge race REAL FORGED N
 *          REAL and FORGED are paths of the same length that differ in one byte. One thread
 *          opens the path in a shared buffer N times (reading what it got each time), while
 *          another flips that byte between REAL's and FORGED's, so that the bytes a recorder
 *          reads from the program's memory and the bytes the kernel opens can differ. Prints
 *          `real=R forged=F failed=E`: the opens that returned REAL's content, content that
 *          starts with `FORGED` (what the test puts in FORGED, which the program may not
 *          read), and the failures.
 *        trace_forge open PATH...
 *          opens and reads each PATH once; prints `PATH: ok` or `PATH: ERRNO-NAME` with
 *          the name's control characters as \n, \t or \xHH.
 * Exit 0 when the probe ran (whatever the opens returned), 2 on a usage or setup error.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FORGE_MAX 4096

static char path_buf[FORGE_MAX];
static atomic_bool stop_flip;
static size_t flip_at;
static char flip_real, flip_forged;

static void *flipper(void *arg)
{
	volatile char *b = path_buf;

	(void)arg;
	while (!atomic_load_explicit(&stop_flip, memory_order_relaxed)) {
		b[flip_at] = flip_forged;
		b[flip_at] = flip_real;
	}
	return NULL;
}

/* the first bytes of @path (at most @size - 1), or -1 with errno */
static ssize_t head(const char *path, char *out, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, out, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	out[n] = 0;
	return n;
}

static int race(const char *real, const char *forged, long n)
{
	char want_real[256], want_forged[256], got[256];
	long nreal = 0, nforged = 0, nfailed = 0;
	size_t len = strlen(real), diff = 0, ndiff = 0;
	pthread_t t;

	if (len != strlen(forged) || len >= sizeof(path_buf) || n <= 0) {
		fprintf(stderr, "trace_forge: REAL and FORGED must have the same length, N > 0\n");
		return 2;
	}
	for (size_t i = 0; i < len; i++)
		if (real[i] != forged[i]) {
			diff = i;
			ndiff++;
		}
	if (ndiff != 1) {
		fprintf(stderr, "trace_forge: REAL and FORGED must differ in one byte\n");
		return 2;
	}
	if (head(real, want_real, sizeof(want_real)) < 0) {
		fprintf(stderr, "trace_forge: %s: %s\n", real, strerror(errno));
		return 2;
	}
	/* FORGED is not readable by the program: the test writes this marker in it */
	snprintf(want_forged, sizeof(want_forged), "FORGED");
	memcpy(path_buf, real, len + 1);
	flip_at = diff;
	flip_real = real[diff];
	flip_forged = forged[diff];
	if (pthread_create(&t, NULL, flipper, NULL)) {
		fprintf(stderr, "trace_forge: cannot start the flipping thread\n");
		return 2;
	}
	for (long i = 0; i < n; i++) {
		bool opened = head(path_buf, got, sizeof(got)) >= 0;

		if (opened && !strncmp(got, want_forged, strlen(want_forged)))
			nforged++;
		else if (opened && !strcmp(got, want_real))
			nreal++;
		else
			nfailed++; /* not opened, or a content that is neither */
	}
	atomic_store(&stop_flip, true);
	pthread_join(t, NULL);
	printf("real=%ld forged=%ld failed=%ld\n", nreal, nforged, nfailed);
	return 0;
}

static void print_escaped(const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\n')
			fputs("\\n", stdout);
		else if (c == '\t')
			fputs("\\t", stdout);
		else if (c < 0x20 || c == 0x7f)
			printf("\\x%02x", c);
		else
			putchar(c);
	}
}

static int open_each(int argc, char **argv)
{
	char got[256];

	for (int i = 0; i < argc; i++) {
		print_escaped(argv[i]);
		if (head(argv[i], got, sizeof(got)) < 0)
			printf(": %s\n", strerrorname_np(errno) ? strerrorname_np(errno) : "?");
		else
			printf(": ok\n");
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "race"))
		return race(argv[2], argv[3], strtol(argv[4], NULL, 10));
	if (argc >= 3 && !strcmp(argv[1], "open"))
		return open_each(argc - 2, argv + 2);
	fprintf(stderr, "usage: trace_forge race REAL FORGED N | open PATH...\n");
	return 2;
}
