/* verify.c - `warden logs --verify`'s check: the hash chain line by line through the log's
 * files, and each signed run.exit (its signature, its root and count against the run's
 * lines before it). Reads files; prints nothing: the result says what and where. */
#include "audit/audit.h"
#include "audit/record.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* reading a log: close-on-exec where "e" exists; on Windows bytes as they are ("b": text mode
 * would drop CRs and stop at a ^Z, and the C runtime refuses "e") */
#ifdef _WIN32
#define VERIFY_READ "rb"
#else
#define VERIFY_READ "re"
#endif

/*
 * Theory of operation
 *
 * One pass over the files, oldest first, keeping the digest of the line before. Every line
 * but the very first must end with ,"prev":"HEX"} naming that digest; the first line of the
 * first file links to something this check cannot see (an earlier file, or zeros for the
 * start of the chain); the first line of a later file links to a line of the file before it
 * (the last one when the rotation was made: the gateway's worker, which cannot follow the
 * path, may append to the rotated file after that, so any of its lines is taken), and lines an
 * older writer left before the chain began are counted, not refused (the first chained line still
 * has to link to the last of them). The first line that does not fit is the answer: an edited line
 * shows at the line after it, a removed or reordered one at the line that now follows the gap.
 *
 * A later file must begin with a signed audit.anchor (anchor.c): its signature, and that the
 * file before has, as its line "lines", the line whose hash the anchor names (so lines cut from
 * the end of that file, or a later file written again and chained anew, show). An anchor
 * elsewhere (the first file read) has its signature checked.
 *
 * Each run's lines from its run.start on are kept as digests; a signed run.exit is checked
 * against the first "events" of them (lines of the run written after the launcher read the
 * log for its root are not covered, and come after them). The gateway daemon's run.record
 * (record.c) covers every line of its run in the files it read: checked against the first
 * "events" of every line of the run read here.
 */

/* the chain's member, as a chained writer ends a line: ,"prev":"<64 hex>"} */
#define PREV_KEY ",\"prev\":\""
#define PREV_TAIL (sizeof(PREV_KEY) - 1 + 2 * AUDIT_HASH_LEN + 2)

struct vrun {
	char *id;
	bool started;
	bool early; /* first seen in a first file continuing a chain: may have more */
	struct audit_leaves leaves; /* from its run.start on (run.exit) */
	struct audit_leaves seen;   /* every line of it read (the daemon's run.record) */
};

struct vstate {
	struct wd_htable runs;
	struct vrun **all;
	size_t nall;
	struct wd_buf part;
	uint8_t prev[AUDIT_HASH_LEN];
	bool have_prev, chained;
	bool continues;	       /* the first file's first line links to a line before it */
	const char *prev_file; /* where the line before is */
	uint64_t prev_no;
	struct audit_leaves file_lines; /* the digests of the previous file's lines (a rotation) */
	struct audit_leaves cur_lines;	/* and of this one's, so far */
};

static bool run_eq(const void *item, const void *key)
{
	return !strcmp(((const struct vrun *)item)->id, key);
}

/* run_get() - the run @id's state, made on first sight. Return: it, or NULL (no memory) */
static struct vrun *run_get(struct vstate *v, const char *id)
{
	uint64_t h = wd_hash_str(id);
	struct vrun *r = wd_htable_find(&v->runs, h, run_eq, id), **all;

	if (r)
		return r;
	all = realloc(v->all, (v->nall + 1) * sizeof(struct vrun *));
	if (!all)
		return NULL;
	v->all = all;
	r = calloc(1, sizeof(*r));
	if (!r || !(r->id = strdup(id)) || wd_htable_insert(&v->runs, h, r) < 0) {
		if (r)
			free(r->id);
		free(r);
		return NULL;
	}
	v->all[v->nall++] = r;
	return r;
}

/* hexval() - @n hex digits at @s into @out (n/2 bytes). Return: 0, or -1 when not hex */
static int hexval(const char *s, size_t n, uint8_t *out)
{
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i], d = c >= '0' && c <= '9'	? c - '0'
						 : c >= 'a' && c <= 'f' ? c - 'a' + 10
									: -1;

		if (d < 0)
			return -1;
		if (i % 2)
			out[i / 2] |= (uint8_t)d;
		else
			out[i / 2] = (uint8_t)(d << 4);
	}
	return 0;
}

/* line_prev() - the digest a line names in its chain member. Return: true when it has one */
static bool line_prev(const char *line, size_t len, uint8_t out[AUDIT_HASH_LEN])
{
	const char *m;

	if (len < PREV_TAIL + 1 || memcmp(line + len - 2, "\"}", 2))
		return false;
	m = line + len - PREV_TAIL;
	return !memcmp(m, PREV_KEY, sizeof(PREV_KEY) - 1) &&
	       !hexval(m + sizeof(PREV_KEY) - 1, 2 * AUDIT_HASH_LEN, out);
}

