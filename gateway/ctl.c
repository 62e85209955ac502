/* ctl.c - the control protocol's request parser: one JSON object per line,
 * checked against a const table of the keys each operation takes. Pure
 * (allocates only what the request owns). The server side is in ctlsrv.c. */
#include "gateway/ctl.h"
#include "gateway/toolcalls.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum key {
	K_OP = 1u << 0,
	K_ID = 1u << 1,
	K_IF = 1u << 2,
	K_HOST4 = 1u << 3,
	K_SB4 = 1u << 4,
	K_HOST6 = 1u << 5,
	K_SB6 = 1u << 6,
	K_POLICY = 1u << 7,
	K_POLICY_NAME = 1u << 8,
	K_NETNS = 1u << 9,
	K_CALLS = 1u << 10, /* an array, not a string */
	K_STREAM = 1u << 11,
	K_PID = 1u << 12,
	K_LEARN = 1u << 13,  /* a boolean, not a string */
	K_SHADOW = 1u << 14, /* a boolean, not a string */
	K_ASKER = 1u << 15,  /* a boolean, not a string */
	K_ASK = 1u << 16,
	K_VERDICT = 1u << 17,
	K_BY = 1u << 18,
};

static const struct {
	const char *name;
	unsigned key;
} keys[] = {
    {"op", K_OP},	   {"id", K_ID},	  {"if", K_IF},
    {"host_v4", K_HOST4},  {"sandbox_v4", K_SB4}, {"host_v6", K_HOST6},
    {"sandbox_v6", K_SB6}, {"policy", K_POLICY},  {"policy_name", K_POLICY_NAME},
    {"netns", K_NETNS},	   {"calls", K_CALLS},	  {"stream", K_STREAM},
    {"pid", K_PID},	   {"learn", K_LEARN},	  {"shadow", K_SHADOW},
    {"asker", K_ASKER},	   {"ask", K_ASK},	  {"verdict", K_VERDICT},
    {"by", K_BY},
};

/* for each op: keys it requires and keys it may have */
static const struct {
	const char *name;
	unsigned required;
	unsigned optional;
} ops[GW_CTL_N] = {
    /* with an interface and addresses (root's plumbing), or with "netns" (the gateway's) */
    [GW_CTL_REGISTER] = {"register", K_OP | K_ID | K_POLICY,
			 K_IF | K_HOST4 | K_SB4 | K_HOST6 | K_SB6 | K_POLICY_NAME | K_NETNS |
			     K_STREAM | K_LEARN | K_SHADOW | K_ASKER},
    [GW_CTL_UNREGISTER] = {"unregister", K_OP | K_ID, 0},
    [GW_CTL_REPLACE] = {"replace", K_OP | K_ID | K_POLICY, K_POLICY_NAME},
    [GW_CTL_LIST] = {"list", K_OP, 0},
    [GW_CTL_STATS] = {"stats", K_OP, 0},
    [GW_CTL_MCP] = {"mcp", K_OP | K_ID | K_CALLS, 0},
    [GW_CTL_CGROUP_JOIN] = {"cgroup_join", K_OP | K_ID | K_PID, 0},
    [GW_CTL_LEARNED] = {"learned", K_OP | K_ID, 0},
    [GW_CTL_ASKS] = {"asks", K_OP | K_ID, 0},
    [GW_CTL_ANSWER] = {"answer", K_OP | K_ID | K_ASK | K_VERDICT | K_BY, 0},
};

const char *gw_ctl_op_name(enum gw_ctl_op op)
{
	return (size_t)op < GW_CTL_N ? ops[op].name : "?";
}

static int fail(char *why, size_t size, int ret, const char *fmt, const char *arg)
{
	snprintf(why, size, fmt, arg);
	return ret;
}

