/* policy.h - the policy module: strict YAML policies and gateway configs with
 * file:line:col diagnostics, path validation, and the compiled host matcher.
 *
 * Stages (see docs/policy.md):
 *   1. policy_parse():    bytes -> struct wd_policy (pure: no I/O, no globals).
 *                         Every problem is collected in a struct policy_diags.
 *   2. policy_validate(): touches the filesystem: paths made absolute, `~`
 *                         expanded, canonicalised, checked against the runtime
 *                         base and the credential stores.
 *   3. policy_match*():   the compiled matcher (built by policy_parse()).
 * policy_load() = read the file + parse + validate.
 *
 * The gateway configuration (conf/conf.h) uses the same strict YAML machinery
 * (policy/yaml.h) and the same diagnostics, and holds the operator's ceiling.
 */
#ifndef WARDEN_POLICY_H
#define WARDEN_POLICY_H

#include "common/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- diagnostics */

/** Largest policy or gateway config file accepted, in bytes. */
#define POLICY_MAX_BYTES (1024 * 1024)
/** Deepest nesting of mappings and sequences accepted. */
#define POLICY_MAX_DEPTH 16
/** Diagnostics kept per list; more are counted in @dropped. */
#define POLICY_MAX_DIAGS 200

enum policy_diag_level {
	POLICY_DIAG_ERROR,
	POLICY_DIAG_WARNING,
};

/**
 * struct policy_diag - one error or warning about a position in a file
 * @level:	error or warning
 * @line:	1-based line, 0 when the problem has no position
 * @col:	1-based column, 0 when the problem has no position
 * @msg:	what was found and what was expected, no trailing newline
 */
struct policy_diag {
	enum policy_diag_level level;
	int line;
	int col;
	char msg[512];
};

/**
 * struct policy_diags - every diagnostic one parse (and validation) produced
 * @file:	the file name used in messages
 * @v:		the diagnostics, in the order found (sorted by position by
 *		policy_diags_sort())
 * @n:		number of entries in @v
 * @cap:	allocated entries
 * @errors:	number of errors (including dropped ones)
 * @warnings:	number of warnings (including dropped ones)
 * @dropped:	diagnostics not stored because POLICY_MAX_DIAGS was reached
 */
struct policy_diags {
	char file[256];
	struct policy_diag *v;
	size_t n;
	size_t cap;
	size_t errors;
	size_t warnings;
	size_t dropped;
};

/** policy_diags_init() - an empty list (no allocation). @d must not be NULL. */
void policy_diags_init(struct policy_diags *d);
/** policy_diags_free() - release the list and reset it to empty; @d may be NULL. */
void policy_diags_free(struct policy_diags *d);
/** policy_diags_sort() - order the diagnostics by line, then column (stable). */
void policy_diags_sort(struct policy_diags *d);

/**
 * policy_diag_format() - append "file:line:col: error: msg" (or "warning")
 * @d:		the list
 * @i:		index of the diagnostic (< d->n)
 * @out:	buffer to append to (no trailing newline is added)
 *
 * Return: 0, -EINVAL for a bad index, or -ENOMEM.
 */
int policy_diag_format(const struct policy_diags *d, size_t i, struct wd_buf *out);

/* ---------------------------------------------------------------- the policy */

/** The only policy (and gateway config) format version this build accepts. */
#define POLICY_VERSION 1

/** enum policy_grant_type - what a grant's `type:` says its path is */
enum policy_grant_type {
	POLICY_GRANT_ANY = 0, /* no `type:` */
	POLICY_GRANT_FILE,    /* `type: file` */
	POLICY_GRANT_DIR,     /* `type: dir` */
};

/**
 * struct policy_grant - one filesystem grant (filesystem.read / .write)
 * @path:	the path as written in the file
 * @real:	after policy_validate(): the absolute canonical path (symlinks
 *		resolved); NULL before validation
 * @sensitive:	the grant said `sensitive: true` (may cover a credential store)
 * @type:	the grant's `type:` (an existing path must be of that type)
 * @missing:	after validation: a write grant whose final component does not
 *		exist yet (its parent does); the launcher makes it
 * @make_file:	after validation, with @missing: it is made as an empty regular
 *		file (`type: file`, or a last component that looks like a file
 *		name, `name.ext`), else as a folder (see policy_grant_make_file())
 * @line:	position of the grant in the file
 * @col:	position of the grant in the file
 */
struct policy_grant {
	char *path;
	char *real;
	bool sensitive;
	enum policy_grant_type type;
	bool missing;
	bool make_file;
	int line;
	int col;
};

/* the transport a network rule allows; TCP unless the rule says `proto: udp` */
enum policy_proto {
	POLICY_PROTO_TCP, /* the default: connections (HTTP, TLS, anything over TCP) */
	POLICY_PROTO_UDP, /* datagrams through the gateway's UDP relay; host rules only */
};

