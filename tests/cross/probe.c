/* probe.c - the cross build's link proof (tests/cross/run): one program per target that links
 * the portable core (wd_policy, wd_audit, wd_proto, wd_common) with the cross-built libyaml,
 * jansson and c-ares, and uses each: a policy parsed and matched, an audit event encoded and
 * decoded back, a CONNECT head parsed. It exits 0 only when every check holds; here it is only
 * linked (no Mac or Windows to run it on), on its own OS it is the first smoke test. */
#include "audit/audit.h"
#include "gateway/proto/proto.h"
#include "policy/policy.h"

#include <ares.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char policy_text[] = "version: 1\n"
				  "command: [node, server.js]\n"
				  "network:\n"
				  "  allow: [\"api.example.com:443\"]\n";

static int failed;

static void check(int ok, const char *what)
{
	printf("%s - %s\n", ok ? "ok" : "FAIL", what);
	if (!ok)
		failed++;
}

static void probe_policy(void)
{
	struct policy_diags d;
	struct wd_policy *p = NULL;
	int ret;

	policy_diags_init(&d);
	ret = policy_parse(policy_text, strlen(policy_text), "probe.yaml", &p, &d);
	check(ret == 0 && p, "the policy parses (libyaml)");
	if (p) {
		check(policy_match(p, "api.example.com", 443) >= 0,
		      "api.example.com:443 is allowed");
		check(policy_match(p, "evil.example.com", 443) < 0, "evil.example.com:443 is not");
		policy_free(p);
	}
	policy_diags_free(&d);
	ret = policy_parse("version: 2\n", 11, "bad.yaml", &p, &d);
	check(ret == -EINVAL, "version 2 is refused");
	policy_diags_free(&d);
}

static void probe_audit(void)
{
	struct audit_event ev = {0}, back = {0};
	struct wd_buf line = WD_BUF_INIT;

	ev.ts.tv_sec = 1700000000;
	ev.run = "probe";
	ev.type = AUDIT_TYPE_NET;
	ev.action = "connect";
	ev.host = "api.example.com";
	ev.allowed = true;
	check(audit_event_encode(&ev, &line, NULL) == 0, "an audit event encodes");
	check(audit_event_decode(line.data, line.len, &back, NULL) == 0 && back.host &&
		  strcmp(back.host, "api.example.com") == 0,
	      "and decodes back (jansson)");
	audit_event_clear(&back);
	check(audit_event_decode("{\"ts\":", 6, &back, NULL) < 0, "a torn line does not decode");
	audit_event_clear(&back);
	wd_buf_free(&line);
}

static void probe_proto(void)
{
	static const char head[] = "CONNECT api.example.com:443 HTTP/1.1\r\n"
				   "Host: api.example.com:443\r\n\r\n";
	struct http_request req;

	check(http_request_parse((const uint8_t *)head, strlen(head), &req) == HTTP_OK &&
		  req.is_connect && strcmp(req.host, "api.example.com") == 0 && req.port == 443,
	      "a CONNECT head parses");
	check(http_request_parse((const uint8_t *)"\x16\x03\x01", 3, &req) == HTTP_MALFORMED,
	      "TLS bytes are not HTTP");
}

int main(void)
{
	probe_policy();
	probe_audit();
	probe_proto();
	check(ares_version(NULL) != NULL, "c-ares links");
	printf("%d failed\n", failed);
	return failed ? 1 : 0;
}
