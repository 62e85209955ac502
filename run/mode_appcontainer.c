/* mode_appcontainer.c - `warden run` on Windows: the AppContainer backend (docs/run.md,
 * "Backends: AppContainer (Windows)"; docs/platforms.md, "warden.exe"). Built for Windows only
 * (tests/cross/windows); the native build leaves it out (run/CMakeLists.txt).
 *
 * Theory of operation. As on macOS the program's one network path is a proxy-mode gateway on
 * loopback, started for this run as warden's child; the AppContainer's WFP filters let the
 * program reach nothing else. Windows hands no socket down by descriptor number, so warden
 * picks the port (bound, read, closed) and writes it into the gateway's configuration; the
 * gateway binds it itself, and a gateway that exits before the port answers fails the run.
 *   1. the options that mean nothing here refused; the policy loaded and validated (file:
 *      line:col diagnostics; nothing starts when it is invalid);
 *   2. the command found (127 before anything starts);
 *   3. the run's private folder in %TEMP% and the proxy port;
 *   4. run.start in the audit log (a Windows writer is not chained: no libcrypto);
 *   5. the gateway: CreateProcessW of warden-gateway.exe beside warden.exe with its
 *      configuration and the run (--run), in a Job Object that ends it when warden ends,
 *      ready when it sets the event it was given (--ready-event: its listener bound and the
 *      run registered; no probe connection, which the gateway would audit as a denial);
 *   6. the AppContainer: sandbox_ac_start() with the plan of the policy's grants, masks, the
 *      run's folder (written like a write grant), the proxy port and the limits (a Job
 *      Object), the environment of run_proxy_env() with the Windows variables a program needs;
 *   7. the wait (the wall-time watchdog, Ctrl+C, Ctrl+Break and the console's close end the
 *      job), run.exit, sandbox_ac_stop(), the gateway ended, the folder removed.
 * The run is registered with the gateway at its start: Windows has no control channel (the
 * gateway's is an AF_UNIX socket checked by peer credentials), so warden writes the register
 * request macOS's warden sends over the socket (run_proxy_register()) into run.json in the
 * run's folder and starts the gateway with `--run` (gateway/main_proxy.c); a gateway that
 * refuses the run exits, and the run fails before the AppContainer. What the gateway counted
 * is written by the gateway when warden stops it (--stop-event, an inherited event it waits on)
 * into counts.json (--counts) and read for run.exit; a gateway that does not stop within 5 s
 * is ended with its job and run.exit says its counts are incomplete.
 *
 * WARDEN_WINTEST (tests/cross/windows' warden-wintest.exe, never installed): the winapi layer
 * is the test's stand-in (it confines nothing) and WARDEN_GATEWAY_BIN names the gateway. */
#include "audit/audit.h"
#include "policy/policy.h"
#include "run/proxyaudit.h"
#include "run/proxyrun.h"
#include "run/run.h"
#include "sandbox/appcontainer.h"

#include <winsock2.h>
#include <windows.h>

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef WARDEN_WINTEST
/* the test's stand-in layer (tests/cross/windows/winapi_standin.c) */
const struct sandbox_win_api *sandbox_win_api_standin(void);
#define AC_API() sandbox_win_api_standin()
#else
#define AC_API() sandbox_win_api_real()
#endif

#define AC_BACKEND "appcontainer"
/* how long the gateway may take to bind its port */
#define GW_READY_MS 10000
/* how long the gateway may take to stop and write the run's counts */
#define GW_STOP_MS 5000
/* the wait's slice: a stop asked or the watchdog's deadline is seen within it */
#define WAIT_SLICE_MS 100

/**
 * struct ac_run - one Windows run
 * @o:		the options
 * @pol:	the validated policy
 * @text:	its YAML as read
 * @len:	its length
 * @policy_abs:	its path, or "(none)"
 * @argv:	the command, argv[0] the path found
 * @exe:	that path
 * @px:		the run's folder, files and port (listen_fd and gw_pid unused here)
 * @runfile:	the register request for the gateway's --run, in the run's folder
 * @countsfile:	where the gateway writes the run's counts when it stops (--counts)
 * @listener:	the proxy listener until the gateway has its copy, else INVALID_SOCKET
 * @listenfile:	its protocol information for the gateway (--listen-info)
 * @gw_stop:	the event that stops the gateway (--stop-event), or NULL
 * @counts:	the run's denials, bytes up and down, from @countsfile; -1: not known
 * @gw:		the gateway's process, or NULL
 * @gw_job:	the Job Object that ends the gateway with warden, or NULL
 * @ac:		what the AppContainer backend applied
 * @au:		the audit log, once opened (run.exit signed with the person's key)
 * @t0:		when the run began (wd_mono_ns())
 * @fail:	run.exit's reason when warden failed
 * @exited:	run.exit is written
 */
struct ac_run {
	const struct run_opts *o;
	struct wd_policy *pol;
	char *text;
	size_t len;
	char policy_abs[PATH_MAX];
	char **argv;
	char exe[PATH_MAX];
	struct run_proxy px;
	char runfile[PATH_MAX];
	char countsfile[PATH_MAX];
	SOCKET listener;
	char listenfile[PATH_MAX];
	HANDLE gw_stop;
	int64_t counts[3];
	HANDLE gw;
	HANDLE gw_job;
	struct sandbox_ac ac;
	struct run_proxy_audit au;
	uint64_t t0;
	char fail[1024];
	bool exited;
};

