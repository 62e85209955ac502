/* yaml.c - the strict YAML front end shared by policies and gateway configs:
 * libyaml events -> a small node tree, the diagnostics list, and the schema
 * helpers (key tables with did-you-mean, typed scalars).
 *
 * Theory of operation: libyaml's event parser is driven to the end of the
 * stream; each event becomes a node or closes one. Anything that would let a
 * document mean more than it says is refused here, before any schema sees it:
 * anchors and aliases (billion laughs, shared nodes), tags, a second document,
 * nesting deeper than POLICY_MAX_DEPTH, more than POLICY_YT_MAX_NODES nodes, NUL
 * bytes inside scalars. A syntax error stops the parse and is reported at
 * libyaml's problem position.
 */
#include "policy/policy_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

void policy_diags_init(struct policy_diags *d)
{
	memset(d, 0, sizeof(*d));
}

void policy_diags_free(struct policy_diags *d)
{
	if (!d)
		return;
	free(d->v);
	d->v = NULL;
	d->n = d->cap = 0;
	d->errors = d->warnings = d->dropped = 0;
}

static int diag_cmp(const void *a, const void *b)
{
	const struct policy_diag *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return 0;
}

void policy_diags_sort(struct policy_diags *d)
{
	/* insertion sort: stable, and lists are short */
	for (size_t i = 1; i < d->n; i++) {
		struct policy_diag t = d->v[i];
		size_t j = i;

		while (j > 0 && diag_cmp(&d->v[j - 1], &t) > 0) {
			d->v[j] = d->v[j - 1];
			j--;
		}
		d->v[j] = t;
	}
}

int policy_diag_format(const struct policy_diags *d, size_t i, struct wd_buf *out)
{
	const struct policy_diag *g;
	const char *lvl;

	if (!d || i >= d->n)
		return -EINVAL;
	g = &d->v[i];
	lvl = g->level == POLICY_DIAG_ERROR ? "error" : "warning";
	if (g->line > 0)
		return wd_buf_printf(out, "%s:%d:%d: %s: %s", d->file, g->line, g->col, lvl,
				     g->msg);
	return wd_buf_printf(out, "%s: %s: %s", d->file, lvl, g->msg);
}

int policy_diag_add(struct policy_diags *d, enum policy_diag_level level, int line, int col,
		    const char *fmt, ...)
{
	struct policy_diag *g;
	va_list ap;

	if (level == POLICY_DIAG_ERROR)
		d->errors++;
	else
		d->warnings++;
	if (d->n >= POLICY_MAX_DIAGS) {
		d->dropped++;
		return 0;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		struct policy_diag *v = realloc(d->v, cap * sizeof(*v));

		if (!v) {
			d->dropped++;
			return -ENOMEM;
		}
		d->v = v;
		d->cap = cap;
	}
	g = &d->v[d->n++];
	g->level = level;
	g->line = line;
	g->col = col;
	va_start(ap, fmt);
	vsnprintf(g->msg, sizeof(g->msg), fmt, ap);
	va_end(ap);
	return 0;
}

/* ---------------------------------------------------------------- the tree */

/* NOLINTNEXTLINE(misc-no-recursion): a tree is at most POLICY_MAX_DEPTH deep (yt_event) */
void policy_yt_free(struct policy_yt_node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nkids; i++)
		policy_yt_free(n->kids[i]);
	free(n->kids);
	free(n->str);
	free(n);
}

static struct policy_yt_node *yt_new(enum policy_yt_type type, const yaml_mark_t *m)
{
	struct policy_yt_node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->type = type;
	n->line = (int)m->line + 1;
	n->col = (int)m->column + 1;
	return n;
}

static int yt_add_kid(struct policy_yt_node *parent, struct policy_yt_node *kid)
{
	if (parent->nkids == parent->cap) {
		size_t cap = parent->cap ? parent->cap * 2 : 4;
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		struct policy_yt_node **k = realloc(parent->kids, cap * sizeof(*k));

		if (!k)
			return -ENOMEM;
		parent->kids = k;
		parent->cap = cap;
	}
	parent->kids[parent->nkids++] = kid;
	return 0;
}

/* names for the refusals, by event type */
static const char *const event_name[] = {
    [YAML_NO_EVENT] = "nothing",
    [YAML_STREAM_START_EVENT] = "stream start",
    [YAML_STREAM_END_EVENT] = "stream end",
    [YAML_DOCUMENT_START_EVENT] = "document start",
    [YAML_DOCUMENT_END_EVENT] = "document end",
    [YAML_ALIAS_EVENT] = "alias",
    [YAML_SCALAR_EVENT] = "scalar",
    [YAML_SEQUENCE_START_EVENT] = "sequence",
    [YAML_SEQUENCE_END_EVENT] = "sequence end",
    [YAML_MAPPING_START_EVENT] = "mapping",
    [YAML_MAPPING_END_EVENT] = "mapping end",
};

