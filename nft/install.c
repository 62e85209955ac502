/* install.c - the write side of nft/: install or remove the table, add or remove one run.
 * Every change is one atomic batch built from the model (build.c) and sent by nl.c.
 */
#include "nft/nft_internal.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <stdlib.h>
#include <string.h>

struct fw_conn {
	struct mnl_socket *nl;
};

int fw_conn_open(struct fw_conn **ret, struct wd_err *err)
{
	struct fw_conn *conn = calloc(1, sizeof(*conn));
	int r;

	if (!conn)
		return wd_err_set(err, -ENOMEM, "out of memory opening an nft connection");
	r = fw_nl_open(&conn->nl, err);
	if (r < 0) {
		free(conn);
		return r;
	}
	*ret = conn;
	return 0;
}

void fw_conn_close(struct fw_conn *conn)
{
	if (!conn)
		return;
	mnl_socket_close(conn->nl);
	free(conn);
}

typedef int (*fw_builder)(const struct fw_model *m, struct fw_batch *b);

static int one_batch(const struct fw_config *c, fw_builder build, struct wd_err *err)
{
	struct fw_model m;
	struct fw_batch b;
	int ret = fw_model_build(c, &m, err);

	if (ret < 0)
		return ret;
	ret = fw_batch_init(&b, fw_seq());
	if (ret < 0)
		return wd_err_set(err, ret, "out of memory building the nft batch");
	ret = build(&m, &b);
	if (ret < 0)
		wd_err_set(err, ret, "building the nft batch for table inet %s: %s", c->table,
			   strerror(-ret));
	else
		ret = fw_batch_send(&b, NULL, err);
	fw_batch_free(&b);
	return ret;
}

int fw_install(const struct fw_config *c, struct wd_err *err)
{
	return one_batch(c, fw_build_install, err);
}

int fw_uninstall(const struct fw_config *c, struct wd_err *err)
{
	return one_batch(c, fw_build_uninstall, err);
}

/* Send the run's element messages; skip[] drops some; errs[] gets each element's result. */
static int run_batch(struct fw_conn *conn, const struct fw_model *m, const struct fw_run *r,
		     bool add, const bool *skip, int elem_err[FW_ELEM_N], struct wd_err *err)
{
	struct fw_batch b;
	int errs[FW_ELEM_N] = {0}, idx[FW_ELEM_N], n, ret;

	ret = fw_batch_init(&b, fw_seq());
	if (ret < 0)
		return wd_err_set(err, ret, "out of memory building the nft batch");
	n = fw_build_run(m, r, add, skip, &b);
	if (n < 0) {
		ret = wd_err_set(err, n, "building the nft batch for run %s: %s", r->ifname,
				 strerror(-n));
		goto out;
	}
	if (n == 0)
		goto out;
	/* message i of the batch is element idx[i] (enum fw_run_elem) */
	n = 0;
	for (int i = 0; i < FW_ELEM_N; i++) {
		if (!fw_run_sends_elem(r, (enum fw_run_elem)i, add, skip))
			continue;
		idx[n++] = i;
	}
	ret = fw_batch_send_on(conn->nl, &b, errs, err);
	for (int i = 0; i < n; i++)
		elem_err[idx[i]] = errs[i];
out:
	fw_batch_free(&b);
	return ret;
}

int fw_conn_run_add(struct fw_conn *conn, const struct fw_config *c, const struct fw_run *r,
		    struct wd_err *err)
{
	int elem_err[FW_ELEM_N] = {0};
	struct fw_model m;
	int ret = conn ? fw_model_build(c, &m, err) : wd_err_set(err, -EINVAL, "no nft connection");

	if (!ret)
		ret = fw_run_check(c, r, err);
	if (!ret)
		ret = run_batch(conn, &m, r, true, NULL, elem_err, err);
	if (ret == -ENOENT)
		wd_err_prefix(err, "table inet %s or one of its sets is missing: ", c->table);
	return ret;
}

int fw_conn_run_del(struct fw_conn *conn, const struct fw_config *c, const struct fw_run *r,
		    struct wd_err *err)
{
	bool skip[FW_ELEM_N] = {false};
	struct fw_model m;
	int ret = conn ? fw_model_build(c, &m, err) : wd_err_set(err, -EINVAL, "no nft connection");

	if (!ret)
		ret = fw_run_check(c, r, err);
	/* The kernel answers every message of a failed batch, so one retry without the
	 * elements it reported absent deletes the rest; a third round is never needed, but
	 * allow it in case the set changes under us. */
	for (int round = 0; !ret && round < 3; round++) {
		int elem_err[FW_ELEM_N] = {0};
		bool only_absent = true, any_absent = false;

		ret = run_batch(conn, &m, r, false, skip, elem_err, err);
		if (ret != -ENOENT)
			break;
		for (int i = 0; i < FW_ELEM_N; i++) {
			if (elem_err[i] == -ENOENT) {
				skip[i] = true;
				any_absent = true;
			} else if (elem_err[i]) {
				only_absent = false;
			}
		}
		if (!only_absent || !any_absent)
			break;
		wd_err_clear(err);
		ret = 0;
	}
	return ret;
}

typedef int (*fw_run_op)(struct fw_conn *conn, const struct fw_config *c, const struct fw_run *r,
			 struct wd_err *err);

/* validate first (no socket for a bad argument), then one connection for one call */
static int run_once(fw_run_op op, const struct fw_config *c, const struct fw_run *r,
		    struct wd_err *err)
{
	struct fw_conn *conn = NULL;
	int ret = fw_config_check(c, err);

	if (!ret)
		ret = fw_run_check(c, r, err);
	if (!ret)
		ret = fw_conn_open(&conn, err);
	if (!ret)
		ret = op(conn, c, r, err);
	fw_conn_close(conn);
	return ret;
}

int fw_run_add(const struct fw_config *c, const struct fw_run *r, struct wd_err *err)
{
	return run_once(fw_conn_run_add, c, r, err);
}

int fw_run_del(const struct fw_config *c, const struct fw_run *r, struct wd_err *err)
{
	return run_once(fw_conn_run_del, c, r, err);
}
