/* parse.c - the policy parser: YAML tree -> struct wd_policy through key
 * tables, reporting every problem with its position (pure: no I/O).
 *
 * Stages: policy_yt_parse() (syntax, refusals, limits) -> the schema walk below
 * (keys, types, ranges, host names, address ranges, env names) -> the matcher
 * is compiled when no error was found. Filesystem checks live in validate.c.
 */
#include "policy/policy_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

enum {
	TOP_VERSION,
	TOP_COMMAND,
	TOP_FS,
	TOP_NET,
	TOP_ENV,
	TOP_LIMITS,
	TOP_SANDBOX,
	TOP_MCP,
	TOP_AUDIT,
	TOP_N
};
static const char *const top_keys[TOP_N] = {"version", "command", "filesystem", "network", "env",
					    "limits",  "sandbox", "mcp",	"audit"};

enum { FS_READ, FS_WRITE, FS_N };
static const char *const fs_keys[FS_N] = {"read", "write"};

enum { GRANT_PATH, GRANT_SENSITIVE, GRANT_TYPE, GRANT_N };
static const char *const grant_keys[GRANT_N] = {"path", "sensitive", "type"};

/* a grant's `type:` words (index = enum policy_grant_type) */
static const char *const grant_types[] = {
    [POLICY_GRANT_FILE] = "file",
    [POLICY_GRANT_DIR] = "dir",
};

enum { ENV_ALLOW, ENV_SET, ENV_N };
static const char *const env_keys[ENV_N] = {"allow", "set"};

enum {
	LIM_MEMORY,
	LIM_PIDS,
	LIM_CPU,
	LIM_TIMEOUT,
	LIM_DISK,
	LIM_UPLOAD,
	LIM_UPLOAD_TOTAL,
	LIM_DNS_LABEL,
	LIM_N
};
static const char *const limit_keys[LIM_N] = {"memory_mb",
					      "pids",
					      "cpu",
					      "timeout_s",
					      "disk_mb",
					      "upload_kib",
					      "upload_total_kib",
					      "dns_label_kib_per_min"};

enum { SBX_ALLOW, SBX_BACKEND, SBX_FALLBACK, SBX_DOCKER, SBX_N };
static const char *const sandbox_keys[SBX_N] = {"allow", "backend", "fallback", "docker"};
enum { SBX_DOCKER_IMAGE, SBX_DOCKER_N };
static const char *const sandbox_docker_keys[SBX_DOCKER_N] = {"image"};

enum { AUD_FILES, AUD_N };
static const char *const audit_keys[AUD_N] = {"files"};

/* audit.files: the words (index = enum policy_audit_files) */
static const char *const audit_files_words[] = {
    [POLICY_FILES_OFF] = "off",
    [POLICY_FILES_DENIED] = "denied",
    [POLICY_FILES_ALL] = "all",
    [POLICY_FILES_TRACE] = "trace",
};

/* sandbox.allow: the words, their bits, and what each costs (for the message) */
static const struct {
	const char *name;
	unsigned bit;
} sandbox_allow_words[] = {
    {"userns", POLICY_SANDBOX_USERNS},
};

/* ranges of the integer limits */
static const struct {
	uint64_t min, max;
} limit_range[LIM_N] = {
    [LIM_MEMORY] = {1, 1048576},    [LIM_PIDS] = {1, 4194304},
    [LIM_CPU] = {10, 1024000}, /* thousandths of a core */
    [LIM_TIMEOUT] = {1, 604800},    [LIM_DISK] = {1, 16777216},
    [LIM_UPLOAD] = {1, 16777216},   [LIM_UPLOAD_TOTAL] = {1, 16777216},
    [LIM_DNS_LABEL] = {0, 1048576}, /* 0: off */
};

/* ------------------------------------------------------------ top level */