/* the console's stop (Ctrl+C, Ctrl+Break, close), seen by every stage and the wait */
static volatile LONG stop_asked;
/* set once everything is undone: the close handler waits for it (Windows ends the process
 * when the handler returns) */
static HANDLE undone;

static BOOL WINAPI on_console(DWORD ev)
{
	InterlockedCompareExchange(&stop_asked, (LONG)ev + 1, 0);
	if (ev == CTRL_CLOSE_EVENT || ev == CTRL_LOGOFF_EVENT || ev == CTRL_SHUTDOWN_EVENT)
		WaitForSingleObject(undone, 4000);
	return TRUE;
}

static int fail(struct ac_run *r, const char *step, const char *fix, const char *fmt, ...)
    WD_PRINTF(4, 5);
/* a step that failed: said on stderr and kept for run.exit; Return: RUN_EXIT_WARDEN */
static int fail(struct ac_run *r, const char *step, const char *fix, const char *fmt, ...)
{
	char cause[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cause, sizeof(cause), fmt, ap);
	va_end(ap);
	wd_say(stderr, "warden run: %s: %s", step, cause);
	if (fix)
		wd_say(stderr, "  fix: %s", fix);
	snprintf(r->fail, sizeof(r->fail), "%s: %s", step, cause);
	return RUN_EXIT_WARDEN;
}

/* 1. what this path does not do: refused by name, never ignored */
static int refuse_options(const struct run_opts *o)
{
	const char *what = o->mode	      ? "--mode"
			   : o->gateway	      ? "--gateway"
			   : o->sandbox_user  ? "--sandbox-user"
			   : o->print_seccomp ? "--print-seccomp"
			   : o->print_bwrap   ? "--print-bwrap"
			   : o->print_policy  ? "--print-policy"
			   : o->nflags	      ? "--allow, --ask, --read and --write"
			   : o->shadow	      ? "--shadow"
			   : o->started_by    ? "--started-by"
					      : NULL;

	if (what) {
		wd_say(stderr,
		       "warden run: %s: not available on Windows (the AppContainer backend takes "
		       "-p, --config, --audit-log, --timeout, --backend windows, -q)",
		       what);
		return RUN_EXIT_USAGE;
	}
	if (o->backend && policy_backend_lookup(o->backend) != POLICY_BACKEND_WINDOWS) {
		wd_say(stderr,
		       "warden run: backend: --backend %s cannot run on Windows: its backend is "
		       "windows (AppContainer); nothing was started",
		       o->backend);
		return RUN_EXIT_WARDEN;
	}
	return 0;
}

static void print_diags(struct policy_diags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		struct wd_buf b = WD_BUF_INIT;

		policy_diag_format(d, i, &b);
		wd_say(stderr, "%s", wd_buf_cstr(&b));
		wd_buf_free(&b);
	}
}

/* @in as policy/ takes a path ('/'-rooted: "C:\\Users\\a" is "/C:/Users/a"; policy/validate.c
 * takes a grant written "C:\\x" or "C:/x" to that form, common/win.c's stat calls read it);
 * win_form() turns it back for the plan */
static const char *posix_form(const char *in, char *out, size_t size)
{
	char cwd[PATH_MAX];

	/* a relative path (WARDEN_AUDIT_KEY=key.pem) is the current folder's, as the C runtime
	 * opens it: protected as such, not as a path on no drive that no grant could hold */
	if (in && *in && !wd_path_absolute(in)) {
		if (!_getcwd(cwd, sizeof(cwd)) ||
		    snprintf(out, size, "/%s\\%s", cwd, in) >= (int)size)
			return NULL;
	} else if (!in || !*in || snprintf(out, size, "/%s", in) >= (int)size) {
		return NULL;
	}
	for (char *c = out; *c; c++)
		if (*c == '\\')
			*c = '/';
	return out;
}

/* @p is policy/'s form of a path on a drive: "/X:" or "/X:/..." */
static bool on_drive(const char *p)
{
	return p[0] == '/' && ((p[1] >= 'A' && p[1] <= 'Z') || (p[1] >= 'a' && p[1] <= 'z')) &&
	       p[2] == ':' && (!p[3] || p[3] == '/');
}

/* policy/'s "/X:/a/b" as Windows writes it, "X:\\a\\b" ("/X:" is "X:\\"), malloc'd; NULL for a
 * path on no drive ("/a": policy/ made it of a grant written that way), which no plan takes,
 * or when out of memory */
static char *win_form(const char *p)
{
	size_t n = strlen(p);
	char *out;

	if (!on_drive(p))
		return NULL;
	out = malloc(n + 2);
	if (!out)
		return NULL;
	memcpy(out, p + 1, n);
	if (!p[3])
		strcat(out, "/");
	for (char *c = out; *c; c++)
		if (*c == '/')
			*c = '\\';
	return out;
}

/* @n paths of policy/ in Windows' form into @out (room for @n). Return: NULL, or the path that
 * has no Windows form (@ret -EINVAL) or could not be copied (@ret -ENOMEM) */
static const char *win_forms(const char *const *in, size_t n, char **out, int *ret)
{
	*ret = 0;
	for (size_t i = 0; i < n; i++) {
		out[i] = win_form(in[i]);
		if (!out[i]) {
			*ret = on_drive(in[i]) ? -ENOMEM : -EINVAL;
			return in[i];
		}
	}
	return NULL;
}

