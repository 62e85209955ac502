/* test_policy.c - the policy parser (every bad input with its exact position),
 * the matcher's tricky cases, rendering, and the gateway config loader. */
#include "conf/conf.h"
#include "flood.h"
#include "policy/policy.h"
#include "policy/policy_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "policy_diags.h"

/* ------------------------------------------------------------ helpers */

static struct wd_policy *parse_ok(const char *yaml, struct policy_diags *d)
{
	struct wd_policy *p = NULL;
	int ret;

	policy_diags_init(d);
	ret = policy_parse(yaml, strlen(yaml), "t.yaml", &p, d);
	if (ret)
		dump(d);
	assert_int_equal(ret, 0);
	assert_non_null(p);
	assert_int_equal(d->errors, 0);
	return p;
}

/* ------------------------------------------------------------ bad inputs */

struct bad_case {
	const char *name;
	const char *yaml;
	int line;
	int col;
	const char *text;
};

#define V "version: 1\n"
#define LONG63 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static const struct bad_case bad_cases[] = {
    {"empty file", "", 1, 1, "the file is empty"},
    {"only a comment", "# nothing\n", 1, 1, "the file is empty"},
    {"version 2", "version: 2\n", 1, 10, "version 2 is not supported; expected 1"},
    {"version missing", "command: [a]\n", 1, 1, "missing key `version`"},
    {"version word", "version: one\n", 1, 10, "expected a whole number"},
    {"version quoted", "version: \"1\"\n", 1, 10,
     "version: found `\"1\"`; expected a number, not a string (write it without quotes: `1`)"},
    {"pids quoted", V "limits:\n  pids: '64'\n", 3, 9, "expected a number, not a string"},
    {"version negative", "version: -1\n", 1, 10, "expected a whole number"},
    {"version empty", "version:\ncommand: [a]\n", 1, 9, "found an empty value"},
    {"misspelt filesystem", V "filesytem: {}\n", 2, 1, "did you mean `filesystem`?"},
    {"misspelt network", V "netwrk: {}\n", 2, 1, "did you mean `network`?"},
    {"shadow is a flag, never a key", V "shadow: true\n", 2, 1,
     "`shadow` is not a policy key: a shadow run is asked for with `warden run --shadow`"},
    {"misspelt limits", V "limit: {}\n", 2, 1, "did you mean `limits`?"},
    {"unknown key far", V "banana: 1\n", 2, 1, "expected one of: version, command"},
    {"duplicate version", V "version: 1\n", 2, 1, "duplicate key `version`"},
    {"root is a list", "- version\n", 1, 1, "expected a mapping"},
    {"root is a scalar", "hello\n", 1, 1, "expected a mapping"},
    {"command string", V "command: node\n", 2, 10, "expected a list"},
    {"command empty list", V "command: []\n", 2, 10, "found an empty list"},
    {"command empty item", V "command: [node, \"\"]\n", 2, 17, "expected a non-empty string"},
    {"command nested list", V "command: [[a]]\n", 2, 11, "found a sequence"},
    {"filesystem list", V "filesystem: [a]\n", 2, 13, "expected a mapping"},
    {"misspelt read", V "filesystem:\n  reed: [.]\n", 3, 3, "did you mean `read`?"},
    {"misspelt write", V "filesystem:\n  wirte: [.]\n", 3, 3, "did you mean `write`?"},
    {"read scalar", V "filesystem:\n  read: .\n", 3, 9, "expected a list"},
    {"read null", V "filesystem:\n  read: ~\n", 3, 9, "found an empty value; expected a list"},
    {"read item empty", V "filesystem:\n  read: [\"\"]\n", 3, 10, "non-empty string"},
    {"read item list", V "filesystem:\n  read: [[a]]\n", 3, 10, "found a list"},
    {"sensitive yes", V "filesystem:\n  read: [{path: a, sensitive: yes}]\n", 3, 31,
     "expected true or false"},
    {"grant without path", V "filesystem:\n  read: [{sensitive: true}]\n", 3, 10,
     "missing key `path`"},
    {"grant misspelt key", V "filesystem:\n  read: [{path: a, sensitve: true}]\n", 3, 20,
     "did you mean `sensitive`?"},
    {"grant duplicate path", V "filesystem:\n  write: [{path: a, path: b}]\n", 3, 21,
     "duplicate key `path`"},
    {"tilde user", V "filesystem:\n  read: [\"~bob/x\"]\n", 3, 10, "only `~` and `~/...`"},
    {"network list", V "network: [a.com]\n", 2, 10, "expected a mapping"},
    {"misspelt allow", V "network:\n  alow: []\n", 3, 3, "did you mean `allow`?"},
    {"allow mapping", V "network:\n  allow: {a: b}\n", 3, 10, "expected a list"},
    {"bare star", V "network:\n  allow: [\"*\"]\n", 3, 11, "whole leftmost label"},
    {"star inside label", V "network:\n  allow: [\"a*.b.com\"]\n", 3, 11, "whole leftmost label"},
    {"two stars", V "network:\n  allow: [\"*.*.b.com\"]\n", 3, 11, "whole leftmost label"},
    {"star in middle", V "network:\n  allow: [\"x.*.y.com\"]\n", 3, 11, "whole leftmost label"},
    {"star over tld", V "network:\n  allow: [\"*.com\"]\n", 3, 11, "whole top-level domain"},
    {"empty label", V "network:\n  allow: [evil..com]\n", 3, 11, "empty label"},
    {"leading dot", V "network:\n  allow: [.evil.com]\n", 3, 11, "empty label"},
    {"leading hyphen", V "network:\n  allow: [-a.com]\n", 3, 11, "starts or ends with a hyphen"},
    {"trailing hyphen", V "network:\n  allow: [a-.com]\n", 3, 11, "starts or ends with a hyphen"},
    {"underscore", V "network:\n  allow: [a_b.com]\n", 3, 11, "only letters, digits and hyphens"},
    {"label 64", V "network:\n  allow: [a" LONG63 ".com]\n", 3, 11, "longer than 63"},
    {"name 254", V "network:\n  allow: [" LONG63 "." LONG63 "." LONG63 "." LONG63 ".abc]\n", 3, 11,
     "longer than 253"},
    {"ipv4 literal", V "network:\n  allow: [1.2.3.4]\n", 3, 11, "is an IP address"},
    {"numeric tld", V "network:\n  allow: [a.123]\n", 3, 11, "all digits"},
    {"port zero", V "network:\n  allow: [\"a.com:0\"]\n", 3, 11, "expected a port from 1 to 65535"},
    {"port too big", V "network:\n  allow: [\"a.com:65536\"]\n", 3, 11, "from 1 to 65535"},
    {"url https", V "network:\n  allow: [\"https://api.github.com/\"]\n", 3, 11,
     "`https://api.github.com/`: expected a host name, not a URL; did you mean "
     "`api.github.com:443`?"},
    {"url http port path", V "network:\n  allow: [\"http://u@a.com:8080/x?y\"]\n", 3, 11,
     "did you mean `a.com:8080`?"},
    {"url plain http", V "network:\n  allow: [\"http://a.com\"]\n", 3, 11,
     "did you mean `a.com:80`?"},
    {"url in host key", V "network:\n  allow:\n    - {host: \"wss://a.com/s\", ports: [443]}\n", 4,
     14, "not a URL; did you mean `a.com:443`?"},
    {"url no host", V "network:\n  allow: [\"https:///x\"]\n", 3, 11,
     "expected a host name, not a URL"},
    {"port name", V "network:\n  allow: [\"a.com:http\"]\n", 3, 11, "has the port `http`"},
    {"port empty", V "network:\n  allow: [\"a.com:\"]\n", 3, 11, "has the port ``"},
    {"ipv6 literal", V "network:\n  allow: [\"::1\"]\n", 3, 11, "looks like an IPv6 address"},
    {"ipv6 bracket port", V "network:\n  allow: [\"[::1]:443\"]\n", 3, 11, "IPv6 address"},
    {"host ip in map", V "network:\n  allow:\n    - {host: 10.0.0.1, ports: [1]}\n", 4, 14,
     "is an IP address"},
    {"host and cidr", V "network:\n  allow:\n    - {host: a.com, cidr: 10.0.0.0/8, ports: [1]}\n",
     4, 21, "both `host` and `cidr`"},
    {"neither host nor cidr", V "network:\n  allow:\n    - {ports: [1]}\n", 4, 7,
     "neither `host` nor `cidr`"},
    {"cidr without ports", V "network:\n  allow:\n    - {cidr: 10.0.0.0/8}\n", 4, 7,
     "has no `ports`"},
    {"cidr host bits", V "network:\n  allow:\n    - {cidr: 10.0.0.1/8, ports: [1]}\n", 4, 14,
     "expected the network address `10.0.0.0/8`"},
    {"cidr v6 host bits", V "network:\n  allow:\n    - {cidr: \"fd00::1/64\", ports: [1]}\n", 4, 14,
     "`fd00::/64`"},
    {"cidr prefix 33", V "network:\n  allow:\n    - {cidr: 10.0.0.0/33, ports: [1]}\n", 4, 14,
     "expected an address range"},
    {"cidr garbage", V "network:\n  allow:\n    - {cidr: example.com, ports: [1]}\n", 4, 14,
     "expected an address range"},
    {"cidr everything", V "network:\n  allow:\n    - {cidr: 0.0.0.0/0, ports: [1]}\n", 4, 14,
     "covers every address"},
    {"ports empty", V "network:\n  allow:\n    - {host: a.com, ports: []}\n", 4, 28,
     "found an empty list"},
    {"port zero in list", V "network:\n  allow:\n    - {host: a.com, ports: [0]}\n", 4, 29,
     "out of range"},
    {"port 70000", V "network:\n  allow:\n    - {host: a.com, ports: [443, 70000]}\n", 4, 34,
     "`70000` is out of range; expected 1 to 65535"},
    {"ports scalar", V "network:\n  allow:\n    - {host: a.com, ports: 443}\n", 4, 28,
     "expected a list"},
    {"host with port", V "network:\n  allow:\n    - {host: \"a.com:443\", ports: [443]}\n", 4, 14,
     "without a port"},
    {"misspelt ports", V "network:\n  allow:\n    - {host: a.com, pots: [1]}\n", 4, 21,
     "did you mean `ports`?"},
    {"allow item list", V "network:\n  allow:\n    - [a.com]\n", 4, 7, "found a list"},
    {"env list", V "env: [PATH]\n", 2, 6, "expected a mapping"},
    {"env misspelt allow", V "env:\n  alow: [PATH]\n", 3, 3, "did you mean `allow`?"},
    {"env name digit", V "env:\n  allow: [PATH, 1BAD]\n", 3, 17, "not a valid variable name"},
    {"env name hyphen", V "env:\n  allow: [A-B]\n", 3, 11, "not a valid variable name"},
    {"env name equals", V "env:\n  allow: [\"A=B\"]\n", 3, 11, "not a valid variable name"},
    {"env set list", V "env:\n  set: [a]\n", 3, 8, "expected a mapping of NAME: value"},
    {"env set duplicate", V "env:\n  set:\n    A: x\n    A: y\n", 5, 5, "duplicate key `A`"},
    {"env set null", V "env:\n  set:\n    A:\n", 4, 7, "expected a string"},
    {"env set mapping", V "env:\n  set:\n    A: {b: c}\n", 4, 8, "expected a string"},
    {"env set bad name", V "env:\n  set:\n    1X: a\n", 4, 5, "not a valid variable name"},
    {"memory zero", V "limits:\n  memory_mb: 0\n", 3, 14, "out of range; expected 1 to 1048576"},
    {"memory huge", V "limits:\n  memory_mb: 99999999999999999999999\n", 3, 14, "out of range"},
    {"pids negative", V "limits:\n  pids: -1\n", 3, 9, "expected a whole number"},
    {"pids too many", V "limits:\n  pids: 4194305\n", 3, 9, "out of range"},
    {"cpu zero", V "limits:\n  cpu: 0\n", 3, 8, "out of range; expected 0.01 to 1024"},
    {"cpu too fine", V "limits:\n  cpu: 1.2345\n", 3, 8, "at most three decimals"},
    {"cpu word", V "limits:\n  cpu: lots\n", 3, 8, "expected a number of cores"},
    {"cpu too many", V "limits:\n  cpu: 2000\n", 3, 8, "out of range"},
    {"cpu trailing dot", V "limits:\n  cpu: 1.\n", 3, 8, "expected a number of cores"},
    {"timeout fraction", V "limits:\n  timeout_s: 1.5\n", 3, 14, "expected a whole number"},
    {"misspelt timeout", V "limits:\n  timeout: 5\n", 3, 3, "did you mean `timeout_s`?"},
    {"limits scalar", V "limits: 5\n", 2, 9, "expected a mapping"},
    {"upload zero", V "limits:\n  upload_kib: 0\n", 3, 15, "out of range; expected 1 to 16777216"},
    {"upload too big", V "limits:\n  upload_kib: 16777217\n", 3, 15, "out of range"},
    {"upload word", V "limits:\n  upload_kib: lots\n", 3, 15, "expected"},
    {"upload total negative", V "limits:\n  upload_total_kib: -1\n", 3, 21,
     "expected a whole number"},
    {"upload total mapping", V "limits:\n  upload_total_kib: {a: 1}\n", 3, 21, "expected"},
    {"misspelt upload", V "limits:\n  upload_kb: 5\n", 3, 3, "did you mean `upload_kib`?"},
    {"misspelt sandbox", V "sandbx: {}\n", 2, 1, "did you mean `sandbox`?"},
    {"sandbox list", V "sandbox: [userns]\n", 2, 10, "expected a mapping"},
    {"misspelt sandbox.allow", V "sandbox:\n  alow: [userns]\n", 3, 3, "did you mean `allow`?"},
    {"sandbox.allow scalar", V "sandbox:\n  allow: userns\n", 3, 10, "expected a list"},
    {"sandbox.backend unknown", V "sandbox:\n  backend: dockr\n", 3, 12,
     "sandbox.backend: `dockr` is not a sandbox backend; expected one of: linux (alias bwrap), "
     "docker, seatbelt, windows"},
    {"sandbox.backend list", V "sandbox:\n  backend: [linux]\n", 3, 12, "sandbox.backend"},
    {"sandbox.fallback scalar", V "sandbox:\n  fallback: docker\n", 3, 13, "expected a list"},
    {"sandbox.fallback unknown", V "sandbox:\n  fallback: [docker, vm]\n", 3, 22,
     "sandbox.fallback: `vm` is not a sandbox backend"},
    {"misspelt sandbox.backend", V "sandbox:\n  backnd: linux\n", 3, 3, "did you mean `backend`?"},
    {"sandbox.docker scalar", V "sandbox:\n  docker: busybox\n", 3, 11, "expected a mapping"},
    {"sandbox.docker.image empty", V "sandbox:\n  docker: {image: \"\"}\n", 3, 19,
     "sandbox.docker.image"},
    {"sandbox.docker.image an option", V "sandbox:\n  docker: {image: --privileged}\n", 3, 19,
     "sandbox.docker.image: expected an image reference"},
    {"sandbox.docker.image two words", V "sandbox:\n  docker: {image: \"a b\"}\n", 3, 19,
     "expected an image reference"},
    {"misspelt sandbox.docker.image", V "sandbox:\n  docker: {imag: x}\n", 3, 12,
     "did you mean `image`?"},
    {"sandbox.allow typo", V "sandbox:\n  allow: [usrns]\n", 3, 11,
     "`usrns` is not something the sandbox can allow; did you mean `userns`?"},
    {"sandbox.allow unknown", V "sandbox:\n  allow: [userns, everything]\n", 3, 19,
     "`everything` is not something the sandbox can allow; expected one of: userns"},
    {"sandbox.allow seccomp off", V "sandbox:\n  allow: [seccomp]\n", 3, 11,
     "expected one of: userns"},
    {"sandbox.allow empty item", V "sandbox:\n  allow: [\"\"]\n", 3, 11,
     "expected a non-empty string"},
    {"sandbox.allow nested", V "sandbox:\n  allow: [[userns]]\n", 3, 11,
     "expected a non-empty string"},
    {"mcp.allowlist unknown word", V "mcp:\n  allowlist: open\n", 3, 14,
     "`open` is not a mode; expected `approval`"},
    {"mcp misspelt allowlist", V "mcp:\n  allowlst: locked\n", 3, 3, "did you mean `allowlist`?"},
    {"mcp scalar", V "mcp: locked\n", 2, 6, "expected a mapping"},
    {"mcp.audit_log unknown word", V "mcp:\n  audit_log: everything\n", 3, 14,
     "`everything` is not a scope; expected `session`"},
    {"mcp.tools unknown key", V "mcp:\n  tools:\n    alow: [a]\n", 4, 5, "did you mean `allow`?"},
    {"mcp.tools.deny scalar", V "mcp:\n  tools:\n    deny: delete\n", 4, 11,
     "found `delete`; expected a list"},
    {"mcp.tools.allow space", V "mcp:\n  tools:\n    allow: [\"read file\"]\n", 4, 13,
     "`read file` has a character that is not printable ASCII"},
    {"mcp.tools.allow empty", V "mcp:\n  tools:\n    allow: [\"\"]\n", 4, 13,
     "expected a non-empty string"},
    {"anchor", "version: &v 1\n", 1, 10, "anchors and aliases are not allowed"},
    {"alias", V "command: *x\n", 2, 10, "found the alias `*x`"},
    {"tag", "version: !!int 1\n", 1, 10, "tags are not allowed"},
    {"local tag", V "command: !cmd [a]\n", 2, 10, "tags are not allowed"},
    {"second document", V "---\nversion: 1\n", 2, 1, "second YAML document"},
    {"unclosed flow", V "command: [a, b\n", 3, 1, "YAML syntax error"},
    {"bad indentation", V "  command: [a]\n", 2, 10, "YAML syntax error"},
    {"tab indentation", V "filesystem:\n\tread: [.]\n", 3, 1, "YAML syntax error"},
    {"NUL in value", V "command: [\"a\\0b\"]\n", 2, 11, "NUL character"},
    {"complex key", V "? [a]\n: b\n", 2, 3, "as a key"},
    {"null key", V "~: b\n", 2, 1, "as a key"},
    {"too deep", V "command: [[[[[[[[[[[[[[[[[[[[a]]]]]]]]]]]]]]]]]]]]\n", 2, 25,
     "expected at most 16 levels"},
    {"udp without ports", V "network:\n  allow:\n    - { host: stun.example.test, proto: udp }\n",
     4, 7, "a `proto: udp` rule has no `ports`; expected explicit ports, like ports: [3478]"},
    {"udp to a range",
     V "network:\n  allow:\n    - { cidr: 10.0.0.0/8, proto: udp, ports: [53] }\n", 4, 27,
     "proto: udp needs a host rule; udp to addresses is not supported yet"},
    {"proto unknown", V "network:\n  allow:\n    - { host: a.example, proto: sctp, ports: [1] }\n",
     4, 33, "proto: found `sctp`; expected `tcp` or `udp`"},
    {"udp in a tool's rules",
     V "mcp:\n  tools:\n    fetch:\n      network:\n        - { host: a.example, proto: udp, "
       "ports: [1] }\n",
     6, 11, "a tool's own rules allow connections only"},
    {"udp asked about", V "network:\n  ask:\n    - { host: a.example, proto: udp, ports: [1] }\n",
     4, 7, "network.ask: `a.example:1/udp`: a person is asked about connections"},
};

