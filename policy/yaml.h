/* yaml.h - the strict YAML machinery of policy/, for the parsers of files that share its
 * rules and its file:line:col diagnostics: policies (policy/) and the gateway configuration
 * (conf/). A document becomes a tree of nodes (no anchors, aliases, tags, several documents,
 * too deep or too large ones); the schema walkers below check mappings against key tables,
 * and every problem goes to a struct policy_diags (policy.h) with its position. yaml.c.
 */
#ifndef WARDEN_POLICY_YAML_H
#define WARDEN_POLICY_YAML_H

#include "policy/policy.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Largest number of YAML nodes in one document. */
#define POLICY_YT_MAX_NODES 100000

enum policy_yt_type {
	POLICY_YT_SCALAR,
	POLICY_YT_SEQ,
	POLICY_YT_MAP,
};

/**
 * struct policy_yt_node - one node of a YAML document, as written
 * @type:	scalar, sequence or mapping
 * @line:	1-based line of its first character
 * @col:	1-based column of its first character
 * @plain:	scalar: written without quotes or block style
 * @str:	scalar: the text, NUL-terminated (NULs inside are refused)
 * @len:	scalar: strlen(@str)
 * @kids:	sequence: the items; mapping: key, value, key, value, ...
 * @nkids:	number of @kids
 */
struct policy_yt_node {
	enum policy_yt_type type;
	int line;
	int col;
	bool plain;
	char *str;
	size_t len;
	struct policy_yt_node **kids;
	size_t nkids;
	size_t cap;
};

/**
 * policy_yt_parse() - bytes -> a tree of nodes, refusing anchors, aliases, tags,
 * several documents, too deep or too large documents
 * @buf:	bytes
 * @len:	number of bytes
 * @d:		diagnostics (a syntax error is one error at its position)
 * @ret:	on success the root (NULL for an empty document)
 *
 * Return: 0, -EINVAL (reported in @d), or -ENOMEM.
 */
int policy_yt_parse(const char *buf, size_t len, struct policy_diags *d,
		    struct policy_yt_node **ret);

/** policy_yt_free() - release a tree; @n may be NULL. */
void policy_yt_free(struct policy_yt_node *n);

/** policy_yt_is_null() - a plain empty, "~", "null" scalar (an empty value). */
bool policy_yt_is_null(const struct policy_yt_node *n);

/** policy_yt_describe() - "a mapping", "a sequence", "an empty value", "`text`" etc. into @out. */
void policy_yt_describe(const struct policy_yt_node *n, char *out, size_t outlen);

/**
 * policy_diag_add() - append a diagnostic
 * Return: 0, or -ENOMEM (the diagnostic is then counted but lost).
 */
int policy_diag_add(struct policy_diags *d, enum policy_diag_level level, int line, int col,
		    const char *fmt, ...) WD_PRINTF(5, 6);

#define policy_diag_err(d, n, ...)                                                                 \
	policy_diag_add((d), POLICY_DIAG_ERROR, (n)->line, (n)->col, __VA_ARGS__)
#define policy_diag_warn(d, n, ...)                                                                \
	policy_diag_add((d), POLICY_DIAG_WARNING, (n)->line, (n)->col, __VA_ARGS__)

/**
 * policy_yt_map_keys() - check a mapping against its key table
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
int policy_yt_map_keys(struct policy_diags *d, const struct policy_yt_node *n, const char *where,
		       const char *const *keys, size_t nkeys, const struct policy_yt_node **vals);

/** policy_yt_key_of() - the key node whose value is @val in mapping @map (for positions). */
const struct policy_yt_node *policy_yt_key_of(const struct policy_yt_node *map,
					      const struct policy_yt_node *val);

/**
 * policy_yt_want_seq() - report unless @n is a sequence. Return: 0 or -EINVAL.
 */
int policy_yt_want_seq(struct policy_diags *d, const struct policy_yt_node *n, const char *what);

/**
 * policy_yt_str() - a non-empty scalar's text, or report and return NULL
 */
const char *policy_yt_str(struct policy_diags *d, const struct policy_yt_node *n, const char *what);

/**
 * policy_yt_uint() - a plain decimal integer in [@min, @max]; report otherwise
 * Return: 0 or -EINVAL.
 */
int policy_yt_uint(struct policy_diags *d, const struct policy_yt_node *n, const char *what,
		   uint64_t min, uint64_t max, uint64_t *ret);

/** policy_yt_bool() - plain true/false; report otherwise. Return: 0 or -EINVAL. */
int policy_yt_bool(struct policy_diags *d, const struct policy_yt_node *n, const char *what,
		   bool *ret);

#endif /* WARDEN_POLICY_YAML_H */
