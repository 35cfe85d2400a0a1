/* options.c — the option table of a command (cli_option) parses its arguments; --help prints
 * the command's part of the manual (cli_docs, from man/jsmf.1), which must name every option
 * of the table with a value exactly when it takes one, and its positional arguments. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsmf_io.h"

#define HELP_WIDTH 79 /* help_all.sh: no line of --help wider than 80 columns */
#define HELP_COL 22   /* where an option's text starts */

/* TEXT from column COL on (the cursor is at column AT), in lines of at most HELP_WIDTH
 * columns. No line starts with '-': help_man.sh reads such a line as one that defines an
 * option. */
static void print_wrapped(FILE *f, const char *text, int col, int at)
{
    const size_t room = HELP_WIDTH - col;
    const char *p = text;
    while (*p) {
        size_t len = strlen(p), cut = len;
        if (len > room) {
            cut = 0;
            for (size_t k = 1; k <= room; k++)
                if (p[k] == ' ' && p[k + 1] != '-')
                    cut = k;
            if (!cut) /* a word longer than the room: break after it */
                for (cut = room; cut < len && p[cut] != ' ';)
                    cut++;
        }
        fprintf(f, "%*s%.*s\n", at < col ? col - at : 0, "", (int)cut, p);
        at = 0;
        p += cut;
        while (*p == ' ')
            p++;
    }
}

/* "  HEAD   TEXT", TEXT on a line of its own when HEAD leaves it no room: three spaces end a
 * head (help_man.sh). */
static void print_option(FILE *f, const cli_doc *d)
{
    int n = fprintf(f, "  %s", d->head);
    if (n + 3 > HELP_COL) {
        fputc('\n', f);
        n = 0;
    }
    print_wrapped(f, d->text, HELP_COL, n);
}

/* The values of choice option O as "a|b|c": .choices, or the names of its library table. */
static const char *choices_of(const cli_option *o, char *buf, size_t size)
{
    if (!o->choice_name)
        return o->choices;
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; o->choice_name(i) && used < size; i++) {
        int len = snprintf(buf + used, size - used, "%s%s", i ? "|" : "", o->choice_name(i));
        used += len > 0 ? (size_t)len : 0;
    }
    return buf;
}

/* The index of the LEN characters at V in "a|b|c", or -1. */
static int choice_index_n(const char *choices, const char *v, size_t len)
{
    int i = 0;
    for (const char *p = choices; *p; i++) {
        size_t n = strcspn(p, "|");
        if (n == len && !strncmp(p, v, n))
            return i;
        p += n + (p[n] == '|');
    }
    return -1;
}

/* Whether "a|b|c" and the LEN characters at SHOWN ("c|a|b", in any order) are the same
 * values. */
static int same_values(const char *choices, const char *shown, size_t len)
{
    size_t count = 0;
    for (const char *p = shown, *end = shown + len; p < end; count++) {
        size_t n = strcspn(p, "|");
        n = n < (size_t)(end - p) ? n : (size_t)(end - p);
        if (choice_index_n(choices, p, n) < 0)
            return 0;
        p += n + 1;
    }
    size_t want = 1;
    for (const char *c = choices; *c; c++)
        want += *c == '|';
    return count == want;
}

/* The entry of COMMAND's docs whose head names option NAME ("--topics" or "-k"), or with
 * USAGE its usage line naming positional argument NAME ("STORE", "INPUT..."); and in *value
 * the value it shows for it ("K"; "" for none; "-k, --topics K" shows K for --topics only), of
 * *len characters. */
static const cli_doc *find_doc(const char *command, int usage, const char *name,
                               const char **value, size_t *len)
{
    size_t n = strlen(name);
    for (const cli_doc *d = cli_docs; d->command; d++) {
        if (d->usage != usage || strcmp(d->command, command))
            continue;
        for (const char *p = d->head; (p = strstr(p, name)); p += n) {
            if ((p > d->head && p[-1] != ' ') || (p[n] && !strchr(" ,=.]", p[n])))
                continue;
            *value = p + n + (p[n] == ' ' || p[n] == '=');
            *len = strcspn(*value, ",");
            return d;
        }
    }
    return NULL;
}

