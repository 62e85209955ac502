/* cmd_attest.c - `warden attest RUN`: a run's signed record as an in-toto Statement (v1) in a
 * DSSE envelope, signed with the person's audit key, for a CI job to archive and check later;
 * `--verify FILE` checks one, `--public-key` prints the key a verifier needs. */
#include "launcher/cli.h"
#include "run/run.h"
#include "audit/audit.h"
#include "common/common.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAYLOAD_TYPE "application/vnd.in-toto+json"
#define STATEMENT_TYPE "https://in-toto.io/Statement/v1"
#define PREDICATE_TYPE "urn:warden:run-record:v1"
#define ATTEST_KEYS_MAX 8

struct attest_opts {
	const char *path;
	bool daemon; /* --daemon-log: the daemon's run.record in its central log at @path */
	const char *run;
	const char *verify;
	bool public_key;
	const char *keys[ATTEST_KEYS_MAX];
	size_t nkeys;
};

/* what the log says of the run */
struct facts {
	char id[128];
	json_t *start, *exit; /* run.start's and run.exit's (the daemon's: run.record's) objects */
	char *exit_line;      /* that record's line exactly */
	json_t *by_type;      /* {"dns": {"allowed": N, "denied": N}, ...} before run.exit */
	bool ambiguous;
};

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: warden attest [--audit-log PATH | --daemon-log PATH [--key PUBKEY]...] RUN\n"
	    "       warden attest --verify FILE [--key PUBKEY]...\n"
	    "       warden attest --public-key\n"
	    "\n"
	    "Print an in-toto Statement (v1) about run RUN (its id, or a unique prefix) in a\n"
	    "DSSE envelope signed with your audit key: the command, the policy and its hash,\n"
	    "the exit status, the counts of events by type, the Merkle root of the run's\n"
	    "events and its signed run.exit record. The audit log must verify first\n"
	    "(warden logs --verify).\n"
	    "\n"
	    "      --audit-log PATH  read PATH (default: $WARDEN_AUDIT_LOG, else\n"
	    "                        ${XDG_STATE_HOME:-~/.local/state}/warden/audit.jsonl)\n"
	    "      --daemon-log PATH attest a daemon-mode run from the gateway daemon's central\n"
	    "                        log at PATH: its run.record, signed with the daemon's key\n"
	    "                        (give it with --key: warden-gateway --print-audit-key)\n"
	    "      --verify FILE     check an envelope: its signature (and the run record's)\n"
	    "                        under your key or a --key\n"
	    "      --key PUBKEY      with --verify or --daemon-log: also accept the ed25519 key in "
	    "PUBKEY (PEM)\n"
	    "      --public-key      print your audit key's public half (PEM) for a verifier\n"
	    "  -h, --help            show this help\n"
	    "\n"
	    "Exit: 0 ok, 1 no signed record or a signature that does not verify, 2 usage error\n"
	    "or unreadable file.\n");
}