/* Anchors and tags of a node-starting event; NULL when the event has none. */
static void event_props(const yaml_event_t *ev, const char **anchor, const char **tag)
{
	*anchor = *tag = NULL;
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		*anchor = (const char *)ev->data.scalar.anchor;
		*tag = (const char *)ev->data.scalar.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		*anchor = (const char *)ev->data.sequence_start.anchor;
		*tag = (const char *)ev->data.sequence_start.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		*anchor = (const char *)ev->data.mapping_start.anchor;
		*tag = (const char *)ev->data.mapping_start.tag;
		break;
	case YAML_NO_EVENT:
	case YAML_STREAM_START_EVENT:
	case YAML_STREAM_END_EVENT:
	case YAML_DOCUMENT_START_EVENT:
	case YAML_DOCUMENT_END_EVENT:
	case YAML_ALIAS_EVENT:
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		break;
	}
}

struct yt_state {
	struct policy_yt_node *stack[POLICY_MAX_DEPTH + 1];
	int depth;
	struct policy_yt_node *root;
	size_t nodes;
	int docs;
	bool done;
};

/* Attach a finished or opened node to its parent (or make it the root). */
static int yt_attach(struct yt_state *st, struct policy_yt_node *n)
{
	if (st->depth == 0) {
		if (st->root) /* one document has one root; libyaml never sends a second */
			return -EINVAL;
		st->root = n;
		return 0;
	}
	return yt_add_kid(st->stack[st->depth - 1], n);
}

/* One event. Return: 0 to go on, 1 to stop (reported), -ENOMEM. */
static int yt_event(struct yt_state *st, const yaml_event_t *ev, struct policy_diags *d)
{
	int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
	const char *anchor, *tag;
	struct policy_yt_node *n;
	int ret;

	event_props(ev, &anchor, &tag);
	if (ev->type == YAML_ALIAS_EVENT) {
		policy_diag_add(d, POLICY_DIAG_ERROR, line, col,
				"found the alias `*%s`; anchors and aliases are not allowed",
				(const char *)ev->data.alias.anchor);
		return 1;
	}
	if (anchor) {
		policy_diag_add(d, POLICY_DIAG_ERROR, line, col,
				"found the anchor `&%s`; anchors and aliases are not allowed",
				anchor);
		return 1;
	}
	if (tag) {
		policy_diag_add(d, POLICY_DIAG_ERROR, line, col,
				"found the tag `%s`; tags are not allowed, write plain values",
				tag);
		return 1;
	}
	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (++st->docs > 1) {
			policy_diag_add(d, POLICY_DIAG_ERROR, line, col,
					"found a second YAML document; expected exactly one");
			return 1;
		}
		return 0;
	case YAML_SCALAR_EVENT:
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if (++st->nodes > POLICY_YT_MAX_NODES) {
			policy_diag_add(d, POLICY_DIAG_ERROR, line, col,
					"too many values (more than %d); expected a small document",
					POLICY_YT_MAX_NODES);
			return 1;
		}
		break;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (st->depth > 0)
			st->depth--;
		return 0;
	case YAML_STREAM_END_EVENT:
		st->done = true;
		return 0;
	case YAML_NO_EVENT:
	case YAML_STREAM_START_EVENT:
	case YAML_DOCUMENT_END_EVENT:
	case YAML_ALIAS_EVENT:
		return 0;
	}

	if (ev->type == YAML_SCALAR_EVENT) {
		n = yt_new(POLICY_YT_SCALAR, &ev->start_mark);
		if (!n)
			return -ENOMEM;
		if (memchr(ev->data.scalar.value, '\0', ev->data.scalar.length)) {
			free(n);
			policy_diag_add(d, POLICY_DIAG_ERROR, line, col,
					"found a NUL character in a value; expected text");
			return 1;
		}
		n->str = strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
		if (!n->str) {
			free(n);
			return -ENOMEM;
		}
		n->len = ev->data.scalar.length;
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		ret = yt_attach(st, n);
		if (ret < 0)
			policy_yt_free(n);
		return ret;
	}

	if (st->depth >= POLICY_MAX_DEPTH) {
		policy_diag_add(d, POLICY_DIAG_ERROR, line, col,
				"found a %s nested %d levels deep; expected at most %d levels",
				event_name[ev->type], st->depth + 1, POLICY_MAX_DEPTH);
		return 1;
	}
	n = yt_new(ev->type == YAML_SEQUENCE_START_EVENT ? POLICY_YT_SEQ : POLICY_YT_MAP,
		   &ev->start_mark);
	if (!n)
		return -ENOMEM;
	ret = yt_attach(st, n);
	if (ret < 0) {
		policy_yt_free(n);
		return ret;
	}
	st->stack[st->depth++] = n;
	return 0;
}