/* 1. the policy, validated as on Linux; the audit log and the signing key protected from every
 * grant */
static int load_policy(struct ac_run *r, const char *audit_path)
{
	static const char empty[] = "version: 1\n";
	static char home[PATH_MAX], name[PATH_MAX], prot_path[PATH_MAX], key_path[PATH_MAX];
	struct policy_protect prot[2];
	struct policy_ctx ctx = {.home = posix_form(getenv("USERPROFILE"), home, sizeof(home)),
				 .protect = prot};
	struct policy_diags d;
	int ret;

	prot[ctx.nprotect] = (struct policy_protect){
	    posix_form(audit_path, prot_path, sizeof(prot_path)), "the audit log", false};
	ctx.nprotect += prot[ctx.nprotect].path != NULL;
	prot[ctx.nprotect] =
	    (struct policy_protect){posix_form(run_audit_key_path(), key_path, sizeof(key_path)),
				    "the audit signing key", false};
	ctx.nprotect += prot[ctx.nprotect].path != NULL;
	policy_diags_init(&d);
	if (r->o->policy) {
		/* read here, named in policy/'s form (relative grants are taken from the
		 * policy's folder); the diagnostics name the file as given */
		snprintf(d.file, sizeof(d.file), "%s", r->o->policy);
		ret = wd_read_file(r->o->policy, POLICY_MAX_BYTES, &r->text, &r->len);
		if (!ret)
			ret = posix_form(r->o->policy, name, sizeof(name)) ? 0 : -ENAMETOOLONG;
		if (!ret)
			ret = policy_load_buf(r->text, r->len, name, &ctx, &r->pol, &d);
		if (ret) {
			print_diags(&d);
			policy_diags_free(&d);
			return fail(r, "policy", "correct the policy", "%s is not valid (%s)",
				    r->o->policy, strerror(-ret));
		}
		snprintf(r->policy_abs, sizeof(r->policy_abs), "%s", r->o->policy);
	} else {
		ret = policy_parse(empty, sizeof(empty) - 1, "(empty policy)", &r->pol, &d);
		ret = ret ? ret : policy_validate(r->pol, &ctx, &d);
		r->text = strdup(empty);
		r->len = sizeof(empty) - 1;
		snprintf(r->policy_abs, sizeof(r->policy_abs), "(none)");
		if (!ret && !r->text)
			ret = -ENOMEM;
	}
	if (ret) {
		policy_diags_free(&d);
		return fail(r, "policy", NULL, "%s: %s", r->policy_abs, strerror(-ret));
	}
	if (d.n && !r->o->quiet)
		print_diags(&d);
	policy_diags_free(&d);
	if (r->pol->sandbox_backend != POLICY_BACKEND_AUTO &&
	    r->pol->sandbox_backend != POLICY_BACKEND_WINDOWS && !r->o->backend)
		return fail(r, "backend", "remove sandbox.backend, or pass --backend windows",
			    "the policy asks for sandbox.backend %s, which cannot run on Windows",
			    policy_backend_name(r->pol->sandbox_backend));
	if (r->pol->limits.cpu_milli)
		return fail(r, "limits", "remove limits.cpu, or run it on Linux",
			    "limits.cpu: a Job Object bounds CPU time, not a share of CPU; "
			    "nothing was started");
	return 0;
}

/* 2. the command: as given when it names a folder, else in PATH (NAME, then NAME.exe) */
static int find_command(struct ac_run *r, int argc, char **argv)
{
	size_t n = argc > 0 ? (size_t)argc : r->pol->ncommand;
	DWORD got;

	if (!n || (argc <= 0 && !r->pol->command)) {
		fprintf(stderr, "warden run: no command: give one after `--` or set `command` in "
				"the policy\n");
		if (r->o->usage)
			r->o->usage(stderr);
		return RUN_EXIT_USAGE;
	}
	r->argv = calloc(n + 1, sizeof(*r->argv));
	if (!r->argv)
		return fail(r, "policy", NULL, "out of memory");
	for (size_t i = 0; i < n; i++)
		r->argv[i] = argc > 0 ? argv[i] : r->pol->command[i];
	got = SearchPathA(NULL, r->argv[0], ".exe", sizeof(r->exe), r->exe, NULL);
	if (!got || got >= sizeof(r->exe) ||
	    (GetFileAttributesA(r->exe) & FILE_ATTRIBUTE_DIRECTORY)) {
		wd_say(stderr, "warden run: %s: command not found", r->argv[0]);
		return RUN_EXIT_NOTFOUND;
	}
	r->argv[0] = r->exe;
	return 0;
}

