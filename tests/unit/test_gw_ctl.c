/* test_gw_ctl.c - unit tests for the control request parser (gateway/ctl.c). */
#include "gateway/ctl.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static int parse(const char *s, struct gw_ctl_req *r, char *why)
{
	return gw_ctl_parse(s, strlen(s), r, why, 256);
}

static void test_register(void **state)
{
	struct gw_ctl_req r;
	char why[256];

	(void)state;
	assert_int_equal(
	    parse("{\"op\":\"register\",\"id\":\"run-1\",\"if\":\"wd-1\","
		  "\"host_v4\":\"10.213.0.1\",\"sandbox_v4\":\"10.213.0.2\","
		  "\"host_v6\":\"fd77:7764:6e00::1\",\"sandbox_v6\":\"fd77:7764:6e00::2\","
		  "\"policy\":\"version: 1\\n\",\"policy_name\":\"p.yaml\"}",
		  &r, why),
	    0);
	assert_int_equal(r.op, GW_CTL_REGISTER);
	assert_string_equal(r.id, "run-1");
	assert_string_equal(r.ifname, "wd-1");
	assert_int_equal(r.host4.family, AF_INET);
	assert_int_equal(r.sandbox6.family, AF_INET6);
	assert_int_equal(r.policy_len, 11);
	assert_memory_equal(r.policy, "version: 1\n", 11);
	assert_string_equal(r.policy_name, "p.yaml");
	gw_ctl_req_clear(&r);
	/* IPv4 only is fine */
	assert_int_equal(parse("{\"op\":\"register\",\"id\":\"r\",\"if\":\"wd-1\",\"host_v4\":"
			       "\"10.213.0.1\",\"sandbox_v4\":\"10.213.0.2\",\"policy\":\"\"}",
			       &r, why),
			 0);
	gw_ctl_req_clear(&r);
}

/* daemon mode: the namespace comes as a descriptor, the gateway assigns interface and addresses */
static void test_register_netns(void **state)
{
	struct gw_ctl_req r;
	char why[256] = "";

	(void)state;
	assert_int_equal(parse("{\"op\":\"register\",\"id\":\"r1\",\"netns\":\"fd\","
			       "\"policy\":\"version: 1\\n\",\"policy_name\":\"p.yaml\"}",
			       &r, why),
			 0);
	assert_true(r.netns);
	assert_string_equal(r.ifname, "");
	assert_int_equal(r.host4.family, 0);
	gw_ctl_req_clear(&r);
	assert_int_equal(parse("{\"op\":\"register\",\"id\":\"r1\",\"netns\":\"yes\","
			       "\"policy\":\"\"}",
			       &r, why),
			 -EINVAL);
	assert_non_null(strstr(why, "`netns` must be"));
	assert_int_equal(parse("{\"op\":\"register\",\"id\":\"r1\",\"netns\":\"fd\","
			       "\"if\":\"wd-1\",\"policy\":\"\"}",
			       &r, why),
			 -EINVAL);
	assert_non_null(strstr(why, "takes no interface"));
	assert_int_equal(parse("{\"op\":\"register\",\"id\":\"r1\",\"netns\":\"fd\","
			       "\"host_v4\":\"10.213.0.1\",\"policy\":\"\"}",
			       &r, why),
			 -EINVAL);
	/* neither an interface nor a namespace */
	assert_int_equal(parse("{\"op\":\"register\",\"id\":\"r1\",\"policy\":\"\"}", &r, why),
			 -EINVAL);
	assert_non_null(strstr(why, "missing keys"));
	/* other ops do not take it */
	assert_int_equal(parse("{\"op\":\"unregister\",\"id\":\"r1\",\"netns\":\"fd\"}", &r, why),
			 -EINVAL);
	/* the event stream: asked with "stream": "events", on a register with netns only; an
	 * old client that does not ask gets none */
	assert_false(r.stream);
	assert_int_equal(parse("{\"op\":\"register\",\"id\":\"r1\",\"netns\":\"fd\","
			       "\"stream\":\"events\",\"policy\":\"\"}",
			       &r, why),
			 0);
	assert_true(r.netns);
	assert_true(r.stream);
	gw_ctl_req_clear(&r);
	assert_int_equal(parse("{\"op\":\"register\",\"id\":\"r1\",\"netns\":\"fd\","
			       "\"stream\":\"all\",\"policy\":\"\"}",
			       &r, why),
			 -EINVAL);
	assert_non_null(strstr(why, "`stream` must be"));
	assert_int_equal(parse("{\"op\":\"register\",\"id\":\"r\",\"if\":\"wd-1\",\"host_v4\":"
			       "\"10.213.0.1\",\"sandbox_v4\":\"10.213.0.2\",\"stream\":\"events\","
			       "\"policy\":\"\"}",
			       &r, why),
			 -EINVAL);
	assert_non_null(strstr(why, "`stream` is for a register with netns"));
	assert_int_equal(parse("{\"op\":\"list\",\"stream\":\"events\"}", &r, why), -EINVAL);
	/* an event line sent by a client is no request: nothing a launcher sends is an event */
	assert_int_equal(parse("{\"event\":{\"run\":\"r1\",\"action\":\"net.connect\"}}", &r, why),
			 -EINVAL);
	assert_non_null(strstr(why, "unknown key `event`"));
}