static int parse_args(int argc, char **argv, struct attest_opts *o)
{
	enum { OPT_LOG = 256, OPT_DAEMON_LOG, OPT_VERIFY, OPT_KEY, OPT_PUB };
	static const struct option longopts[] = {
	    {"audit-log", required_argument, NULL, OPT_LOG},
	    {"daemon-log", required_argument, NULL, OPT_DAEMON_LOG},
	    {"verify", required_argument, NULL, OPT_VERIFY},
	    {"key", required_argument, NULL, OPT_KEY},
	    {"public-key", no_argument, NULL, OPT_PUB},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	static const char synopsis[] = "warden attest [--audit-log PATH] RUN";
	const char *override = NULL;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_LOG:
		case OPT_DAEMON_LOG:
			if (override)
				return cli_usage_error("attest", synopsis,
						       "one of --audit-log and --daemon-log");
			override = optarg;
			o->daemon = c == OPT_DAEMON_LOG;
			break;
		case OPT_VERIFY:
			o->verify = optarg;
			break;
		case OPT_KEY:
			if (o->nkeys == ATTEST_KEYS_MAX)
				return cli_usage_error("attest", synopsis, "at most %d --key",
						       ATTEST_KEYS_MAX);
			o->keys[o->nkeys++] = optarg;
			break;
		case OPT_PUB:
			o->public_key = true;
			break;
		case 'h':
			usage(stdout);
			return -1;
		case ':':
			return cli_usage_error("attest", synopsis, "%s wants an argument",
					       argv[optind - 1]);
		default:
			return cli_usage_error("attest", synopsis, "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind < argc)
		o->run = argv[optind++];
	if (optind < argc)
		return cli_usage_error("attest", synopsis, "unexpected argument '%s'",
				       argv[optind]);
	if (!o->run == !(o->verify || o->public_key) || (o->verify && o->public_key))
		return cli_usage_error("attest", synopsis,
				       "give a run id, --verify FILE or --public-key");
	if (o->nkeys && !o->verify && !o->daemon)
		return cli_usage_error("attest", synopsis,
				       "--key goes with --verify or --daemon-log");
	if (o->daemon && !o->run)
		return cli_usage_error("attest", synopsis, "--daemon-log goes with a run id");
	o->path = run_audit_path(override);
	if (!o->path)
		return cli_usage_error("attest", synopsis,
				       "no home folder for the audit log; pass --audit-log PATH");
	return 0;
}

/* own_key() - the person's key (never made here). Return: it, or NULL (said on stderr) */
static struct audit_key *own_key(void)
{
	const char *path = run_audit_key_path();
	struct audit_key *k = NULL;
	struct wd_err err = {0};

	if (!path) {
		wd_say(stderr,
		       "warden attest: no home folder for the audit key (WARDEN_AUDIT_KEY)");
		return NULL;
	}
	if (audit_key_load(path, false, &k, &err) < 0) {
		wd_say(stderr, "warden attest: %s", err.msg);
		return NULL;
	}
	return k;
}

/* count() - one more event of @type, allowed or not (a summary counts as its count) */
static void count(json_t *by_type, const struct audit_event *ev)
{
	const char *t = audit_event_type(ev);
	json_t *o = json_object_get(by_type, t);
	const char *k = ev->allowed ? "allowed" : "denied";
	json_int_t n = (ev->has & AUDIT_HAS_COUNT) ? ev->count : 1;

	if (!o) {
		o = json_pack("{s:I, s:I}", "allowed", (json_int_t)0, "denied", (json_int_t)0);
		if (!o || json_object_set_new(by_type, t, o))
			return;
	}
	json_object_set_new(o, k, json_integer(json_integer_value(json_object_get(o, k)) + n));
}

/* gather() - the run's facts from @file; @daemon: its record is the gateway daemon's
 * run.record (a central log has no run.start). Return: 0, or -errno */
static int gather(const char *file, const char *want, bool daemon, struct facts *f)
{
	struct audit_reader *r;
	struct audit_event ev;
	const char *line;
	size_t len;
	int ret;

	ret = audit_reader_open(file, 0, &r, NULL);
	if (ret < 0)
		return ret;
	while ((ret = audit_reader_next(r, &ev)) == 1) {
		line = audit_reader_line(r, &len);
		if (!line || strncmp(ev.run, want, strlen(want)) || !ev.run[0]) {
			audit_event_clear(&ev);
			continue;
		}
		if (!f->id[0] && strlen(ev.run) < sizeof(f->id))
			memcpy(f->id, ev.run, strlen(ev.run) + 1);
		if (strcmp(ev.run, f->id)) {
			f->ambiguous = true;
		} else if (ev.type == AUDIT_TYPE_RUN && !strcmp(ev.action, "run.start")) {
			json_decref(f->start);
			f->start = json_loadb(line, len, 0, NULL);
		} else if (ev.type == AUDIT_TYPE_RUN &&
			   !strcmp(ev.action, daemon ? "run.record" : "run.exit") && !f->exit) {
			f->exit = json_loadb(line, len, 0, NULL);
			free(f->exit_line); /* a run.exit that did not parse came before */
			f->exit_line = strndup(line, len);
		} else if (!f->exit) {
			count(f->by_type, &ev);
		}
		audit_event_clear(&ev);
	}
	audit_reader_close(r);
	return ret;
}

/* jstr() - @o's string member @key, or @dflt */
static const char *jstr(const json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : dflt;
}

/* copy() - @src's @key into @dst when present */
static void copy(json_t *dst, const json_t *src, const char *key)
{
	json_t *v = json_object_get(src, key);

	if (v)
		json_object_set(dst, key, v);
}

/* statement() - the in-toto Statement of the run. Return: it, or NULL (out of memory) */
static json_t *statement(const struct facts *f, const char *log)
{
	const char *root = json_string_value(json_object_get(f->exit, "root"));
	json_t *st, *pred, *counts;

	pred = json_pack("{s:s, s:s}", "run", f->id, "log", log);
	counts = json_object();
	if (!pred || !counts) {
		json_decref(pred);
		json_decref(counts);
		return NULL;
	}
	for (size_t i = 0; i < 7; i++)
		copy(pred, f->start,
		     (const char *[]){"command", "policy", "policy_hash", "mode", "isolation",
				      "uid", "user"}[i]);
	json_object_set(pred, "started", json_object_get(f->start, "ts"));
	json_object_set(pred, "ended", json_object_get(f->exit, "ts"));
	for (size_t i = 0; i < 3 && !f->start; i++) /* the daemon's run.record says these */
		copy(pred, f->exit, (const char *[]){"mode", "uid", "user"}[i]);
	for (size_t i = 0; i < 5; i++)
		copy(pred, f->exit,
		     (const char *[]){"allowed", "reason", "exit", "signal", "duration_ms"}[i]);
	for (size_t i = 0; i < 4; i++)
		copy(counts, f->exit,
		     (const char *[]){"events", "denials", "bytes_up", "bytes_down"}[i]);
	json_object_set(counts, "by_type", f->by_type);
	json_object_set_new(pred, "counts", counts);
	json_object_set_new(pred, "merkle_root", json_string(root));
	json_object_set_new(
	    pred, "record",
	    json_pack("{s:s, s:O}", "line", f->exit_line, "key", json_object_get(f->exit, "key")));
	st = json_pack("{s:s, s:[{s:s+, s:{s:s}}], s:s, s:o}", "_type", STATEMENT_TYPE, "subject",
		       "name", "warden-run:", f->id, "digest", "sha256", root + 7, "predicateType",
		       PREDICATE_TYPE, "predicate", pred);
	return st;
}

/* pae() - DSSE's pre-authentication encoding of @payload (DSSE protocol, "Signature
 * definition"): "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body */
static int pae(const char *payload, size_t len, struct wd_buf *out)
{
	int ret = wd_buf_printf(out, "DSSEv1 %zu %s %zu ", strlen(PAYLOAD_TYPE), PAYLOAD_TYPE, len);

	return ret < 0 ? ret : wd_buf_append(out, payload, len);
}

/* envelope() - @st signed into a DSSE envelope, printed. Return: 0 or -errno */
static int envelope(json_t *st, const struct audit_key *k)
{
	struct wd_buf enc = WD_BUF_INIT, sigb = WD_BUF_INIT, signed_bytes = WD_BUF_INIT;
	char *payload = json_dumps(st, JSON_COMPACT | JSON_SORT_KEYS), *out = NULL;
	uint8_t sig[64];
	json_t *env = NULL;
	int ret = payload ? 0 : -ENOMEM;

	if (!ret)
		ret = pae(payload, strlen(payload), &signed_bytes);
	if (!ret)
		ret = audit_key_sign(k, signed_bytes.data, signed_bytes.len, sig);
	if (!ret)
		ret = audit_base64(payload, strlen(payload), &enc);
	if (!ret)
		ret = audit_base64(sig, sizeof(sig), &sigb);
	if (!ret) {
		env =
		    json_pack("{s:s, s:s, s:[{s:s, s:s}]}", "payloadType", PAYLOAD_TYPE, "payload",
			      enc.data, "signatures", "keyid", audit_key_id(k), "sig", sigb.data);
		out = env ? json_dumps(env, JSON_INDENT(2)) : NULL;
		ret = out ? 0 : -ENOMEM;
	}
	if (!ret)
		printf("%s\n", out);
	free(out);
	json_decref(env);
	free(payload);
	wd_buf_free(&enc);
	wd_buf_free(&sigb);
	wd_buf_free(&signed_bytes);
	return ret;
}

/* attest() - `warden attest RUN` */
static int attest(const struct attest_opts *o)
{
	struct facts f = {.by_type = json_object()};
	struct audit_key *k = own_key(), *keys[ATTEST_KEYS_MAX + 1] = {0};
	struct audit_verify_result res;
	struct wd_err err = {0};
	const char *paths[2];
	char *old = NULL;
	size_t npaths = 0, nkeys = 0;
	struct stat st;
	json_t *s = NULL;
	int ret, status = WD_EXIT_USAGE;

	if (!k || !f.by_type || asprintf(&old, "%s" AUDIT_ROTATED_SUFFIX, o->path) < 0)
		goto out;
	/* the log is checked with the person's key and, for the daemon's, its key (--key) */
	for (keys[nkeys++] = k; nkeys <= o->nkeys; nkeys++) {
		if (audit_key_load(o->keys[nkeys - 1], false, &keys[nkeys], &err) < 0) {
			wd_say(stderr, "warden attest: %s", err.msg);
			goto out;
		}
	}
	if (stat(old, &st) == 0)
		paths[npaths++] = old;
	paths[npaths++] = o->path;
	for (size_t i = 0; i < npaths; i++) {
		ret = gather(paths[i], o->run, o->daemon, &f);
		if (ret < 0) {
			wd_say(stderr, "warden attest: cannot read %s: %s", paths[i],
			       strerror(-ret));
			goto out;
		}
	}
	if (f.ambiguous) {
		wd_say(stderr, "warden attest: %s starts the ids of several runs; give more of it",
		       o->run);
		goto out;
	}
	status = 1;
	if ((!f.start && !o->daemon) || !f.exit) {
		wd_say(stderr, "warden attest: no run %s with its %s in %s%s", o->run,
		       o->daemon ? "run.record (the gateway daemon's)" : "run.start and run.exit",
		       o->path,
		       o->daemon ? ""
				 : " (a daemon-mode run's record in the daemon's central log: "
				   "--daemon-log PATH)");
		goto out;
	}
	if (strncmp(jstr(f.exit, "root", ""), "sha256:", 7)) {
		wd_say(stderr,
		       "warden attest: run %s has no signed record (a crashed run, or an "
		       "older warden)",
		       f.id);
		goto out;
	}
	/* the log first: an attestation of an edited log would vouch for the edit */
	ret = audit_verify(paths, npaths, keys, nkeys, &res, &err);
	if (ret < 0) {
		wd_say(stderr, "warden attest: %s", err.msg);
		status = WD_EXIT_USAGE;
		goto out;
	}
	if (res.status != AUDIT_VERIFY_OK) {
		wd_say(stderr, "warden attest: the audit log does not verify: %s:%llu: %s",
		       res.file, (unsigned long long)res.line, res.why);
		goto out;
	}
	s = statement(&f, o->path);
	if (!s || envelope(s, k) < 0) {
		wd_say(stderr, "warden attest: out of memory");
		status = WD_EXIT_INTERNAL;
		goto out;
	}
	status = WD_EXIT_OK;
out:
	json_decref(s);
	json_decref(f.start);
	json_decref(f.exit);
	json_decref(f.by_type);
	free(f.exit_line);
	free(old);
	for (size_t i = 1; i < nkeys; i++)
		audit_key_free(keys[i]);
	audit_key_free(k);
	return status;
}

/* check_envelope() - the envelope's signature under one of @keys, and its run record's.
 * Return: 0 ok; 1 (said on stderr) */
static int check_envelope(const char *file, json_t *env, struct audit_key *const *keys, size_t n)
{
	const char *type = json_string_value(json_object_get(env, "payloadType"));
	const char *b64 = json_string_value(json_object_get(env, "payload"));
	struct wd_buf payload = WD_BUF_INIT, signed_bytes = WD_BUF_INIT, sig = WD_BUF_INIT;
	struct wd_buf part = WD_BUF_INIT;
	const char *line, *keyid = NULL;
	json_t *st = NULL, *s;
	uint8_t rsig[64];
	bool ok = false;
	size_t i;

	if (!type || strcmp(type, PAYLOAD_TYPE) || !b64 ||
	    audit_unbase64(b64, strlen(b64), &payload) < 0 ||
	    pae(payload.data ? payload.data : "", payload.len, &signed_bytes) < 0) {
		wd_say(stderr, "warden attest: %s: not a DSSE envelope of an in-toto statement",
		       file);
		goto out;
	}
	json_array_foreach(json_object_get(env, "signatures"), i, s)
	{
		const char *id = json_string_value(json_object_get(s, "keyid"));
		const char *sb = json_string_value(json_object_get(s, "sig"));

		for (size_t k = 0; !ok && id && sb && k < n; k++) {
			wd_buf_reset(&sig);
			if (strcmp(id, audit_key_id(keys[k])) ||
			    audit_unbase64(sb, strlen(sb), &sig) < 0 || sig.len != 64)
				continue;
			if (!audit_key_verify(keys[k], signed_bytes.data, signed_bytes.len,
					      (const uint8_t *)sig.data)) {
				ok = true;
				keyid = id;
			}
		}
	}
	if (!ok) {
		wd_say(stderr,
		       "warden attest: %s: no signature verifies under the keys given (yours, "
		       "--key)",
		       file);
		goto out;
	}
	ok = false;
	st = json_loadb(payload.data, payload.len, 0, NULL);
	s = json_object_get(json_object_get(st, "predicate"), "record");
	line = json_string_value(json_object_get(s, "line"));
	if (!st || strcmp(jstr(st, "_type", ""), STATEMENT_TYPE) ||
	    strcmp(jstr(st, "predicateType", ""), PREDICATE_TYPE) || !line) {
		wd_say(stderr, "warden attest: %s: the statement is not a warden run record", file);
		goto out;
	}
	/* the run record inside is the log's own signed line: its signature checks too */
	for (size_t k = 0; k < n && !ok; k++)
		ok = !audit_line_signed_part(line, strlen(line), &part, rsig) &&
		     !audit_key_verify(keys[k], part.data, part.len, rsig);
	if (!ok) {
		wd_say(stderr, "warden attest: %s: the run record inside does not verify", file);
		goto out;
	}
	s = json_object_get(st, "predicate");
	wd_say(stdout, "warden attest: %s: OK: run %s, signed by %s, events root %s", file,
	       jstr(s, "run", "?"), keyid, jstr(s, "merkle_root", "?"));
out:
	json_decref(st);
	wd_buf_free(&payload);
	wd_buf_free(&signed_bytes);
	wd_buf_free(&sig);
	wd_buf_free(&part);
	return ok ? 0 : 1;
}

/* verify() - `warden attest --verify FILE` */
static int verify(const struct attest_opts *o)
{
	struct audit_key *keys[ATTEST_KEYS_MAX + 1];
	const char *own = run_audit_key_path();
	struct wd_err err = {0};
	json_error_t jerr;
	json_t *env;
	size_t n = 0;
	int status = WD_EXIT_USAGE;

	if (own && access(own, F_OK) == 0 && audit_key_load(own, false, &keys[n], &err) == 0)
		n++;
	for (size_t i = 0; i < o->nkeys; i++) {
		if (audit_key_load(o->keys[i], false, &keys[n], &err) < 0) {
			wd_say(stderr, "warden attest: %s", err.msg);
			goto out;
		}
		n++;
	}
	env = json_load_file(o->verify, 0, &jerr);
	if (!env) {
		wd_say(stderr, "warden attest: %s: %s", o->verify, jerr.text);
		goto out;
	}
	status = check_envelope(o->verify, env, keys, n);
	json_decref(env);
out:
	while (n > 0)
		audit_key_free(keys[--n]);
	return status;
}

int cmd_attest(int argc, char **argv)
{
	struct attest_opts o = {0};
	struct wd_buf pem = WD_BUF_INIT;
	struct audit_key *k;
	int ret;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? WD_EXIT_OK : ret;
	if (o.verify)
		return verify(&o);
	if (!o.public_key)
		return o.run ? attest(&o) : WD_EXIT_USAGE; /* parse_args() made sure of a run */
	k = own_key();
	if (!k)
		return WD_EXIT_USAGE;
	ret = audit_key_public_pem(k, &pem);
	if (ret == 0)
		fwrite(pem.data, 1, pem.len, stdout);
	audit_key_free(k);
	wd_buf_free(&pem);
	return ret ? WD_EXIT_INTERNAL : WD_EXIT_OK;
}
