/* cmd_completion.c - `warden completion bash|zsh|fish [FILE]` (hidden): the shell completion
 * scripts, generated from the verb table. The build runs it to make the files `cmake --install`
 * and the .deb install (deploy/CMakeLists.txt); each verb's options and sub-verbs are read from
 * the verb's own `--help` (its usage lines and option rows), so a flag a verb documents is a
 * flag the shells complete, and nothing is listed twice by hand.
 */
#include "launcher/cli.h"
#include "common/common.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* what the completions know of one verb: space-separated words */
struct verb_words {
	struct wd_buf opts; /* -p --policy ... */
	struct wd_buf subs; /* render audit ... (the first word after "warden VERB") */
};

/* @v's `--help` text, printed by the verb in a child (stdout to a pipe, stdin and stderr
 * /dev/null); Return: 0, or a negative errno */
static int verb_help(const struct cli_verb *v, struct wd_buf *out)
{
	char *argv[] = {(char *)v->name, "--help", NULL};
	char chunk[4096];
	int p[2], st;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 2) < 0 || dup2(p[1], 1) < 0)
			_exit(127);
		v->fn(2, argv);
		fflush(stdout);
		_exit(0);
	}
	close(p[1]);
	while (pid > 0 && (n = read(p[0], chunk, sizeof(chunk))) > 0)
		wd_buf_append(out, chunk, (size_t)n);
	close(p[0]);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -ECHILD;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

/* append @w (length @n) to the space-separated list @l unless it is there */
static void add_word(struct wd_buf *l, const char *w, size_t n)
{
	const char *p = wd_buf_cstr(l);

	while (*p) {
		size_t len = strcspn(p, " ");

		if (len == n && !strncmp(p, w, n))
			return;
		p += len + (p[len] == ' ');
	}
	if (l->len)
		wd_buf_puts(l, " ");
	wd_buf_append(l, w, n);
}

/* the options in @s (up to @end): a "-x" or "--word" that starts the text or follows a
 * space, `[`, `|`, `(`, `,` or a backquote */
static void scan_opts(const char *s, const char *end, struct wd_buf *opts)
{
	for (const char *p = s; p < end; p++) {
		size_t n = 0;

		if (*p != '-' || (p > s && !strchr(" [|(,`", p[-1])))
			continue;
		if (p + 1 < end && p[1] == '-') {
			n = 2;
			if (p + 2 >= end || !islower((unsigned char)p[2]))
				continue;
			while (p + n < end && (isalnum((unsigned char)p[n]) || p[n] == '-'))
				n++;
		} else if (p + 1 < end && isalpha((unsigned char)p[1]) &&
			   (p + 2 >= end || !isalnum((unsigned char)p[2]))) {
			n = 2;
		} else {
			continue;
		}
		add_word(opts, p, n);
		p += n - 1;
	}
}

/* the sub-verbs in a usage line @s..@end: the lower-case word(s) right after "warden VERB "
 * (`approve|deny` gives both) */
static void scan_subs(const char *s, const char *end, const char *verb, struct wd_buf *subs)
{
	char head[64];
	const char *p;

	snprintf(head, sizeof(head), "warden %s ", verb);
	p = strstr(s, head);
	if (!p || p >= end)
		return;
	p += strlen(head);
	while (p < end && islower((unsigned char)*p)) {
		size_t n = 0;

		while (p + n < end && (islower((unsigned char)p[n]) || p[n] == '-'))
			n++;
		add_word(subs, p, n);
		p += n;
		if (p >= end || *p != '|')
			break;
		p++;
	}
}

/* a verb's words from its help text: its usage block (the "usage:" line and the indented
 * lines under it) and its option rows ("  -p, --policy FILE  what it does": the part before
 * the first two spaces past the options) */
static void verb_words(const char *name, const char *help, struct verb_words *w)
{
	bool in_usage = false;

	for (const char *l = help; *l;) {
		const char *end = l + strcspn(l, "\n");
		const char *t = l + strspn(l, " ");

		if (!strncmp(l, "usage:", 6))
			in_usage = true;
		else if (t == l || t >= end)
			in_usage = false;
		if (in_usage) {
			scan_opts(l, end, &w->opts);
			scan_subs(l, end, name, &w->subs);
		} else if (t > l && *t == '-') {
			const char *gap = strstr(t, "  ");

			scan_opts(t, gap && gap < end ? gap : end, &w->opts);
		}
		l = *end ? end + 1 : end;
	}
}