/* 3. the run's folder in %TEMP% (its tmp folder the program's TEMP) and a free port */
static int begin(struct ac_run *r, const char *id)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	int len = sizeof(sin);
	char tmp[MAX_PATH + 1];
	SOCKET s;
	DWORD n = GetTempPathA(sizeof(tmp), tmp);

	snprintf(r->px.id, sizeof(r->px.id), "%s", id);
	if (!n || n >= sizeof(tmp))
		return fail(r, "network", NULL, "no temporary folder (GetTempPathA)");
	snprintf(r->px.dir, sizeof(r->px.dir), "%swarden-run-%s", tmp, id);
	if (!CreateDirectoryA(r->px.dir, NULL)) {
		r->px.dir[0] = '\0';
		return fail(r, "network", NULL, "%swarden-run-%s: Windows error %lu", tmp, id,
			    GetLastError());
	}
	snprintf(r->px.tmp, sizeof(r->px.tmp), "%s\\tmp", r->px.dir);
	snprintf(r->px.ctl, sizeof(r->px.ctl), "%s\\gw.sock", r->px.dir);
	snprintf(r->px.conf, sizeof(r->px.conf), "%s\\gateway.yaml", r->px.dir);
	snprintf(r->px.log, sizeof(r->px.log), "%s\\gateway.log", r->px.dir);
	if (!CreateDirectoryA(r->px.tmp, NULL))
		return fail(r, "network", NULL, "%s: Windows error %lu", r->px.tmp, GetLastError());
	/* the listener: bound on 127.0.0.1 to a port the system picks and listening, kept until
	 * the gateway has its own copy (start_gateway(): WSADuplicateSocketW), so that no other
	 * program can take the port between the two; not inherited by any child */
	s = WSASocketW(AF_INET, SOCK_STREAM, IPPROTO_TCP, NULL, 0, WSA_FLAG_NO_HANDLE_INHERIT);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s == INVALID_SOCKET ||
	    setsockopt(s, SOL_SOCKET, SO_EXCLUSIVEADDRUSE, (const char *)&(int){1}, sizeof(int)) ||
	    bind(s, (struct sockaddr *)&sin, sizeof(sin)) ||
	    getsockname(s, (struct sockaddr *)&sin, &len) || listen(s, SOMAXCONN)) {
		int e = WSAGetLastError();

		if (s != INVALID_SOCKET)
			closesocket(s);
		return fail(r, "network", NULL, "a listener on 127.0.0.1: Winsock error %d", e);
	}
	r->listener = s;
	r->px.port = ntohs(sin.sin_port);
	snprintf(r->listenfile, sizeof(r->listenfile), "%s\\listen.bin", r->px.dir);
	return 0;
}

/* the folder warden.exe is in, with a trailing backslash; "" when unknown */
static void self_dir(char *out, size_t size)
{
	DWORD n = GetModuleFileNameA(NULL, out, (DWORD)size);
	char *slash;

	if (!n || n >= size) {
		out[0] = '\0';
		return;
	}
	slash = strrchr(out, '\\');
	if (slash)
		slash[1] = '\0';
	else
		out[0] = '\0';
}

/* warden-gateway.exe beside warden.exe (the test build: $WARDEN_GATEWAY_BIN too) */
static int find_gateway(char *out, size_t size)
{
#ifdef WARDEN_WINTEST
	const char *env = getenv("WARDEN_GATEWAY_BIN");

	if (env && *env) {
		snprintf(out, size, "%s", env);
		return GetFileAttributesA(out) == INVALID_FILE_ATTRIBUTES ? -ENOENT : 0;
	}
#endif
	self_dir(out, size);
	if (!out[0] || strlen(out) + sizeof("warden-gateway.exe") > size)
		return -ENOENT;
	strcat(out, "warden-gateway.exe");
	return GetFileAttributesA(out) == INVALID_FILE_ATTRIBUTES ? -ENOENT : 0;
}

/* a new file @path (never one that is there) opened for writing bytes as they are: O_EXCL in
 * place of fopen()'s "x", which msvcrt.dll does not know. Return: the stream, or NULL */
static FILE *new_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "wb");

	if (fd >= 0 && !f)
		close(fd);
	return f;
}

/* the configuration written, a new file in the run's folder */
static int write_conf(struct ac_run *r, const char *audit_path)
{
	struct wd_buf yaml = WD_BUF_INIT;
	struct wd_err err;
	FILE *f;
	int ret;

	wd_err_clear(&err);
	ret = run_proxy_conf(r->o->config, r->px.port, r->px.ctl, audit_path, &yaml, &err);
	if (ret) {
		wd_buf_free(&yaml);
		return fail(r, "gateway", r->o->config ? "correct the gateway config" : NULL, "%s",
			    err.msg);
	}
	f = new_file(r->px.conf);
	ret = !f || fwrite(yaml.data, 1, yaml.len, f) != yaml.len;
	if (f && fclose(f))
		ret = 1;
	wd_buf_free(&yaml);
	return ret ? fail(r, "gateway", NULL, "%s: cannot be written", r->px.conf) : 0;
}

/* the run's register request, for the gateway's --run: the one macOS's warden sends over the
 * control socket (run_proxy_register()), a new file in the run's folder */
static int write_run(struct ac_run *r)
{
	const char *bs = strrchr(r->policy_abs, '\\'), *fs = strrchr(r->policy_abs, '/');
	const char *name = bs > fs ? bs : fs;
	json_t *req =
	    json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s%}", "op", "register", "id", r->px.id,
		      "if", "lo", "host_v4", "127.0.0.1", "sandbox_v4", "127.0.0.1", "policy_name",
		      name ? name + 1 : r->policy_abs, "policy", r->text, r->len);
	char *line = req ? json_dumps(req, JSON_COMPACT) : NULL;
	FILE *f;
	int bad;

	json_decref(req);
	if (!line)
		return fail(r, "gateway", NULL, "the run's register request: out of memory");
	snprintf(r->runfile, sizeof(r->runfile), "%s\\run.json", r->px.dir);
	f = new_file(r->runfile);
	bad = !f || fputs(line, f) < 0;
	if (f && fclose(f))
		bad = 1;
	free(line);
	return bad ? fail(r, "gateway", NULL, "%s: cannot be written", r->runfile) : 0;
}

