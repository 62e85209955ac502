/* fanotify_count.c - the benchmark's fanotify candidate (tests/bench/files.sh): marks the
 * filesystem of PATH for FAN_OPEN | FAN_OPEN_EXEC with FAN_REPORT_DFID_NAME, counts the events
 * until SIGTERM, prints the count. Needs CAP_SYS_ADMIN in the initial user namespace. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	static char buf[1 << 16];
	unsigned long long n = 0;
	struct sigaction sa;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: fanotify_count PATH\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_REPORT_DFID_NAME | FAN_REPORT_FID,
			   O_RDONLY);
	if (fd < 0) {
		perror("fanotify_init");
		return 1;
	}
	if (fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_OPEN | FAN_OPEN_EXEC,
			  AT_FDCWD, argv[1]) < 0) {
		perror("fanotify_mark");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		ssize_t len = read(fd, buf, sizeof(buf));

		if (len < 0) {
			if (errno == EINTR)
				continue;
			perror("read");
			return 1;
		}
		for (char *p = buf; p < buf + len;) {
			struct fanotify_event_metadata *m = (struct fanotify_event_metadata *)p;

			n++;
			p += m->event_len;
		}
	}
	printf("%llu\n", n);
	return 0;
}