/* @s in single quotes for a POSIX shell or zsh ('\'' for a quote) or fish (\' and \\) */
static void put_quoted(FILE *f, const char *s, bool fish)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs(fish ? "\\'" : "'\\''", f);
		else if (*s == '\\' && fish)
			fputs("\\\\", f);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}

static void print_bash(FILE *f, const struct cli_verb *verbs, size_t n, const struct verb_words *w)
{
	fputs("# bash completion for warden: generated from its verb table by `warden completion "
	      "bash`\n# (installed as share/bash-completion/completions/warden)\n"
	      "_warden()\n{\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} i words=\n"
	      "\t# after `--`: the command, then its arguments (files)\n"
	      "\tfor ((i = 2; i < COMP_CWORD; i++)); do\n"
	      "\t\tif [[ ${COMP_WORDS[i]} == -- ]]; then\n"
	      "\t\t\t((i + 1 == COMP_CWORD)) && COMPREPLY=($(compgen -c -- \"$cur\"))\n"
	      "\t\t\treturn 0\n\t\tfi\n\tdone\n"
	      "\tif ((COMP_CWORD == 1)); then\n\t\twords=\"",
	      f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? " " : "", verbs[i].name);
	fputs("\"\n\telif [[ $cur == -* ]]; then\n\t\tcase ${COMP_WORDS[1]} in\n", f);
	for (size_t i = 0; i < n; i++)
		if (w[i].opts.len)
			fprintf(f, "\t\t%s) words=\"%s\" ;;\n", verbs[i].name,
				wd_buf_cstr(&w[i].opts));
	fputs("\t\tesac\n\telif ((COMP_CWORD == 2)); then\n\t\tcase ${COMP_WORDS[1]} in\n", f);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(verbs[i].name, "help")) {
			fprintf(f, "\t\thelp) words=\"");
			for (size_t j = 0; j < n; j++)
				fprintf(f, "%s%s", j ? " " : "", verbs[j].name);
			fputs("\" ;;\n", f);
		} else if (w[i].subs.len) {
			fprintf(f, "\t\t%s) words=\"%s\" ;;\n", verbs[i].name,
				wd_buf_cstr(&w[i].subs));
		}
	fputs("\t\tesac\n\tfi\n"
	      "\t[[ -n $words ]] && COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
	      "\treturn 0\n}\n"
	      "complete -o bashdefault -o default -F _warden warden\n",
	      f);
}

static void print_zsh(FILE *f, const struct cli_verb *verbs, size_t n, const struct verb_words *w)
{
	fputs("#compdef warden\n"
	      "# zsh completion for warden: generated from its verb table by `warden completion "
	      "zsh`\n# (installed as share/zsh/vendor-completions/_warden)\n"
	      "_warden() {\n\tlocal -a verbs opts subs\n\tlocal i\n\tverbs=(\n",
	      f);
	for (size_t i = 0; i < n; i++) {
		char line[512];

		snprintf(line, sizeof(line), "%s:%s", verbs[i].name, verbs[i].summary);
		fputs("\t\t", f);
		put_quoted(f, line, false);
		fputc('\n', f);
	}
	fputs("\t)\n"
	      "\tfor ((i = 3; i < CURRENT; i++)); do\n"
	      "\t\tif [[ $words[i] == -- ]]; then\n"
	      "\t\t\tif ((i + 1 == CURRENT)); then _command_names -e; else _files; fi\n"
	      "\t\t\treturn\n\t\tfi\n\tdone\n"
	      "\tif ((CURRENT == 2)); then\n"
	      "\t\t_describe -t verbs 'warden verb' verbs\n\t\treturn\n\tfi\n"
	      "\tcase $words[2] in\n",
	      f);
	for (size_t i = 0; i < n; i++) {
		bool help = !strcmp(verbs[i].name, "help");

		if (!w[i].opts.len && !w[i].subs.len && !help)
			continue;
		fprintf(f, "\t%s) opts=(%s); subs=(%s) ;;\n", verbs[i].name,
			wd_buf_cstr(&w[i].opts), help ? "${verbs%%:*}" : wd_buf_cstr(&w[i].subs));
	}
	fputs(
	    "\tesac\n"
	    "\tif [[ $PREFIX == -* ]]; then\n\t\tcompadd -a opts\n"
	    "\telif ((CURRENT == 3 && ${#subs} > 0)); then\n\t\tcompadd -a subs\n"
	    "\telse\n\t\t_files\n\tfi\n}\n"
	    "if [[ $funcstack[1] == _warden ]]; then _warden \"$@\"; else compdef _warden warden; "
	    "fi\n",
	    f);
}