enum policy_rule_kind {
	POLICY_RULE_HOST,     /* exact name */
	POLICY_RULE_WILDCARD, /* *.suffix: any name with one or more labels before suffix */
	POLICY_RULE_CIDR,     /* an address range */
};

/**
 * struct policy_rule - one network.allow entry, normalised
 * @kind:	exact name, wildcard, or address range
 * @host:	exact: the lower-case name without trailing dot; wildcard: the
 *		suffix after "*." ("npmjs.org"); cidr: NULL
 * @family:	cidr: AF_INET or AF_INET6; otherwise 0
 * @addr:	cidr: the network address (4 or 16 bytes used), network order
 * @prefix:	cidr: prefix length
 * @ports:	allowed ports, sorted ascending, no duplicates
 * @nports:	number of @ports (>= 1)
 * @proto:	the transport the rule allows (`proto: udp`: POLICY_PROTO_UDP; host and
 *		wildcard rules only, with explicit ports)
 * @text:	the normalised rule as one line ("*.npmjs.org:443",
 *		"api.github.com:80,443", "10.20.0.0/16:8080", a udp rule
 *		"stun.example.test:3478/udp"), for audit events
 * @line:	position of the rule in the file
 * @col:	position of the rule in the file
 * @from:	a ceiling's rule, and a rule of an effective policy that a ceiling
 *		rule narrowed: where that ceiling rule is written ("FILE:LINE", or
 *		its `from`); NULL for a policy's own rule
 */
struct policy_rule {
	enum policy_rule_kind kind;
	char *host;
	int family;
	uint8_t addr[16];
	unsigned prefix;
	uint16_t *ports;
	size_t nports;
	enum policy_proto proto;
	char *text;
	int line;
	int col;
	char *from;
};

/**
 * struct policy_env_set - one env.set entry
 * @name:	variable name
 * @value:	its value
 */
struct policy_env_set {
	char *name;
	char *value;
	int line;
	int col;
};

/**
 * struct policy_limits - resource limits; a zero field means "not set"
 * @memory_mb:	memory limit in MiB (1..1048576)
 * @pids:	maximum number of tasks (1..4194304)
 * @cpu_milli:	CPU limit in thousandths of a core (cpu: 1.5 -> 1500; 10..1024000)
 * @timeout_s:	wall-clock limit in seconds (1..604800)
 * @disk_mb:	disk limit in MiB (1..16777216): the size of the sandbox's /tmp and the
 *		largest file the program may write (RLIMIT_FSIZE); see warden-policy(5)
 * @upload_kib:	KiB the run may send upstream to any one name, over all its connections
 *		to it (1..16777216); the gateway cuts past it (docs/gateway.md, "Upload budgets")
 * @upload_total_kib: KiB the run may send upstream to all names together (1..16777216)
 * @dns_label_kib_per_min: the DNS exfiltration budget, KiB of new names a minute below each
 *		wildcard parent (0..1048576; 0: off); meaningful only when @dns_label_set
 * @dns_label_set: the policy sets @dns_label_kib_per_min (unset: the gateway's default)
 */
struct policy_limits {
	uint64_t memory_mb;
	uint32_t pids;
	uint32_t cpu_milli;
	uint32_t timeout_s;
	uint64_t disk_mb;
	uint64_t upload_kib;
	uint64_t upload_total_kib;
	uint32_t dns_label_kib_per_min;
	bool dns_label_set;
};

/* sandbox.backend / sandbox.fallback: the ways to confine a program (warden-policy(5)); the
 * order is the registry's (run/backend.c), 0 is "not chosen" (auto-selection). */
enum policy_backend {
	POLICY_BACKEND_AUTO = 0,
	POLICY_BACKEND_LINUX,	 /* bubblewrap + seccomp (alias `bwrap`) */
	POLICY_BACKEND_DOCKER,	 /* a Docker container */
	POLICY_BACKEND_SEATBELT, /* macOS sandbox-exec */
	POLICY_BACKEND_WINDOWS,	 /* AppContainer + a Job Object */
	POLICY_BACKEND_N
};

/* sandbox.allow: what a policy loosens in the sandbox on purpose (warden-policy(5)). */
enum policy_sandbox_allow {
	/* nested namespaces: namespace flags of clone/unshare, setns, mounts; no bwrap
	 * --disable-userns (a program that brings its own sandbox) */
	POLICY_SANDBOX_USERNS = 1u << 0,
};

/* audit.files: which file accesses of a run become `file` events (warden-policy(5)). */
enum policy_audit_files {
	POLICY_FILES_UNSET = 0, /* not in the policy: policy_audit_files() gives the default */
	POLICY_FILES_OFF,	/* none */
	POLICY_FILES_DENIED,	/* attempts at host paths the grants do not expose */
	POLICY_FILES_ALL,	/* every access of a path (forensics) */
	/* internal to `warden trace`, never from YAML: what the program reached, carried out by
	 * the recorder itself (docs/files.md, "Trace mode") */
	POLICY_FILES_TRACE,
};

struct policy_matcher;