static int fail(struct audit_verify_result *res, enum audit_verify_status st, const char *file,
		uint64_t line, const char *fmt, ...) WD_PRINTF(5, 6);

static int fail(struct audit_verify_result *res, enum audit_verify_status st, const char *file,
		uint64_t line, const char *fmt, ...)
{
	va_list ap;

	res->status = st;
	res->file = file;
	res->line = line;
	va_start(ap, fmt);
	vsnprintf(res->why, sizeof(res->why), fmt, ap);
	va_end(ap);
	return 1;
}

/* check_sig() - the signature of a signed line (a run record, an anchor) under one of @keys;
 * @who names it in a message. Return: 1 a problem (in @res), 0 fine, -errno */
static int check_sig(struct vstate *v, const struct audit_event *ev, const char *line, size_t len,
		     struct audit_key *const *keys, size_t nkeys, struct audit_verify_result *res,
		     const char *file, uint64_t no, const char *who)
{
	struct audit_key *k = NULL;
	uint8_t sig[64];
	int ret;

	ret = audit_line_signed_part(line, len, &v->part, sig);
	if (ret == -ENOMEM)
		return ret;
	if (ret < 0)
		return fail(res, AUDIT_VERIFY_BAD_SIG, file, no,
			    "%s carries no well-formed signature", who);
	for (size_t i = 0; i < nkeys && !k; i++)
		if (ev->key && !strcmp(audit_key_id(keys[i]), ev->key))
			k = keys[i];
	if (!k)
		return fail(res, AUDIT_VERIFY_UNKNOWN_KEY, file, no,
			    "%s is signed by %s, a key not given (--key FILE)", who,
			    ev->key ? ev->key : "(no key id)");
	if (audit_key_verify(k, v->part.data, v->part.len, sig) < 0)
		return fail(res, AUDIT_VERIFY_BAD_SIG, file, no,
			    "the signature of %s does not verify under %s: the line was changed",
			    who, ev->key);
	return 0;
}

/* check_anchor() - an audit.anchor: its signature; at the top of a file that goes on from the
 * one read before it (@link), also that the file before has the line it names as its line
 * number "lines" and that this line's "prev" (@named) is that one. Return: 1 a problem (in
 * @res), 0 fine, -errno */
static int check_anchor(struct vstate *v, const struct audit_event *ev, const char *line,
			size_t len, struct audit_key *const *keys, size_t nkeys,
			struct audit_verify_result *res, const char *file, uint64_t no, bool link,
			const uint8_t named[AUDIT_HASH_LEN])
{
	uint8_t want[AUDIT_HASH_LEN];
	uint64_t n = (uint64_t)ev->lines;
	int ret = check_sig(v, ev, line, len, keys, nkeys, res, file, no, "its audit.anchor");

	if (ret)
		return ret;
	if (!ev->last_line || strncmp(ev->last_line, "sha256:", 7) ||
	    strlen(ev->last_line) != 7 + 2 * AUDIT_HASH_LEN ||
	    hexval(ev->last_line + 7, 2 * AUDIT_HASH_LEN, want) || !(ev->has & AUDIT_HAS_LINES) ||
	    n == 0)
		return fail(res, AUDIT_VERIFY_BAD_ANCHOR, file, no,
			    "its audit.anchor's line count or last line is malformed");
	if (link && n > v->file_lines.n)
		return fail(res, AUDIT_VERIFY_BAD_ANCHOR, file, no,
			    "its audit.anchor says %s had %llu lines when this file began; it "
			    "has %zu: lines were cut from its end",
			    v->prev_file ? v->prev_file : "the file before it",
			    (unsigned long long)n, v->file_lines.n);
	if (link && memcmp(v->file_lines.v[n - 1], want, sizeof(want)))
		return fail(res, AUDIT_VERIFY_BAD_ANCHOR, file, no,
			    "its audit.anchor names a line %s:%llu is not: that line was changed, "
			    "or lines before it were removed or added",
			    v->prev_file, (unsigned long long)n);
	if (link && memcmp(named, want, sizeof(want)))
		return fail(res, AUDIT_VERIFY_BAD_ANCHOR, file, no,
			    "its \"prev\" is not the last line its audit.anchor names (%s:%llu)",
			    v->prev_file, (unsigned long long)n);
	res->anchors++;
	return 0;
}

/* check_record() - a signed run.exit or run.record: key, signature, root and count.
 * Return: 1 a problem (in @res), 0 fine, -errno */
