/* proxyenv.c - the parts of a proxy run (proxyrun.h) that touch no process and no socket, shared
 * by macOS's run path (mode_seatbelt.c over proxyrun.c and proxyproc.c) and Windows'
 * (mode_appcontainer.c): the run id, the gateway's configuration for the run, rendered, the
 * program's environment with the proxy variables, and the last line of the gateway's log. Portable:
 * Linux, macOS and Windows. */
#include "conf/conf.h"
#include "run/proxyrun.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

int run_proxy_id(char out[13])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[6];

	if (getentropy(b, sizeof(b)) < 0)
		return -errno;
	for (size_t i = 0; i < sizeof(b); i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
	out[12] = '\0';
	return 0;
}

int run_proxy_conf(const char *config, uint16_t port, const char *ctl, const char *audit_path,
		   struct wd_buf *yaml, struct wd_err *err)
{
	struct wd_buf msg = WD_BUF_INIT;
	struct wd_gwconf c;
	struct policy_diags d;
	int ret;

	policy_diags_init(&d);
	if (config) {
		ret = conf_load(config, &c, &d);
		for (size_t i = 0; ret && i < d.n; i++) {
			policy_diag_format(&d, i, &msg);
			wd_buf_printf(&msg, "%s", i + 1 < d.n ? "; " : "");
		}
		policy_diags_free(&d);
		if (ret) {
			ret = wd_err_set(err, ret, "%s",
					 msg.len ? wd_buf_cstr(&msg) : strerror(-ret));
			wd_buf_free(&msg);
			return ret;
		}
	} else {
		policy_diags_free(&d);
		conf_defaults(&c);
	}
	c.mode = WD_GW_PROXY;
	/* the one listener is on 127.0.0.1 */
	snprintf(c.listen_v4, sizeof(c.listen_v4), "127.0.0.1");
	c.listen_v6[0] = '\0';
	c.port_proxy = port;
	if (snprintf(c.control_path, sizeof(c.control_path), "%s", ctl) >=
	    (int)sizeof(c.control_path)) {
		conf_free(&c);
		return wd_err_set(err, -ENAMETOOLONG, "%s: too long for a socket", ctl);
	}
	if (snprintf(c.audit_path, sizeof(c.audit_path), "%s", audit_path) >=
	    (int)sizeof(c.audit_path)) {
		conf_free(&c);
		return wd_err_set(err, -ENAMETOOLONG, "the audit log's path is too long");
	}
	ret = conf_render_yaml(&c, yaml);
	conf_free(&c);
	if (ret)
		return wd_err_set(err, ret, "the gateway's configuration: %s", strerror(-ret));
	return 0;
}

void run_proxy_strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static const char *env_get(char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (; env && *env; env++)
		if (!strncmp(*env, name, n) && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

/* NAME=VALUE into @v (room made by the caller), replacing an earlier NAME */
static int env_put(char **v, size_t *n, const char *name, const char *value)
{
	size_t len = strlen(name);
	char *s = NULL;

	if (asprintf(&s, "%s=%s", name, value) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < *n; i++)
		if (!strncmp(v[i], name, len) && v[i][len] == '=') {
			free(v[i]);
			v[i] = s;
			return 0;
		}
	v[(*n)++] = s;
	return 0;
}

int run_proxy_env(const struct wd_policy *p, char *const *environ_in, const struct run_proxy *px,
		  char ***ret_env)
{
	static const char *const http_vars[] = {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
						"https_proxy"};
	static const char *const none_vars[] = {"NO_PROXY", "no_proxy"};
	size_t room = p->nenv_allow + p->nenv_set + 16, n = 0;
	char **v = calloc(room, sizeof(*v));
	char http[64], socks[64];
	int ret = v ? 0 : -ENOMEM;

	snprintf(http, sizeof(http), "http://127.0.0.1:%u", px->port);
	snprintf(socks, sizeof(socks), "socks5h://127.0.0.1:%u", px->port);
	if (!ret && !policy_env_names(p, "PATH"))
		ret = env_put(v, &n, "PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin");
	if (!ret && !policy_env_names(p, "HOME"))
		ret = env_put(v, &n, "HOME", px->tmp);
	if (!ret && !policy_env_names(p, "TMPDIR"))
		ret = env_put(v, &n, "TMPDIR", px->tmp);
	for (size_t i = 0; !ret && i < p->nenv_allow; i++) {
		const char *val = env_get(environ_in, p->env_allow[i]);

		if (val)
			ret = env_put(v, &n, p->env_allow[i], val);
	}
	for (size_t i = 0; !ret && i < p->nenv_set; i++)
		ret = env_put(v, &n, p->env_set[i].name, p->env_set[i].value);
	/* last: the one network path is the proxy, whatever the policy's env says */
	for (size_t i = 0; !ret && i < WD_ARRAY_SIZE(http_vars); i++)
		ret = env_put(v, &n, http_vars[i], http);
	if (!ret)
		ret = env_put(v, &n, "ALL_PROXY", socks);
	if (!ret)
		ret = env_put(v, &n, "all_proxy", socks);
	for (size_t i = 0; !ret && i < WD_ARRAY_SIZE(none_vars); i++)
		ret = env_put(v, &n, none_vars[i], "");
	if (!ret)
		ret = env_put(v, &n, "NODE_USE_ENV_PROXY", "1");
	if (ret) {
		run_proxy_strv_free(v);
		return ret;
	}
	*ret_env = v;
	return 0;
}

int run_proxy_env_set(char ***env, const char *name, const char *value)
{
	size_t n = 0;
	char **v;

	while ((*env)[n])
		n++;
	v = realloc(*env, (n + 2) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	*env = v;
	v[n + 1] = NULL;
	if (env_put(v, &n, name, value))
		return -ENOMEM;
	v[n] = NULL;
	return 0;
}

void run_proxy_log_tail(const char *path, char *out, size_t size)
{
	char *data = NULL, *end, *start;
	size_t len = 0;

	out[0] = '\0';
	if (wd_read_file(path, 1 << 20, &data, &len) || !len) {
		free(data);
		return;
	}
	end = data + len;
	while (end > data && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	*end = '\0';
	start = strrchr(data, '\n');
	snprintf(out, size, "%s", start ? start + 1 : data);
	free(data);
}
