/* netns_helper.c - drives netns/ (and nft/ when built) for the netns_*.sh
 * integration tests and the per-run setup/teardown measurements.
 *
 * Usage: netns_helper --state DIR [--no-mount] [--nft] [--start-file F] [--wait]
 *                    [--pool4 PREFIX] [--pool6 PREFIX] CMD
 *   cycle N        create N runs (all live at once), then tear them all down
 *   churn N        create and tear down one run at a time, N times
 *   exec -- CMD..  one run; CMD runs inside its namespace with WD_HOST4, WD_SBX4,
 *                  WD_HOST6, WD_SBX6, WD_IFNAME, WD_NETNS set; exits with CMD's status
 *   adopt NSPATH   netns_run_adopt() on the namespace at NSPATH (e.g.
 *                  /proc/PID/ns/net), then (after --wait) destroy
 *   gc             reclaim slots of dead owners; prints "reclaimed N"
 *   slots          prints the number of slot records
 *   has-nft        prints yes (exit 0) when built with nft/, else no (exit 1)
 * --wait: after creating (cycle, adopt), print "READY" and wait for a line on stdin.
 * --nft: fw_install() first, then fw_run_add()/fw_run_del() for every run.
 * Prints "run SLOT IFNAME NETNS HOST4/LEN SBX4 HOST6/LEN SBX6" per run and
 * "timing WHAT n=N median_ms=X p90_ms=Y" lines. Exit 0 ok, 1 failure, 2 usage.
 */