static void test_bad_case(void **state)
{
	const struct bad_case *c = *state;
	struct wd_policy *p = NULL;
	struct policy_diags d;
	int ret;

	policy_diags_init(&d);
	ret = policy_parse(c->yaml, strlen(c->yaml), "bad.yaml", &p, &d);
	if (!has_diag(&d, POLICY_DIAG_ERROR, c->line, c->col, c->text)) {
		print_message("case `%s`: expected %d:%d `%s`, got:\n", c->name, c->line, c->col,
			      c->text);
		dump(&d);
	}
	assert_int_equal(ret, -EINVAL);
	assert_null(p);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, c->line, c->col, c->text));
	policy_diags_free(&d);
}

/* ------------------------------------------------------------ whole files */

static void test_three_mistakes(void **state)
{
	static const char yaml[] = "version: 1\n"
				   "filesytem:\n"
				   "  read: [.]\n"
				   "network:\n"
				   "  allow:\n"
				   "    - \"*.com\"\n"
				   "limits:\n"
				   "  memory_mb: 0\n";
	struct wd_policy *p = NULL;
	struct policy_diags d;
	struct wd_buf b = WD_BUF_INIT;

	(void)state;
	policy_diags_init(&d);
	assert_int_equal(policy_parse(yaml, sizeof(yaml) - 1, "broken.yaml", &p, &d), -EINVAL);
	assert_int_equal(d.errors, 3);
	assert_int_equal(d.n, 3);
	policy_diags_sort(&d);
	assert_int_equal(policy_diag_format(&d, 0, &b), 0);
	assert_string_equal(wd_buf_cstr(&b), "broken.yaml:2:1: error: unknown key `filesytem` in "
					     "the top level; did you mean `filesystem`?");
	wd_buf_reset(&b);
	policy_diag_format(&d, 1, &b);
	assert_true(!strncmp(wd_buf_cstr(&b), "broken.yaml:6:7: error: ", 24));
	wd_buf_reset(&b);
	policy_diag_format(&d, 2, &b);
	assert_true(!strncmp(wd_buf_cstr(&b), "broken.yaml:8:14: error: ", 25));
	assert_int_equal(policy_diag_format(&d, 3, &b), -EINVAL);
	wd_buf_free(&b);
	policy_diags_free(&d);
}

