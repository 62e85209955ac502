/* hostname.c - a host name as a policy or a ceiling writes it: common/name.c's strict syntax
 * (wd_name_fold()), and a last label that is all digits refused (it reads as an address); and
 * the names that resolve only into a range the gateway's SSRF guard refuses. Pure. Address
 * ranges are common/net.c's (wd_cidr_parse()). */
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

/* names whose addresses are, by convention, in a range the SSRF guard refuses
 * (gateway/addrclass.c); @suffix: the name and every name under it */
static const struct {
	const char *name;
	bool suffix;
	const char *what;
} ssrf_names[] = {
    {"localhost", true, "this machine: loopback, 127.0.0.0/8 and ::1"},
    {"localhost.localdomain", false, "this machine: loopback, 127.0.0.0/8 and ::1"},
    {"metadata.google.internal", false, "the cloud metadata service: link-local, 169.254.169.254"},
    {"metadata", false, "the cloud metadata service: link-local, 169.254.169.254"},
    {"instance-data.ec2.internal", false,
     "the cloud metadata service: link-local, 169.254.169.254"},
    {"instance-data", false, "the cloud metadata service: link-local, 169.254.169.254"},
};

const char *policy_host_ssrf_class(const char *norm)
{
	size_t n = strlen(norm);

	for (size_t i = 0; i < WD_ARRAY_SIZE(ssrf_names); i++) {
		size_t k = strlen(ssrf_names[i].name);

		if (!strcmp(norm, ssrf_names[i].name))
			return ssrf_names[i].what;
		if (ssrf_names[i].suffix && n > k + 1 && norm[n - k - 1] == '.' &&
		    !strcmp(norm + n - k, ssrf_names[i].name))
			return ssrf_names[i].what;
	}
	return NULL;
}
