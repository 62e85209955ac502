/* ctlcli.c - `warden-gateway ctl ...`: the control protocol's command-line client. It sends one
 * request line (register, replace, learned, unregister, list, stats, or raw JSON) to the control
 * socket and prints the one answer line; the exit status says whether the answer was `ok`. Both
 * gateways' mains call it: main.c (Linux) and main_proxy.c (macOS). */
#include "common/common.h"
#include "gateway/gw.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int ctl_send(const char *path, const char *line)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct wd_buf in = WD_BUF_INIT;
	char buf[65536];
	int fd, ret = 125;
	json_t *j;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "warden-gateway ctl: socket path too long\n");
		return 2;
	}
	strcpy(sun.sun_path, path);
#ifdef SOCK_CLOEXEC
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
#else
	fd = socket(AF_UNIX, SOCK_STREAM, 0); /* macOS: no flag; this process execs nothing */
#endif
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		fprintf(stderr, "warden-gateway ctl: cannot connect to %s: %s\n", path,
			strerror(errno));
		goto out;
	}
	if (wd_write_all(fd, line, strlen(line)) || wd_write_all(fd, "\n", 1)) {
		fprintf(stderr, "warden-gateway ctl: write: %s\n", strerror(errno));
		goto out;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n <= 0)
			break;
		wd_buf_append(&in, buf, (size_t)n);
		if (memchr(buf, '\n', (size_t)n))
			break;
	}
	if (!in.len) {
		fprintf(stderr, "warden-gateway ctl: no answer\n");
		goto out;
	}
	fputs(in.data, stdout);
	if (in.data[in.len - 1] != '\n')
		fputc('\n', stdout);
	j = json_loads(in.data, 0, NULL);
	ret = j && json_is_true(json_object_get(j, "ok")) ? 0 : 1;
	json_decref(j);
out:
	if (fd >= 0)
		close(fd);
	wd_buf_free(&in);
	return ret;
}

int gw_ctl_client(int argc, char **argv, const char *sock, void (*usage)(FILE *f))
{
	static const struct option opts[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"id", required_argument, NULL, 'i'},
	    {"if", required_argument, NULL, 'f'},
	    {"host-v4", required_argument, NULL, '4'},
	    {"sandbox-v4", required_argument, NULL, 'a'},
	    {"host-v6", required_argument, NULL, '6'},
	    {"sandbox-v6", required_argument, NULL, 'b'},
	    {"policy", required_argument, NULL, 'p'},
	    {"learn", no_argument, NULL, 'l'},
	    {NULL, 0, NULL, 0},
	};
	static const char *const fields[] = {"",	   "id",      "if",	   "host_v4",
					     "sandbox_v4", "host_v6", "sandbox_v6"};
	const char *val[WD_ARRAY_SIZE(fields)] = {0};
	const char *policy = NULL, *op;
	bool learn = false;
	json_t *req;
	char *line;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			sock = optarg;
			break;
		case 'i':
			val[1] = optarg;
			break;
		case 'f':
			val[2] = optarg;
			break;
		case '4':
			val[3] = optarg;
			break;
		case 'a':
			val[4] = optarg;
			break;
		case '6':
			val[5] = optarg;
			break;
		case 'b':
			val[6] = optarg;
			break;
		case 'p':
			policy = optarg;
			break;
		case 'l':
			learn = true;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	op = argv[optind];
	if (!strcmp(op, "raw")) {
		if (optind + 1 >= argc) {
			usage(stderr);
			return 2;
		}
		return ctl_send(sock, argv[optind + 1]);
	}
	req = json_pack("{s:s}", "op", op);
	for (size_t i = 1; i < WD_ARRAY_SIZE(fields); i++)
		if (val[i])
			json_object_set_new(req, fields[i], json_string(val[i]));
	if (learn)
		json_object_set_new(req, "learn", json_true());
	if (policy) {
		char *data = NULL;
		size_t len = 0;
		const char *base = strrchr(policy, '/');

		ret = wd_read_file(policy, POLICY_MAX_BYTES, &data, &len);
		if (ret) {
			fprintf(stderr, "warden-gateway ctl: %s: %s\n", policy, strerror(-ret));
			json_decref(req);
			return 2;
		}
		json_object_set_new(req, "policy", json_stringn(data, len));
		json_object_set_new(req, "policy_name", json_string(base ? base + 1 : policy));
		free(data);
	}
	line = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	if (!line)
		return 125;
	ret = ctl_send(sock, line);
	free(line);
	return ret;
}