static void test_simple_ops(void **state)
{
	struct gw_ctl_req r;
	char why[256];

	(void)state;
	assert_int_equal(parse("{\"op\":\"list\"}", &r, why), 0);
	assert_int_equal(r.op, GW_CTL_LIST);
	assert_int_equal(parse("{\"op\":\"stats\"}", &r, why), 0);
	assert_int_equal(parse("{\"op\":\"unregister\",\"id\":\"x\"}", &r, why), 0);
	assert_string_equal(r.id, "x");
	assert_int_equal(parse("{\"op\":\"replace\",\"id\":\"x\",\"policy\":\"v\"}", &r, why), 0);
	assert_int_equal(r.op, GW_CTL_REPLACE);
	gw_ctl_req_clear(&r);
	assert_string_equal(gw_ctl_op_name(GW_CTL_REPLACE), "replace");
	assert_int_equal(parse("{\"op\":\"cgroup_join\",\"id\":\"x\",\"pid\":\"4242\"}", &r, why),
			 0);
	assert_int_equal(r.op, GW_CTL_CGROUP_JOIN);
	assert_string_equal(r.id, "x");
	assert_int_equal(r.pid, 4242);
	assert_string_equal(gw_ctl_op_name(GW_CTL_CGROUP_JOIN), "cgroup_join");
}

static const struct {
	const char *json;
	const char *why;
} bad[] = {
    {"", "not JSON"},
    {"[1]", "expected a JSON object"},
    {"{\"op\":\"list\",\"op\":\"list\"}", "not JSON"}, /* duplicate key */
    {"{\"op\":\"lsit\"}", "unknown or missing op"},
    {"{\"id\":\"x\"}", "unknown or missing op"},
    {"{\"op\":\"list\",\"extra\":\"1\"}", "unknown key"},
    {"{\"op\":\"list\",\"id\":\"x\"}", "does not take"},
    {"{\"op\":1}", "must be a string"},
    {"{\"op\":\"unregister\"}", "missing keys"},
    {"{\"op\":\"unregister\",\"id\":\"a b\"}", "bad run id"},
    {"{\"op\":\"unregister\",\"id\":\"\"}", "bad run id"},
    {"{\"op\":\"cgroup_join\",\"id\":\"x\"}", "missing keys"},
    {"{\"op\":\"cgroup_join\",\"id\":\"x\",\"pid\":\"1\"}", "process id above 1"},
    {"{\"op\":\"cgroup_join\",\"id\":\"x\",\"pid\":\"-5\"}", "process id above 1"},
    {"{\"op\":\"cgroup_join\",\"id\":\"x\",\"pid\":\"12a\"}", "process id above 1"},
    {"{\"op\":\"cgroup_join\",\"id\":\"x\",\"pid\":\"99999999999\"}", "process id above 1"},
    {"{\"op\":\"list\",\"pid\":\"5\"}", "does not take"},
    {"{\"op\":\"register\",\"id\":\"r\",\"if\":\"wd-1\",\"policy\":\"\"}", "host_v4"},
    {"{\"op\":\"register\",\"id\":\"r\",\"if\":\"wd-1\",\"host_v4\":\"10.0.0.1\","
     "\"policy\":\"\"}",
     "host_v4"},
    {"{\"op\":\"register\",\"id\":\"r\",\"if\":\"wd-1\",\"host_v4\":\"fd00::1\","
     "\"sandbox_v4\":\"10.0.0.2\",\"policy\":\"\"}",
     "not an address of its family"},
    {"{\"op\":\"register\",\"id\":\"r\",\"if\":\"../x\",\"host_v4\":\"10.0.0.1\","
     "\"sandbox_v4\":\"10.0.0.2\",\"policy\":\"\"}",
     "bad interface"},
    {"{\"op\":\"register\",\"id\":\"r\",\"if\":\"abcdefghijklmnopq\",\"host_v4\":\"10.0.0.1\","
     "\"sandbox_v4\":\"10.0.0.2\",\"policy\":\"\"}",
     "bad interface"},
};