static void parse_version(struct pctx *c, const struct policy_yt_node *root,
			  const struct policy_yt_node *v)
{
	uint64_t version;

	if (!v) {
		policy_diag_err(c->d, root,
				"missing key `version`; expected `version: %d` at the top level",
				POLICY_VERSION);
		return;
	}
	if (policy_yt_uint(c->d, v, "version", 0, UINT32_MAX, &version))
		return;
	if (version != POLICY_VERSION) {
		policy_diag_err(c->d, v, "version %llu is not supported; expected %d",
				(unsigned long long)version, POLICY_VERSION);
		return;
	}
	c->p->version = (int)version;
}

static void parse_command(struct pctx *c, const struct policy_yt_node *n)
{
	struct wd_policy *p = c->p;

	if (policy_yt_want_seq(c->d, n, "command"))
		return;
	if (n->nkids == 0) {
		policy_diag_err(c->d, n,
				"command: found an empty list; expected the program and its "
				"arguments, like [\"/usr/bin/node\", \"server.js\"]");
		return;
	}
	p->command = pctx_calloc(c, n->nkids + 1, sizeof(char *));
	if (!p->command)
		return;
	p->command_line = n->kids[0]->line;
	p->command_col = n->kids[0]->col;
	for (size_t i = 0; i < n->nkids; i++) {
		const char *s = policy_yt_str(c->d, n->kids[i], "command");

		if (s)
			p->command[p->ncommand++] = pctx_strdup(c, s);
	}
}

/* ------------------------------------------------------------ filesystem */

/* a grant's path: any non-empty string; a plain `~` (YAML's null) means the home folder */
static const char *grant_str(struct pctx *c, const struct policy_yt_node *n, const char *what)
{
	if (n->type == POLICY_YT_SCALAR && n->plain && !strcmp(n->str, "~"))
		return n->str;
	return policy_yt_str(c->d, n, what);
}

/* a grant's `type: file | dir`. Return: 0, or -EINVAL after reporting. */
static int parse_grant_type(struct pctx *c, const struct policy_yt_node *n, const char *what,
			    enum policy_grant_type *ret)
{
	const char *s = n->type == POLICY_YT_SCALAR ? n->str : NULL;

	for (size_t i = 0; s && i < WD_ARRAY_SIZE(grant_types); i++)
		if (grant_types[i] && !strcmp(s, grant_types[i])) {
			*ret = (enum policy_grant_type)i;
			return 0;
		}
	policy_diag_err(c->d, n, "%s: `type` is %s%s%s; expected file or dir", what,
			s ? "`" : "not a word", s ? s : "", s ? "`" : "");
	return -EINVAL;
}

static void parse_grants(struct pctx *c, const struct policy_yt_node *n, const char *what,
			 struct policy_grant **ret, size_t *nret)
{
	struct policy_grant *g;

	if (policy_yt_want_seq(c->d, n, what))
		return;
	g = pctx_calloc(c, n->nkids, sizeof(*g));
	if (!g)
		return;
	*ret = g;
	for (size_t i = 0; i < n->nkids; i++) {
		const struct policy_yt_node *item = n->kids[i], *v[GRANT_N];
		const char *path = NULL;
		enum policy_grant_type type = POLICY_GRANT_ANY;
		bool sensitive = false;
		char where[64];

		if (item->type == POLICY_YT_MAP) {
			snprintf(where, sizeof(where), "a `%s` grant", what);
			policy_yt_map_keys(c->d, item, where, grant_keys, GRANT_N, v);
			if (!v[GRANT_PATH]) {
				policy_diag_err(c->d, item,
						"%s: missing key `path`; expected "
						"{ path: \"...\", sensitive: true }",
						what);
				continue;
			}
			path = grant_str(c, v[GRANT_PATH], what);
			if (v[GRANT_SENSITIVE] &&
			    policy_yt_bool(c->d, v[GRANT_SENSITIVE], "sensitive", &sensitive))
				continue;
			if (v[GRANT_TYPE] && parse_grant_type(c, v[GRANT_TYPE], what, &type))
				continue;
			item = v[GRANT_PATH];
		} else if (item->type == POLICY_YT_SCALAR) {
			path = grant_str(c, item, what);
		} else {
			policy_diag_err(c->d, item,
					"%s: found a list; expected a path or "
					"{ path: \"...\", sensitive: true }",
					what);
			continue;
		}
		if (!path)
			continue;
		if (strlen(path) >= 4096) {
			policy_diag_err(c->d, item,
					"%s: the path is %zu bytes long; expected less than 4096",
					what, strlen(path));
			continue;
		}
		if (path[0] == '~' && path[1] && path[1] != '/') {
			policy_diag_err(c->d, item,
					"%s: found `%s`; only `~` and `~/...` (the invoking "
					"user's home) are supported",
					what, path);
			continue;
		}
		if (strpbrk(path, "*?["))
			policy_diag_add(c->d, POLICY_DIAG_WARNING, item->line, item->col,
					"%s: `%s`: globs are not supported; `*`, `?` and `[` "
					"are taken as they are written (to grant many files, "
					"grant the folder that holds them)",
					what, path);
		g[*nret].path = pctx_strdup(c, path);
		g[*nret].sensitive = sensitive;
		g[*nret].type = type;
		g[*nret].line = item->line;
		g[*nret].col = item->col;
		(*nret)++;
	}
}