/* per-user caps and run limits a ceiling sets (warden-gateway(8), "Ceiling") */
enum policy_cap {
	POLICY_CAP_RUNS,	/* runs of one user registered at once */
	POLICY_CAP_CONNECTIONS, /* relayed connections of all of one user's runs at once */
	POLICY_CAP_MEMORY_MB,	/* the largest limits.memory_mb a run may have */
	POLICY_CAP_PIDS,	/* the largest limits.pids */
	POLICY_CAP_TIMEOUT_S,	/* the largest limits.timeout_s */
	/* DNS queries a second the gateway asks its resolvers for all of one user's runs (a
	 * token bucket: this many at once, then this many a second); unset under a ceiling:
	 * POLICY_DNS_QUERIES_PER_S_DEFAULT */
	POLICY_CAP_DNS_QUERIES_PER_S,
	POLICY_CAP_N,
};

/* the per-user DNS query cap in force when no scope of the ceiling sets one */
#define POLICY_DNS_QUERIES_PER_S_DEFAULT 1000u

/** policy_cap_name() - "runs", "connections", "memory_mb", "pids", "timeout_s",
 * "dns_queries_per_s" (NULL past the end)
 */
const char *policy_cap_name(enum policy_cap cap);

/**
 * struct policy_narrowing - one thing a ceiling changed in a policy
 * @line:	the policy's rule or limit it concerns (0: none, e.g. a limit the
 *		policy did not set)
 * @col:	its column
 * @msg:	what happened and where the ceiling said so, one line
 */
struct policy_narrowing {
	int line;
	int col;
	char *msg;
};

/**
 * struct policy_tool_pat - one pattern of mcp.tools.allow or mcp.tools.deny
 * @pat:	the pattern (printable ASCII, at most POLICY_TOOL_PAT_MAX bytes; `*` a wildcard)
 * @line:	where it is written (1-based; 0: not from a file)
 */
struct policy_tool_pat {
	char *pat;
	int line;
};
#define POLICY_TOOL_PAT_MAX 128

/**
 * struct policy_tool_net - one tool's own network rules, `mcp.tools.NAME.network`
 * @tool:	the tool's name, exactly (printable ASCII, no `*`, at most POLICY_TOOL_PAT_MAX
 *bytes)
 * @line:	where its key is written (1-based; 0: not from a file)
 * @col:	its column
 * @net:	the rules (network.allow syntax) as a policy of their own: only @rules, @file and
 *		the matcher are set; in an effective policy, these rules bounded by the host's
 *		ceiling exactly as network.allow is (policy_ceiling_apply())
 *
 * A name such a rule allows is allowed only while a call of @tool is in flight (the gateway
 * knows the calls from the run's stdio relay); network.allow counts at every moment.
 */
struct policy_tool_net {
	char *tool;
	int line;
	int col;
	struct wd_policy *net;
};
/* The most tools with rules of their own a policy may have. */
#define POLICY_TOOL_NET_MAX 64

/**
 * struct wd_policy - a parsed policy; all strings are owned by it
 * @file:	the file name given to policy_parse() (for messages)
 * @version:	format version (POLICY_VERSION)
 * @command:	argv from `command`, NULL-terminated; NULL when absent
 * @ncommand:	number of @command entries
 * @command_line: where `command`'s first entry is (1-based), for messages
 * @command_col: its column
 * @read:	filesystem.read grants
 * @write:	filesystem.write grants
 * @mask:	after policy_validate(): credential stores that lie inside a
 *		non-sensitive grant, and protected folders inside a read grant;
 *		the launcher must hide them (empty tmpfs or /dev/null over them).
 *		Absolute real paths.
 * @rules:	network.allow rules, in file order
 * @env_allow:	env.allow names, in file order
 * @env_set:	env.set entries, in file order
 * @limits:	limits
 * @sandbox_allow: sandbox.allow, enum policy_sandbox_allow bits (0: nothing loosened)
 * @sandbox_backend: sandbox.backend, enum policy_backend (POLICY_BACKEND_AUTO when absent)
 * @docker_image: sandbox.docker.image: the Docker backend's image, or NULL
 * @sandbox_fallback: sandbox.fallback, a bit (1u << enum policy_backend) per backend that
 *		auto-selection may use when the native one cannot run (0: none)
 * @mcp_allowlist_locked: `mcp.allowlist: locked`: `warden mcp` refuses every request to add a
 *		name (default `approval`: a request waits for a person)
 * @mcp_audit_log_all: `mcp.audit_log: all`: `warden mcp`'s list_audit_log reads the whole log
 *		(default `session`: only the events of that server's runs and its own)
 * @tools_allow: mcp.tools.allow: with @has_tools_allow, a wrapped MCP server's tools that a
 *		client may see and call (every other tool is denied); @ntools_allow of them
 * @tools_deny:	mcp.tools.deny: tools a client may neither see nor call (deny wins over
 *		allow); @ntools_deny of them
 * @mcp_explain: mcp.explain_denials: a tool call's result gets one text item naming what
 *		Warden denied during the call
 * @mcp_pin:	mcp.pin: the pin file of the server's accepted tool definitions, as written
 *		(relative: to the policy file's folder), or NULL; @mcp_pin_line where
 * @tool_net:	mcp.tools.NAME.network: the tools with network rules of their own, in file
 *		order (an effective policy keeps them, each bounded by the ceiling); @ntool_net
 * @audit_files: audit.files, enum policy_audit_files (POLICY_FILES_UNSET when absent)
 * @ask:	network.ask: the names a person is asked about (a policy of their own, its rules
 *		and matcher; host rules only), or NULL; policy_ask_match() reads it
 * @ask_any:	network.ask has `"*"`: every name outside the allow rules is asked about
 * @ask_timeout_s: network.ask_timeout: how long an ask waits for its answer (0: the default,
 *		POLICY_ASK_TIMEOUT_DEFAULT)
 * @matcher:	compiled matcher (internal)
 * @validated:	policy_validate() succeeded on it
 *
 * An effective policy (policy_ceiling_apply()) has only network rules and limits,
 * and these:
 * @bounded:	a ceiling was applied
 * @denied:	the ceiling's denied names as a policy of its own (its rules match any
 *		port; each rule's @from says where); checked before @rules; NULL: none
 * @unbounded:	the policy's own network rules, as written (what policy_ceiling_why()
 *		compares with)
 * @ceiling_allow: the ceiling rules in force for the user; NULL with @bounded: `any`
 * @ceiling_from: where the allow list in force is written ("FILE:LINE, ...")
 * @caps:	the per-user caps in force (0: none), enum policy_cap
 * @caps_from:	where each is written (NULL where @caps is 0)
 * @narrowed:	what the ceiling changed, in the policy's order
 * @nnarrowed:	how many
 */