static void test_bad(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gw_ctl_req r;
		char why[256] = "";

		if (parse(bad[i].json, &r, why) != -EINVAL || !strstr(why, bad[i].why))
			fail_msg("`%s`: got `%s`, want `%s`", bad[i].json, why, bad[i].why);
	}
}

static void test_too_big(void **state)
{
	struct gw_ctl_req r;
	char why[256];
	size_t n = POLICY_MAX_BYTES + 100;
	char *s = malloc(n + 64);

	(void)state;
	assert_non_null(s);
	strcpy(s, "{\"op\":\"replace\",\"id\":\"x\",\"policy\":\"");
	{
		size_t pre = strlen(s);

		memset(s + pre, 'a', n);
		strcpy(s + pre + n, "\"}");
	}
	assert_int_equal(gw_ctl_parse(s, strlen(s), &r, why, sizeof(why)), -E2BIG);
	assert_int_equal(gw_ctl_parse(s, GW_CTL_MAX + 1, &r, why, sizeof(why)), -E2BIG);
	free(s);
}

/* learn mode: "learn" is a boolean of register (both forms), and `learned` takes an id */
static void test_learn(void **state)
{
	static const char *const refused[][2] = {
	    {"{\"op\":\"register\",\"id\":\"r\",\"netns\":\"fd\",\"learn\":\"true\","
	     "\"policy\":\"\"}",
	     "`learn` must be true or false"},
	    {"{\"op\":\"register\",\"id\":\"r\",\"netns\":\"fd\",\"learn\":1,\"policy\":\"\"}",
	     "`learn` must be true or false"},
	    {"{\"op\":\"replace\",\"id\":\"r\",\"learn\":true,\"policy\":\"\"}", "does not take"},
	    {"{\"op\":\"list\",\"learn\":true}", "does not take"},
	    {"{\"op\":\"learned\"}", "missing keys"},
	    {"{\"op\":\"learned\",\"id\":\"r\",\"policy\":\"\"}", "does not take"},
	    {"{\"op\":\"learned\",\"id\":\"a b\"}", "bad run id"},
	    /* shadow mode (issue 31 item 6): a boolean of register alone, never with learn */
	    {"{\"op\":\"register\",\"id\":\"r\",\"netns\":\"fd\",\"shadow\":\"yes\","
	     "\"policy\":\"\"}",
	     "`shadow` must be true or false"},
	    {"{\"op\":\"register\",\"id\":\"r\",\"netns\":\"fd\",\"shadow\":true,"
	     "\"learn\":true,\"policy\":\"\"}",
	     "exclude each other"},
	    {"{\"op\":\"replace\",\"id\":\"r\",\"shadow\":true,\"policy\":\"\"}", "does not take"},
	};
	struct gw_ctl_req r;
	char why[256] = "";

	(void)state;
	assert_int_equal(parse("{\"op\":\"register\",\"id\":\"r\",\"if\":\"wd-1\",\"host_v4\":"
			       "\"10.213.0.1\",\"sandbox_v4\":\"10.213.0.2\",\"policy\":\"\","
			       "\"learn\":true}",
			       &r, why),
			 0);
	assert_true(r.learn);
	gw_ctl_req_clear(&r);
	assert_int_equal(parse("{\"op\":\"register\",\"id\":\"r\",\"netns\":\"fd\","
			       "\"learn\":true,\"policy\":\"\"}",
			       &r, why),
			 0);
	assert_true(r.learn);
	assert_true(r.netns);
	gw_ctl_req_clear(&r);
	assert_int_equal(parse("{\"op\":\"register\",\"id\":\"r\",\"netns\":\"fd\","
			       "\"learn\":false,\"policy\":\"\"}",
			       &r, why),
			 0);
	assert_false(r.learn);
	gw_ctl_req_clear(&r);
	assert_int_equal(parse("{\"op\":\"register\",\"id\":\"r\",\"netns\":\"fd\","
			       "\"shadow\":true,\"policy\":\"\"}",
			       &r, why),
			 0);
	assert_true(r.shadow);
	assert_false(r.learn);
	gw_ctl_req_clear(&r);
	assert_int_equal(parse("{\"op\":\"learned\",\"id\":\"r1\"}", &r, why), 0);
	assert_int_equal(r.op, GW_CTL_LEARNED);
	assert_string_equal(r.id, "r1");
	assert_string_equal(gw_ctl_op_name(GW_CTL_LEARNED), "learned");
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		why[0] = '\0';
		if (parse(refused[i][0], &r, why) != -EINVAL || !strstr(why, refused[i][1]))
			fail_msg("`%s`: got `%s`, want `%s`", refused[i][0], why, refused[i][1]);
	}
}