/* 0, or EXIT_FAIL after naming on stderr the options of TABLE that the manual's section of
 * COMMAND leaves out or shows with a value they do not take (or without one they take), the
 * positional arguments its usage line leaves out, and malformed ranges. */
static int check_documented(const char *command, const cli_option *table)
{
    int bad = 0;
    char list[512];
    for (const cli_option *o = table; o->name; o++) {
        char s[3] = {'-', o->short_name, 0};
        const char *v;
        size_t len;
        if (o->kind == CLI_ARG || o->kind == CLI_ARGS) {
            if (!find_doc(command, 1, o->name, &v, &len))
                bad = fprintf(stderr, "%s: man/jsmf.1's usage line lacks %s\n", cli_prog, o->name);
            continue;
        }
        if (o->range && cli_in_range(o->range, 0) < 0)
            bad = fprintf(stderr, "%s: %s: malformed range '%s'\n", cli_prog, o->name, o->range);
        else if (!find_doc(command, 0, o->name, &v, &len))
            bad = fprintf(stderr, "%s: man/jsmf.1 does not document %s\n", cli_prog, o->name);
        else if ((len > 0) != (o->kind != CLI_FLAG))
            bad = fprintf(stderr, "%s: man/jsmf.1 shows %s %s a value\n", cli_prog, o->name,
                          len ? "with" : "without");
        else if (o->kind == CLI_CHOICE &&
                 !same_values(choices_of(o, list, sizeof list), v, len))
            bad = fprintf(stderr, "%s: man/jsmf.1 shows %s %.*s, it takes %s\n", cli_prog,
                          o->name, (int)len, v, choices_of(o, list, sizeof list));
        else if (o->short_name && !find_doc(command, 0, s, &v, &len))
            bad = fprintf(stderr, "%s: man/jsmf.1 does not document %s\n", cli_prog, s);
    }
    return bad ? EXIT_FAIL : 0;
}

/* --help of COMMAND on stdout: its usage line and description, its options, the common ones;
 * then exit. */
static void help_exit(const char *command, const cli_option *table)
{
    FILE *f = stdout;
    if (check_documented(command, table))
        exit(EXIT_FAIL);
    for (const cli_doc *d = cli_docs; d->command; d++) {
        if (strcmp(d->command, command))
            continue;
        if (!d->usage) {
            print_option(f, d);
            continue;
        }
        fputs("usage: ", f);
        print_wrapped(f, d->head, 7, 7);
        fputc('\n', f);
        print_wrapped(f, d->text, 0, 0);
        fputs("\noptions:\n", f);
    }
    for (const cli_doc *d = cli_docs; d->command; d++)
        if (!*d->command)
            print_option(f, d);
    fputs("\n'man jsmf' describes every option in full.\n", f);
    exit(cli_finish_stdout());
}

/* The switches every command takes: --quiet/-q, --progress, --no-progress; 1 if ARG is one. */
static int common_option(const char *arg)
{
    if (!strcmp(arg, "--quiet") || !strcmp(arg, "-q")) {
        cli_quiet = 1;
        cli_progress = 0;
        return 1;
    }
    if (!strcmp(arg, "--progress") || !strcmp(arg, "--no-progress")) {
        cli_progress = !strcmp(arg, "--progress");
        return 1;
    }
    return 0;
}

/* The entry of TABLE that ARG names ("--name", "--name=VALUE", an alias or "-x"); *value is
 * set to the part after '=' if any. */