struct wd_policy {
	char *file;
	int version;
	char **command;
	size_t ncommand;
	int command_line, command_col;
	struct policy_grant *read;
	size_t nread;
	struct policy_grant *write;
	size_t nwrite;
	char **mask;
	size_t nmask;
	struct policy_rule *rules;
	size_t nrules;
	char **env_allow;
	size_t nenv_allow;
	struct policy_env_set *env_set;
	size_t nenv_set;
	struct policy_limits limits;
	unsigned sandbox_allow;
	unsigned sandbox_backend;
	unsigned sandbox_fallback;
	char *docker_image;
	bool mcp_allowlist_locked;
	bool mcp_audit_log_all;
	bool has_tools_allow;
	struct policy_tool_pat *tools_allow;
	size_t ntools_allow;
	struct policy_tool_pat *tools_deny;
	size_t ntools_deny;
	char *mcp_pin;
	int mcp_pin_line;
	bool mcp_explain;
	struct policy_tool_net *tool_net;
	size_t ntool_net;
	unsigned audit_files;
	struct wd_policy *ask;
	bool ask_any;
	unsigned ask_timeout_s;
	struct policy_matcher *matcher;
	bool validated;
	bool bounded;
	struct wd_policy *denied;
	struct wd_policy *unbounded;
	struct wd_policy *ceiling_allow;
	char *ceiling_from;
	uint64_t caps[POLICY_CAP_N];
	char *caps_from[POLICY_CAP_N];
	struct policy_narrowing *narrowed;
	size_t nnarrowed;
};

/**
 * policy_mcp_tools_on() - whether @p has mcp.tools rules (allow or deny) or an mcp.pin: the
 * stdio relay must then filter the wrapped server's tools/list answers and tools/call requests
 * (fail closed where it cannot relay)
 */
bool policy_mcp_tools_on(const struct wd_policy *p);

/**
 * policy_mcp_tool_allowed() - whether a client may see and call the tool named @name
 * @p:		the policy
 * @name:	the tool's name (NULL or "": a call without a name, denied when rules are on)
 * @rule:	the rule that decided, as text ("mcp.tools.deny: `delete_*` (line 9)", or what is
 *		missing), for the audit event; may be NULL
 * @size:	size of @rule
 *
 * A name matching a deny pattern is denied; else, with an allow list, only a name matching
 * one of its patterns is allowed; without rules every tool is allowed. Patterns are literal
 * but for `*`, which matches any run of characters (none included).
 */
bool policy_mcp_tool_allowed(const struct wd_policy *p, const char *name, char *rule, size_t size);

/**
 * policy_tool_net_find() - the network rules of the tool named @tool (mcp.tools.@tool.network)
 * @p:		the policy (or an effective one); may be NULL
 * @tool:	the tool's name (compared exactly)
 *
 * Return: the index in @p->tool_net, or -ENOENT.
 */
int policy_tool_net_find(const struct wd_policy *p, const char *tool);