static void parse_filesystem(struct pctx *c, const struct policy_yt_node *n)
{
	const struct policy_yt_node *v[FS_N];

	if (policy_yt_map_keys(c->d, n, "`filesystem`", fs_keys, FS_N, v))
		return;
	if (v[FS_READ])
		parse_grants(c, v[FS_READ], "filesystem.read", &c->p->read, &c->p->nread);
	if (v[FS_WRITE])
		parse_grants(c, v[FS_WRITE], "filesystem.write", &c->p->write, &c->p->nwrite);
}

/* ------------------------------------------------------------ env */

bool policy_env_name_ok(const char *s)
{
	const char *p = s;

	if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == '_'))
		return false;
	for (p++; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return p - s <= 255;
}

static const char *env_name(struct pctx *c, const struct policy_yt_node *n, const char *what)
{
	const char *s = policy_yt_str(c->d, n, what);

	if (!s)
		return NULL;
	if (!policy_env_name_ok(s)) {
		policy_diag_err(c->d, n,
				"%s: `%s` is not a valid variable name; expected letters, digits "
				"and `_`, not starting with a digit",
				what, s);
		return NULL;
	}
	return s;
}

static void parse_env(struct pctx *c, const struct policy_yt_node *n)
{
	const struct policy_yt_node *v[ENV_N], *set, *allow;
	struct wd_policy *p = c->p;

	if (policy_yt_map_keys(c->d, n, "`env`", env_keys, ENV_N, v))
		return;
	allow = v[ENV_ALLOW];
	if (allow && !policy_yt_want_seq(c->d, allow, "env.allow")) {
		p->env_allow = pctx_calloc(c, allow->nkids, sizeof(char *));
		for (size_t i = 0; p->env_allow && i < allow->nkids; i++) {
			const char *s = env_name(c, allow->kids[i], "env.allow");
			bool dup = false;

			if (!s)
				continue;
			for (size_t k = 0; k < p->nenv_allow && !dup; k++)
				dup = p->env_allow[k] && !strcmp(p->env_allow[k], s);
			if (dup) {
				policy_diag_warn(c->d, allow->kids[i],
						 "env.allow: `%s` is listed twice", s);
				continue;
			}
			p->env_allow[p->nenv_allow++] = pctx_strdup(c, s);
		}
	}
	set = v[ENV_SET];
	if (!set)
		return;
	if (set->type != POLICY_YT_MAP) {
		char found[96];

		policy_yt_describe(set, found, sizeof(found));
		policy_diag_err(c->d, set, "env.set: found %s; expected a mapping of NAME: value",
				found);
		return;
	}
	p->env_set = pctx_calloc(c, set->nkids / 2, sizeof(*p->env_set));
	for (size_t i = 0; p->env_set && i + 1 < set->nkids; i += 2) {
		const struct policy_yt_node *key = set->kids[i], *val = set->kids[i + 1];
		const char *name = env_name(c, key, "env.set"), *value;
		bool dup = false;
		char found[96];

		if (!name)
			continue;
		for (size_t k = 0; k < p->nenv_set && !dup; k++) {
			dup = p->env_set[k].name && !strcmp(p->env_set[k].name, name);
			if (dup)
				policy_diag_err(c->d, key,
						"duplicate key `%s` in `env.set` (first given at "
						"line %d)",
						name, p->env_set[k].line);
		}
		if (dup)
			continue;
		if (val->type != POLICY_YT_SCALAR || policy_yt_is_null(val)) {
			policy_yt_describe(val, found, sizeof(found));
			policy_diag_err(c->d, val,
					"env.set.%s: found %s; expected a string (write \"\" for "
					"an empty value)",
					name, found);
			continue;
		}
		value = val->str;
		p->env_set[p->nenv_set].name = pctx_strdup(c, name);
		p->env_set[p->nenv_set].value = pctx_strdup(c, value);
		p->env_set[p->nenv_set].line = key->line;
		p->env_set[p->nenv_set].col = key->col;
		if (!p->env_set[p->nenv_set].name || !p->env_set[p->nenv_set].value) {
			free(p->env_set[p->nenv_set].name);
			free(p->env_set[p->nenv_set].value);
			continue;
		}
		p->nenv_set++;
	}
}