static int check_record(struct vstate *v, const struct audit_event *ev, const char *line,
			size_t len, struct audit_key *const *keys, size_t nkeys,
			struct audit_verify_result *res, const char *file, uint64_t no)
{
	uint8_t want[AUDIT_HASH_LEN], got[AUDIT_HASH_LEN];
	char hex[2 * AUDIT_HASH_LEN + 1], who[160];
	bool daemon = !strcmp(ev->action, AUDIT_RUN_RECORD);
	const struct audit_leaves *lv;
	struct vrun *r;
	int ret;

	snprintf(who, sizeof(who), "run %s: its %s", ev->run, ev->action);
	ret = check_sig(v, ev, line, len, keys, nkeys, res, file, no, who);
	if (ret)
		return ret;
	r = run_get(v, ev->run);
	if (!r)
		return -ENOMEM;
	lv = daemon ? &r->seen : &r->leaves;
	if (daemon ? r->early && (uint64_t)ev->events > lv->n : !r->started) {
		res->partial++; /* its run.start is in an earlier file: the root cannot be had */
		return 0;
	}
	if (strncmp(ev->root, "sha256:", 7) || strlen(ev->root) != 7 + 2 * AUDIT_HASH_LEN ||
	    hexval(ev->root + 7, 2 * AUDIT_HASH_LEN, want) || !(ev->has & AUDIT_HAS_EVENTS))
		return fail(res, AUDIT_VERIFY_BAD_ROOT, file, no,
			    "run %s: its %s's root or events count is malformed", ev->run,
			    ev->action);
	if ((uint64_t)ev->events > lv->n)
		return fail(res, AUDIT_VERIFY_BAD_ROOT, file, no,
			    "run %s: its %s covers %lld events, the log holds %zu of them "
			    "before it: lines of the run were removed",
			    ev->run, ev->action, (long long)ev->events, lv->n);
	audit_merkle_root((const uint8_t(*)[AUDIT_HASH_LEN])lv->v, (size_t)ev->events, got);
	if (memcmp(got, want, sizeof(got))) {
		audit_hex(got, sizeof(got), hex);
		return fail(res, AUDIT_VERIFY_BAD_ROOT, file, no,
			    "run %s: the root of its %lld events is sha256:%s, its %s says "
			    "%s: lines of the run were changed, removed or reordered",
			    ev->run, (long long)ev->events, hex, ev->action, ev->root);
	}
	res->runs++;
	return 0;
}

/* check_line() - one line (no newline), number @no of @file. Return: 1 a problem, 0 fine,
 * -errno */
/* in_previous_file() - whether @d is the digest of a line of the file before this one: a new
 * file's first line links to the line that was last in "PATH.1" when it was made, and a writer
 * adopted from a descriptor (the gateway's worker) may have appended more there since */
static bool in_previous_file(const struct vstate *v, const uint8_t d[AUDIT_HASH_LEN])
{
	for (size_t i = v->file_lines.n; i > 0; i--)
		if (!memcmp(v->file_lines.v[i - 1], d, AUDIT_HASH_LEN))
			return true;
	return false;
}