static void test_broken_example(void **state)
{
	struct wd_policy *p = NULL;
	struct policy_diags d;

	(void)state;
	policy_diags_init(&d);
	assert_int_equal(policy_load(WD_SOURCE_DIR "/deploy/examples/broken.yaml", NULL, &p, &d),
			 -EINVAL);
	assert_int_equal(d.errors, 3);
	policy_diags_free(&d);
}

static void test_every_error_reported(void **state)
{
	static const char yaml[] = "version: 3\n"
				   "command: []\n"
				   "filesystem:\n"
				   "  read: [{path: a, sensitive: 1}]\n"
				   "network:\n"
				   "  allow: [\"*\", ok.example.com, \"b.com:99999\"]\n"
				   "env:\n"
				   "  allow: [9]\n"
				   "limits:\n"
				   "  pids: 0\n"
				   "  cpu: x\n"
				   "extra: 1\n";
	struct wd_policy *p = NULL;
	struct policy_diags d;

	(void)state;
	policy_diags_init(&d);
	assert_int_equal(policy_parse(yaml, sizeof(yaml) - 1, "many.yaml", &p, &d), -EINVAL);
	if (d.errors != 9)
		dump(&d);
	assert_int_equal(d.errors, 9);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 1, 10, "not supported"));
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 12, 1, "unknown key `extra`"));
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 6, 32, "99999"));
	policy_diags_free(&d);
}

/* names the SSRF guard refuses anyway are accepted with a warning that says so; others not */
static void test_ssrf_names_warn(void **state)
{
	static const char yaml[] = "version: 1\n"
				   "network:\n"
				   "  allow:\n"
				   "    - localhost:8080\n"
				   "    - api.localhost\n"
				   "    - metadata.google.internal\n"
				   "    - {host: instance-data, ports: [80]}\n"
				   "    - example.com\n"
				   "    - notlocalhost.com\n";
	struct wd_policy *p = NULL;
	struct policy_diags d;

	(void)state;
	policy_diags_init(&d);
	assert_int_equal(policy_parse(yaml, sizeof(yaml) - 1, "s.yaml", &p, &d), 0);
	if (d.warnings != 4)
		dump(&d);
	assert_int_equal(d.warnings, 4);
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 4, 7, "`localhost` names this machine"));
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 5, 7, "SSRF"));
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 6, 7, "the cloud metadata service"));
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 7, 14, "unless a `cidr` rule names them"));
	assert_int_equal(p->nrules, 6);
	policy_free(p);
	policy_diags_free(&d);
}

/* a glob in a grant is not one: a warning says so, and the path is kept as written */
static void test_glob_grant_warns(void **state)
{
	static const char yaml[] = "version: 1\nfilesystem:\n  read: [\"/srv/*.log\", /srv/a]\n";
	struct wd_policy *p = NULL;
	struct policy_diags d;

	(void)state;
	policy_diags_init(&d);
	assert_int_equal(policy_parse(yaml, sizeof(yaml) - 1, "g.yaml", &p, &d), 0);
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 3, 10, "globs are not supported"));
	assert_int_equal(d.warnings, 1);
	assert_int_equal(p->nread, 2);
	assert_string_equal(p->read[0].path, "/srv/*.log");
	policy_free(p);
	policy_diags_free(&d);
}

/* the parser's errors and the validator's come in one pass (a missing read grant is the
 * validator's; a bad port the parser's); a YAML syntax error stops before either */
static void test_load_one_pass(void **state)
{
	static const char yaml[] = "version: 1\n"
				   "filesystem:\n"
				   "  read: [/nonexistent-warden-test/a]\n"
				   "network:\n"
				   "  allow: [\"a.com:99999\"]\n";
	static const char broken[] = "version: 1\nfilesystem: [\n";
	static const char ok[] = "version: 1\nfilesystem:\n  read: [/usr]\n";
	struct wd_policy *p = NULL;
	struct policy_diags d;

	(void)state;
	policy_diags_init(&d);
	assert_int_equal(policy_load_buf(yaml, sizeof(yaml) - 1, "one.yaml", NULL, &p, &d),
			 -EINVAL);
	assert_null(p);
	if (d.errors != 2)
		dump(&d);
	assert_int_equal(d.errors, 2);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 5, 11, "99999"));
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 10, "does not exist"));
	policy_diags_free(&d);
	/* the positive control: the same file without the two mistakes loads */
	policy_diags_init(&d);
	assert_int_equal(policy_load_buf(ok, sizeof(ok) - 1, "ok.yaml", NULL, &p, &d), 0);
	assert_non_null(p);
	assert_true(p->validated);
	policy_free(p);
	p = NULL;
	policy_diags_free(&d);
	policy_diags_init(&d);
	assert_int_equal(policy_load_buf(broken, sizeof(broken) - 1, "b.yaml", NULL, &p, &d),
			 -EINVAL);
	assert_null(p);
	assert_true(d.errors >= 1);
	policy_diags_free(&d);
}

/* `policy check --json` says `valid` (one key, on success as on failure) */
static void test_json_valid_key(void **state)
{
	struct wd_policy *p = NULL;
	struct policy_diags d;
	struct wd_buf j = WD_BUF_INIT;

	(void)state;
	policy_diags_init(&d);
	assert_int_equal(policy_load_buf("version: 1\n", 11, "v.yaml", NULL, &p, &d), 0);
	assert_int_equal(policy_render_json(p, &j), 0);
	assert_non_null(strstr(wd_buf_cstr(&j), ",\"valid\":true,"));
	assert_null(strstr(wd_buf_cstr(&j), "validated"));
	wd_buf_free(&j);
	policy_free(p);
	policy_diags_free(&d);
}

static void test_too_large(void **state)
{
	size_t len = POLICY_MAX_BYTES + 1;
	char *buf = malloc(len);
	struct wd_policy *p = NULL;
	struct policy_diags d;

	(void)state;
	assert_non_null(buf);
	memset(buf, ' ', len);
	policy_diags_init(&d);
	assert_int_equal(policy_parse(buf, len, "big.yaml", &p, &d), -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 0, 0, "expected at most"));
	free(buf);
	policy_diags_free(&d);
}

static void test_many_errors_capped(void **state)
{
	struct wd_buf y = WD_BUF_INIT;
	struct wd_policy *p = NULL;
	struct policy_diags d;

	(void)state;
	wd_buf_puts(&y, "version: 1\nenv:\n  allow:\n");
	for (int i = 0; i < 300; i++)
		wd_buf_printf(&y, "    - \"%d\"\n", i);
	policy_diags_init(&d);
	assert_int_equal(policy_parse(y.data, y.len, "cap.yaml", &p, &d), -EINVAL);
	assert_int_equal(d.errors, 300);
	assert_int_equal(d.n, POLICY_MAX_DIAGS);
	assert_int_equal(d.dropped, 100);
	wd_buf_free(&y);
	policy_diags_free(&d);
}