/* ------------------------------------------------------------ limits */

/* "1", "1.5", "0.25": a plain decimal with at most three decimals, in thousandths */
static int parse_milli(const struct policy_yt_node *n, uint64_t *ret)
{
	uint64_t whole = 0, frac = 0;
	const char *s = n->str;
	int digits = 0, fd = 0;

	if (n->type != POLICY_YT_SCALAR || !n->plain || !n->len)
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++, digits++) {
		whole = whole * 10 + (uint64_t)(*s - '0');
		if (whole > 10000000)
			return -ERANGE;
	}
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, fd++) {
			if (fd >= 3)
				return -EINVAL;
			frac = frac * 10 + (uint64_t)(*s - '0');
		}
		if (!fd)
			return -EINVAL;
	}
	if (*s || !digits)
		return -EINVAL;
	for (; fd < 3; fd++)
		frac *= 10;
	*ret = whole * 1000 + frac;
	return 0;
}

static void parse_limits(struct pctx *c, const struct policy_yt_node *n)
{
	const struct policy_yt_node *v[LIM_N];
	struct policy_limits *l = &c->p->limits;
	uint64_t val;
	char found[96];
	int ret;

	if (policy_yt_map_keys(c->d, n, "`limits`", limit_keys, LIM_N, v))
		return;
	for (int i = 0; i < LIM_N; i++) {
		char what[32];

		if (!v[i])
			continue;
		snprintf(what, sizeof(what), "limits.%s", limit_keys[i]);
		if (i == LIM_CPU) {
			policy_yt_describe(v[i], found, sizeof(found));
			ret = parse_milli(v[i], &val);
			if (ret == -EINVAL) {
				policy_diag_err(c->d, v[i],
						"limits.cpu: found %s; expected a number of cores "
						"like 1 or 1.5 (at most three decimals)",
						found);
				continue;
			}
			if (ret || val < limit_range[i].min || val > limit_range[i].max) {
				policy_diag_err(c->d, v[i],
						"limits.cpu: %s is out of range; expected 0.01 to "
						"1024 cores",
						found);
				continue;
			}
			l->cpu_milli = (uint32_t)val;
			continue;
		}
		if (policy_yt_uint(c->d, v[i], what, limit_range[i].min, limit_range[i].max, &val))
			continue;
		switch (i) {
		case LIM_MEMORY:
			l->memory_mb = val;
			break;
		case LIM_PIDS:
			l->pids = (uint32_t)val;
			break;
		case LIM_TIMEOUT:
			l->timeout_s = (uint32_t)val;
			break;
		case LIM_DISK:
			l->disk_mb = val;
			break;
		case LIM_UPLOAD:
			l->upload_kib = val;
			break;
		case LIM_UPLOAD_TOTAL:
			l->upload_total_kib = val;
			break;
		case LIM_DNS_LABEL:
			l->dns_label_kib_per_min = (uint32_t)val;
			l->dns_label_set = true;
			break;
		default:
			break;
		}
	}
}