/* the listener's protocol information for the gateway @pid (suspended: it reads it at start),
 * a new file in the run's folder; Return: 0, or nonzero with GetLastError() set */
static int hand_listener(struct ac_run *r, DWORD pid)
{
	WSAPROTOCOL_INFOW info;
	FILE *f;
	int bad;

	if (WSADuplicateSocketW(r->listener, pid, &info)) {
		SetLastError((DWORD)WSAGetLastError());
		return -1;
	}
	f = new_file(r->listenfile);
	bad = !f || fwrite(&info, sizeof(info), 1, f) != 1;
	if (f && fclose(f))
		bad = 1;
	if (bad)
		SetLastError(ERROR_WRITE_FAULT);
	return bad;
}

/* 5. the gateway, a child in a job of its own (KILL_ON_JOB_CLOSE), ready when it sets the
 * event it inherited (--ready-event); one that exits first fails the run */
static int start_gateway(struct ac_run *r, const char *gw, const char *audit_path)
{
	JOBOBJECT_EXTENDED_LIMIT_INFORMATION lim = {0};
	SECURITY_ATTRIBUTES sa = {sizeof(sa), NULL, TRUE};
	STARTUPINFOA si = {.cb = sizeof(si), .dwFlags = STARTF_USESTDHANDLES};
	PROCESS_INFORMATION pi = {0};
	char line[4 * PATH_MAX], tail[512];
	HANDLE out, nul, ready, waits[2];
	BOOL ok;
	int ret = write_conf(r, audit_path);

	if (!ret)
		ret = write_run(r);
	if (ret)
		return ret;
	if (strchr(gw, '"') || strchr(r->px.conf, '"') || strchr(r->runfile, '"'))
		return fail(r, "gateway", NULL, "a path with a double quote: refused");
	r->gw_job = CreateJobObjectA(NULL, NULL);
	lim.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
	if (!r->gw_job || !SetInformationJobObject(r->gw_job, JobObjectExtendedLimitInformation,
						   &lim, sizeof(lim)))
		return fail(r, "gateway", NULL, "its Job Object: Windows error %lu",
			    GetLastError());
	/* inheritable: the gateway's to set; closed once it did, before the program starts */
	ready = CreateEventA(&sa, TRUE, FALSE, NULL);
	if (!ready)
		return fail(r, "gateway", NULL, "its readiness event: Windows error %lu",
			    GetLastError());
	r->gw_stop = CreateEventA(&sa, TRUE, FALSE, NULL);
	if (!r->gw_stop) {
		CloseHandle(ready);
		return fail(r, "gateway", NULL, "its stop event: Windows error %lu",
			    GetLastError());
	}
	snprintf(r->countsfile, sizeof(r->countsfile), "%s\\counts.json", r->px.dir);
	snprintf(line, sizeof(line),
		 "\"%s\" --config \"%s\" --run \"%s\" --counts \"%s\" --listen-info \"%s\" "
		 "--ready-event %llu --stop-event %llu",
		 gw, r->px.conf, r->runfile, r->countsfile, r->listenfile,
		 (unsigned long long)(uintptr_t)ready, (unsigned long long)(uintptr_t)r->gw_stop);
	out = CreateFileA(r->px.log, GENERIC_WRITE, FILE_SHARE_READ, &sa, CREATE_NEW,
			  FILE_ATTRIBUTE_NORMAL, NULL);
	nul = CreateFileA("NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa,
			  OPEN_EXISTING, 0, NULL);
	si.hStdInput = nul;
	si.hStdOutput = out;
	si.hStdError = out;
	ok = out != INVALID_HANDLE_VALUE && nul != INVALID_HANDLE_VALUE &&
	     CreateProcessA(gw, line, NULL, NULL, TRUE, CREATE_SUSPENDED | CREATE_NO_WINDOW, NULL,
			    r->px.dir, &si, &pi);
	if (out != INVALID_HANDLE_VALUE)
		CloseHandle(out);
	if (nul != INVALID_HANDLE_VALUE)
		CloseHandle(nul);
	if (!ok) {
		DWORD e = GetLastError();

		CloseHandle(ready);
		return fail(r, "gateway", NULL, "%s: CreateProcess: Windows error %lu", gw, e);
	}
	r->gw = pi.hProcess;
	if (!AssignProcessToJobObject(r->gw_job, pi.hProcess) || hand_listener(r, pi.dwProcessId) ||
	    ResumeThread(pi.hThread) == (DWORD)-1) {
		DWORD e = GetLastError();

		/* outside its job nothing else would end it */
		TerminateProcess(pi.hProcess, 1);
		CloseHandle(pi.hThread);
		CloseHandle(ready);
		return fail(
		    r, "gateway", NULL,
		    "its start (the Job Object, the listener handed over): Windows error %lu", e);
	}
	CloseHandle(pi.hThread);
	waits[0] = r->gw;
	waits[1] = ready;
	for (int waited = 0; waited < GW_READY_MS; waited += 50) {
		DWORD w = WaitForMultipleObjects(2, waits, FALSE, 50);

		if (w == WAIT_OBJECT_0) {
			DWORD code = 0;

			CloseHandle(ready);
			GetExitCodeProcess(r->gw, &code);
			/* the log goes with the run's folder: its last line is said here */
			run_proxy_log_tail(r->px.log, tail, sizeof(tail));
			return fail(r, "gateway", NULL, "it exited (%lu) before it was ready: %s",
				    code, tail[0] ? tail : "(its log is empty)");
		}
		if (w == WAIT_OBJECT_0 + 1) {
			CloseHandle(ready);
			/* the gateway serves on its copy */
			closesocket(r->listener);
			r->listener = INVALID_SOCKET;
			return 0;
		}
		if (stop_asked) {
			CloseHandle(ready);
			return fail(r, "gateway", NULL, "stopped before the program started");
		}
	}
	CloseHandle(ready);
	return fail(r, "gateway", NULL, "not ready on 127.0.0.1:%u within %d ms (log: %s)",
		    r->px.port, GW_READY_MS, r->px.log);
}