/* ------------------------------------------------------------ good inputs */

static void test_full_policy(void **state)
{
	static const char yaml[] =
	    "version: 1\n"
	    "command: [\"/usr/bin/node\", \"server.js\"]\n"
	    "filesystem:\n"
	    "  read: [\".\", \"/etc/ssl/certs\", {path: \"~/.aws/config\", sensitive: true}]\n"
	    "  write: [\"./out\"]\n"
	    "network:\n"
	    "  allow:\n"
	    "    - API.GitHub.com.\n"
	    "    - \"*.npmjs.org:443\"\n"
	    "    - { host: db.internal, ports: [5432] }\n"
	    "    - { cidr: \"10.20.0.0/16\", ports: [8080] }\n"
	    "    - { cidr: \"fd00:1::/64\", ports: [443, 22, 443] }\n"
	    "    - xn--bcher-kva.example\n"
	    "env:\n"
	    "  allow: [PATH, LANG, NODE_OPTIONS]\n"
	    "  set: { NODE_ENV: production, EMPTY: \"\" }\n"
	    "limits:\n"
	    "  memory_mb: 512\n"
	    "  pids: 256\n"
	    "  cpu: 1.5\n"
	    "  timeout_s: 60\n";
	struct policy_diags d;
	struct wd_policy *p;

	(void)state;
	p = parse_ok(yaml, &d);
	assert_int_equal(p->version, 1);
	assert_int_equal(p->ncommand, 2);
	assert_string_equal(p->command[1], "server.js");
	assert_null(p->command[2]);
	assert_int_equal(p->nread, 3);
	assert_true(p->read[2].sensitive);
	assert_string_equal(p->read[2].path, "~/.aws/config");
	assert_int_equal(p->read[2].line, 4);
	assert_int_equal(p->nwrite, 1);
	assert_int_equal(p->nrules, 6);
	assert_int_equal(p->rules[0].kind, POLICY_RULE_HOST);
	assert_string_equal(p->rules[0].host, "api.github.com");
	assert_string_equal(p->rules[0].text, "api.github.com:80,443");
	assert_int_equal(p->rules[1].kind, POLICY_RULE_WILDCARD);
	assert_string_equal(p->rules[1].host, "npmjs.org");
	assert_string_equal(p->rules[1].text, "*.npmjs.org:443");
	assert_string_equal(p->rules[2].text, "db.internal:5432");
	assert_int_equal(p->rules[3].kind, POLICY_RULE_CIDR);
	assert_int_equal(p->rules[3].family, AF_INET);
	assert_string_equal(p->rules[3].text, "10.20.0.0/16:8080");
	assert_string_equal(p->rules[4].text, "fd00:1::/64:22,443");
	assert_string_equal(p->rules[5].host, "xn--bcher-kva.example");
	assert_int_equal(p->rules[4].line, 12);
	assert_int_equal(p->rules[4].col, 7);
	assert_int_equal(p->nenv_allow, 3);
	assert_int_equal(p->nenv_set, 2);
	assert_string_equal(p->env_set[1].name, "EMPTY");
	assert_string_equal(p->env_set[1].value, "");
	assert_int_equal(p->limits.memory_mb, 512);
	assert_int_equal(p->limits.pids, 256);
	assert_int_equal(p->limits.cpu_milli, 1500);
	assert_int_equal(p->limits.timeout_s, 60);
	/* the duplicated port 443 is a warning */
	assert_int_equal(d.warnings, 1);
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 12, 47, "listed twice"));
	policy_free(p);
	policy_diags_free(&d);
}

static void test_minimal(void **state)
{
	struct policy_diags d;
	struct wd_policy *p;
	struct wd_buf b = WD_BUF_INIT;

	(void)state;
	p = parse_ok("version: 1\n", &d);
	assert_null(p->command);
	assert_int_equal(p->nrules, 0);
	assert_false(policy_allows(p, "example.com", 443));
	assert_int_equal(policy_render_yaml(p, &b), 0);
	assert_string_equal(wd_buf_cstr(&b), "version: 1\n");
	policy_free(p);
	policy_diags_free(&d);
	wd_buf_free(&b);
}

static void test_cpu_forms(void **state)
{
	static const struct {
		const char *text;
		uint32_t milli;
	} forms[] = {{"1", 1000}, {"0.25", 250}, {"0.01", 10}, {"2.125", 2125}, {"1024", 1024000}};

	(void)state;
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		char yaml[64];
		struct policy_diags d;
		struct wd_policy *p;

		snprintf(yaml, sizeof(yaml), "version: 1\nlimits: {cpu: %s}\n", forms[i].text);
		p = parse_ok(yaml, &d);
		assert_int_equal(p->limits.cpu_milli, forms[i].milli);
		policy_free(p);
		policy_diags_free(&d);
	}
}

static void test_duplicate_rule_warns(void **state)
{
	struct policy_diags d;
	struct wd_policy *p;

	(void)state;
	p = parse_ok(
	    "version: 1\nnetwork:\n  allow: [a.com, \"A.COM.\", {host: a.com, ports: [443, "
	    "80]}]\n",
	    &d);
	assert_int_equal(d.warnings, 2);
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 3, 18, "repeats the rule at line 3"));
	policy_free(p);
	policy_diags_free(&d);
}

static void test_empty_lists_ok(void **state)
{
	struct policy_diags d;
	struct wd_policy *p;

	(void)state;
	p = parse_ok("version: 1\nfilesystem: {read: [], write: []}\nnetwork: {allow: []}\n"
		     "env: {allow: [], set: {}}\n",
		     &d);
	assert_int_equal(p->nread + p->nwrite + p->nrules + p->nenv_allow + p->nenv_set, 0);
	policy_free(p);
	policy_diags_free(&d);
}

static void test_sandbox_allow(void **state)
{
	struct wd_buf y = WD_BUF_INIT, j = WD_BUF_INIT;
	struct policy_diags d;
	struct wd_policy *p;

	(void)state;
	/* nothing loosened: no sandbox key rendered, an empty list in JSON */
	p = parse_ok("version: 1\nsandbox: {allow: []}\n", &d);
	assert_int_equal(p->sandbox_allow, 0);
	assert_int_equal(policy_render_yaml(p, &y), 0);
	assert_null(strstr(wd_buf_cstr(&y), "sandbox"));
	assert_int_equal(policy_render_json(p, &j), 0);
	assert_non_null(strstr(wd_buf_cstr(&j), ",\"sandbox\":{\"allow\":[]}}"));
	policy_free(p);
	policy_diags_free(&d);
	wd_buf_reset(&y);
	wd_buf_reset(&j);
	/* userns, listed twice: a warning; rendered once, and parsed back the same */
	p = parse_ok("version: 1\nsandbox:\n  allow: [userns, userns]\n", &d);
	assert_int_equal(p->sandbox_allow, POLICY_SANDBOX_USERNS);
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 3, 19, "`userns` is listed twice"));
	assert_int_equal(policy_render_yaml(p, &y), 0);
	assert_non_null(strstr(wd_buf_cstr(&y), "sandbox:\n  allow: [\"userns\"]\n"));
	assert_int_equal(policy_render_json(p, &j), 0);
	assert_non_null(strstr(wd_buf_cstr(&j), "\"sandbox\":{\"allow\":[\"userns\"]}"));
	policy_free(p);
	policy_diags_free(&d);
	p = parse_ok(wd_buf_cstr(&y), &d);
	assert_int_equal(p->sandbox_allow, POLICY_SANDBOX_USERNS);
	assert_string_equal(policy_sandbox_allow_name(POLICY_SANDBOX_USERNS), "userns");
	assert_null(policy_sandbox_allow_name(1u << 30));
	policy_free(p);
	policy_diags_free(&d);
	wd_buf_free(&y);
	wd_buf_free(&j);
}

/* limits.upload_kib and upload_total_kib: kept, rendered in YAML and JSON, parsed back the same */
static void test_upload_limits(void **state)
{
	struct wd_buf y = WD_BUF_INIT, j = WD_BUF_INIT;
	struct policy_diags d;
	struct wd_policy *p;

	(void)state;
	p = parse_ok("version: 1\n", &d);
	assert_int_equal(p->limits.upload_kib, 0);
	assert_int_equal(p->limits.upload_total_kib, 0);
	assert_int_equal(policy_render_json(p, &j), 0);
	assert_non_null(strstr(wd_buf_cstr(&j), "\"upload_kib\":null,\"upload_total_kib\":null"));
	policy_free(p);
	policy_diags_free(&d);
	wd_buf_reset(&j);
	p = parse_ok("version: 1\nlimits:\n  upload_kib: 64\n  upload_total_kib: 16777216\n", &d);
	assert_int_equal(p->limits.upload_kib, 64);
	assert_int_equal(p->limits.upload_total_kib, 16777216);
	assert_int_equal(policy_render_yaml(p, &y), 0);
	assert_non_null(
	    strstr(wd_buf_cstr(&y), "limits:\n  upload_kib: 64\n  upload_total_kib: 16777216\n"));
	assert_int_equal(policy_render_json(p, &j), 0);
	assert_non_null(strstr(wd_buf_cstr(&j), "\"upload_kib\":64,\"upload_total_kib\":16777216"));
	policy_free(p);
	policy_diags_free(&d);
	p = parse_ok(wd_buf_cstr(&y), &d);
	assert_int_equal(p->limits.upload_kib, 64);
	assert_int_equal(p->limits.upload_total_kib, 16777216);
	policy_free(p);
	policy_diags_free(&d);
	/* one without the other */
	p = parse_ok("version: 1\nlimits: {upload_total_kib: 1}\n", &d);
	assert_int_equal(p->limits.upload_kib, 0);
	assert_int_equal(p->limits.upload_total_kib, 1);
	policy_free(p);
	policy_diags_free(&d);
	wd_buf_free(&y);
	wd_buf_free(&j);
}

