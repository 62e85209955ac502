/* infer_fold.c - folding grants: a tree of the granted paths, folded from the deepest folders
 * up into one grant per folder with INFER_FOLD_MIN or more entries (the rules: docs/trace.md). */
#include "trace/infer_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A tree of the leaves' paths, one node per component, to fold them bottom-up. Every node is
 * also in the tree's flat list, which frees them; the walks below use an explicit stack. */
struct tnode {
	char *name; /* one component; "" at the root */
	struct tnode **kids;
	size_t nkids;
	bool leaf;
};

struct tree {
	struct tnode **all;
	size_t n;
};

/* a path has at most this many components */
#define TREE_DEPTH (PATH_MAX / 2 + 2)

static void tree_free(struct tree *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->all[i]->kids);
		free(t->all[i]->name);
		free(t->all[i]);
	}
	free(t->all);
	memset(t, 0, sizeof(*t));
}

static struct tnode *tnode_new(struct tree *t, const char *name, size_t len)
{
	struct tnode **all = realloc(t->all, (t->n + 1) * sizeof(struct tnode *));
	struct tnode *n;

	if (!all)
		return NULL;
	t->all = all;
	n = calloc(1, sizeof(*n));
	if (n && !(n->name = strndup(name, len))) {
		free(n);
		n = NULL;
	}
	if (n)
		t->all[t->n++] = n;
	return n;
}

/* the node for the clean absolute @path below @root, made as needed */
static struct tnode *tnode_get(struct tree *t, struct tnode *root, const char *path)
{
	struct tnode *n = root;
	const char *p = path;

	while (*p == '/')
		p++;
	while (*p) {
		const char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p), i;

		for (i = 0; i < n->nkids; i++)
			if (strlen(n->kids[i]->name) == len && !memcmp(n->kids[i]->name, p, len))
				break;
		if (i == n->nkids) {
			struct tnode **v =
			    realloc(n->kids, (n->nkids + 1) * sizeof(struct tnode *));
			struct tnode *k;

			if (!v)
				return NULL;
			n->kids = v;
			if (!(k = tnode_new(t, p, len)))
				return NULL;
			v[n->nkids++] = k;
		}
		n = n->kids[i];
		p += len;
		while (*p == '/')
			p++;
	}
	return n;
}

/* one node on a walk's stack: @next kid to visit, @len of its path, kids that hold leaves */
struct frame {
	struct tnode *n;
	size_t next;
	size_t len;
	size_t holding;
};

/* @path (PATH_MAX) += "/" + @k's name, as a new frame on @st; false when it does not fit */
static bool descend(struct frame *st, size_t *sp, struct tnode *k, char *path)
{
	size_t len = st[*sp].len, l2 = len + 1 + strlen(k->name);

	if (l2 >= PATH_MAX || *sp + 1 >= TREE_DEPTH)
		return false;
	path[len] = '/';
	memcpy(path + len + 1, k->name, l2 - len);
	(*sp)++;
	st[*sp] = (struct frame){.n = k, .len = l2};
	return true;
}

/* Fold, from the deepest folders up: a grantable folder with INFER_FOLD_MIN or more entries
 * that hold leaves becomes a leaf itself. */
static int tree_fold(const struct infer_ctx *c, struct tnode *root)
{
	struct frame *st = calloc(TREE_DEPTH, sizeof(*st));
	char path[PATH_MAX] = "";
	size_t sp = 0;

	if (!st)
		return -ENOMEM;
	st[0].n = root;
	for (;;) {
		struct frame *f = &st[sp];
		bool holds;

		if (!f->n->leaf && f->next < f->n->nkids) {
			descend(st, &sp, f->n->kids[f->next++], path);
			continue;
		}
		/* a folder holding a unix socket the program reached is never one grant: the
		 * socket stays its own line, with its own comment */
		if (!f->n->leaf && f->holding >= INFER_FOLD_MIN &&
		    infer_grantable_folder(c, f->len ? path : "/") &&
		    !infer_holds_socket(c, f->len ? path : "/"))
			f->n->leaf = true;
		holds = f->n->leaf || f->holding;
		if (!sp)
			break;
		sp--;
		st[sp].holding += holds;
		path[st[sp].len] = 0;
	}
	free(st);
	return 0;
}

/* the topmost leaves of the tree, in path order, into @l */
static int tree_collect(struct tnode *root, struct leaves *l)
{
	struct frame *st = calloc(TREE_DEPTH, sizeof(*st));
	char path[PATH_MAX] = "";
	size_t sp = 0;
	int rc = 0;

	if (!st)
		return -ENOMEM;
	st[0].n = root;
	while (!rc) {
		struct frame *f = &st[sp];

		if (f->n->leaf && f->next == 0) {
			f->next = SIZE_MAX; /* below a leaf: nothing more */
			rc = infer_leaves_add(l, f->len ? path : "/");
			continue;
		}
		if (f->next < f->n->nkids) {
			descend(st, &sp, f->n->kids[f->next++], path);
			continue;
		}
		if (!sp)
			break;
		sp--;
		path[st[sp].len] = 0;
	}
	free(st);
	return rc;
}

static int cmp_leaf(const void *a, const void *b)
{
	return strcmp(((const struct leaf *)a)->path, ((const struct leaf *)b)->path);
}

/* Fold @l: a grantable folder in which INFER_FOLD_MIN or more entries would get grants gets
 * one grant in their place, from the deepest folders up. */
int infer_fold(struct infer_ctx *c, struct leaves *l)
{
	struct tree t = {0};
	struct tnode *root = tnode_new(&t, "", 0);
	struct leaves out = {0};
	int rc = 0;

	if (!root) {
		tree_free(&t);
		return -ENOMEM;
	}
	for (size_t i = 0; i < l->n; i++) {
		struct tnode *n;

		if (l->v[i].dead)
			continue;
		if (!(n = tnode_get(&t, root, l->v[i].path))) {
			rc = -ENOMEM;
			goto out;
		}
		n->leaf = true;
	}
	rc = tree_fold(c, root);
	if (!rc)
		rc = tree_collect(root, &out);
	if (!rc) {
		infer_leaves_free(l);
		*l = out;
		memset(&out, 0, sizeof(out));
		if (l->n)
			qsort(l->v, l->n, sizeof(*l->v), cmp_leaf);
	}
out:
	infer_leaves_free(&out);
	tree_free(&t);
	return rc;
}
