/* proxyaudit.h - the audit log of a proxy-mode run (macOS's Seatbelt and Windows's AppContainer
 * `warden run`), written as Linux's run/audit.c writes it: the log chained, the policy's SHA-256
 * on each run line, run.start's place kept, and run.exit signed with the person's key over the
 * Merkle root of the run's lines, so that `warden logs --verify` (on Linux: macOS and Windows
 * have no `logs` verb yet) checks a Mac's or a Windows PC's log as it checks its own. No Linux
 * header: it builds for macOS and Windows (tests/cross) and on Linux for the lab's builds of
 * those paths. docs/audit.md, docs/platforms.md. */
#ifndef WARDEN_RUN_PROXYAUDIT_H
#define WARDEN_RUN_PROXYAUDIT_H

#include "audit/audit.h"
#include "common/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * struct run_proxy_audit - one run's audit log, each field undone by run_proxy_audit_close()
 * @log:		the writer, chained
 * @key:		the person's signing key (private)
 * @policy_hash:	"sha256:<hex>" of the policy's text, "" when the run has no policy file
 * @start_pos:		where run.start ended, when @has_pos
 * @start_hash:		run.start's SHA-256, when @has_start_hash
 * @has_pos:		@start_pos is known
 * @has_start_hash:	@start_hash is known
 */
struct run_proxy_audit {
	struct audit_log *log;
	struct audit_key *key;
	char policy_hash[72];
	struct audit_log_pos start_pos;
	uint8_t start_hash[AUDIT_HASH_LEN];
	bool has_pos;
	bool has_start_hash;
};

/**
 * run_proxy_audit_open() - open the run's log: chained, rotated at WARDEN_AUDIT_MAX_BYTES, a
 * file it begins by rotation opened with a signed anchor; the signing key loaded from
 * @key_path (made on first use); the policy's text hashed. Fails closed: a run whose record
 * cannot be chained or signed does not start.
 * @a:		zeroed by this call, then filled in
 * @path:	the audit log
 * @key_path:	the signing key's file (WARDEN_AUDIT_KEY or the platform's place), or NULL
 * @policy:	the policy's text as read, or NULL (no policy file)
 * @len:	its length
 * @err:	what failed
 * @fix:	set to what the person can do about it, or NULL
 * Return: 0, or a negative errno (what was opened is closed by run_proxy_audit_close()).
 */
int run_proxy_audit_open(struct run_proxy_audit *a, const char *path, const char *key_path,
			 const void *policy, size_t len, struct wd_err *err, const char **fix);

/**
 * run_proxy_audit_start() - write run.start (@ev, the caller's fields and the policy's hash),
 * make it durable and keep its place for run.exit's root
 * Return: 0, or a negative errno (@err says what).
 */
int run_proxy_audit_start(struct run_proxy_audit *a, struct audit_event *ev, struct wd_err *err);

/**
 * run_proxy_audit_exit() - write run.exit (@ev, the caller's fields) with the policy's hash,
 * the Merkle root and count of run @run's lines and the key's id, signed, then durable. When
 * the run's lines cannot be read back it is written unsigned (a verifier reports it) and
 * that is said on stderr.
 * Return: 0, or a negative errno (@err says what).
 */
int run_proxy_audit_exit(struct run_proxy_audit *a, struct audit_event *ev, const char *run,
			 struct wd_err *err);

/** run_proxy_audit_close() - close the log and free the key (a zeroed @a is fine) */
void run_proxy_audit_close(struct run_proxy_audit *a);

#endif /* WARDEN_RUN_PROXYAUDIT_H */