/**
 * policy_parse() - parse and check a policy document (pure: no I/O)
 * @buf:	the bytes of the file (need not be NUL-terminated)
 * @len:	number of bytes (more than POLICY_MAX_BYTES is refused)
 * @filename:	name used in diagnostics (and to resolve relative paths later)
 * @ret:	on success, the new policy (free with policy_free())
 * @d:		diagnostics are appended here (warnings may be added on success)
 *
 * Every problem found is appended to @d, not only the first one.
 *
 * Return: 0 (and *@ret set) when the document has no errors; -EINVAL when it
 * has errors (listed in @d; *@ret untouched); -ENOMEM.
 */
int policy_parse(const char *buf, size_t len, const char *filename, struct wd_policy **ret,
		 struct policy_diags *d);

/**
 * struct policy_protect - a file or folder no grant may expose to the program
 * @path:	absolute path (it need not exist yet)
 * @what:	what it is, for messages ("the audit log /x/audit.jsonl")
 * @folder:	@path is a folder (else a file)
 *
 * A grant on or inside it, or a write grant that holds it, is an error; a read
 * grant that holds it gets it masked: a file's whole folder when the grant
 * holds more than that folder, else the file alone; a folder itself.
 */
struct policy_protect {
	const char *path;
	const char *what;
	bool folder;
};

/**
 * struct policy_ctx - what validation needs to know about the caller
 * @home:	the invoking user's home folder for `~` and the credential
 *		stores; NULL: $HOME, else the password database entry
 * @protect:	what no grant may expose (the audit log, the run state)
 * @nprotect:	number of @protect entries
 */
struct policy_ctx {
	const char *home;
	const struct policy_protect *protect;
	size_t nprotect;
};

/**
 * policy_validate() - resolve and check the filesystem grants and env names
 * @p:		a parsed policy; its grants' @real and @mask are filled in
 * @ctx:	the caller's home and protected folders; NULL: $HOME, nothing
 *		protected
 * @d:		diagnostics are appended here
 *
 * Relative paths are resolved against the folder of @p->file. Symbolic links
 * on a grant's path are followed only when owned by root in a folder only
 * root can change. See warden-policy(5) for the rules.
 *
 * Return: 0 when no errors were found (warnings may have been added);
 * -EINVAL when errors were found (listed in @d); -ENOMEM.
 */
int policy_validate(struct wd_policy *p, const struct policy_ctx *ctx, struct policy_diags *d);

/**
 * policy_credential_stores() - the credential stores policy_validate() knows (credstores.c,
 * the one table; docs/files.md and warden-policy(5) list it)
 * @ret_n:	their number
 *
 * Paths under the home folder start with "~/"; the others are absolute. A grant that holds
 * one gets it hidden unless a `sensitive: true` grant holds it too; `warden run`, `warden
 * trace` (which hides every one) and `warden init` (which never grants one silently) use
 * this list alike.
 * Return: the list (static).
 */
const char *const *policy_credential_stores(size_t *ret_n);

/**
 * policy_grant_make_file() - how a write grant that does not exist yet is made
 * @written:	the grant's path as written
 * @type:	its `type:`
 * @ret_sure:	set to false when nothing in @written or @type said it (a name with no
 *		extension and no trailing `/`: a folder, and policy_validate() warns)
 *
 * `type:` decides; else a trailing `/` makes a folder and a last component that looks like
 * a file name (a dot after its first character: result.txt, memory.jsonl) a file.
 * Return: true for an empty regular file, false for a folder.
 */
bool policy_grant_make_file(const char *written, enum policy_grant_type type, bool *ret_sure);

/**
 * policy_env_name_ok() - @s is a name env.allow and env.set accept: a letter or `_`, then
 * letters, digits and `_`, at most 255 bytes
 */
bool policy_env_name_ok(const char *s);

/**
 * policy_env_names() - whether @p names the variable @name in env.allow or env.set (the program
 * gets it from the policy, so the launcher's default for it stands back)
 */
bool policy_env_names(const struct wd_policy *p, const char *name);

/**
 * policy_load() - read a policy file, parse it and validate it
 * @path:	file to read
 * @ctx:	as for policy_validate()
 * @ret:	on success, the new policy
 * @d:		diagnostics (a file that cannot be read is one error without
 *		a position)
 *
 * Return: 0, -EINVAL (invalid; see @d), -ENOENT/-EACCES/-EFBIG/... (the file
 * could not be read; also recorded in @d), or -ENOMEM.
 */
int policy_load(const char *path, const struct policy_ctx *ctx, struct wd_policy **ret,
		struct policy_diags *d);

/**
 * policy_load_buf() - parse and validate a policy held in memory (`policy check -` reads stdin)
 * @buf:	the YAML, @len bytes
 * @name:	what diagnostics and the policy call it (a file name, "(stdin)")
 * @ctx:	as for policy_validate()
 * @ret:	on success, the new policy
 * @d:		diagnostics: when the YAML is well-formed, the parser's errors and the
 *		validator's come in one pass
 *
 * Return: 0, -EINVAL (invalid; see @d), or -ENOMEM.
 */
int policy_load_buf(const char *buf, size_t len, const char *name, const struct policy_ctx *ctx,
		    struct wd_policy **ret, struct policy_diags *d);

