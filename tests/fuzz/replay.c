/* replay.c - runs a libFuzzer harness over every file of a corpus folder, so the
 * normal build (and CTest) exercises each fuzzer's checked-in inputs. */
#include "common/common.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	unsigned passed = 0, failed = 0;
	struct dirent *de;
	DIR *d;

	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	d = opendir(argv[1]);
	if (!d) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	while ((de = readdir(d))) {
		char path[PATH_MAX];
		char *data;
		size_t len;
		int ret;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", argv[1], de->d_name);
		ret = wd_read_file(path, 1 << 20, &data, &len);
		if (ret < 0) {
			fprintf(stderr, "%s: %s\n", path, strerror(-ret));
			failed++;
			continue;
		}
		LLVMFuzzerTestOneInput((const uint8_t *)data, len);
		free(data);
		passed++;
	}
	closedir(d);
	printf("%u passed, %u failed\n", passed, failed);
	return failed || !passed ? 1 : 0;
}