static void print_fish(FILE *f, const struct cli_verb *verbs, size_t n, const struct verb_words *w)
{
	fputs("# fish completion for warden: generated from its verb table by `warden completion "
	      "fish`\n# (installed as share/fish/vendor_completions.d/warden.fish)\n",
	      f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "complete -c warden -f -n __fish_use_subcommand -a %s -d ",
			verbs[i].name);
		put_quoted(f, verbs[i].summary, true);
		fputc('\n', f);
	}
	for (size_t i = 0; i < n; i++) {
		const char *o = wd_buf_cstr(&w[i].opts);

		while (*o) {
			size_t len = strcspn(o, " ");

			fprintf(f, "complete -c warden -n '__fish_seen_subcommand_from %s' ",
				verbs[i].name);
			if (len == 2)
				fprintf(f, "-s %c\n", o[1]);
			else
				fprintf(f, "-l %.*s\n", (int)len - 2, o + 2);
			o += len + (o[len] == ' ');
		}
		if (!strcmp(verbs[i].name, "help")) {
			fputs("complete -c warden -n '__fish_seen_subcommand_from help' -f -a '",
			      f);
			for (size_t j = 0; j < n; j++)
				fprintf(f, "%s%s", j ? " " : "", verbs[j].name);
			fputs("'\n", f);
		} else if (w[i].subs.len) {
			fprintf(f,
				"complete -c warden -n '__fish_seen_subcommand_from %s' -a '%s'\n",
				verbs[i].name, wd_buf_cstr(&w[i].subs));
		}
	}
}

int cli_completion(int argc, char **argv, const struct cli_verb *verbs, size_t n)
{
	static const char synopsis[] = "warden completion bash|zsh|fish [FILE]";
	struct verb_words *w;
	const char *shell = argc > 1 ? argv[1] : "";
	FILE *f = stdout;
	int ret = WD_EXIT_OK;

	if (cli_wants_help(argc, argv)) {
		printf(
		    "usage: %s\n\nPrint the completion script for that shell (to FILE if given),\n"
		    "generated from the verb table and each verb's --help.\n",
		    synopsis);
		return WD_EXIT_OK;
	}
	if (argc < 2 || argc > 3 ||
	    (strcmp(shell, "bash") && strcmp(shell, "zsh") && strcmp(shell, "fish")))
		return cli_usage_error("completion", synopsis, "name a shell: bash, zsh or fish");
	w = calloc(n, sizeof(*w));
	if (!w)
		return WD_EXIT_INTERNAL;
	for (size_t i = 0; i < n && ret == WD_EXIT_OK; i++) {
		struct wd_buf help = WD_BUF_INIT;

		if (verb_help(&verbs[i], &help)) {
			wd_say(stderr, "warden completion: `warden %s --help` failed",
			       verbs[i].name);
			ret = WD_EXIT_INTERNAL;
		} else {
			verb_words(verbs[i].name, wd_buf_cstr(&help), &w[i]);
		}
		wd_buf_free(&help);
	}
	if (ret == WD_EXIT_OK && argc == 3 && !(f = fopen(argv[2], "we"))) {
		wd_say(stderr, "warden completion: %s: %s", argv[2], strerror(errno));
		ret = WD_EXIT_INTERNAL;
	}
	if (ret == WD_EXIT_OK) {
		if (!strcmp(shell, "bash"))
			print_bash(f, verbs, n, w);
		else if (!strcmp(shell, "zsh"))
			print_zsh(f, verbs, n, w);
		else
			print_fish(f, verbs, n, w);
		bool bad;

		if (f == stdout)
			bad = fflush(f) != 0;
		else
			bad = fclose(f) != 0;
		if (bad) {
			wd_say(stderr, "warden completion: writing %s: %s",
			       argc == 3 ? argv[2] : "stdout", strerror(errno));
			ret = WD_EXIT_INTERNAL;
		}
	}
	for (size_t i = 0; i < n; i++) {
		wd_buf_free(&w[i].opts);
		wd_buf_free(&w[i].subs);
	}
	free(w);
	return ret;
}