/* sandbox.docker.image: kept, rendered in YAML and JSON (quoted), and parsed back the same */
static void test_sandbox_docker_image(void **state)
{
	struct wd_buf y = WD_BUF_INIT, j = WD_BUF_INIT;
	struct policy_diags d;
	struct wd_policy *p;

	(void)state;
	p = parse_ok(
	    "version: 1\nsandbox:\n  backend: docker\n  docker: {image: \"reg.example/a:1\"}\n",
	    &d);
	assert_string_equal(p->docker_image, "reg.example/a:1");
	assert_int_equal(policy_render_yaml(p, &y), 0);
	assert_non_null(strstr(wd_buf_cstr(&y), "  docker:\n    image: \"reg.example/a:1\"\n"));
	assert_int_equal(policy_render_json(p, &j), 0);
	assert_non_null(strstr(wd_buf_cstr(&j), "\"docker\":{\"image\":\"reg.example/a:1\"}"));
	policy_free(p);
	policy_diags_free(&d);
	p = parse_ok(wd_buf_cstr(&y), &d);
	assert_string_equal(p->docker_image, "reg.example/a:1");
	policy_free(p);
	policy_diags_free(&d);
	/* none: NULL, nothing rendered */
	p = parse_ok("version: 1\n", &d);
	assert_null(p->docker_image);
	policy_free(p);
	policy_diags_free(&d);
	wd_buf_free(&y);
	wd_buf_free(&j);
}

/* mcp.allowlist: approval is the default, locked is kept through render and parse; the same
 * for mcp.audit_log's session and all */
/* network.ask: names a person is asked about; "*"; ask_timeout; rendered and parsed again;
 * merged (--ask over -p); kept under a ceiling */
static void test_network_ask(void **state)
{
	struct wd_buf y = WD_BUF_INIT;
	struct policy_diags d;
	struct wd_policy *p, *q, *f;

	(void)state;
	p = parse_ok("version: 1\nnetwork:\n  allow: [a.test]\n", &d);
	assert_int_equal(policy_ask_match(p, "b.test", 0), -ENOENT);
	assert_int_equal(policy_ask_timeout_s(p), POLICY_ASK_TIMEOUT_DEFAULT);
	policy_free(p);
	policy_diags_free(&d);
	p = parse_ok("version: 1\nnetwork:\n  allow: [a.test]\n  ask: [\"*.ask.test\", "
		     "\"one.test:8443\"]\n  ask_timeout: 5\n",
		     &d);
	assert_true(policy_ask_match(p, "x.ask.test", 0) >= 0);
	assert_true(policy_ask_match(p, "x.ask.test", 443) >= 0);
	assert_int_equal(policy_ask_match(p, "x.ask.test", 22), -ENOENT);
	assert_true(policy_ask_match(p, "one.test", 0) >= 0);
	assert_int_equal(policy_ask_match(p, "one.test", 443), -ENOENT);
	assert_int_equal(policy_ask_match(p, "other.test", 0), -ENOENT);
	/* an ask name is not allowed by it */
	assert_true(policy_match(p, "x.ask.test", 443) < 0);
	assert_int_equal(policy_ask_timeout_s(p), 5);
	assert_int_equal(policy_render_yaml(p, &y), 0);
	assert_non_null(strstr(wd_buf_cstr(&y), "  ask:\n    - { host: \"*.ask.test\""));
	assert_non_null(strstr(wd_buf_cstr(&y), "  ask_timeout: 5\n"));
	{
		struct wd_buf j = WD_BUF_INIT;

		assert_int_equal(policy_render_json(p, &j), 0);
		assert_non_null(strstr(wd_buf_cstr(&j),
				       ",\"ask\":[{\"host\":\"*.ask.test\",\"ports\":"
				       "[80,443],\"text\":\"*.ask.test:80,443\"}"));
		assert_non_null(strstr(wd_buf_cstr(&j), "\"ask_any\":false,\"ask_timeout\":5}"));
		wd_buf_free(&j);
	}
	policy_diags_free(&d);
	q = parse_ok(wd_buf_cstr(&y), &d);
	assert_true(policy_ask_match(q, "x.ask.test", 0) >= 0);
	assert_int_equal(policy_ask_timeout_s(q), 5);
	policy_free(q);
	policy_diags_free(&d);
	/* --ask over -p: the union */
	f = parse_ok("version: 1\nnetwork:\n  ask: [\"*\"]\n", &d);
	assert_int_equal(policy_ask_match(f, "any.test", 0), POLICY_ASK_ANY);
	policy_diags_free(&d);
	assert_int_equal(policy_merge(p, f, 0), 0);
	assert_int_equal(policy_ask_match(p, "any.test", 0), POLICY_ASK_ANY);
	assert_true(policy_ask_match(p, "x.ask.test", 0) >= 0);
	policy_free(f);
	/* a copy (what the ceiling's effective policy keeps) */
	q = calloc(1, sizeof(*q));
	assert_non_null(q);
	assert_int_equal(policy_ask_copy(q, p), 0);
	assert_true(policy_ask_match(q, "x.ask.test", 0) >= 0);
	assert_true(q->ask_any);
	assert_int_equal(policy_ask_timeout_s(q), 5);
	policy_free(q);
	policy_free(p);
	/* no addresses, a timeout in bounds */
	policy_diags_init(&d);
	assert_int_not_equal(policy_parse("version: 1\nnetwork:\n  ask: [{cidr: \"10.0.0.0/8\"}]\n",
					  50, "t.yaml", &p, &d),
			     0);
	policy_diags_free(&d);
	policy_diags_init(&d);
	assert_int_not_equal(
	    policy_parse("version: 1\nnetwork:\n  ask_timeout: 0\n", 37, "t.yaml", &p, &d), 0);
	policy_diags_free(&d);
	wd_buf_free(&y);
}

static void test_mcp_allowlist(void **state)
{
	struct wd_buf y = WD_BUF_INIT, j = WD_BUF_INIT;
	struct policy_diags d;
	struct wd_policy *p, *q;

	(void)state;
	p = parse_ok("version: 1\n", &d);
	assert_false(p->mcp_allowlist_locked);
	policy_free(p);
	policy_diags_free(&d);
	p = parse_ok("version: 1\nmcp:\n  allowlist: approval\n", &d);
	assert_false(p->mcp_allowlist_locked);
	assert_int_equal(policy_render_yaml(p, &y), 0);
	assert_null(strstr(wd_buf_cstr(&y), "mcp"));
	policy_free(p);
	policy_diags_free(&d);
	wd_buf_reset(&y);
	p = parse_ok("version: 1\nmcp: {allowlist: locked}\n", &d);
	assert_true(p->mcp_allowlist_locked);
	assert_int_equal(policy_render_yaml(p, &y), 0);
	assert_non_null(strstr(wd_buf_cstr(&y), "mcp:\n  allowlist: \"locked\"\n"));
	assert_int_equal(policy_render_json(p, &j), 0);
	assert_non_null(strstr(wd_buf_cstr(&j), ",\"mcp\":{\"allowlist\":\"locked\"}}"));
	policy_diags_free(&d);
	q = parse_ok(wd_buf_cstr(&y), &d);
	assert_true(q->mcp_allowlist_locked);
	assert_false(q->mcp_audit_log_all);
	policy_free(q);
	policy_free(p);
	policy_diags_free(&d);
	/* mcp.audit_log: session is the default, all is kept through render and parse */
	p = parse_ok("version: 1\nmcp:\n  audit_log: session\n", &d);
	assert_false(p->mcp_audit_log_all);
	policy_free(p);
	policy_diags_free(&d);
	wd_buf_reset(&y);
	wd_buf_reset(&j);
	p = parse_ok("version: 1\nmcp: {allowlist: locked, audit_log: all}\n", &d);
	assert_true(p->mcp_audit_log_all);
	assert_int_equal(policy_render_yaml(p, &y), 0);
	assert_non_null(
	    strstr(wd_buf_cstr(&y), "mcp:\n  allowlist: \"locked\"\n  audit_log: \"all\"\n"));
	assert_int_equal(policy_render_json(p, &j), 0);
	assert_non_null(
	    strstr(wd_buf_cstr(&j), ",\"mcp\":{\"allowlist\":\"locked\",\"audit_log\":\"all\"}}"));
	policy_diags_free(&d);
	q = parse_ok(wd_buf_cstr(&y), &d);
	assert_true(q->mcp_allowlist_locked && q->mcp_audit_log_all);
	policy_free(q);
	policy_free(p);
	policy_diags_free(&d);
	wd_buf_free(&y);
	wd_buf_free(&j);
}