int policy_yt_parse(const char *buf, size_t len, struct policy_diags *d,
		    struct policy_yt_node **ret)
{
	struct yt_state st = {0};
	yaml_parser_t parser;
	yaml_event_t ev;
	int r = 0;

	if (len > POLICY_MAX_BYTES) {
		policy_diag_add(d, POLICY_DIAG_ERROR, 0, 0,
				"the file has %zu bytes; expected at most %d", len,
				POLICY_MAX_BYTES);
		return -EINVAL;
	}
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)(buf ? buf : ""), len);
	while (!st.done) {
		if (!yaml_parser_parse(&parser, &ev)) {
			if (parser.error == YAML_MEMORY_ERROR) {
				r = -ENOMEM;
				break;
			}
			policy_diag_add(
			    d, POLICY_DIAG_ERROR, (int)parser.problem_mark.line + 1,
			    (int)parser.problem_mark.column + 1, "YAML syntax error: %s%s%s",
			    parser.problem ? parser.problem : "malformed document",
			    parser.context ? " " : "", parser.context ? parser.context : "");
			r = -EINVAL;
			break;
		}
		r = yt_event(&st, &ev, d);
		yaml_event_delete(&ev);
		if (r) {
			r = r < 0 ? r : -EINVAL;
			break;
		}
	}
	yaml_parser_delete(&parser);
	if (r) {
		policy_yt_free(st.root);
		return r;
	}
	*ret = st.root;
	return 0;
}

/* ---------------------------------------------------------- schema helpers */

bool policy_yt_is_null(const struct policy_yt_node *n)
{
	if (!n || n->type != POLICY_YT_SCALAR || !n->plain)
		return false;
	return n->len == 0 || !strcmp(n->str, "~") || !strcmp(n->str, "null") ||
	       !strcmp(n->str, "Null") || !strcmp(n->str, "NULL");
}

void policy_yt_describe(const struct policy_yt_node *n, char *out, size_t outlen)
{
	if (!n) {
		snprintf(out, outlen, "nothing");
		return;
	}
	switch (n->type) {
	case POLICY_YT_MAP:
		snprintf(out, outlen, "a mapping");
		return;
	case POLICY_YT_SEQ:
		snprintf(out, outlen, "a sequence");
		return;
	case POLICY_YT_SCALAR:
		break;
	}
	if (policy_yt_is_null(n)) {
		snprintf(out, outlen, "an empty value");
		return;
	}
	if (n->len > 60)
		snprintf(out, outlen, "`%.57s...`", n->str);
	else
		snprintf(out, outlen, "`%s`", n->str);
}

/* the nearest of @keys to @word, or NULL when none is close */
static const char *nearest(const char *word, const char *const *keys, size_t nkeys)
{
	unsigned best = 255, limit;
	const char *hit = NULL;

	for (size_t i = 0; i < nkeys; i++) {
		unsigned dist = wd_levenshtein(word, keys[i]);

		if (dist < best) {
			best = dist;
			hit = keys[i];
		}
	}
	limit = strlen(word) / 3 > 2 ? (unsigned)strlen(word) / 3 : 2;
	return best <= limit ? hit : NULL;
}