/* ------------------------------------------------------------ sandbox */

const char *policy_sandbox_allow_name(unsigned bit)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(sandbox_allow_words); i++)
		if (sandbox_allow_words[i].bit == bit)
			return sandbox_allow_words[i].name;
	return NULL;
}

/* one backend's word at @n for @what ("sandbox.backend"). Return: the enum policy_backend, or
 * POLICY_BACKEND_AUTO (reported) */
static unsigned parse_backend_word(struct pctx *c, const struct policy_yt_node *n, const char *what)
{
	const char *s = policy_yt_str(c->d, n, what);
	unsigned b;

	if (!s)
		return POLICY_BACKEND_AUTO;
	b = policy_backend_lookup(s);
	if (!b)
		policy_diag_err(c->d, n, "%s: `%s` is not a sandbox backend; expected one of: %s",
				what, s, policy_backend_list());
	return b;
}

/* sandbox.backend: NAME (forced) and sandbox.fallback: [NAME...] (what auto-selection may use
 * when the native backend cannot run here) */
static void parse_backends(struct pctx *c, const struct policy_yt_node *backend,
			   const struct policy_yt_node *fallback)
{
	if (backend)
		c->p->sandbox_backend = parse_backend_word(c, backend, "sandbox.backend");
	if (!fallback || policy_yt_want_seq(c->d, fallback, "sandbox.fallback"))
		return;
	for (size_t i = 0; i < fallback->nkids; i++) {
		unsigned b = parse_backend_word(c, fallback->kids[i], "sandbox.fallback");

		if (b && (c->p->sandbox_fallback & (1u << b)))
			policy_diag_warn(c->d, fallback->kids[i],
					 "sandbox.fallback: `%s` is listed twice",
					 policy_backend_name(b));
		if (b)
			c->p->sandbox_fallback |= 1u << b;
	}
}

/* sandbox: { allow: [userns], backend: NAME, fallback: [NAME] } - what the seccomp filter and
 * bwrap loosen on purpose, and which backend confines the program */
static void parse_sandbox(struct pctx *c, const struct policy_yt_node *n)
{
	const struct policy_yt_node *v[SBX_N], *allow;
	char list[128] = "";

	if (policy_yt_map_keys(c->d, n, "`sandbox`", sandbox_keys, SBX_N, v))
		return;
	parse_backends(c, v[SBX_BACKEND], v[SBX_FALLBACK]);
	if (v[SBX_DOCKER]) {
		const struct policy_yt_node *dv[SBX_DOCKER_N];
		const char *img;

		if (!policy_yt_map_keys(c->d, v[SBX_DOCKER], "`sandbox.docker`",
					sandbox_docker_keys, SBX_DOCKER_N, dv) &&
		    dv[SBX_DOCKER_IMAGE]) {
			img = policy_yt_str(c->d, dv[SBX_DOCKER_IMAGE], "sandbox.docker.image");
			/* never an option of the docker CLI, one word */
			if (img && (*img == '-' || strpbrk(img, " \t\r\n\v\f")))
				policy_diag_err(c->d, dv[SBX_DOCKER_IMAGE],
						"sandbox.docker.image: expected an image reference "
						"(NAME[:TAG] or NAME@DIGEST), not `%s`",
						img);
			else if (img)
				c->p->docker_image = pctx_strdup(c, img);
		}
	}
	if (!v[SBX_ALLOW])
		return;
	allow = v[SBX_ALLOW];
	if (policy_yt_want_seq(c->d, allow, "sandbox.allow"))
		return;
	for (size_t i = 0; i < WD_ARRAY_SIZE(sandbox_allow_words); i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
			 sandbox_allow_words[i].name);
	for (size_t i = 0; i < allow->nkids; i++) {
		const struct policy_yt_node *item = allow->kids[i];
		const char *s = policy_yt_str(c->d, item, "sandbox.allow"), *near = NULL;
		unsigned best = 3, bit = 0;

		if (!s)
			continue;
		for (size_t k = 0; k < WD_ARRAY_SIZE(sandbox_allow_words); k++) {
			unsigned dist = wd_levenshtein(s, sandbox_allow_words[k].name);

			if (!strcmp(s, sandbox_allow_words[k].name))
				bit = sandbox_allow_words[k].bit;
			else if (dist < best) {
				best = dist;
				near = sandbox_allow_words[k].name;
			}
		}
		if (!bit) {
			if (near)
				policy_diag_err(
				    c->d, item,
				    "sandbox.allow: `%s` is not something the sandbox can "
				    "allow; did you mean `%s`? (expected one of: %s)",
				    s, near, list);
			else
				policy_diag_err(
				    c->d, item,
				    "sandbox.allow: `%s` is not something the sandbox can "
				    "allow; expected one of: %s",
				    s, list);
			continue;
		}
		if (c->p->sandbox_allow & bit)
			policy_diag_warn(c->d, item, "sandbox.allow: `%s` is listed twice", s);
		c->p->sandbox_allow |= bit;
	}
}