/**
 * policy_command_expand() - make a leading `~` of each `command` entry (`~` itself, `~/...`)
 * the home folder, as a shell would and as grants do
 * @p:		the policy (its @command is rewritten in place)
 * @home:	the home folder `~` names (the invoking user's; under sudo SUDO_USER's)
 *
 * Return: 0; -EINVAL when an entry needs @home and it is NULL or not absolute; -ENOMEM.
 */
int policy_command_expand(struct wd_policy *p, const char *home);

/**
 * policy_merge() - add @from's network rules and filesystem grants to @into's (the union), before
 * either is validated (`warden run --allow/--read/--write` over `-p FILE`, merge.c)
 * @into:	a parsed policy: its lists get @from's entries at their ends, in order, except a
 *		rule whose text or a grant whose path, type and `sensitive` it already has; its
 *		matcher is rebuilt
 * @from:	a parsed policy: left with no rules, no grants and no matcher (policy_free() it);
 *		its other sections are not looked at
 * @line_offset: added to the lines of the entries moved, so that a diagnostic about one of
 *		them can be told from one about @into's own (the caller picks a number past
 *		@into's last line)
 *
 * Relative paths are resolved later against the folder of @into->file: give @from absolute
 * ones. Validate @into afterwards (policy_validate()), as one policy.
 * Return: 0; -EINVAL when either was validated already; -ENOMEM (then free both, use neither).
 */
int policy_merge(struct wd_policy *into, struct wd_policy *from, int line_offset);

/** policy_free() - release a policy; @p may be NULL. */
void policy_free(struct wd_policy *p);

/* network.ask_timeout: its default and its bounds (seconds) */
#define POLICY_ASK_TIMEOUT_DEFAULT 30
#define POLICY_ASK_TIMEOUT_MAX 600

/**
 * policy_ask_match() - is @host:@port a name a person is asked about (network.ask)
 * @p:		the policy
 * @host:	the name (folded: lower case, no trailing dot)
 * @port:	the port; 0: on some port (a DNS question)
 * Return: the index of the ask rule that matches, POLICY_ASK_ANY for `"*"`, or -ENOENT (not
 * an ask name: the policy's usual denial).
 */
int policy_ask_match(const struct wd_policy *p, const char *host, uint16_t port);
#define POLICY_ASK_ANY 0x7fffffff

/** policy_ask_timeout_s() - network.ask_timeout in seconds, or its default */
unsigned policy_ask_timeout_s(const struct wd_policy *p);

/**
 * policy_ask_copy() - @from's network.ask (rules, `"*"`, timeout) copied into @to (an
 * effective policy under the host's ceiling keeps the policy's asks: the ceiling still
 * decides, the names it denies are never asked about)
 * Return: 0, or -ENOMEM.
 */
int policy_ask_copy(struct wd_policy *to, const struct wd_policy *from);

/**
 * policy_match() - which rule allows a connection to @host:@port
 * @p:		the policy
 * @host:	a host name (normalised here: case, one trailing dot); an IPv4
 *		or IPv6 literal is matched against the cidr rules
 * @port:	destination port
 *
 * Among the matching rules the first in file order wins. A name an
 * effective policy's @denied holds matches nothing. Only TCP rules count (a
 * `proto: udp` rule never allows a connection); policy_match_proto() asks for UDP.
 *
 * Return: the index in @p->rules of the matching rule, -EACCES (a denied
 * name), or -ENOENT (also for names that are not valid host names).
 */
int policy_match(const struct wd_policy *p, const char *host, uint16_t port);

/**
 * policy_match_proto() - which rule of transport @proto allows @host:@port
 * @p:		the policy
 * @host:	a host name, as for policy_match()
 * @port:	destination port
 * @proto:	POLICY_PROTO_TCP (what policy_match() asks) or POLICY_PROTO_UDP
 *
 * A matcher built with policy_matcher_build_anyport() (a ceiling's denied names)
 * matches rules of either transport.
 *
 * Return: as policy_match().
 */
int policy_match_proto(const struct wd_policy *p, const char *host, uint16_t port,
		       enum policy_proto proto);

/**
 * policy_match_addr() - which cidr rule allows a connection to an address
 * @p:		the policy
 * @family:	AF_INET or AF_INET6
 * @addr:	struct in_addr or struct in6_addr (network order)
 * @port:	destination port
 *
 * Return: the index in @p->rules of the first matching rule, or -ENOENT.
 */
int policy_match_addr(const struct wd_policy *p, int family, const void *addr, uint16_t port);

/**
 * policy_match_name() - which rule allows @host on some port, over either transport (the
 * DNS front answers a name a udp rule allows, so that a program can find its address)
 * Return: the index of the first such rule, -EACCES (a denied name), or -ENOENT.
 */
int policy_match_name(const struct wd_policy *p, const char *host);

/** policy_allows() - true when some rule allows @host:@port (see policy_match()). */
bool policy_allows(const struct wd_policy *p, const char *host, uint16_t port);