static void test_render_roundtrip(void **state)
{
	static const char yaml[] =
	    "version: 1\n"
	    "command: [\"/bin/sh\", \"-c\", \"echo \\\"hi\\\"\\tthere\\n\"]\n"
	    "filesystem:\n"
	    "  read: [a, {path: b, sensitive: true}]\n"
	    "network:\n"
	    "  allow: [\"*.x.org:443\", {cidr: \"::/1\", ports: [1]}, z.example]\n"
	    "env: {allow: [null_, A], set: {X: \"q\\\"uote\"}}\n"
	    "limits: {cpu: 0.5, memory_mb: 7}\n";
	struct wd_buf a = WD_BUF_INIT, b = WD_BUF_INIT, j = WD_BUF_INIT;
	struct policy_diags d, d2;
	struct wd_policy *p, *q = NULL;

	(void)state;
	p = parse_ok(yaml, &d);
	assert_int_equal(policy_render_yaml(p, &a), 0);
	policy_diags_init(&d2);
	assert_int_equal(policy_parse(a.data, a.len, "r.yaml", &q, &d2), 0);
	assert_int_equal(policy_render_yaml(q, &b), 0);
	assert_string_equal(wd_buf_cstr(&a), wd_buf_cstr(&b));
	assert_non_null(strstr(wd_buf_cstr(&a), "    - { cidr: \"::/1\", ports: [1] }\n"));
	assert_non_null(strstr(wd_buf_cstr(&a), "  cpu: 0.5\n"));
	assert_int_equal(policy_render_json(p, &j), 0);
	assert_non_null(strstr(wd_buf_cstr(&j), "\"echo \\\"hi\\\"\\tthere\\n\""));
	assert_non_null(strstr(wd_buf_cstr(&j), "{\"kind\":\"wildcard\",\"host\":\"*.x.org\","
						"\"ports\":[443],\"text\":\"*.x.org:443\""));
	assert_non_null(strstr(wd_buf_cstr(&j), "\"cpu\":0.5"));
	assert_non_null(strstr(wd_buf_cstr(&j), "\"pids\":null"));
	policy_free(p);
	policy_free(q);
	policy_diags_free(&d);
	policy_diags_free(&d2);
	wd_buf_free(&a);
	wd_buf_free(&b);
	wd_buf_free(&j);
}

/* ------------------------------------------------------------ proto: udp */

/* a udp rule allows datagrams to its name and ports only, never a TCP connection; a TCP rule
 * never allows udp; the DNS front answers both names; the rule renders and reparses as it was */
static void test_udp_rules(void **state)
{
	struct wd_buf y = WD_BUF_INIT, j = WD_BUF_INIT;
	struct policy_diags d, d2;
	struct wd_policy *p, *q = NULL;

	(void)state;
	p = parse_ok("version: 1\n"
		     "network:\n"
		     "  allow:\n"
		     "    - { host: stun.example.test, proto: udp, ports: [3478, 3479] }\n" /* 0 */
		     "    - { host: \"*.quic.example\", proto: udp, ports: [443] }\n"	    /* 1 */
		     "    - { host: web.example, proto: tcp, ports: [443] }\n"		    /* 2 */
		     "    - { host: stun.example.test, ports: [3478] }\n",		    /* 3 */
		     &d);
	assert_int_equal(p->rules[0].proto, POLICY_PROTO_UDP);
	assert_int_equal(p->rules[2].proto, POLICY_PROTO_TCP);
	assert_string_equal(p->rules[0].text, "stun.example.test:3478,3479/udp");
	assert_string_equal(p->rules[3].text, "stun.example.test:3478");
	assert_int_equal(policy_match_proto(p, "stun.example.test", 3479, POLICY_PROTO_UDP), 0);
	assert_int_equal(policy_match_proto(p, "stun.example.test", 3478, POLICY_PROTO_UDP), 0);
	assert_int_equal(policy_match(p, "stun.example.test", 3478), 3);
	assert_int_equal(policy_match(p, "stun.example.test", 3479), -ENOENT);
	assert_int_equal(policy_match_proto(p, "stun.example.test", 80, POLICY_PROTO_UDP), -ENOENT);
	assert_int_equal(policy_match_proto(p, "a.quic.example", 443, POLICY_PROTO_UDP), 1);
	assert_int_equal(policy_match(p, "a.quic.example", 443), -ENOENT);
	assert_int_equal(policy_match_proto(p, "web.example", 443, POLICY_PROTO_UDP), -ENOENT);
	assert_int_equal(policy_match(p, "web.example", 443), 2);
	assert_int_equal(policy_match_proto(p, "10.0.0.1", 443, POLICY_PROTO_UDP), -ENOENT);
	assert_int_equal(policy_match_name(p, "a.quic.example"), 1);
	assert_int_equal(policy_match_name(p, "other.example"), -ENOENT);
	assert_int_equal(policy_render_yaml(p, &y), 0);
	assert_non_null(strstr(wd_buf_cstr(&y), "    - { host: \"stun.example.test\", ports: "
						"[3478, 3479], proto: udp }\n"));
	policy_diags_init(&d2);
	assert_int_equal(policy_parse(y.data, y.len, "r.yaml", &q, &d2), 0);
	assert_int_equal(q->rules[1].proto, POLICY_PROTO_UDP);
	assert_int_equal(q->rules[3].proto, POLICY_PROTO_TCP);
	assert_int_equal(policy_render_json(p, &j), 0);
	assert_non_null(strstr(wd_buf_cstr(&j), "\"text\":\"*.quic.example:443/udp\","
						"\"proto\":\"udp\""));
	assert_non_null(strstr(wd_buf_cstr(&j), "\"text\":\"web.example:443\",\"proto\":\"tcp\""));
	policy_free(p);
	policy_free(q);
	policy_diags_free(&d);
	policy_diags_free(&d2);
	wd_buf_free(&y);
	wd_buf_free(&j);
}

/* ------------------------------------------------------------ matcher */

static struct wd_policy *matcher_policy(struct policy_diags *d)
{
	return parse_ok("version: 1\n"
			"network:\n"
			"  allow:\n"
			"    - github.com\n"					   /* 0 */
			"    - \"*.github.com:443\"\n"				   /* 1 */
			"    - { host: db.internal, ports: [5432] }\n"		   /* 2 */
			"    - { cidr: 10.20.0.0/16, ports: [8080] }\n"		   /* 3 */
			"    - { cidr: \"fd00:1::/64\", ports: [22] }\n"	   /* 4 */
			"    - { host: \"*.b.github.com\", ports: [8443, 443] }\n" /* 5 */
			"    - { host: github.com, ports: [22] }\n",		   /* 6 */
			d);
}

static void test_match_exact(void **state)
{
	struct policy_diags d;
	struct wd_policy *p = matcher_policy(&d);

	(void)state;
	assert_int_equal(policy_match(p, "github.com", 443), 0);
	assert_int_equal(policy_match(p, "github.com", 80), 0);
	assert_int_equal(policy_match(p, "github.com", 22), 6);
	assert_int_equal(policy_match(p, "GitHub.COM.", 443), 0);
	assert_int_equal(policy_match(p, "github.com", 8080), -ENOENT);
	assert_false(policy_allows(p, "evil-github.com", 443));
	assert_false(policy_allows(p, "githubXcom", 443));
	assert_false(policy_allows(p, "github.co", 443));
	assert_false(policy_allows(p, "github.com..", 443));
	assert_int_equal(policy_match(p, "db.internal", 5432), 2);
	assert_false(policy_allows(p, "db.internal", 443));
	policy_free(p);
	policy_diags_free(&d);
}

static void test_match_wildcard(void **state)
{
	struct policy_diags d;
	struct wd_policy *p = matcher_policy(&d);

	(void)state;
	assert_int_equal(policy_match(p, "a.github.com", 443), 1);
	assert_int_equal(policy_match(p, "x.y.z.github.com", 443), 1); /* any depth */
	assert_int_equal(policy_match(p, "a.b.github.com", 8443), 5);
	assert_int_equal(policy_match(p, "a.b.github.com", 443), 1);	  /* first rule wins */
	assert_int_equal(policy_match(p, "b.github.com", 8443), -ENOENT); /* apex of rule 5 */
	assert_int_equal(policy_match(p, "a.github.com", 80), -ENOENT);
	assert_false(policy_allows(p, "github.com.evil.com", 443));
	assert_false(policy_allows(p, "agithub.com", 443));
	assert_false(policy_allows(p, "*.github.com", 443)); /* input is not a valid name */
	assert_false(policy_allows(p, ".github.com", 443));
	assert_true(policy_allows(p, "A.GITHUB.COM.", 443));
	policy_free(p);
	policy_diags_free(&d);
}

static void test_match_bad_input(void **state)
{
	struct policy_diags d;
	struct wd_policy *p = matcher_policy(&d);
	char longname[300];

	(void)state;
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_false(policy_allows(p, "", 443));
	assert_false(policy_allows(p, ".", 443));
	assert_false(policy_allows(p, NULL, 443));
	assert_false(policy_allows(NULL, "github.com", 443));
	assert_false(policy_allows(p, "git hub.com", 443));
	assert_false(policy_allows(p, "github.com\n", 443));
	assert_false(policy_allows(p, longname, 443));
	assert_false(policy_allows(p, "a.github.com:443", 443));
	policy_free(p);
	policy_diags_free(&d);
}