/* ------------------------------------------------------------ audit */

const char *policy_audit_files_name(enum policy_audit_files v)
{
	if ((unsigned)v >= WD_ARRAY_SIZE(audit_files_words))
		return NULL;
	return audit_files_words[v];
}

enum policy_audit_files policy_audit_files(const struct wd_policy *p)
{
	/* the default: off, since recording costs more than the 10 % it was allowed on a run
	 * that opens 10,000 granted files (docs/files.md, "Cost") */
	if (!p || p->audit_files == POLICY_FILES_UNSET)
		return POLICY_FILES_OFF;
	return (enum policy_audit_files)p->audit_files;
}

/* audit: { files: off | denied | all } - which file accesses become `file` events */
static void parse_audit(struct pctx *c, const struct policy_yt_node *n)
{
	const struct policy_yt_node *v[AUD_N];
	const char *s;

	if (policy_yt_map_keys(c->d, n, "`audit`", audit_keys, AUD_N, v) || !v[AUD_FILES])
		return;
	s = policy_yt_str(c->d, v[AUD_FILES], "audit.files");
	if (!s)
		return;
	/* up to `all`: `trace` is warden trace's own, never a policy's */
	for (size_t i = POLICY_FILES_OFF; i <= POLICY_FILES_ALL; i++)
		if (!strcmp(s, audit_files_words[i])) {
			c->p->audit_files = (unsigned)i;
			return;
		}
	policy_diag_err(c->d, v[AUD_FILES],
			"audit.files: `%s` is not a choice; expected one of: off, denied, all", s);
}

/* ------------------------------------------------------------ entry point */

/* `shadow` at the top level: refused with its own words (shadow mode is chosen per run with
 * `warden run --shadow`; a policy never turns its own enforcement off). Return: 0, or -EINVAL */