/** policy_allows_addr() - true when some cidr rule allows @addr:@port. */
bool policy_allows_addr(const struct wd_policy *p, int family, const void *addr, uint16_t port);

/**
 * policy_sandbox_allow_name() - the word for one enum policy_sandbox_allow bit
 * @bit:	a single bit
 *
 * Return: "userns", or NULL for anything else.
 */
const char *policy_sandbox_allow_name(unsigned bit);

/**
 * policy_backend_name() - the word of a backend in sandbox.backend and --backend
 * @b:		enum policy_backend
 *
 * Return: "linux", "docker", "seatbelt" or "windows"; NULL for POLICY_BACKEND_AUTO and
 * anything else.
 */
const char *policy_backend_name(unsigned b);

/**
 * policy_backend_lookup() - a backend by its word (`bwrap` is `linux`)
 * @word:	the word as written (exact, lower case)
 *
 * Return: the enum policy_backend, or POLICY_BACKEND_AUTO when @word names none.
 */
unsigned policy_backend_lookup(const char *word);

/**
 * policy_backend_list() - the words policy_backend_lookup() takes, for messages
 *
 * Return: "linux (alias bwrap), docker, seatbelt, windows".
 */
const char *policy_backend_list(void);

/**
 * policy_audit_files() - the audit.files a run of @p records (the default when unset: off)
 * @p:	the policy; may be NULL (the default)
 *
 * Return: POLICY_FILES_OFF, POLICY_FILES_DENIED, POLICY_FILES_ALL, or POLICY_FILES_TRACE (set
 * by `warden trace` on its own policy, never parsed).
 */
enum policy_audit_files policy_audit_files(const struct wd_policy *p);

/**
 * policy_audit_files_name() - "off", "denied", "all", "trace" (for messages: the parser does not
 * accept "trace") (NULL for anything else)
 * @v:	the value
 */
const char *policy_audit_files_name(enum policy_audit_files v);

/**
 * policy_render_yaml() - append the normalised policy as YAML (deterministic)
 * @p:		the policy (validated or not: validated grants show real paths)
 * @out:	buffer to append to
 *
 * Return: 0, or -ENOMEM.
 */
int policy_render_yaml(const struct wd_policy *p, struct wd_buf *out);

/**
 * policy_render_json() - append the normalised policy as one JSON object
 * @p:		the policy
 * @out:	buffer to append to (no trailing newline)
 *
 * Return: 0, or -ENOMEM.
 */
int policy_render_json(const struct wd_policy *p, struct wd_buf *out);

/**
 * policy_json_string() - append @s as a JSON string literal (with quotes)
 * Return: 0, or -ENOMEM.
 */
int policy_json_string(struct wd_buf *out, const char *s);

/* ------------------------------------------------------ the operator's ceiling */

/**
 * struct policy_ceil_scope - the ceiling's top level, or one user's or group's override
 * @name:	the user (name, or uid in digits) or group; "" at the top level
 * @has_allow:	this scope sets `allow`
 * @allow_any:	`allow: any`: the scope bounds no name (its denials still apply)
 * @allow:	the rules users may be allowed (network.allow syntax), each with @from
 * @nallow:	how many
 * @deny:	names and patterns never allowed (exact or wildcard rules without ports)
 * @ndeny:	how many
 * @caps:	enum policy_cap values this scope sets (0: not set here)
 * @caps_from:	where each is written
 * @from:	where the scope's allow list is written (the scope's key when it has none)
 */
struct policy_ceil_scope {
	char *name;
	bool has_allow;
	bool allow_any;
	struct policy_rule *allow;
	size_t nallow;
	struct policy_rule *deny;
	size_t ndeny;
	uint64_t caps[POLICY_CAP_N];
	char *caps_from[POLICY_CAP_N];
	char *from;
};

/**
 * struct policy_ceiling - the `ceiling` section of a gateway config
 * @top:	what applies to every user
 * @users:	per-user overrides (users.NAME)
 * @nusers:	how many
 * @groups:	per-group overrides (groups.NAME)
 * @ngroups:	how many
 */
struct policy_ceiling {
	struct policy_ceil_scope top;
	struct policy_ceil_scope *users;
	size_t nusers;
	struct policy_ceil_scope *groups;
	size_t ngroups;
};

/** policy_ceiling_free() - release a ceiling; @c may be NULL. */
void policy_ceiling_free(struct policy_ceiling *c);

struct policy_yt_node;

/**
 * policy_ceiling_parse() - a gateway config's `ceiling` map (pure; conf/ calls it)
 * @d:		diagnostics (every problem, with its position)
 * @key:	the `ceiling` key's node (the position of an empty ceiling)
 * @n:		its value (policy/yaml.h's tree)
 * @file:	the config's name, for the rules' `from` ("FILE:LINE")
 * @ret_err:	0, -EINVAL (errors are in @d) or -ENOMEM
 *
 * Return: the ceiling (policy_ceiling_free()), or NULL when *@ret_err is not 0.
 */