static const cli_option *find_option(const cli_option *table, const char *arg, const char **value)
{
    *value = NULL;
    for (const cli_option *o = table; o->name; o++) {
        if (arg[1] != '-') {
            if (o->short_name && arg[1] == o->short_name && !arg[2])
                return o;
            continue;
        }
        const char *names[2] = {o->name, o->alias};
        for (int k = 0; k < 2; k++) {
            size_t n = names[k] ? strlen(names[k]) : 0;
            if (n && !strncmp(arg, names[k], n) && (!arg[n] || arg[n] == '=')) {
                *value = arg[n] ? arg + n + 1 : NULL;
                return o;
            }
        }
    }
    return NULL;
}

/* "a|b|c" as "a, b or c". */
static const char *choice_list(const char *choices, char *buf, size_t size)
{
    size_t n = 0;
    const char *last = strrchr(choices, '|');
    for (const char *p = choices; *p && n + 5 < size; p++) {
        if (*p != '|')
            buf[n++] = *p;
        else
            n += (size_t)snprintf(buf + n, size - n, p == last ? " or " : ", ");
    }
    buf[n < size ? n : size - 1] = 0;
    return buf;
}

/* The index of V in "a|b|c", or -1. */
static int choice_index(const char *choices, const char *v)
{
    return choice_index_n(choices, v, strlen(v));
}

static int store_value(const cli_option *o, const char *v)
{
    int rc = 0;
    uint64_t u, max = o->kind == CLI_INT ? INT_MAX : o->kind == CLI_U32 ? UINT32_MAX : UINT64_MAX;
    char list[512], names[512];
    switch (o->kind) {
    case CLI_FLAG:
        *(int *)o->field = 1;
        return 0;
    case CLI_STRING:
        *(const char **)o->field = v;
        return 0;
    case CLI_DOUBLE:
        return cli_parse_double(o->name, v, o->range, o->field);
    case CLI_MEM: /* at least JSMF_MEM_MIN, except in tests */
        rc = jsmf_mem_parse(o->name, v, cli_mem_below_min(), o->field);
        return rc ? cli_usage_error("%s", jsmf_errmsg_for(rc)) : 0;
    case CLI_CALL:
        return o->call(o, v);
    case CLI_CHOICE: {
        const char *choices = choices_of(o, names, sizeof names);
        if ((rc = choice_index(choices, v)) < 0)
            return cli_usage_error("%s must be %s, not '%s'", o->name,
                                   choice_list(choices, list, sizeof list), v);
        *(int *)o->field = rc;
        return 0;
    }
    case CLI_U32:
    case CLI_U64:
    case CLI_INT:
        if ((rc = cli_parse_uint(o->name, v, o->min, o->max ? o->max : max, &u)))
            return rc;
        if (o->kind == CLI_INT)
            *(int *)o->field = (int)u;
        else if (o->kind == CLI_U32)
            *(uint32_t *)o->field = (uint32_t)u;
        else
            *(uint64_t *)o->field = u;
        return 0;
    default: /* CLI_LIST, CLI_ARG(S): taken by the caller */
        break;
    }
    return 0;
}

/* A list option takes its value and every following argument that is not an option. */
static int take_list(const cli_option *o, int argc, char **argv, int *i, const char *first)
{
    cli_list *l = o->field;
    if (!l->items && !(l->items = calloc((size_t)argc, sizeof *l->items)))
        return cli_fail(jsmf_error(JSMF_ENOMEM, "out of memory"));
    if (first)
        l->items[l->n++] = first;
    while (*i + 1 < argc && (argv[*i + 1][0] != '-' || !argv[*i + 1][1]))
        l->items[l->n++] = argv[++*i];
    if (l->n)
        return 0;
    const char *what = "value";
    size_t len;
    find_doc(argv[0], 0, o->name, &what, &len); /* the manual names the values: "INPUT..." */
    return cli_usage_error("%s needs at least one %.*s", o->name, (int)strcspn(what, "."), what);
}