static int check_line(struct vstate *v, const char *line, size_t len, struct audit_key *const *keys,
		      size_t nkeys, struct audit_verify_result *res, const char *file, uint64_t no,
		      bool first_file)
{
	uint8_t d[AUDIT_HASH_LEN], named[AUDIT_HASH_LEN];
	struct audit_event ev;
	bool anchored = false; /* checked as the anchor of a file that goes on from another */
	struct vrun *r;
	int ret = 0;

	res->lines++;
	audit_sha256(line, len, d);
	if (audit_leaves_add(&v->cur_lines, d) < 0)
		return -ENOMEM;
	memset(named, 0, sizeof(named));
	if (line_prev(line, len, named) && no == 1 && !first_file) {
		/* a file that goes on from the one read before it (when that had lines): a signed
		 * anchor first */
		ret = audit_event_decode(line, len, &ev, NULL);
		anchored = ret >= 0 && !strcmp(ev.action, AUDIT_ANCHOR);
		if (ret >= 0 && !anchored)
			audit_event_clear(&ev);
		if (!anchored && v->file_lines.n)
			return fail(res, AUDIT_VERIFY_NO_ANCHOR, file, no,
				    "the file goes on from %s but does not begin with a signed "
				    "audit.anchor: it was written again, or rotated by something "
				    "that cannot sign",
				    v->prev_file ? v->prev_file : "the file before it");
		ret = 0;
		if (anchored) {
			ret = check_anchor(v, &ev, line, len, keys, nkeys, res, file, no, true,
					   named);
			audit_event_clear(&ev);
		}
		if (ret)
			return ret;
	}
	if (line_prev(line, len, named)) {
		if (v->have_prev && memcmp(named, v->prev, sizeof(named)) &&
		    !(no == 1 && !first_file && in_previous_file(v, named)))
			return fail(
			    res, AUDIT_VERIFY_BROKEN, file, no,
			    "its \"prev\" is not the hash of the line before it: that "
			    "line (%s:%llu) was changed, or lines between them were removed "
			    "or reordered",
			    v->prev_file, (unsigned long long)v->prev_no);
		if (!v->have_prev)
			for (size_t i = 0; i < sizeof(named) && !v->continues; i++)
				v->continues = named[i] != 0;
		v->chained = true;
	} else if (v->chained || !first_file) {
		if (audit_event_decode(line, len, &ev, NULL) < 0)
			return fail(res, AUDIT_VERIFY_BROKEN, file, no,
				    "the line is not an audit event (torn by a crash, or edited)");
		audit_event_clear(&ev);
		return fail(res, AUDIT_VERIFY_UNCHAINED, file, no,
			    "the line has no \"prev\": it was written or changed by something "
			    "that is not a chained Warden writer");
	} else {
		res->unchained++;
	}
	memcpy(v->prev, d, sizeof(d));
	v->have_prev = true;
	v->prev_file = file;
	v->prev_no = no;
	if (audit_event_decode(line, len, &ev, NULL) < 0)
		return fail(res, AUDIT_VERIFY_BROKEN, file, no,
			    "the line is not an audit event (torn by a crash, or edited)");
	if (!strcmp(ev.action, AUDIT_ANCHOR) && !ev.run[0] && !anchored) {
		ret = check_anchor(v, &ev, line, len, keys, nkeys, res, file, no, false, named);
	} else if (ev.run[0] && ev.type == AUDIT_TYPE_RUN &&
		   (!strcmp(ev.action, "run.exit") || !strcmp(ev.action, AUDIT_RUN_RECORD))) {
		if (ev.root)
			ret = check_record(v, &ev, line, len, keys, nkeys, res, file, no);
		else
			res->unsigned_exits++;
	} else if (ev.run[0]) {
		r = run_get(v, ev.run);
		if (r && !r->seen.n)
			r->early = first_file && v->continues;
		if (!r || audit_leaves_add(&r->seen, d) < 0) {
			ret = -ENOMEM;
		} else if (ev.type == AUDIT_TYPE_RUN && !strcmp(ev.action, "run.start")) {
			r->started = true;
			r->leaves.n = 0;
			ret = audit_leaves_add(&r->leaves, d);
		} else if (r->started) {
			ret = audit_leaves_add(&r->leaves, d);
		}
	}
	audit_event_clear(&ev);
	return ret;
}

int audit_verify(const char *const *paths, size_t npaths, struct audit_key *const *keys,
		 size_t nkeys, struct audit_verify_result *res, struct wd_err *err)
{
	struct vstate v = {0};
	char *line = NULL;
	size_t cap = 0;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	for (size_t f = 0; f < npaths && ret == 0; f++) {
		FILE *in = fopen(paths[f], VERIFY_READ);
		uint64_t no = 0;
		ssize_t n;

		if (!in) {
			ret = wd_err_set(err, -errno, "cannot read %s: %s", paths[f],
					 strerror(errno));
			break;
		}
		while (ret == 0 && (n = getline(&line, &cap, in)) > 0) {
			size_t len = (size_t)n;

			no++;
			if (line[len - 1] == '\n')
				len--;
			ret = check_line(&v, line, len, keys, nkeys, res, paths[f], no, f == 0);
		}
		if (ret == 0 && ferror(in))
			ret = wd_err_set(err, -EIO, "cannot read %s", paths[f]);
		fclose(in);
		/* this file's lines are what the next file's first line may link to */
		audit_leaves_free(&v.file_lines);
		v.file_lines = v.cur_lines;
		memset(&v.cur_lines, 0, sizeof(v.cur_lines));
	}
	if (ret < 0 && ret != -EIO)
		wd_err_set(err, ret, "verify: %s", strerror(-ret));
	if (ret == 0 && !v.chained && res->lines)
		fail(res, AUDIT_VERIFY_UNCHAINED, paths[npaths - 1], res->lines,
		     "no line carries \"prev\": the log is not chained (written by an older "
		     "Warden, or stripped)");
	free(line);
	for (size_t i = 0; i < v.nall; i++) {
		audit_leaves_free(&v.all[i]->leaves);
		audit_leaves_free(&v.all[i]->seen);
		free(v.all[i]->id);
		free(v.all[i]);
	}
	free(v.all);
	wd_htable_free(&v.runs);
	audit_leaves_free(&v.file_lines);
	audit_leaves_free(&v.cur_lines);
	wd_buf_free(&v.part);
	return ret < 0 ? ret : 0;
}
