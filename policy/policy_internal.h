/* policy_internal.h - internal to policy/: the strict YAML tree, diagnostics
 * helpers, schema walking helpers, name/address syntax and the matcher. */
#ifndef WARDEN_POLICY_INTERNAL_H
#define WARDEN_POLICY_INTERNAL_H

#include "policy/policy.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Largest number of YAML nodes in one document. */
#define YT_MAX_NODES 100000

enum yt_type {
	YT_SCALAR,
	YT_SEQ,
	YT_MAP,
};

/**
 * struct yt_node - one node of a YAML document, as written
 * @type:	scalar, sequence or mapping
 * @line:	1-based line of its first character
 * @col:	1-based column of its first character
 * @plain:	scalar: written without quotes or block style
 * @str:	scalar: the text, NUL-terminated (NULs inside are refused)
 * @len:	scalar: strlen(@str)
 * @kids:	sequence: the items; mapping: key, value, key, value, ...
 * @nkids:	number of @kids
 */
struct yt_node {
	enum yt_type type;
	int line;
	int col;
	bool plain;
	char *str;
	size_t len;
	struct yt_node **kids;
	size_t nkids;
	size_t cap;
};

/**
 * yt_parse() - bytes -> a tree of nodes, refusing anchors, aliases, tags,
 * several documents, too deep or too large documents
 * @buf:	bytes
 * @len:	number of bytes
 * @d:		diagnostics (a syntax error is one error at its position)
 * @ret:	on success the root (NULL for an empty document)
 *
 * Return: 0, -EINVAL (reported in @d), or -ENOMEM.
 */
int yt_parse(const char *buf, size_t len, struct policy_diags *d, struct yt_node **ret);

/** yt_free() - release a tree; @n may be NULL. */
void yt_free(struct yt_node *n);

/** yt_is_null() - a plain empty, "~", "null" scalar (an empty value). */
bool yt_is_null(const struct yt_node *n);

/** yt_describe() - "a mapping", "a sequence", "an empty value", "`text`" etc. into @out. */
void yt_describe(const struct yt_node *n, char *out, size_t outlen);

/**
 * diag_add() - append a diagnostic
 * Return: 0, or -ENOMEM (the diagnostic is then counted but lost).
 */
int diag_add(struct policy_diags *d, enum policy_diag_level level, int line, int col,
	     const char *fmt, ...) WD_PRINTF(5, 6);

#define diag_err(d, n, ...) diag_add((d), POLICY_DIAG_ERROR, (n)->line, (n)->col, __VA_ARGS__)
#define diag_warn(d, n, ...) diag_add((d), POLICY_DIAG_WARNING, (n)->line, (n)->col, __VA_ARGS__)

/**
 * yt_map_keys() - check a mapping against its key table
 * @d:		diagnostics
 * @n:		the node that should be a mapping
 * @where:	its name for messages ("`filesystem`", "the top level")
 * @keys:	valid keys
 * @nkeys:	number of @keys
 * @vals:	out: for each key, its value node or NULL when absent
 *
 * Reports: not a mapping, a non-scalar key, an unknown key (with the nearest
 * valid one), a duplicate key.
 *
 * Return: 0 when @n is a mapping (even if some keys were bad), -EINVAL
 * when it is not one.
 */
int yt_map_keys(struct policy_diags *d, const struct yt_node *n, const char *where,
		const char *const *keys, size_t nkeys, const struct yt_node **vals);

/** yt_key_of() - the key node whose value is @val in mapping @map (for positions). */
const struct yt_node *yt_key_of(const struct yt_node *map, const struct yt_node *val);

/**
 * yt_want_seq() - report unless @n is a sequence. Return: 0 or -EINVAL.
 */
int yt_want_seq(struct policy_diags *d, const struct yt_node *n, const char *what);

/**
 * yt_str() - a non-empty scalar's text, or report and return NULL
 */
const char *yt_str(struct policy_diags *d, const struct yt_node *n, const char *what);

/**
 * yt_uint() - a plain decimal integer in [@min, @max]; report otherwise
 * Return: 0 or -EINVAL.
 */
int yt_uint(struct policy_diags *d, const struct yt_node *n, const char *what, uint64_t min,
	    uint64_t max, uint64_t *ret);

/** yt_bool() - plain true/false; report otherwise. Return: 0 or -EINVAL. */
int yt_bool(struct policy_diags *d, const struct yt_node *n, const char *what, bool *ret);

/* ------------------------------------------------------------ syntax helpers */

/** net_is_ip_literal() - true for a dotted-quad IPv4 or any IPv6 text (brackets allowed). */
bool net_is_ip_literal(const char *s);

enum host_check {
	HOST_OK,
	HOST_EMPTY,
	HOST_TOO_LONG,
	HOST_LABEL_EMPTY,
	HOST_LABEL_TOO_LONG,
	HOST_BAD_CHAR,
	HOST_HYPHEN_EDGE,
	HOST_ALL_NUMERIC,
};