/* what every event of the run carries */
static void fill_common(struct ac_run *r, struct audit_event *ev)
{
	ev->run = r->px.id;
	ev->policy = r->policy_abs;
	ev->has |= AUDIT_HAS_PID;
	ev->pid = (int)GetCurrentProcessId();
}

/* 4. run.start, before anything runs */
static int audit_start(struct ac_run *r, const char *path, unsigned timeout_s)
{
	struct audit_event ev = {0};
	char iso[512];
	struct wd_err err;
	const char *fix;
	int ret;

	wd_err_clear(&err);
	ret = run_proxy_audit_open(&r->au, path, run_audit_key_path(), r->text, r->len, &err, &fix);
	if (ret) {
		run_proxy_audit_close(&r->au);
		return fail(r, "audit", fix, "%s", err.msg[0] ? err.msg : strerror(-ret));
	}
	snprintf(iso, sizeof(iso),
		 "network: proxy mode only, gateway on 127.0.0.1:%u (HTTP proxy, SOCKS5); "
		 "sandbox: %s (AppContainer, DACL grants, WFP filters, Job Object); "
		 "limits: memory %llu MiB, processes %u, wall time %u s (0: none)",
		 r->px.port, AC_BACKEND, (unsigned long long)r->pol->limits.memory_mb,
		 r->pol->limits.pids, timeout_s);
	ev.type = AUDIT_TYPE_RUN;
	ev.action = "run.start";
	ev.resource = r->exe;
	ev.allowed = true;
	ev.reason = "gateway: embedded, proxy mode";
	ev.isolation = iso;
	ev.command = (const char *const *)r->argv;
	for (ev.command_len = 0; r->argv[ev.command_len]; ev.command_len++)
		;
	fill_common(r, &ev);
	ret = run_proxy_audit_start(&r->au, &ev, &err);
	if (ret) {
		run_proxy_audit_close(&r->au);
		return fail(r, "audit", "free space or fix permissions of the audit log",
			    "run.start could not be written to %s: %s", path,
			    err.msg[0] ? err.msg : strerror(-ret));
	}
	return 0;
}

/* 7. run.exit: the status and the duration */
static void audit_exit(struct ac_run *r, int status)
{
	struct audit_event ev = {0};
	struct wd_err err;

	if (!r->au.log || r->exited)
		return;
	r->exited = true;
	ev.type = AUDIT_TYPE_RUN;
	ev.action = "run.exit";
	ev.resource = r->exe;
	ev.allowed = status != RUN_EXIT_WARDEN || !r->fail[0];
	ev.reason = r->fail[0] ? r->fail : NULL;
	ev.has = AUDIT_HAS_EXIT | AUDIT_HAS_DURATION;
	ev.exit = status;
	ev.duration_ms = (int64_t)((wd_mono_ns() - r->t0) / 1000000);
	if (r->counts[0] >= 0) {
		ev.has |= AUDIT_HAS_DENIALS;
		ev.denials = r->counts[0];
	}
	if (r->counts[1] >= 0 && r->counts[2] >= 0) {
		ev.has |= AUDIT_HAS_BYTES_UP | AUDIT_HAS_BYTES_DOWN;
		ev.bytes_up = r->counts[1];
		ev.bytes_down = r->counts[2];
	}
	if (r->countsfile[0] && r->counts[0] < 0) {
		/* the gateway ran but did not stop in time to write them */
		ev.has |= AUDIT_HAS_COUNTS_INCOMPLETE;
		ev.counts_incomplete = true;
	}
	fill_common(r, &ev);
	wd_err_clear(&err);
	if (run_proxy_audit_exit(&r->au, &ev, r->px.id, &err))
		wd_say(stderr, "warden run: audit: run.exit: %s",
		       err.msg[0] ? err.msg : "not written durably");
}

/* the program's environment block: run_proxy_env()'s, TEMP and TMP the run's folder, and what
 * Windows programs need from warden's (SystemRoot: Winsock fails without it) */
static int env_block(struct ac_run *r, struct wd_buf *out)
{
	static const char *const keep[] = {"SystemRoot", "windir", "PATH", "PATHEXT"};
	char **env = NULL;
	int ret = run_proxy_env(r->pol, _environ, &r->px, &env);

	for (size_t i = 0; !ret && i < WD_ARRAY_SIZE(keep); i++) {
		const char *v = getenv(keep[i]);

		if (v && !policy_env_names(r->pol, keep[i]))
			ret = run_proxy_env_set(&env, keep[i], v);
	}
	if (!ret)
		ret = run_proxy_env_set(&env, "TEMP", r->px.tmp);
	if (!ret)
		ret = run_proxy_env_set(&env, "TMP", r->px.tmp);
	if (!ret)
		ret = run_proxy_env_set(&env, "USERPROFILE", r->px.tmp);
	for (size_t i = 0; !ret && env[i]; i++)
		if (wd_buf_append(out, env[i], strlen(env[i]) + 1))
			ret = -ENOMEM;
	if (!ret && wd_buf_append(out, "", 1))
		ret = -ENOMEM;
	run_proxy_strv_free(env);
	return ret;
}