/* The option ARGV[*I] (and its value), noted in *GIVEN (bit k: entry k of TABLE). */
static int parse_option(const cli_option *table, int argc, char **argv, int *i, uint64_t *given)
{
    const char *arg = argv[*i], *v;
    const cli_option *o = find_option(table, arg, &v);
    if (!o)
        return cli_usage_error("unknown option '%s'", arg);
    if (o - table < 64) /* a required entry past the 64th is never seen given: fix the table */
        *given |= (uint64_t)1 << (o - table);
    if (o->given)
        *o->given = 1;
    if (o->kind == CLI_LIST)
        return take_list(o, argc, argv, i, v);
    if (o->kind == CLI_FLAG) {
        if (v)
            return cli_usage_error("option %s takes no value", o->name);
        return store_value(o, NULL);
    }
    if (!v) {
        if (*i + 1 >= argc)
            return cli_usage_error("option %s needs a value", o->name);
        v = argv[++*i];
    }
    return store_value(o, v);
}

/* "missing NAME HINT": a positional argument's name, or an option with its value named as in
 * the manual ("missing -o MODEL"). */
static int missing(const char *command, const cli_option *o)
{
    char flag[3] = {'-', o->short_name, 0};
    const char *v = "";
    size_t len = 0;
    if (o->kind != CLI_ARG && o->kind != CLI_ARGS)
        find_doc(command, 0, o->name, &v, &len);
    return cli_usage_error("missing %s%s%.*s%s%s", o->short_name ? flag : o->name,
                           len ? " " : "", (int)len, v, o->hint ? " " : "", o->hint ? o->hint : "");
}

/* After the options: the positional arguments ARGV[1..N] go to the CLI_ARG(S) entries of TABLE
 * in order, and each .required option must be among those GIVEN (bit k: entry k of TABLE). */
static int take_positionals(const cli_option *table, char **argv, int n, uint64_t given)
{
    int next = 1, stdin_uses = 0;
    for (const cli_option *o = table; o->name; o++) {
        if (o->required && !(o - table < 64 && given >> (o - table) & 1))
            return missing(argv[0], o);
        if (o->kind != CLI_ARG && o->kind != CLI_ARGS)
            continue;
        if (next > n)
            return missing(argv[0], o);
        if (o->kind == CLI_ARG) {
            *(const char **)o->field = argv[next++];
            continue;
        }
        *(const char ***)o->field = (const char **)argv + next;
        *o->count = (uint32_t)(n + 1 - next);
        for (; next <= n; next++)
            stdin_uses += o->stdin_once && !strcmp(argv[next], "-");
    }
    if (next <= n)
        return cli_usage_error("unexpected argument '%s'", argv[next]);
    if (stdin_uses > 1) /* a second read finds stdin empty */
        return cli_usage_error("stdin ('-') can be read only once");
    return 0;
}

int cli_parse(const cli_option *table, int argc, char **argv)
{
    int n = 0, only_args = 0;
    uint64_t given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_args || a[0] != '-' || !a[1]) {
            argv[1 + n++] = argv[i]; /* positionals move to argv[1..n], in order */
        } else if (!strcmp(a, "--")) {
            only_args = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help_exit(argv[0], table);
        } else if (!common_option(a)) {
            int rc = parse_option(table, argc, argv, &i, &given);
            if (rc)
                return rc;
        }
    }
    return take_positionals(table, argv, n, given);
}

int cli_format_option(const cli_option *o, const char *v)
{
    int f = jsmf_format_parse(v);
    if (f < 0) {
        /* the library's formats, in its order, then auto: "text, uci, ldac or auto" */
        char names[128] = "", list[160];
        for (int i = JSMF_FORMAT_TEXT; jsmf_format_name((jsmf_format)i); i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s|",
                     jsmf_format_name((jsmf_format)i));
        snprintf(names + strlen(names), sizeof names - strlen(names), "auto");
        return cli_usage_error("%s must be %s, not '%s'", o->name,
                               choice_list(names, list, sizeof list), v);
    }
    *(jsmf_format *)o->field = (jsmf_format)f;
    return 0;
}