#include "netns/netns.h"
#ifdef WD_HAVE_NFT
#include "nft/nft.h"
#endif

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct opts {
	struct netns_pool_config cfg;
	bool nft, wait;
	const char *start_file;
#ifdef WD_HAVE_NFT
	struct fw_config fw;
#endif
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void print_timing(const char *what, uint64_t *ns, size_t n)
{
	size_t p90;

	if (n == 0)
		return;
	qsort(ns, n, sizeof(*ns), cmp_u64);
	p90 = (n * 9 + 9) / 10 - 1; /* nearest-rank 90th percentile */
	printf("timing %s n=%zu median_ms=%.3f p90_ms=%.3f max_ms=%.3f\n", what, n,
	       (double)(n % 2 ? ns[n / 2] : (ns[n / 2 - 1] + ns[n / 2]) / 2) / 1e6,
	       (double)ns[p90] / 1e6, (double)ns[n - 1] / 1e6);
}

static void print_run(const struct netns_run *r)
{
	char h4[INET_ADDRSTRLEN], s4[INET_ADDRSTRLEN], h6[INET6_ADDRSTRLEN], s6[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET, &r->addr.host4, h4, sizeof(h4));
	inet_ntop(AF_INET, &r->addr.sbx4, s4, sizeof(s4));
	inet_ntop(AF_INET6, &r->addr.host6, h6, sizeof(h6));
	inet_ntop(AF_INET6, &r->addr.sbx6, s6, sizeof(s6));
	printf("run %u %s %s %s/%u %s %s/%u %s\n", r->slot, r->ifname, r->mounted ? r->name : "-",
	       h4, r->addr.len4, s4, h6, r->addr.len6, s6);
}

static void wait_start(const struct opts *o)
{
	struct stat st;

	if (!o->start_file)
		return;
	while (stat(o->start_file, &st) < 0)
		usleep(1000);
}

/* Register @r with nft when --nft. Return: 0 or negative errno. */
static int fw_add(const struct opts *o, const struct netns_run *r, struct wd_err *err)
{
#ifdef WD_HAVE_NFT
	struct fw_run fr;

	if (!o->nft)
		return 0;
	memset(&fr, 0, sizeof(fr));
	snprintf(fr.ifname, sizeof(fr.ifname), "%s", r->ifname);
	fr.has_v4 = fr.has_v6 = fr.has_gw4 = fr.has_gw6 = true;
	fr.sbx4 = r->addr.sbx4;
	fr.sbx6 = r->addr.sbx6;
	fr.gw4 = r->addr.host4;
	fr.gw6 = r->addr.host6;
	return fw_run_add(&o->fw, &fr, err);
#else
	(void)o;
	(void)r;
	(void)err;
	return 0;
#endif
}

static int fw_del(const struct opts *o, const struct netns_run *r, struct wd_err *err)
{
#ifdef WD_HAVE_NFT
	struct fw_run fr;

	if (!o->nft)
		return 0;
	memset(&fr, 0, sizeof(fr));
	snprintf(fr.ifname, sizeof(fr.ifname), "%s", r->ifname);
	fr.has_v4 = fr.has_v6 = fr.has_gw4 = fr.has_gw6 = true;
	fr.sbx4 = r->addr.sbx4;
	fr.sbx6 = r->addr.sbx6;
	fr.gw4 = r->addr.host4;
	fr.gw6 = r->addr.host6;
	return fw_run_del(&o->fw, &fr, err);
#else
	(void)o;
	(void)r;
	(void)err;
	return 0;
#endif
}

static int cmd_cycle(struct opts *o, unsigned n, bool churn)
{
	struct netns_run *runs = calloc(n, sizeof(*runs));
	uint64_t *t_ns = calloc(n, sizeof(uint64_t)), *t_fw = calloc(n, sizeof(uint64_t));
	uint64_t *t_tot = calloc(n, sizeof(uint64_t)), *t_del = calloc(n, sizeof(uint64_t));
	uint64_t *t_deltot = calloc(n, sizeof(uint64_t));
	uint64_t *t_stage = calloc((size_t)n * NETNS_STAGE_COUNT, sizeof(uint64_t));
	struct wd_err err;
	unsigned made = 0;
	int ret = 1;

	if (!runs || !t_ns || !t_fw || !t_tot || !t_del || !t_deltot || !t_stage) {
		fprintf(stderr, "out of memory\n");
		goto out;
	}
	wait_start(o);
	for (unsigned i = 0; i < n; i++) {
		uint64_t t0 = wd_mono_ns(), t1, t2;

		wd_err_clear(&err);
		if (netns_run_create(&o->cfg, &runs[i], &err) < 0) {
			fprintf(stderr, "create #%u: %s\n", i, err.msg);
			goto out;
		}
		made = i + 1;
		t1 = wd_mono_ns();
		if (fw_add(o, &runs[i], &err) < 0) {
			fprintf(stderr, "fw_run_add %s: %s\n", runs[i].ifname, err.msg);
			goto out;
		}
		t2 = wd_mono_ns();
		for (int st = 0; st < NETNS_STAGE_COUNT; st++)
			t_stage[(size_t)st * n + i] = runs[i].stage_ns[st];
		t_ns[i] = t1 - t0;
		t_fw[i] = t2 - t1;
		t_tot[i] = t2 - t0;
		print_run(&runs[i]);
		if (churn) {
			if (fw_del(o, &runs[i], &err) < 0 ||
			    netns_run_destroy(&o->cfg, &runs[i], &err) < 0) {
				fprintf(stderr, "teardown %s: %s\n", runs[i].ifname, err.msg);
				goto out;
			}
			t_del[i] = wd_mono_ns() - t2;
		}
	}
	fflush(stdout);
	if (o->wait) {
		char line[64];

		printf("READY\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			clearerr(stdin);
	}
	for (unsigned i = 0; i < n && !churn; i++) {
		uint64_t t0 = wd_mono_ns(), t1;

		if (fw_del(o, &runs[i], &err) < 0) {
			fprintf(stderr, "fw_run_del %s: %s\n", runs[i].ifname, err.msg);
			goto out;
		}
		t1 = wd_mono_ns();
		if (netns_run_destroy(&o->cfg, &runs[i], &err) < 0) {
			fprintf(stderr, "destroy %s: %s\n", runs[i].ifname, err.msg);
			goto out;
		}
		t_del[i] = wd_mono_ns() - t1;
		t_deltot[i] = wd_mono_ns() - t0;
		/* destroying twice is harmless */
		if (netns_run_destroy(&o->cfg, &runs[i], &err) != 0) {
			fprintf(stderr, "second destroy %s: %s\n", runs[i].ifname, err.msg);
			goto out;
		}
	}
	print_timing("create(netns+veth+addr+route)", t_ns, n);
	for (int st = 0; st < NETNS_STAGE_COUNT; st++) {
		char what[64];

		snprintf(what, sizeof(what), "  stage-%s", netns_stage_name((enum netns_stage)st));
		print_timing(what, t_stage + (size_t)st * n, n);
	}
	if (o->nft) {
		print_timing("fw_run_add", t_fw, n);
		print_timing("create+fw_run_add", t_tot, n);
	}
	print_timing("destroy", t_del, n);
	if (o->nft && !churn)
		print_timing("fw_run_del+destroy", t_deltot, n);
	printf("DONE\n");
	ret = 0;
out:
	if (ret)
		for (unsigned i = 0; i < made; i++) {
			fw_del(o, &runs[i], &err);
			netns_run_destroy(&o->cfg, &runs[i], &err);
		}
	free(runs);
	free(t_ns);
	free(t_fw);
	free(t_tot);
	free(t_del);
	free(t_deltot);
	free(t_stage);
	return ret;
}

static int cmd_exec(struct opts *o, char **argv)
{
	char h4[INET_ADDRSTRLEN], s4[INET_ADDRSTRLEN], h6[INET6_ADDRSTRLEN], s6[INET6_ADDRSTRLEN];
	struct netns_run run;
	struct wd_err err;
	int status = 0, ret = 1;
	pid_t pid;

	wd_err_clear(&err);
	if (netns_run_create(&o->cfg, &run, &err) < 0) {
		fprintf(stderr, "create: %s\n", err.msg);
		return 1;
	}
	if (fw_add(o, &run, &err) < 0) {
		fprintf(stderr, "fw_run_add: %s\n", err.msg);
		goto out;
	}
	print_run(&run);
	fflush(stdout);
	inet_ntop(AF_INET, &run.addr.host4, h4, sizeof(h4));
	inet_ntop(AF_INET, &run.addr.sbx4, s4, sizeof(s4));
	inet_ntop(AF_INET6, &run.addr.host6, h6, sizeof(h6));
	inet_ntop(AF_INET6, &run.addr.sbx6, s6, sizeof(s6));
	pid = fork();
	if (pid < 0) {
		perror("fork");
		goto out;
	}
	if (pid == 0) {
		if (setns(run.netns_fd, CLONE_NEWNET) < 0) {
			perror("setns");
			_exit(127);
		}
		setenv("WD_HOST4", h4, 1);
		setenv("WD_SBX4", s4, 1);
		setenv("WD_HOST6", h6, 1);
		setenv("WD_SBX6", s6, 1);
		setenv("WD_IFNAME", run.ifname, 1);
		setenv("WD_NETNS", run.mounted ? run.name : "", 1);
		execvp(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			perror("waitpid");
			goto out;
		}
	ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
out:
	fw_del(o, &run, &err);
	if (netns_run_destroy(&o->cfg, &run, &err) < 0) {
		fprintf(stderr, "destroy: %s\n", err.msg);
		ret = 1;
	}
	return ret;
}

static int cmd_adopt(struct opts *o, const char *path)
{
	struct netns_run run;
	struct wd_err err;
	int fd, ret = 1;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	wd_err_clear(&err);
	if (netns_run_adopt(&o->cfg, fd, &run, &err) < 0) {
		fprintf(stderr, "adopt: %s\n", err.msg);
		close(fd);
		return 1;
	}
	close(fd); /* the run holds its own duplicate */
	print_run(&run);
	if (o->wait) {
		char line[64];

		printf("READY\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			clearerr(stdin);
	}
	if (netns_run_destroy(&o->cfg, &run, &err) < 0)
		fprintf(stderr, "destroy: %s\n", err.msg);
	else
		ret = 0;
	printf("DONE\n");
	return ret;
}

static int usage(void)
{
	fprintf(stderr, "usage: netns_helper --state DIR [--no-mount] [--nft] [--wait] "
			"[--start-file F] [--pool4 P] [--pool6 P] "
			"cycle N|churn N|exec -- CMD...|adopt NSPATH|gc|slots|has-nft\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct wd_err err;
	int i;

	memset(&o, 0, sizeof(o));
	netns_pool_config_defaults(&o.cfg);
	o.cfg.state_dir = NULL;
#ifdef WD_HAVE_NFT
	fw_config_defaults(&o.fw);
#endif
	for (i = 1; i < argc && argv[i][0] == '-' && strcmp(argv[i], "--") != 0; i++) {
		if (!strcmp(argv[i], "--state") && i + 1 < argc)
			o.cfg.state_dir = argv[++i];
		else if (!strcmp(argv[i], "--no-mount"))
			o.cfg.bind_mount = false;
		else if (!strcmp(argv[i], "--nft"))
			o.nft = true;
		else if (!strcmp(argv[i], "--wait"))
			o.wait = true;
		else if (!strcmp(argv[i], "--start-file") && i + 1 < argc)
			o.start_file = argv[++i];
		else if (!strcmp(argv[i], "--pool4") && i + 1 < argc) {
			if (netns_parse_prefix(argv[++i], &o.cfg.pool4) < 0)
				return usage();
		} else if (!strcmp(argv[i], "--pool6") && i + 1 < argc) {
			if (netns_parse_prefix(argv[++i], &o.cfg.pool6) < 0)
				return usage();
		} else
			return usage();
	}
	if (!o.cfg.state_dir || i >= argc)
		return usage();
#ifndef WD_HAVE_NFT
	if (o.nft) {
		fprintf(stderr, "built without nft/\n");
		return 2;
	}
#else
	if (o.nft) {
		wd_err_clear(&err);
		if (fw_install(&o.fw, &err) < 0) {
			fprintf(stderr, "fw_install: %s\n", err.msg);
			return 1;
		}
	}
#endif
	if ((!strcmp(argv[i], "cycle") || !strcmp(argv[i], "churn")) && i + 1 < argc) {
		long n = strtol(argv[i + 1], NULL, 10);

		if (n <= 0 || n > 100000)
			return usage();
		return cmd_cycle(&o, (unsigned)n, argv[i][1] == 'h');
	}
	if (!strcmp(argv[i], "exec") && i + 2 < argc && !strcmp(argv[i + 1], "--"))
		return cmd_exec(&o, argv + i + 2);
	if (!strcmp(argv[i], "adopt") && i + 1 < argc)
		return cmd_adopt(&o, argv[i + 1]);
	if (!strcmp(argv[i], "has-nft")) {
#ifdef WD_HAVE_NFT
		printf("yes\n");
		return 0;
#else
		printf("no\n");
		return 1;
#endif
	}
	if (!strcmp(argv[i], "gc")) {
		unsigned n = 0;

		wd_err_clear(&err);
		if (netns_gc(&o.cfg, &n, &err) < 0) {
			fprintf(stderr, "gc: %s\n", err.msg);
			return 1;
		}
		printf("reclaimed %u\n", n);
		return 0;
	}
	if (!strcmp(argv[i], "slots")) {
		unsigned n = 0;
		int r = netns_slot_count(&o.cfg, &n);

		if (r < 0) {
			fprintf(stderr, "slots: %s\n", strerror(-r));
			return 1;
		}
		printf("%u\n", n);
		return 0;
	}
	return usage();
}