/* a run id or policy name: printable ASCII without spaces, quotes or backslashes */
static bool token_ok(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (!n || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~' || s[i] == '"' || s[i] == '\\')
			return false;
	return true;
}

static int addr_field(json_t *v, int family, struct gw_addr *a)
{
	if (gw_addr_parse(json_string_value(v), a) || a->family != family)
		return -EINVAL;
	return 0;
}

int gw_ctl_parse(const char *buf, size_t len, struct gw_ctl_req *req, char *why, size_t why_size)
{
	json_error_t jerr;
	json_t *root, *v;
	const char *k;
	unsigned seen = 0;
	int ret = -EINVAL, op = -1;

	memset(req, 0, sizeof(*req));
	if (len > GW_CTL_MAX)
		return fail(why, why_size, -E2BIG, "request longer than %s bytes", "GW_CTL_MAX");
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return fail(why, why_size, -EINVAL, "not JSON: %s", jerr.text);
	if (!json_is_object(root)) {
		fail(why, why_size, -EINVAL, "expected a JSON object%s", "");
		goto out;
	}
	json_object_foreach(root, k, v)
	{
		unsigned bit = 0;

		for (size_t i = 0; i < WD_ARRAY_SIZE(keys); i++)
			if (!strcmp(keys[i].name, k))
				bit = keys[i].key;
		if (!bit) {
			fail(why, why_size, -EINVAL, "unknown key `%.64s`", k);
			goto out;
		}
		if (bit == K_CALLS) {
			if (gw_toolcalls_calls_check(v, why, why_size))
				goto out;
		} else if (bit == K_LEARN || bit == K_SHADOW || bit == K_ASKER) {
			if (!json_is_boolean(v)) {
				fail(why, why_size, -EINVAL, "`%s` must be true or false", k);
				goto out;
			}
			if (bit == K_LEARN)
				req->learn = json_is_true(v);
			else if (bit == K_SHADOW)
				req->shadow = json_is_true(v);
			else
				req->asker = json_is_true(v);
		} else if (!json_is_string(v)) {
			fail(why, why_size, -EINVAL, "`%s` must be a string", k);
			goto out;
		}
		seen |= bit;
	}
	v = json_object_get(root, "op");
	for (int i = 0; v && i < GW_CTL_N; i++)
		if (!strcmp(json_string_value(v), ops[i].name))
			op = i;
	if (op < 0) {
		fail(why, why_size, -EINVAL, "unknown or missing op `%.32s`",
		     v ? json_string_value(v) : "");
		goto out;
	}
	req->op = (enum gw_ctl_op)op;
	if ((seen & ops[op].required) != ops[op].required) {
		fail(why, why_size, -EINVAL, "missing keys for op `%s`", ops[op].name);
		goto out;
	}
	if (seen & ~(ops[op].required | ops[op].optional)) {
		fail(why, why_size, -EINVAL, "keys op `%s` does not take", ops[op].name);
		goto out;
	}
	if (req->learn && req->shadow) {
		/* learn mode has no policy to shadow: its rules are "any name" already */
		fail(why, why_size, -EINVAL, "`learn` and `shadow` exclude each other%s", "");
		goto out;
	}
	if ((v = json_object_get(root, "id"))) {
		if (!token_ok(json_string_value(v), GW_RUN_ID_MAX)) {
			fail(why, why_size, -EINVAL, "bad run id%s", "");
			goto out;
		}
		strcpy(req->id, json_string_value(v));
	}
	if ((v = json_object_get(root, "if"))) {
		if (!token_ok(json_string_value(v), sizeof(req->ifname) - 1) ||
		    strchr(json_string_value(v), '/')) {
			fail(why, why_size, -EINVAL, "bad interface name%s", "");
			goto out;
		}
		strcpy(req->ifname, json_string_value(v));
	}
	{
		static const struct {
			const char *key;
			int family;
			size_t off;
		} addrs[] = {
		    {"host_v4", AF_INET, offsetof(struct gw_ctl_req, host4)},
		    {"sandbox_v4", AF_INET, offsetof(struct gw_ctl_req, sandbox4)},
		    {"host_v6", AF_INET6, offsetof(struct gw_ctl_req, host6)},
		    {"sandbox_v6", AF_INET6, offsetof(struct gw_ctl_req, sandbox6)},
		};

		for (size_t i = 0; i < WD_ARRAY_SIZE(addrs); i++) {
			struct gw_addr *a = (struct gw_addr *)((char *)req + addrs[i].off);

			v = json_object_get(root, addrs[i].key);
			if (v && addr_field(v, addrs[i].family, a)) {
				fail(why, why_size, -EINVAL, "`%s` is not an address of its family",
				     addrs[i].key);
				goto out;
			}
		}
	}
	if (op == GW_CTL_REGISTER && (seen & K_NETNS)) {
		if (strcmp(json_string_value(json_object_get(root, "netns")), "fd")) {
			fail(why, why_size, -EINVAL, "`netns` must be \"fd\"%s", "");
			goto out;
		}
		if (seen & (K_IF | K_HOST4 | K_SB4 | K_HOST6 | K_SB6)) {
			fail(why, why_size, -EINVAL,
			     "register with netns takes no interface or addresses (the gateway "
			     "assigns them)%s",
			     "");
			goto out;
		}
		req->netns = true;
		if (seen & K_STREAM) {
			if (strcmp(json_string_value(json_object_get(root, "stream")), "events")) {
				fail(why, why_size, -EINVAL, "`stream` must be \"events\"%s", "");
				goto out;
			}
			req->stream = true;
		}
	} else if (op == GW_CTL_REGISTER && (seen & K_STREAM)) {
		fail(why, why_size, -EINVAL,
		     "`stream` is for a register with netns (its connection holds the run)%s", "");
		goto out;
	} else if (op == GW_CTL_REGISTER && !(seen & K_IF)) {
		fail(why, why_size, -EINVAL, "missing keys for op `%s`", ops[op].name);
		goto out;
	} else if (op == GW_CTL_REGISTER) {
		bool v4 = req->host4.family, s4 = req->sandbox4.family;
		bool v6 = req->host6.family, s6 = req->sandbox6.family;

		if (v4 != s4 || v6 != s6 || (!v4 && !v6)) {
			fail(why, why_size, -EINVAL,
			     "register needs host_v4 with sandbox_v4 and/or host_v6 with "
			     "sandbox_v6%s",
			     "");
			goto out;
		}
	}
	if ((v = json_object_get(root, "pid"))) {
		unsigned long long pid;

		if (wd_parse_uint(json_string_value(v), INT_MAX, &pid) || pid < 2) {
			fail(why, why_size, -EINVAL, "`pid` must be a process id above 1%s", "");
			goto out;
		}
		req->pid = (pid_t)pid;
	}
	if ((v = json_object_get(root, "ask"))) {
		unsigned long long n;

		if (wd_parse_uint(json_string_value(v), UINT_MAX, &n) || !n) {
			fail(why, why_size, -EINVAL, "`ask` must be an ask's number%s", "");
			goto out;
		}
		req->ask = (unsigned)n;
	}
	if ((v = json_object_get(root, "verdict"))) {
		const char *s = json_string_value(v);

		if (strcmp(s, "allow") && strcmp(s, "deny")) {
			fail(why, why_size, -EINVAL, "`verdict` must be \"allow\" or \"deny\"%s",
			     "");
			goto out;
		}
		req->allow = !strcmp(s, "allow");
	}
	if ((v = json_object_get(root, "by"))) {
		const char *s = json_string_value(v);
		size_t n = strlen(s);
		bool ok = n && n < sizeof(req->by);

		for (size_t i = 0; ok && i < n; i++)
			ok = s[i] >= ' ' && s[i] <= '~' && s[i] != '"' && s[i] != '\\';
		if (!ok) {
			fail(why, why_size, -EINVAL,
			     "`by` must be printable text of 1 to 63 bytes%s", "");
			goto out;
		}
		strcpy(req->by, s);
	}
	if ((v = json_object_get(root, "policy_name"))) {
		if (!token_ok(json_string_value(v), sizeof(req->policy_name) - 1)) {
			fail(why, why_size, -EINVAL, "bad policy_name%s", "");
			goto out;
		}
		strcpy(req->policy_name, json_string_value(v));
	}
	if ((v = json_object_get(root, "policy"))) {
		size_t plen = json_string_length(v);

		if (plen > POLICY_MAX_BYTES) {
			fail(why, why_size, -E2BIG, "policy larger than %s", "1 MiB");
			ret = -E2BIG;
			goto out;
		}
		req->priv = malloc(plen + 1);
		if (!req->priv) {
			ret = -ENOMEM;
			goto out;
		}
		memcpy(req->priv, json_string_value(v), plen + 1);
		req->policy = req->priv;
		req->policy_len = plen;
	}
	if ((v = json_object_get(root, "calls")))
		req->calls = json_incref(v);
	ret = 0;
out:
	json_decref(root);
	if (ret)
		gw_ctl_req_clear(req);
	return ret;
}

void gw_ctl_req_clear(struct gw_ctl_req *req)
{
	free(req->priv);
	req->priv = NULL;
	req->policy = NULL;
	req->policy_len = 0;
	json_decref(req->calls);
	req->calls = NULL;
}