static void test_match_addr(void **state)
{
	struct policy_diags d;
	struct wd_policy *p = matcher_policy(&d);
	struct in_addr a4;
	struct in6_addr a6;

	(void)state;
	inet_pton(AF_INET, "10.20.255.1", &a4);
	assert_int_equal(policy_match_addr(p, AF_INET, &a4, 8080), 3);
	assert_false(policy_allows_addr(p, AF_INET, &a4, 80));
	inet_pton(AF_INET, "10.21.0.1", &a4);
	assert_false(policy_allows_addr(p, AF_INET, &a4, 8080));
	inet_pton(AF_INET6, "fd00:1::abcd", &a6);
	assert_int_equal(policy_match_addr(p, AF_INET6, &a6, 22), 4);
	inet_pton(AF_INET6, "fd00:2::abcd", &a6);
	assert_false(policy_allows_addr(p, AF_INET6, &a6, 22));
	assert_false(policy_allows_addr(p, AF_UNIX, &a6, 22));
	/* literals given as host names go to the cidr rules */
	assert_int_equal(policy_match(p, "10.20.0.9", 8080), 3);
	assert_int_equal(policy_match(p, "[fd00:1::1]", 22), 4);
	assert_false(policy_allows(p, "10.20.0.9", 443));
	policy_free(p);
	policy_diags_free(&d);
}

static void test_match_many_rules(void **state)
{
	struct wd_buf y = WD_BUF_INIT;
	struct policy_diags d;
	struct wd_policy *p;
	char name[64];

	(void)state;
	wd_buf_puts(&y, "version: 1\nnetwork:\n  allow:\n");
	for (int i = 0; i < 500; i++)
		wd_buf_printf(&y, "    - \"h%d.example.com:%d\"\n    - \"*.w%d.example.org\"\n", i,
			      1000 + i, i);
	p = parse_ok(y.data, &d);
	assert_int_equal(p->nrules, 1000);
	for (int i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "h%d.example.com", i);
		assert_int_equal(policy_match(p, name, (uint16_t)(1000 + i)), 2 * i);
		assert_false(policy_allows(p, name, (uint16_t)(1001 + i)));
		snprintf(name, sizeof(name), "deep.x.w%d.example.org", i);
		assert_int_equal(policy_match(p, name, 443), 2 * i + 1);
		snprintf(name, sizeof(name), "w%d.example.org", i);
		assert_false(policy_allows(p, name, 443));
	}
	policy_free(p);
	policy_diags_free(&d);
	wd_buf_free(&y);
}

/*
 * 1,000 exact and 1,000 wildcard rules whose names all fell in one home slot of the former
 * FNV-1a tables (4,096 slots for 2,000 rules): there each lookup walked the whole cluster.
 * Under the keyed hash, looking every name up (exact, and one level below its wildcard)
 * costs a few probes per table lookup.
 */
static void test_match_fnv_flood(void **state)
{
	enum { N = 1000, SLOTS = 4096 };
	char(*names)[32] = calloc(N, sizeof(*names));
	struct wd_buf y = WD_BUF_INIT;
	struct policy_diags d;
	struct wd_policy *p;
	uint64_t before, lookups = 0;
	char name[64];

	(void)state;
	assert_non_null(names);
	flood_names(names, N, 0, SLOTS - 1);
	wd_buf_puts(&y, "version: 1\nnetwork:\n  allow:\n");
	for (size_t i = 0; i < N; i++)
		wd_buf_printf(&y, "    - \"%s\"\n    - \"*.%s\"\n", names[i], names[i]);
	p = parse_ok(y.data, &d);
	assert_int_equal(p->nrules, 2 * N);
	before = p->matcher->exact.probes + p->matcher->wild.probes;
	for (size_t i = 0; i < N; i++) {
		/* the name itself: the exact table, then "flood.test" and "test" as wildcards */
		assert_int_equal(policy_match(p, names[i], 443), (int)(2 * i));
		snprintf(name, sizeof(name), "a.%s", names[i]);
		/* one below: the exact table, then the name and its two suffixes as wildcards */
		assert_int_equal(policy_match(p, name, 443), (int)(2 * i + 1));
		lookups += 3 + 4;
	}
	/* linear probing at load <= 1/2: ~1.5 probes a hit, ~2.5 a miss; allow 4 */
	assert_true(p->matcher->exact.probes + p->matcher->wild.probes - before <= 4 * lookups);
	policy_free(p);
	policy_diags_free(&d);
	wd_buf_free(&y);
	free(names);
}

/* ------------------------------------------------------------ gateway config */

static int gw(const char *yaml, struct wd_gwconf *c, struct policy_diags *d)
{
	policy_diags_init(d);
	return conf_parse(yaml, strlen(yaml), "gw.yaml", c, d);
}

static void test_gw_defaults(void **state)
{
	struct wd_gwconf c;
	struct policy_diags d;

	(void)state;
	assert_int_equal(gw("version: 1\n", &c, &d), 0);
	assert_int_equal(c.port_transparent, 15001);
	assert_int_equal(c.port_dns, 15053);
	assert_int_equal(c.port_proxy, 15080);
	assert_string_equal(c.nft_table, "warden");
	assert_string_equal(c.if_prefix, "wd-");
	assert_int_equal(c.nflog_group, 7000);
	assert_string_equal(c.pool_v4, "10.213.0.0/16");
	assert_string_equal(c.pool_v6, "fd77:7764:6e00::/48");
	assert_string_equal(c.synth_v4, "100.96.0.0/12");
	assert_string_equal(c.synth_v6, "fd77:7764:5300::/48");
	assert_string_equal(c.audit_path, "");
	assert_string_equal(c.user, "nobody");
	assert_int_equal(c.nresolvers, 0);
	assert_string_equal(c.control_path, "/run/warden/gateway.sock");
	assert_string_equal(c.listen_v4, "0.0.0.0");
	assert_string_equal(c.listen_v6, "::");
	assert_int_equal(c.max_conns, 4096);
	assert_int_equal(c.max_conns_per_run, 1024);
	assert_int_equal(c.peek_timeout_ms, 5000);
	assert_int_equal(c.connect_timeout_ms, 5000);
	assert_int_equal(c.idle_timeout_s, 300);
	assert_int_equal(c.dns_ttl_floor_s, 5);
	assert_int_equal(c.dns_ttl_ceiling_s, 300);
	policy_diags_free(&d);
}

static void test_gw_gateway_values(void **state)
{
	struct wd_gwconf c, c2;
	struct policy_diags d;
	struct wd_buf b = WD_BUF_INIT;

	(void)state;
	assert_int_equal(
	    gw("version: 1\nresolvers: [203.0.113.2, \"203.0.113.3:5353\", "
	       "\"[2001:db8::2]:53\", \"2001:db8::3\"]\n"
	       "control: {path: /tmp/gw.sock}\n"
	       "listen: {v4: 127.0.0.1, v6: \"::1\"}\n"
	       "limits: {connections: 10, connections_per_run: 5, peek_timeout_ms: 100,"
	       " connect_timeout_ms: 200, idle_timeout_s: 7, dns_ttl_floor_s: 0,"
	       " dns_ttl_ceiling_s: 9}\n",
	       &c, &d),
	    0);
	assert_int_equal(c.nresolvers, 4);
	assert_string_equal(c.resolvers[1], "203.0.113.3:5353");
	assert_string_equal(c.resolvers[2], "[2001:db8::2]:53");
	assert_string_equal(c.control_path, "/tmp/gw.sock");
	assert_string_equal(c.listen_v6, "::1");
	assert_int_equal(c.max_conns_per_run, 5);
	assert_int_equal(c.peek_timeout_ms, 100);
	assert_int_equal(c.dns_ttl_floor_s, 0);
	assert_int_equal(c.dns_ttl_ceiling_s, 9);
	assert_int_equal(conf_render_yaml(&c, &b), 0);
	policy_diags_free(&d);
	assert_int_equal(gw(b.data, &c2, &d), 0);
	assert_memory_equal(&c, &c2, sizeof(c));
	wd_buf_reset(&b);
	/* one family off */
	policy_diags_free(&d);
	assert_int_equal(gw("version: 1\nlisten: {v4: 10.213.0.1, v6: \"\"}\n", &c, &d), 0);
	assert_string_equal(c.listen_v4, "10.213.0.1");
	assert_string_equal(c.listen_v6, "");
	assert_int_equal(conf_render_yaml(&c, &b), 0);
	policy_diags_free(&d);
	assert_int_equal(gw(b.data, &c2, &d), 0);
	assert_memory_equal(&c, &c2, sizeof(c));
	/* audit.key: an absolute path, rendered back; a relative one refused */
	wd_buf_reset(&b);
	policy_diags_free(&d);
	assert_int_equal(gw("version: 1\naudit: {key: /var/lib/warden/k.pem}\n", &c, &d), 0);
	assert_string_equal(c.audit_key, "/var/lib/warden/k.pem");
	assert_int_equal(conf_render_yaml(&c, &b), 0);
	policy_diags_free(&d);
	assert_int_equal(gw(b.data, &c2, &d), 0);
	assert_memory_equal(&c, &c2, sizeof(c));
	policy_diags_free(&d);
	assert_int_not_equal(gw("version: 1\naudit: {key: k.pem}\n", &c, &d), 0);
	policy_diags_free(&d);
	wd_buf_free(&b);
}

static void test_gw_example(void **state)
{
	struct wd_gwconf c, c2;
	struct policy_diags d;
	struct wd_buf b = WD_BUF_INIT;

	(void)state;
	policy_diags_init(&d);
	assert_int_equal(conf_load(WD_SOURCE_DIR "/deploy/examples/gateway.yaml", &c, &d), 0);
	assert_string_equal(c.audit_path, "/var/log/warden/audit.jsonl");
	assert_int_equal(conf_render_yaml(&c, &b), 0);
	policy_diags_free(&d);
	assert_int_equal(gw(b.data, &c2, &d), 0);
	assert_memory_equal(&c, &c2, sizeof(c));
	policy_diags_free(&d);
	wd_buf_free(&b);
}

