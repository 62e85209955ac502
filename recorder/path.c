/* path.c - the recorder's paths, pure: a path the program gave made absolute and folded
 * (recorder_join()), the file systems the sandbox makes for itself (recorder_sandbox_own()),
 * the runtime base every sandbox sees (recorder_in_base(), sandbox_base_dirs). The bottom of
 * recorder/: it uses no other file of it. */
#include "recorder/internal.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

int recorder_join(const char *base, const char *rel, char *out, size_t size)
{
	char buf[PATH_MAX * 2];
	size_t n = 0;
	const char *s;
	int len;

	if (!rel[0])
		return -EINVAL;
	if (rel[0] == '/')
		len = snprintf(buf, sizeof(buf), "%s", rel);
	else if (base[0] == '/')
		len = snprintf(buf, sizeof(buf), "%s/%s", base, rel);
	else
		return -EINVAL;
	if (len < 0 || (size_t)len >= sizeof(buf))
		return -ENAMETOOLONG;
	/* fold component by component into @out: "", "." dropped, ".." pops one */
	if (size < 2)
		return -ENAMETOOLONG;
	out[0] = '\0';
	for (s = buf; *s;) {
		const char *c;
		size_t clen;

		while (*s == '/')
			s++;
		c = s;
		while (*s && *s != '/')
			s++;
		clen = (size_t)(s - c);
		if (!clen || (clen == 1 && c[0] == '.'))
			continue;
		if (clen == 2 && c[0] == '.' && c[1] == '.') {
			while (n && out[n - 1] != '/')
				n--;
			if (n)
				n--;
			out[n] = '\0';
			continue;
		}
		if (n + 1 + clen + 1 > size)
			return -ENAMETOOLONG;
		out[n++] = '/';
		memcpy(out + n, c, clen);
		n += clen;
		out[n] = '\0';
	}
	if (!n) {
		out[0] = '/';
		out[1] = '\0';
	}
	return 0;
}

bool recorder_sandbox_own(const char *path)
{
	static const char *const own[] = {"/proc/", "/dev/"};
	size_t len = strlen(path);

	for (size_t i = 0; i < WD_ARRAY_SIZE(own); i++) {
		size_t n = strlen(own[i]);

		/* the folder itself, or anything in it */
		if (!strncmp(path, own[i], n) || (len == n - 1 && !strncmp(path, own[i], n - 1)))
			return true;
	}
	return false;
}

bool recorder_in_base(const char *path)
{
	for (size_t i = 0; sandbox_base_dirs[i]; i++) {
		size_t n = strlen(sandbox_base_dirs[i]);

		if (!strncmp(path, sandbox_base_dirs[i], n) && (path[n] == '\0' || path[n] == '/'))
			return true;
	}
	return false;
}
