/* hostname.c - a host name as a policy or a ceiling writes it: common/name.c's strict syntax
 * (wd_name_fold()), and a last label that is all digits refused (it reads as an address).
 * Pure. Address ranges are common/net.c's (wd_cidr_parse()). */
#include "policy/policy_internal.h"

#include <string.h>

const char *policy_host_fold(const char *in, char *out, size_t outlen)
{
	enum wd_name_check nc;
	size_t last = 0;
	bool digits = true;

	nc = wd_name_fold(in, strlen(in), 0, out, outlen, &last);
	if (nc != WD_NAME_OK)
		return wd_name_check_text(nc);
	for (const char *p = out + last; *p; p++)
		digits = digits && *p >= '0' && *p <= '9';
	if (digits) {
		out[0] = '\0';
		return "the last label is all digits (an address? use `cidr`)";
	}
	return NULL;
}