/* 6. the AppContainer and the program in it */
static int start_program(struct ac_run *r, struct wd_buf *env)
{
	size_t nr = r->pol->nread, nw = r->pol->nwrite, nm = r->pol->nmask, nall = nr + nw + nm;
	const char **lex = calloc(nall + 1, sizeof(*lex));
	char **all = calloc(nall + 1, sizeof(*all));
	const char *bad = NULL;
	struct sandbox_win_grants g = {.proxy_port = r->px.port};
	struct sandbox_ac_spec spec = {.grants = &g, .env = env->data};
	char profile[64];
	struct wd_err err;
	int ret;

	spec.argv = (const char *const *)r->argv;
	if (!lex || !all) {
		free(lex);
		free(all);
		return fail(r, "sandbox", NULL, "out of memory");
	}
	/* the grants that exist (policy/ says what a missing one means), then the masks, each
	 * in Windows' form; the run's folder is written like a write grant */
	for (size_t i = 0; i < nr; i++)
		if (r->pol->read[i].real)
			lex[g.nread++] = r->pol->read[i].real;
	for (size_t i = 0; i < nw; i++)
		if (r->pol->write[i].real)
			lex[g.nread + g.nwrite++] = r->pol->write[i].real;
	for (size_t i = 0; i < nm; i++)
		lex[g.nread + g.nwrite + g.nmask++] = r->pol->mask[i];
	bad = win_forms(lex, g.nread + g.nwrite + g.nmask, all, &ret);
	if (!bad) {
		g.read = (const char *const *)all;
		g.write = (const char *const *)all + g.nread;
		/* the run's folder after the write grants, before the masks: moved into place */
		memmove(all + g.nread + g.nwrite + 1, all + g.nread + g.nwrite,
			g.nmask * sizeof(*all));
		all[g.nread + g.nwrite] = r->px.tmp;
		g.nwrite++;
		g.mask = (const char *const *)all + g.nread + g.nwrite;
	}
	while (spec.argv[spec.argc])
		spec.argc++;
	snprintf(profile, sizeof(profile), "warden.%s", r->px.id);
	spec.profile = profile;
	spec.limits.memory_max = (uint64_t)r->pol->limits.memory_mb << 20;
	spec.limits.processes = r->pol->limits.pids;
	spec.stdio[0] = GetStdHandle(STD_INPUT_HANDLE);
	spec.stdio[1] = GetStdHandle(STD_OUTPUT_HANDLE);
	spec.stdio[2] = GetStdHandle(STD_ERROR_HANDLE);
	wd_err_clear(&err);
	ret = bad ? ret : sandbox_ac_start(&spec, AC_API(), &r->ac, &err);
	for (size_t i = 0; i < nall + 1; i++)
		if (all[i] != r->px.tmp)
			free(all[i]);
	free(all);
	free(lex);
	if (bad && ret == -EINVAL)
		return fail(r, "sandbox", "write a grant as C:\\path or C:/path",
			    "%s is on no drive: a Windows run takes grants on a drive only", bad);
	if (bad)
		return fail(r, "sandbox", NULL, "out of memory");
	if (ret == -EPERM)
		return fail(r, "sandbox",
			    "run warden from an elevated prompt (Run as administrator)", "%s",
			    err.msg);
	if (ret)
		return fail(r, "sandbox", NULL, "%s", err.msg[0] ? err.msg : strerror(-ret));
	return 0;
}

/* 7. the wait: a stop asked or the deadline ends the job; Return: the exit status */
static int wait_program(struct ac_run *r, unsigned timeout_s)
{
	const struct sandbox_win_api *api = r->ac.api;
	uint64_t deadline = timeout_s ? wd_mono_ns() + (uint64_t)timeout_s * 1000000000ull : 0;
	bool killed = false, timed_out = false;
	uint32_t code = 0, e;

	for (;;) {
		e = api->wait(api->ctx, r->ac.process, WAIT_SLICE_MS, &code);
		if (!e)
			break;
		if (e != SANDBOX_WIN_WAIT_TIMEOUT)
			return fail(r, "sandbox", NULL, "WaitForSingleObject: Windows error %u",
				    (unsigned)e);
		if (killed)
			continue;
		timed_out = deadline && wd_mono_ns() >= deadline;
		if (stop_asked || timed_out) {
			killed = true;
			e = api->kill(api->ctx, r->ac.job, timed_out ? RUN_EXIT_TIMEOUT : 130);
			if (e)
				return fail(r, "sandbox", NULL,
					    "TerminateJobObject: Windows error %u", (unsigned)e);
		}
	}
	if (timed_out) {
		wd_say(stderr, "warden run: timeout of %u s: the job was ended", timeout_s);
		return RUN_EXIT_TIMEOUT;
	}
	/* an exit code Windows-wide is 32 bits; warden(1)'s is 0-255 */
	return code > 255 ? RUN_EXIT_WARDEN : (int)code;
}