struct policy_ceiling *policy_ceiling_parse(struct policy_diags *d,
					    const struct policy_yt_node *key,
					    const struct policy_yt_node *n, const char *file,
					    int *ret_err);

/**
 * policy_ceiling_render() - append the `ceiling:` section of a gateway config, every rule,
 * cap and scope with its `from`; nothing when @c is NULL
 * Return: 0, or -ENOMEM.
 */
int policy_ceiling_render(const struct policy_ceiling *c, struct wd_buf *out);

/**
 * struct policy_who - the user a run belongs to, as the ceiling sees them
 * @uid:	the uid (SO_PEERCRED); root's runs are bounded like anyone's
 * @name:	the user name; NULL when the uid has none
 * @groups:	the names of the groups the user is in (primary and supplementary)
 * @ngroups:	how many
 */
struct policy_who {
	uint32_t uid;
	const char *name;
	const char *const *groups;
	size_t ngroups;
};

/** The most (policy rule, ceiling rule) pairs policy_ceiling_apply() looks at. */
#define POLICY_CEILING_MAX_PAIRS 1000000

/**
 * policy_ceiling_apply() - a run's effective policy: @user's network rules and
 * limits intersected with the ceiling in force for @who (pure)
 * @c:		the ceiling
 * @who:	the user
 * @user:	the user's policy (not changed)
 * @ret:	on success, the effective policy (policy_free())
 *
 * The scopes in force: the user's override (users.NAME or users.UID), the overrides
 * of the user's groups, the top level. `allow` comes from the most specific scope that
 * sets it (several groups: the union of theirs); `deny` from all of them together;
 * each cap from the user's override, else the largest a group of theirs sets, else
 * the top level's. A rule of @user is kept where a ceiling rule covers it, narrowed to
 * what both allow (names, ports, ranges), dropped otherwise; a name rule and an address
 * range never overlap. Limits above a cap (or not set under one) are set to the cap.
 * Every change is in @ret->narrowed, with the ceiling's position. A name rule finds
 * the ceiling rules it may overlap with a few lookups per label, whatever the size of
 * the ceiling; address ranges are compared with each of the ceiling's. More than
 * POLICY_CEILING_MAX_PAIRS (rule, ceiling rule) pairs in all are refused: that bounds
 * the time (the gateway does this in its event loop) and the rules made.
 *
 * Return: 0, -E2BIG (too many pairs), or -ENOMEM.
 */
int policy_ceiling_apply(const struct policy_ceiling *c, const struct policy_who *who,
			 const struct wd_policy *user, struct wd_policy **ret);

/**
 * struct policy_why - why a ceiling refuses something the user's policy allows
 * @denied:	a denied name (@rule is the `deny` entry)
 * @from:	where the ceiling says so ("FILE:LINE")
 * @rule:	the ceiling rule that covers the name on other ports, or the `deny`
 *		entry; NULL when no rule of the allow list in force covers it
 */
struct policy_why {
	bool denied;
	const char *from;
	const char *rule;
};

/**
 * policy_ceiling_why() - is the ceiling why @p refuses @host:@port?
 * @p:		an effective policy
 * @host:	a name or address literal
 * @port:	the port; 0: on any port (a DNS question)
 * @out:	filled in when true is returned (pointers into @p)
 *
 * Return: true when @p's unbounded rules allow it and the ceiling does not.
 */
bool policy_ceiling_why(const struct wd_policy *p, const char *host, uint16_t port,
			struct policy_why *out);

/**
 * policy_ceiling_why_proto() - policy_ceiling_why() for the rules of transport @proto
 * (POLICY_PROTO_UDP: the UDP relay's question about a `proto: udp` rule)
 * Return: true when @p's unbounded @proto rules allow @host:@port and the ceiling does not.
 */
bool policy_ceiling_why_proto(const struct wd_policy *p, const char *host, uint16_t port,
			      enum policy_proto proto, struct policy_why *out);

/**
 * policy_ceiling_why_addr() - policy_ceiling_why() for an address (cidr rules)
 * Return: true when the user's cidr rules allow @addr:@port and the ceiling's do not.
 */
bool policy_ceiling_why_addr(const struct wd_policy *p, int family, const void *addr, uint16_t port,
			     struct policy_why *out);

/**
 * policy_ceiling_reason() - "not allowed by the host's ceiling FILE:LINE (...)"
 * @w:		policy_ceiling_why()'s answer
 * @buf:	room for the text
 * @size:	its size
 * Return: @buf.
 */
const char *policy_ceiling_reason(const struct policy_why *w, char *buf, size_t size);

/**
 * policy_render_effective() - append an effective policy's network rules, denials,
 * limits, caps and narrowings as YAML with comments (for warden policy check --ceiling)
 * Return: 0, or -ENOMEM.
 */
int policy_render_effective(const struct wd_policy *p, struct wd_buf *out);

#endif /* WARDEN_POLICY_H */