static void test_gw_values(void **state)
{
	struct wd_gwconf c;
	struct policy_diags d;

	(void)state;
	assert_int_equal(gw("version: 1\nports: {transparent: 1, dns: 2, proxy: 3}\n"
			    "nft: {table: wd_2, interface_prefix: x-, nflog_group: 0,\n"
			    "      conntrack_per_run: 100, conntrack_new_per_s: 7}\n"
			    "pools: {runs_v4: 192.168.0.0/20, synthetic_v6: \"fd00:9::/64\"}\n"
			    "user: _warden\n",
			    &c, &d),
			 0);
	assert_int_equal(c.port_proxy, 3);
	assert_string_equal(c.nft_table, "wd_2");
	assert_string_equal(c.if_prefix, "x-");
	assert_int_equal(c.nflog_group, 0);
	assert_int_equal(c.nft_conns_per_run, 100);
	assert_int_equal(c.nft_new_per_s, 7);
	assert_string_equal(c.pool_v4, "192.168.0.0/20");
	assert_string_equal(c.synth_v6, "fd00:9::/64");
	assert_string_equal(c.user, "_warden");
	policy_diags_free(&d);
}

static const struct bad_case gw_bad_cases[] = {
    {"gw empty", "", 1, 1, "the file is empty"},
    {"gw no version", "user: a\n", 1, 1, "missing key `version`"},
    {"gw version 2", "version: 2\n", 1, 10, "not supported"},
    {"gw misspelt ports", V "prots: {}\n", 2, 1, "did you mean `ports`?"},
    {"gw misspelt dns", V "ports: {dsn: 53}\n", 2, 9, "did you mean `dns`?"},
    {"gw port zero", V "ports: {dns: 0}\n", 2, 14, "out of range; expected 1 to 65535"},
    {"gw port word", V "ports:\n  proxy: http\n", 3, 10, "expected a whole number"},
    {"gw ports clash", V "ports:\n  dns: 15001\n", 3, 8, "are both 15001; expected distinct"},
    {"gw table upper", V "nft: {table: Warden}\n", 2, 14, "has the character `W`"},
    {"gw table long", V "nft: {table: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa}\n", 2, 14,
     "expected at most 31"},
    {"gw prefix long", V "nft: {interface_prefix: abcdefgh}\n", 2, 25, "expected at most 7"},
    {"gw nflog big", V "nft: {nflog_group: 70000}\n", 2, 20, "out of range"},
    {"gw conntrack small", V "nft: {conntrack_per_run: 15}\n", 2, 26, "out of range"},
    {"gw conntrack rate 0", V "nft: {conntrack_new_per_s: 0}\n", 2, 28, "out of range"},
    {"gw misspelt table", V "nft: {tabel: x}\n", 2, 7, "did you mean `table`?"},
    {"gw pool host bits", V "pools: {runs_v4: 10.213.0.1/16}\n", 2, 18,
     "expected the network address `10.213.0.0/16`"},
    {"gw pool family", V "pools: {runs_v4: \"fd00::/48\"}\n", 2, 18, "expected an IPv4 range"},
    {"gw pool no prefix", V "pools: {runs_v6: \"fd00::\"}\n", 2, 18, "expected an IPv6 range"},
    {"gw pool too small", V "pools: {synthetic_v4: 10.0.0.0/30}\n", 2, 23, "expected /8 to /24"},
    {"gw pools overlap", V "pools: {runs_v4: 100.96.0.0/16}\n", 2, 18, "overlap"},
    {"gw audit relative", V "audit: {path: log.jsonl}\n", 2, 15, "expected an absolute path"},
    {"gw audit list", V "audit: [a]\n", 2, 8, "expected a mapping"},
    {"gw user bad", V "user: \"a b\"\n", 2, 7, "has the character ` `"},
    {"gw user dash", V "user: -x\n", 2, 7, "starts with `-`"},
    {"gw anchor", V "user: &u x\n", 2, 7, "anchors and aliases"},
    {"gw resolver name", V "resolvers: [dns.example]\n", 2, 13, "expected an IP address"},
    {"gw resolver port", V "resolvers: [\"192.0.2.1:0\"]\n", 2, 13, "expected an IP address"},
    {"gw resolver v6 port", V "resolvers: [\"[::1]53\"]\n", 2, 13, "expected an IP address"},
    {"gw resolvers map", V "resolvers: {a: b}\n", 2, 12, "expected a list"},
    {"gw resolvers many", V "resolvers: [192.0.2.1, 192.0.2.2, 192.0.2.3, 192.0.2.4, 192.0.2.5]\n",
     2, 12, "at most 4"},
    {"gw control relative", V "control: {path: gw.sock}\n", 2, 17, "expected an absolute path"},
    {"gw control key", V "control: {paht: /x}\n", 2, 11, "did you mean `path`?"},
    {"gw listen family", V "listen: {v4: \"::\"}\n", 2, 14, "expected an IPv4 address"},
    {"gw listen plain empty", V "listen: {v6: }\n", 2, 14, "expected a non-empty string"},
    {"gw listen none", V "listen: {v4: \"\", v6: \"\"}\n", 2, 9, "both families are off"},
    {"gw limit zero", V "limits: {connections: 0}\n", 2, 23, "out of range"},
    {"gw limit peek small", V "limits: {peek_timeout_ms: 5}\n", 2, 27, "out of range"},
    {"gw limit per run", V "limits: {connections: 5, connections_per_run: 6}\n", 2, 47,
     "expected at most the total"},
    {"gw limit ttl", V "limits: {dns_ttl_floor_s: 60, dns_ttl_ceiling_s: 30}\n", 2, 27,
     "expected floor <= ceiling"},
};

static void test_gw_bad_case(void **state)
{
	const struct bad_case *c = *state;
	struct wd_gwconf conf;
	struct policy_diags d;

	if (gw(c->yaml, &conf, &d) != -EINVAL ||
	    !has_diag(&d, POLICY_DIAG_ERROR, c->line, c->col, c->text)) {
		print_message("case `%s`: expected %d:%d `%s`, got:\n", c->name, c->line, c->col,
			      c->text);
		dump(&d);
		fail();
	}
	policy_diags_free(&d);
}

static void test_gw_missing_file(void **state)
{
	struct wd_gwconf c;
	struct policy_diags d;

	(void)state;
	policy_diags_init(&d);
	assert_int_equal(conf_load("/nonexistent/gw.yaml", &c, &d), -ENOENT);
	assert_int_equal(d.errors, 1);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 0, 0, "cannot read"));
	policy_diags_free(&d);
}

static const struct CMUnitTest fixed_tests[] = {
    cmocka_unit_test(test_three_mistakes),
    cmocka_unit_test(test_broken_example),
    cmocka_unit_test(test_every_error_reported),
    cmocka_unit_test(test_glob_grant_warns),
    cmocka_unit_test(test_ssrf_names_warn),
    cmocka_unit_test(test_load_one_pass),
    cmocka_unit_test(test_json_valid_key),
    cmocka_unit_test(test_too_large),
    cmocka_unit_test(test_many_errors_capped),
    cmocka_unit_test(test_full_policy),
    cmocka_unit_test(test_minimal),
    cmocka_unit_test(test_upload_limits),
    cmocka_unit_test(test_gw_gateway_values),
    cmocka_unit_test(test_cpu_forms),
    cmocka_unit_test(test_duplicate_rule_warns),
    cmocka_unit_test(test_empty_lists_ok),
    cmocka_unit_test(test_sandbox_allow),
    cmocka_unit_test(test_sandbox_docker_image),
    cmocka_unit_test(test_mcp_allowlist),
    cmocka_unit_test(test_network_ask),
    cmocka_unit_test(test_render_roundtrip),
    cmocka_unit_test(test_udp_rules),
    cmocka_unit_test(test_match_exact),
    cmocka_unit_test(test_match_wildcard),
    cmocka_unit_test(test_match_bad_input),
    cmocka_unit_test(test_match_addr),
    cmocka_unit_test(test_match_many_rules),
    cmocka_unit_test(test_match_fnv_flood),
    cmocka_unit_test(test_gw_defaults),
    cmocka_unit_test(test_gw_example),
    cmocka_unit_test(test_gw_values),
    cmocka_unit_test(test_gw_missing_file),
};

#define NBAD (sizeof(bad_cases) / sizeof(bad_cases[0]))
#define NGWBAD (sizeof(gw_bad_cases) / sizeof(gw_bad_cases[0]))
#define NFIXED (sizeof(fixed_tests) / sizeof(fixed_tests[0]))

int main(void)
{
	static struct CMUnitTest tests[NBAD + NGWBAD + NFIXED];
	size_t n = 0;

	for (size_t i = 0; i < NBAD; i++) {
		struct CMUnitTest t = {bad_cases[i].name, test_bad_case, NULL, NULL,
				       (void *)&bad_cases[i]};
		tests[n++] = t;
	}
	for (size_t i = 0; i < NGWBAD; i++) {
		struct CMUnitTest t = {gw_bad_cases[i].name, test_gw_bad_case, NULL, NULL,
				       (void *)&gw_bad_cases[i]};
		tests[n++] = t;
	}
	for (size_t i = 0; i < NFIXED; i++)
		tests[n++] = fixed_tests[i];
	return _cmocka_run_group_tests("policy", tests, n, NULL, NULL);
}