/* 3-7 once the policy and the command are known */
static int run_stages(struct ac_run *r, const char *audit_path)
{
	unsigned timeout_s = r->o->timeout_s ? r->o->timeout_s : r->pol->limits.timeout_s;
	struct wd_buf env = WD_BUF_INIT;
	char gw[PATH_MAX], id[13];
	int ret;

	if (find_gateway(gw, sizeof(gw)))
		return fail(r, "gateway", "install warden-gateway.exe next to warden.exe",
			    "no warden-gateway.exe next to warden.exe; nothing was started");
	if (r->o->run_id)
		snprintf(id, sizeof(id), "%s", r->o->run_id);
	else if (run_proxy_id(id))
		return fail(r, "run", NULL, "no random run id");
	ret = begin(r, id);
	if (!ret)
		ret = audit_start(r, audit_path, timeout_s);
	if (ret)
		return ret;
	if (!r->o->quiet)
		wd_say(stderr,
		       "warden run: run %s: gateway on 127.0.0.1:%u (proxy mode), sandbox %s", id,
		       r->px.port, AC_BACKEND);
	ret = start_gateway(r, gw, audit_path);
	if (ret)
		return ret;
	if (env_block(r, &env)) {
		wd_buf_free(&env);
		return fail(r, "sandbox", NULL, "the environment: out of memory");
	}
	ret = stop_asked ? fail(r, "sandbox", NULL, "stopped before the program started")
			 : start_program(r, &env);
	wd_buf_free(&env);
	return ret ? ret : wait_program(r, timeout_s);
}

/* the counts the gateway wrote when it stopped (--counts); left -1 when there are none */
static void read_counts(struct ac_run *r)
{
	static const char *const keys[3] = {"denied", "bytes_up", "bytes_down"};
	json_t *j = json_load_file(r->countsfile, 0, NULL);

	for (int i = 0; j && i < 3; i++) {
		json_t *v = json_object_get(j, keys[i]);

		if (json_is_integer(v) && json_integer_value(v) >= 0)
			r->counts[i] = json_integer_value(v);
	}
	json_decref(j);
}

/* everything undone: the AppContainer, the gateway, the folder */
static void end_run(struct ac_run *r)
{
	struct wd_err err;

	wd_err_clear(&err);
	if (r->ac.api && sandbox_ac_stop(&r->ac, &err))
		wd_say(stderr, "warden run: sandbox: undoing: %s (left as it is)", err.msg);
	if (r->listener != INVALID_SOCKET)
		closesocket(r->listener);
	/* the gateway asked to stop, so that it writes the run's counts; then ended with its job
	 * whatever it did (KILL_ON_JOB_CLOSE) */
	if (r->gw && r->gw_stop && SetEvent(r->gw_stop) &&
	    WaitForSingleObject(r->gw, GW_STOP_MS) == WAIT_OBJECT_0)
		read_counts(r);
	if (r->gw_stop)
		CloseHandle(r->gw_stop);
	if (r->gw_job) {
		TerminateJobObject(r->gw_job, 0);
		CloseHandle(r->gw_job);
	}
	if (r->gw) {
		WaitForSingleObject(r->gw, 5000);
		CloseHandle(r->gw);
	}
	if (r->px.dir[0]) {
		DeleteFileA(r->px.conf);
		DeleteFileA(r->px.log);
		if (r->runfile[0])
			DeleteFileA(r->runfile);
		if (r->countsfile[0])
			DeleteFileA(r->countsfile);
		if (r->listenfile[0])
			DeleteFileA(r->listenfile);
		if (!RemoveDirectoryA(r->px.tmp) && GetLastError() != ERROR_FILE_NOT_FOUND)
			wd_say(stderr, "warden run: %s: left behind (not empty)", r->px.tmp);
		RemoveDirectoryA(r->px.dir);
	}
}

int run_appcontainer_main(const struct run_opts *o, int argc, char **argv)
{
	struct ac_run r = {
	    .o = o, .t0 = wd_mono_ns(), .counts = {-1, -1, -1}, .listener = INVALID_SOCKET};
	const char *audit_path;
	WSADATA wsa;
	int status = refuse_options(o);

	r.px.listen_fd = -1;
	if (status)
		return status;
	undone = CreateEventA(NULL, TRUE, FALSE, NULL);
	if (!undone || !SetConsoleCtrlHandler(on_console, TRUE))
		return fail(&r, "run", NULL, "the console handler: Windows error %lu",
			    GetLastError());
	if (WSAStartup(MAKEWORD(2, 2), &wsa))
		return fail(&r, "run", NULL, "Winsock did not start");
	audit_path = run_audit_path(o->audit); /* by default in %LOCALAPPDATA%\warden (paths.c) */
	if (!audit_path)
		status = fail(&r, "audit", "set WARDEN_AUDIT_LOG or pass --audit-log PATH",
			      "no audit log path (no %%LOCALAPPDATA%%)");
	if (!status)
		status = load_policy(&r, audit_path);
	if (!status)
		status = find_command(&r, argc, argv);
	if (!status)
		status = run_stages(&r, audit_path);
	end_run(&r);
	/* a failure after run.start still gets its run.exit, written once all is undone */
	audit_exit(&r, status);
	run_proxy_audit_close(&r.au);
	policy_free(r.pol);
	free(r.text);
	free(r.argv);
	WSACleanup();
	SetEvent(undone);
	return status;
}