/* network.ask: "asker" is a boolean of register; `asks` takes an id; `answer` an id, an ask's
 * number, a verdict and who answered */
static void test_ask_ops(void **state)
{
	static const char *const refused[][2] = {
	    {"{\"op\":\"register\",\"id\":\"r\",\"netns\":\"fd\",\"asker\":\"yes\","
	     "\"policy\":\"\"}",
	     "`asker` must be true or false"},
	    {"{\"op\":\"asks\"}", "missing keys"},
	    {"{\"op\":\"asks\",\"id\":\"r\",\"ask\":\"1\"}", "does not take"},
	    {"{\"op\":\"answer\",\"id\":\"r\",\"ask\":\"1\",\"verdict\":\"allow\"}",
	     "missing keys"},
	    {"{\"op\":\"answer\",\"id\":\"r\",\"ask\":\"0\",\"verdict\":\"allow\",\"by\":\"x\"}",
	     "`ask` must be"},
	    {"{\"op\":\"answer\",\"id\":\"r\",\"ask\":\"-1\",\"verdict\":\"allow\",\"by\":\"x\"}",
	     "`ask` must be"},
	    {"{\"op\":\"answer\",\"id\":\"r\",\"ask\":\"1\",\"verdict\":\"yes\",\"by\":\"x\"}",
	     "`verdict` must be"},
	    {"{\"op\":\"answer\",\"id\":\"r\",\"ask\":\"1\",\"verdict\":\"deny\",\"by\":\"\"}",
	     "`by` must be"},
	    {"{\"op\":\"answer\",\"id\":\"r\",\"ask\":\"1\",\"verdict\":\"deny\",\"by\":\"a\\nb\"}",
	     "`by` must be"},
	};
	struct gw_ctl_req r;
	char why[256] = "";

	(void)state;
	assert_int_equal(parse("{\"op\":\"register\",\"id\":\"r\",\"netns\":\"fd\","
			       "\"asker\":true,\"policy\":\"\"}",
			       &r, why),
			 0);
	assert_true(r.asker);
	gw_ctl_req_clear(&r);
	assert_int_equal(parse("{\"op\":\"asks\",\"id\":\"r1\"}", &r, why), 0);
	assert_int_equal(r.op, GW_CTL_ASKS);
	gw_ctl_req_clear(&r);
	assert_int_equal(parse("{\"op\":\"answer\",\"id\":\"r1\",\"ask\":\"7\",\"verdict\":"
			       "\"allow\",\"by\":\"a terminal (uid 0, pid 9)\"}",
			       &r, why),
			 0);
	assert_int_equal(r.op, GW_CTL_ANSWER);
	assert_int_equal(r.ask, 7);
	assert_true(r.allow);
	assert_string_equal(r.by, "a terminal (uid 0, pid 9)");
	gw_ctl_req_clear(&r);
	assert_string_equal(gw_ctl_op_name(GW_CTL_ANSWER), "answer");
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		why[0] = '\0';
		if (parse(refused[i][0], &r, why) != -EINVAL || !strstr(why, refused[i][1]))
			fail_msg("`%s`: got `%s`, want `%s`", refused[i][0], why, refused[i][1]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_register),   cmocka_unit_test(test_register_netns),
	    cmocka_unit_test(test_simple_ops), cmocka_unit_test(test_bad),
	    cmocka_unit_test(test_too_big),    cmocka_unit_test(test_learn),
	    cmocka_unit_test(test_ask_ops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
