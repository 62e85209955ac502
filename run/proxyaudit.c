/* proxyaudit.c - the audit log of a proxy-mode run (macOS, Windows) as Linux writes it: chained,
 * the policy's hash, run.exit signed over the run's lines (proxyaudit.h; run/audit.c is the
 * Linux run's, which this follows). */
#include "run/proxyaudit.h"
#include "run/run.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int run_proxy_audit_open(struct run_proxy_audit *a, const char *path, const char *key_path,
			 const void *policy, size_t len, struct wd_err *err, const char **fix)
{
	uint8_t d[AUDIT_HASH_LEN];
	uint64_t max;
	int ret;

	memset(a, 0, sizeof(*a));
	*fix = NULL;
	ret = audit_log_open(path, &a->log, err);
	if (ret) {
		*fix = "fix the audit log's path or permissions (see --audit-log)";
		return ret;
	}
	if (run_audit_max_bytes(&max) < 0) {
		*fix = "set it to a number of bytes (0: never rotate)";
		return wd_err_set(err, -EINVAL,
				  "WARDEN_AUDIT_MAX_BYTES is not a whole number of bytes");
	}
	audit_log_set_max(a->log, max);
	audit_log_chain(a->log);
	ret = run_audit_key_open(key_path, &a->key, err, fix);
	if (ret)
		return ret;
	/* a file this run begins (a rotation) starts with a signed anchor, or gets no line */
	ret = audit_log_sign_anchors(a->log, a->key, err);
	if (ret) {
		*fix = "check the audit log's .1 file (readable, a regular file)";
		return ret;
	}
	if (policy) {
		audit_sha256(policy, len, d);
		memcpy(a->policy_hash, "sha256:", 7);
		audit_hex(d, sizeof(d), a->policy_hash + 7);
	}
	return 0;
}

int run_proxy_audit_start(struct run_proxy_audit *a, struct audit_event *ev, struct wd_err *err)
{
	int ret;

	if (a->policy_hash[0])
		ev->policy_hash = a->policy_hash;
	ret = audit_log_write(a->log, ev, 0, err);
	if (!ret)
		ret = audit_log_sync(a->log);
	if (ret)
		return ret;
	a->has_pos = audit_log_where(a->log, &a->start_pos) == 0;
	a->has_start_hash = audit_log_last_hash(a->log, a->start_hash) == 0;
	return 0;
}

int run_proxy_audit_exit(struct run_proxy_audit *a, struct audit_event *ev, const char *run,
			 struct wd_err *err)
{
	char root[8 + 2 * AUDIT_HASH_LEN];
	int ret;

	if (a->policy_hash[0])
		ev->policy_hash = a->policy_hash;
	if (!a->key || !a->has_pos || !a->has_start_hash)
		ret = -ENODATA;
	else
		ret = audit_run_root(audit_log_path(a->log), &a->start_pos, a->start_hash, run,
				     root, &ev->events);
	if (ret < 0) {
		wd_say(stderr,
		       "warden run: audit: run.exit is not signed: the run's lines could not be "
		       "read back (%s)",
		       strerror(-ret));
		ret = audit_log_write(a->log, ev, 0, err);
	} else {
		ev->root = root;
		ev->has |= AUDIT_HAS_EVENTS;
		ev->key = audit_key_id(a->key);
		ret = audit_log_write_signed(a->log, ev, a->key, 0, err);
		ev->root = NULL; /* @root is this function's */
	}
	if (!ret)
		ret = audit_log_sync(a->log);
	return ret;
}

void run_proxy_audit_close(struct run_proxy_audit *a)
{
	audit_log_close(a->log);
	a->log = NULL;
	audit_key_free(a->key);
	a->key = NULL;
}
