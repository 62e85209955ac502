/* path.c - lexical path folding, once for every module that compares paths before (or
 * instead of) asking the filesystem: a policy's grants (policy/validate.c), the recorder's
 * paths and `warden init`'s inference. Pure: no I/O, symbolic links are not looked at. */
#include "common/common.h"

#include <errno.h>
#include <string.h>

bool wd_path_absolute(const char *p)
{
#ifdef _WIN32
	if (((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) && p[1] == ':' &&
	    (p[2] == '\\' || p[2] == '/'))
		return true;
	return (p[0] == '\\' || p[0] == '/') && (p[1] == '\\' || p[1] == '/') && p[2];
#else
	return p[0] == '/';
#endif
}

int wd_path_fold(const char *in, char *out, size_t outlen)
{
	size_t len, o = 0;
	const char *p;

	if (!in || in[0] != '/')
		return -EINVAL;
	len = strlen(in);
	if (len + 1 > outlen)
		return -ENAMETOOLONG;
	if (out != in)
		memmove(out, in, len + 1);
	/* out[0, o) is the folded prefix, p the rest still to read (never behind it) */
	p = out;
	while (*p) {
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		n = strcspn(p, "/");
		if (n == 1 && p[0] == '.') {
			/* nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (o > 0 && out[--o] != '/')
				;
		} else {
			out[o++] = '/';
			memmove(out + o, p, n);
			o += n;
		}
		p += n;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return 0;
}