static int shadow_key(struct policy_diags *d, const struct policy_yt_node *root)
{
	for (size_t i = 0; root->type == POLICY_YT_MAP && i + 1 < root->nkids; i += 2) {
		const struct policy_yt_node *key = root->kids[i];

		if (key->type == POLICY_YT_SCALAR && !strcmp(key->str, "shadow")) {
			policy_diag_err(
			    d, key,
			    "`shadow` is not a policy key: a shadow run is asked for with "
			    "`warden run --shadow`, never by a policy file");
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * Parse @buf into *@ret. With @keep, a policy whose YAML was well-formed but whose content had
 * errors is still handed back in *@ret (for policy_load() to validate in the same pass, so every
 * error comes at once); the caller frees it. Return: 0, -EINVAL, -ENOMEM.
 */
static int parse(const char *buf, size_t len, const char *filename, struct wd_policy **ret,
		 struct policy_diags *d, bool keep)
{
	const struct policy_yt_node *v[TOP_N];
	struct policy_yt_node *root = NULL;
	struct pctx c = {.d = d};
	size_t errors = d->errors;
	int r;

	if (!filename)
		filename = "<input>";
	if (!d->file[0])
		snprintf(d->file, sizeof(d->file), "%s", filename);
	r = policy_yt_parse(buf, len, d, &root);
	if (r)
		return r;
	if (!root) {
		policy_diag_add(d, POLICY_DIAG_ERROR, 1, 1,
				"the file is empty; expected a mapping with at least `version: %d`",
				POLICY_VERSION);
		return -EINVAL;
	}
	c.p = calloc(1, sizeof(*c.p));
	if (!c.p) {
		policy_yt_free(root);
		return -ENOMEM;
	}
	c.p->file = pctx_strdup(&c, filename);
	if (shadow_key(d, root) || policy_yt_map_keys(d, root, "the top level", top_keys, TOP_N, v))
		goto out;
	parse_version(&c, root, v[TOP_VERSION]);
	if (v[TOP_COMMAND])
		parse_command(&c, v[TOP_COMMAND]);
	if (v[TOP_FS])
		parse_filesystem(&c, v[TOP_FS]);
	if (v[TOP_NET])
		policy_parse_network(&c, v[TOP_NET]);
	if (v[TOP_ENV])
		parse_env(&c, v[TOP_ENV]);
	if (v[TOP_LIMITS])
		parse_limits(&c, v[TOP_LIMITS]);
	if (v[TOP_SANDBOX])
		parse_sandbox(&c, v[TOP_SANDBOX]);
	if (v[TOP_MCP])
		policy_parse_mcp(&c, v[TOP_MCP]);
	if (v[TOP_AUDIT])
		parse_audit(&c, v[TOP_AUDIT]);
out:
	policy_yt_free(root);
	if (!c.oom && d->errors == errors && policy_matcher_build(c.p) < 0)
		c.oom = 1;
	for (size_t i = 0; i < c.p->ntool_net && !c.oom && d->errors == errors; i++)
		if (policy_matcher_build(c.p->tool_net[i].net) < 0)
			c.oom = 1;
	if (c.oom || d->errors > errors) {
		if (keep && !c.oom) {
			*ret = c.p;
			return -EINVAL;
		}
		policy_free(c.p);
		return c.oom ? -ENOMEM : -EINVAL;
	}
	*ret = c.p;
	return 0;
}

int policy_parse(const char *buf, size_t len, const char *filename, struct wd_policy **ret,
		 struct policy_diags *d)
{
	return parse(buf, len, filename, ret, d, false);
}

int policy_load_buf(const char *buf, size_t len, const char *name, const struct policy_ctx *ctx,
		    struct wd_policy **ret, struct policy_diags *d)
{
	struct wd_policy *p = NULL;
	int r;

	r = parse(buf, len, name, &p, d, true);
	if (r == -EINVAL && p) {
		/* the grants that parsed are checked too: all errors in one pass */
		if (policy_validate(p, ctx, d) == -ENOMEM)
			r = -ENOMEM;
		policy_free(p);
		return r;
	}
	if (r)
		return r;
	r = policy_validate(p, ctx, d);
	if (r) {
		policy_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

int policy_load(const char *path, const struct policy_ctx *ctx, struct wd_policy **ret,
		struct policy_diags *d)
{
	struct wd_policy *p = NULL;
	char *data = NULL;
	size_t len = 0;
	int r;

	if (!d->file[0])
		snprintf(d->file, sizeof(d->file), "%s", path);
	r = wd_read_file(path, POLICY_MAX_BYTES, &data, &len);
	if (r < 0) {
		policy_diag_add(d, POLICY_DIAG_ERROR, 0, 0, "cannot read the policy: %s%s",
				strerror(-r), r == -EFBIG ? " (the limit is 1 MiB)" : "");
		return r;
	}
	r = policy_load_buf(data, len, path, ctx, &p, d);
	free(data);
	if (r)
		return r;
	*ret = p;
	return 0;
}