/**
 * host_normalise() - lower-case, drop one trailing dot, and check a name
 * @in:		the name as written (no wildcard)
 * @out:	at least 254 bytes
 * @outlen:	size of @out
 *
 * Return: HOST_OK or the first problem found.
 */
enum host_check host_normalise(const char *in, char *out, size_t outlen);

/** host_check_text() - a person's description of a host_check value. */
const char *host_check_text(enum host_check c);

/**
 * yaml_put_str() - append @s as a double-quoted YAML (and JSON-compatible)
 * string with escapes. Return: 0, or -ENOMEM.
 */
int yaml_put_str(struct wd_buf *out, const char *s);

/* ------------------------------------------------------------------- matcher */

/* one name rule (exact or wildcard) in a table of the matcher */
struct mentry {
	const char *key; /* the rule's host (for a wildcard, its suffix) */
	uint32_t rule;
};

/**
 * struct policy_matcher - the compiled matcher (match.c)
 * @exact:	struct mentry by exact name (several per name: one per rule)
 * @anyport:	the rules match on any port (a ceiling's denied names)
 * @wild:	struct mentry by wildcard suffix
 * @wild_lens:	bit n set: some wildcard suffix is n bytes long (only suffixes of those
 *		lengths are looked up)
 * @names:	one entry per rule (those of cidr rules unused), the tables' items
 * @cidr:	rule indices of the cidr rules, in order
 * @ncidr:	their number
 * @below:	matcher_build_below(): one struct mentry for each proper suffix of a name
 *		rule's host that starts after a dot (`example.com` and `com` for
 *		`a.example.com`), sorted by suffix: the rules that lie below a name are a
 *		range of it (a sorted array, not a table: a common suffix has many rules)
 * @nbelow:	its length
 */
struct policy_matcher {
	bool anyport; /* every rule matches on every port (an effective policy's @denied) */
	struct wd_htable exact;
	struct wd_htable wild;
	uint64_t wild_lens[4];
	struct mentry *names;
	uint32_t *cidr;
	size_t ncidr;
	struct mentry *below;
	size_t nbelow;
};

/* The parser's state while it walks one policy (policy.c, network.c). */
struct pctx {
	struct policy_diags *d;
	struct wd_policy *p;
	int oom; /* an allocation failed: the parse fails with -ENOMEM */
};

/* pctx_strdup(), pctx_calloc() - strdup(), calloc() (of at least one element) that set
 * @c->oom when they fail. */
char *pctx_strdup(struct pctx *c, const char *s);
void *pctx_calloc(struct pctx *c, size_t n, size_t size);

/* parse_network() - the `network` map into @c->p->rules (network.c) */
void parse_network(struct pctx *c, const struct yt_node *n);

/*
 * rule_item() - one `network.allow`-style item into @r (network.c): a string or a
 * { host | cidr, ports } map; with @from non-NULL the map may also have `from`
 * (a ceiling's rule), whose value node is stored there (NULL when absent). @where
 * names the list in messages. Return: 0, or -EINVAL after reporting.
 */
int rule_item(struct pctx *c, const struct yt_node *item, const char *where, struct policy_rule *r,
	      const struct yt_node **from);

/* rule_finish() - sort and deduplicate @r's ports, then make its text (network.c) */
void rule_finish(struct pctx *c, struct policy_rule *r);

/* rule_clear() - free what @r owns and zero it (ceiling.c) */
void rule_clear(struct policy_rule *r);

/* parse_ceiling() - the gateway config's `ceiling` map (ceiling.c); @key is its key node,
 * @file the config's name for the rules' positions. Return: the ceiling, or NULL
 * (errors reported, or @c->oom set). */
struct policy_ceiling *parse_ceiling(struct pctx *c, const struct yt_node *key,
				     const struct yt_node *n, const char *file);

/* render_ceiling() - append the `ceiling:` section (ceiling.c). Return: 0 or -ENOMEM */
int render_ceiling(const struct policy_ceiling *c, struct wd_buf *out);

/**
 * matcher_build() - compile @p->rules into @p->matcher
 * Return: 0, or -ENOMEM.
 */
int matcher_build(struct wd_policy *p);

/* matcher_build_anyport() - matcher_build() for rules that match on any port. Return: 0 or -ENOMEM
 */
int matcher_build_anyport(struct wd_policy *p);

/* matcher_build_below() - add the @below index to @p's built matcher. Return: 0 or -ENOMEM */
int matcher_build_below(struct wd_policy *p);

/*
 * matcher_overlapping() - every name rule of @p (built with matcher_build_below()) whose
 * pattern may overlap the pattern @wild ? `*.name` : `name` (any port): the exact rules for
 * the name (an exact pattern), the wildcards over the name or over a proper suffix of it,
 * and (a wildcard pattern) the rules below the name. Their indices go to @out (room for
 * @max; more are counted), in no order, possibly twice. Return: how many there are.
 */
size_t matcher_overlapping(const struct wd_policy *p, bool wild, const char *name, uint32_t *out,
			   size_t max);

/** matcher_free() - release a matcher; @m may be NULL. */
void matcher_free(struct policy_matcher *m);

#endif /* WARDEN_POLICY_INTERNAL_H */