int policy_yt_map_keys(struct policy_diags *d, const struct policy_yt_node *n, const char *where,
		       const char *const *keys, size_t nkeys, const struct policy_yt_node **vals)
{
	char found[96], list[512];
	size_t off = 0;

	for (size_t k = 0; k < nkeys; k++)
		vals[k] = NULL;
	if (!n || n->type != POLICY_YT_MAP) {
		policy_yt_describe(n, found, sizeof(found));
		if (n)
			policy_diag_err(d, n, "%s: found %s; expected a mapping (key: value)",
					where, found);
		return -EINVAL;
	}
	list[0] = '\0';
	for (size_t k = 0; k < nkeys && off < sizeof(list); k++) {
		int w = snprintf(list + off, sizeof(list) - off, "%s%s", k ? ", " : "", keys[k]);

		if (w < 0)
			break;
		off += (size_t)w;
	}
	for (size_t i = 0; i + 1 < n->nkids; i += 2) {
		const struct policy_yt_node *key = n->kids[i];
		const char *hint;
		size_t k;

		if (key->type != POLICY_YT_SCALAR || policy_yt_is_null(key)) {
			policy_yt_describe(key, found, sizeof(found));
			policy_diag_err(d, key, "%s: found %s as a key; expected one of: %s", where,
					found, list);
			continue;
		}
		for (k = 0; k < nkeys; k++)
			if (!strcmp(key->str, keys[k]))
				break;
		if (k == nkeys) {
			policy_yt_describe(key, found, sizeof(found));
			hint = nearest(key->str, keys, nkeys);
			if (hint)
				policy_diag_err(d, key, "unknown key %s in %s; did you mean `%s`?",
						found, where, hint);
			else
				policy_diag_err(d, key, "unknown key %s in %s; expected one of: %s",
						found, where, list);
			continue;
		}
		if (vals[k]) {
			const struct policy_yt_node *first = policy_yt_key_of(n, vals[k]);

			policy_diag_err(d, key, "duplicate key `%s` in %s (first given at line %d)",
					keys[k], where, first ? first->line : 0);
			continue;
		}
		vals[k] = n->kids[i + 1];
	}
	return 0;
}

const struct policy_yt_node *policy_yt_key_of(const struct policy_yt_node *map,
					      const struct policy_yt_node *val)
{
	for (size_t i = 0; map && i + 1 < map->nkids; i += 2)
		if (map->kids[i + 1] == val)
			return map->kids[i];
	return NULL;
}

int policy_yt_want_seq(struct policy_diags *d, const struct policy_yt_node *n, const char *what)
{
	char found[96];

	if (n->type == POLICY_YT_SEQ)
		return 0;
	policy_yt_describe(n, found, sizeof(found));
	policy_diag_err(d, n, "%s: found %s; expected a list ([a, b] or one `- item` per line)",
			what, found);
	return -EINVAL;
}

const char *policy_yt_str(struct policy_diags *d, const struct policy_yt_node *n, const char *what)
{
	char found[96];

	if (n->type == POLICY_YT_SCALAR && !policy_yt_is_null(n) && n->len > 0)
		return n->str;
	policy_yt_describe(n, found, sizeof(found));
	policy_diag_err(d, n, "%s: found %s; expected a non-empty string", what, found);
	return NULL;
}

/* a quoted scalar of decimal digits only (`"1"`): a number written as a string */
static bool quoted_digits(const struct policy_yt_node *n)
{
	return n->type == POLICY_YT_SCALAR && !n->plain && n->len > 0 && n->len <= 20 &&
	       strspn(n->str, "0123456789") == n->len;
}

int policy_yt_uint(struct policy_diags *d, const struct policy_yt_node *n, const char *what,
		   uint64_t min, uint64_t max, uint64_t *ret)
{
	char found[96];
	uint64_t v = 0;
	size_t i;

	policy_yt_describe(n, found, sizeof(found));
	if (n->type != POLICY_YT_SCALAR || !n->plain || n->len == 0 || policy_yt_is_null(n))
		goto bad;
	for (i = 0; i < n->len; i++) {
		unsigned digit;

		if (n->str[i] < '0' || n->str[i] > '9')
			goto bad;
		digit = (unsigned)(n->str[i] - '0');
		if (v > (UINT64_MAX - digit) / 10) {
			v = UINT64_MAX;
			break;
		}
		v = v * 10 + digit;
	}
	if (v < min || v > max) {
		policy_diag_err(d, n, "%s: %s is out of range; expected %llu to %llu", what, found,
				(unsigned long long)min, (unsigned long long)max);
		return -EINVAL;
	}
	*ret = v;
	return 0;
bad:
	if (quoted_digits(n)) {
		policy_diag_err(d, n,
				"%s: found `\"%s\"`; expected a number, not a string "
				"(write it without quotes: `%s`)",
				what, n->str, n->str);
		return -EINVAL;
	}
	policy_diag_err(d, n, "%s: found %s; expected a whole number from %llu to %llu", what,
			found, (unsigned long long)min, (unsigned long long)max);
	return -EINVAL;
}

int policy_yt_bool(struct policy_diags *d, const struct policy_yt_node *n, const char *what,
		   bool *ret)
{
	char found[96];

	if (n->type == POLICY_YT_SCALAR && n->plain) {
		if (!strcmp(n->str, "true")) {
			*ret = true;
			return 0;
		}
		if (!strcmp(n->str, "false")) {
			*ret = false;
			return 0;
		}
	}
	policy_yt_describe(n, found, sizeof(found));
	policy_diag_err(d, n, "%s: found %s; expected true or false", what, found);
	return -EINVAL;
}
