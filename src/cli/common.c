/* common.c — number parsing, messages, exit codes and the progress line shared by all commands. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "jsmf_store.h"
#include "jsmf_comm.h"
#include "jsmf_model.h"

int cli_quiet = 0;
int cli_progress = -1;
const char *cli_prog = "jsmf";

int cli_fail(int rc)
{
    if (cli_world && jsmf_comm_failed_elsewhere(cli_world))
        return rc == JSMF_EINTR ? EXIT_INTERRUPTED : EXIT_FAIL;
    fprintf(stderr, "%s: %s\n", cli_prog, jsmf_errmsg_for(rc));
    return rc == JSMF_EINTR ? EXIT_INTERRUPTED : EXIT_FAIL;
}

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", cli_prog);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s --help'.\n", cli_prog);
    return EXIT_USAGE;
}

void cli_info(const char *fmt, ...)
{
    if (cli_quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", cli_prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void cli_warn(void *arg, const char *msg)
{
    (void)arg;
    cli_progress_done();
    fprintf(stderr, "%s: warning: %s\n", cli_prog, msg);
}

void cli_note_unchecked_store(const char *path)
{
    static int said; /* once a command: one store's note says it for all */
    char data[4096];
    struct stat st;
    jsmf_store *s;
    if (said || cli_quiet || !path || snprintf(data, sizeof data, "%s/data.mdb", path) >=
                                          (int)sizeof data || stat(data, &st) != 0)
        return;
    if (jsmf_store_open(path, JSMF_STORE_RDONLY, &s)) {
        jsmf_error_clear(); /* the command itself says what is wrong */
        return;
    }
    uint32_t v = jsmf_store_format_version(s);
    jsmf_store_close(s);
    if (v >= 7)
        return;
    said = 1;
    cli_progress_done();
    fprintf(stderr, "%s: note: %s is a store of format version %u, whose values carry no "
            "checksums: damage to it would go unnoticed (jsmf copy writes a checked copy)\n",
            cli_prog, path, v);
}

/* Whether `dir` was noted already: a command that reads a model twice (jsmf diff M M) says
 * so once. A few directories a process; past that, a note may repeat. */
static int noted_before(const char *dir)
{
    static char *noted[16];
    for (int i = 0; i < 16; i++) {
        if (!noted[i]) {
            noted[i] = strdup(dir);
            return 0;
        }
        if (!strcmp(noted[i], dir))
            return 1;
    }
    return 0;
}

void cli_note_unchecked_model(const char *model)
{
    struct stat st;
    if (!model || stat(model, &st) || !S_ISDIR(st.st_mode) || jsmf_model_has_manifest(model) ||
        noted_before(model))
        return;
    cli_info("note: %s has no MANIFEST (written by an earlier jsmf or another tool): its files "
             "are read without checksums", model);
}

int cli_parse_uint(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = s && *s != '-' ? strtoull(s, &end, 10) : 0;
    if (!s || !*s || *s == '-' || errno || *end)
        return cli_usage_error("%s expects a non-negative integer, got '%s'", opt, s ? s : "");
    if (v < min)
        return cli_usage_error("%s must be at least %llu", opt, (unsigned long long)min);
    if (v > max)
        return cli_usage_error("%s must be at most %llu", opt, (unsigned long long)max);
    *out = v;
    return 0;
}

int cli_in_range(const char *range, double x)
{
    char lo_end, hi_end, rest;
    double lo, hi;
    if (sscanf(range, "%c%lf,%lf%c%c", &lo_end, &lo, &hi, &hi_end, &rest) != 4 ||
        !strchr("[(", lo_end) || !strchr("])", hi_end) || !(lo <= hi))
        return -1;
    return (lo_end == '[' ? x >= lo : x > lo) && (hi_end == ']' ? x <= hi : x < hi);
}

int cli_parse_double(const char *opt, const char *s, const char *range, double *out)
{
    char *end;
    errno = 0;
    double v = s ? strtod(s, &end) : 0;
    if (!s || !*s || errno || *end || !isfinite(v))
        return cli_usage_error("%s expects a number, got '%s'", opt, s ? s : "");
    if (range && cli_in_range(range, v) != 1) {
        if (!strcmp(range, "(0, inf)"))
            return cli_usage_error("%s must be positive", opt);
        return cli_usage_error("%s must be in %s", opt, range);
    }
    *out = v;
    return 0;
}

int cli_mem_below_min(void)
{
    const char *e = getenv("JSMF_TEST_SMALL_MEM");
    return e && *e && strcmp(e, "0");
}

static double progress_last, progress_start, step_start, step_done;
static int progress_drawn;
static char step_name[64];
static double step_frac; /* the fraction drawn for this step: the bar never runs backwards */

/* "12s", "4m05s", "2h13m": at most 6 characters. */
static void fmt_duration(double s, char *buf, size_t size)
{
    if (!(s >= 0) || s > 359999)
        snprintf(buf, size, "--");
    else if (s < 60)
        snprintf(buf, size, "%.0fs", s);
    else if (s < 3600)
        snprintf(buf, size, "%dm%02ds", (int)s / 60, (int)s % 60);
    else
        snprintf(buf, size, "%dh%02dm", (int)s / 3600, (int)s % 3600 / 60);
}

/* One line, at most 79 columns: the step, a bar, the percentage, the time since the command
 * started and, once 2% of the step is done, the time the step still needs at its rate so far. */
void cli_progress_update(const char *what, double done, double total, const char *unit)
{
    if (cli_progress < 0)
        cli_progress = !cli_quiet && isatty(STDERR_FILENO);
    if (!cli_progress)
        return;
    double t = clock_seconds();
    if (!progress_start)
        progress_start = t;
    if (strncmp(step_name, what, sizeof step_name - 1) || done < step_done) {
        snprintf(step_name, sizeof step_name, "%s", what); /* a new step, or a step again */
        step_start = t;
        step_frac = 0;
    }
    step_done = done;
    if (t - progress_last < 0.2 && done < total)
        return;
    progress_last = t;
    char el[16], eta[16], name[16];
    size_t len = strlen(what); /* a long name (an input's path) keeps its end: the file name */
    snprintf(name, sizeof name, len > 14 ? "...%s" : "%s", len > 14 ? what + len - 11 : what);
    fmt_duration(t - progress_start, el, sizeof el);
    if (total > 0) {
        double f = done / total > 1 ? 1 : done / total < 0 ? 0 : done / total;
        if (f < step_frac) /* the step's total was re-estimated upwards: hold the bar */
            f = step_frac;
        step_frac = f;
        int width = 20, fill = (int)(width * f);
        if (f >= 0.02)
            fmt_duration((t - step_start) * (1 - f) / f, eta, sizeof eta);
        else
            snprintf(eta, sizeof eta, "--");
        fprintf(stderr, "\r%.11s: %-14.14s [%.*s%*s] %5.1f%%  %6s  ETA %-6s\x1b[K", cli_prog, name,
                fill, "####################", width - fill, "", 100.0 * f, el, eta);
    } else {
        fprintf(stderr, "\r%.11s: %-14.14s %.0f %-10.10s %6s\x1b[K", cli_prog, name, done, unit, el);
    }
    progress_drawn = 1;
}

void cli_step_progress(void *arg, const char *what, double done, double total, const char *unit)
{
    (void)arg;
    cli_progress_update(what, done, total, unit);
}

void cli_progress_done(void)
{
    if (progress_drawn)
        fputs("\r\x1b[K", stderr);
    progress_drawn = 0;
}

int cli_finish_stdout(void)
{
    if (fflush(stdout) || ferror(stdout) || fclose(stdout)) {
        fprintf(stderr, "%s: error writing standard output: %s\n", cli_prog, strerror(errno));
        return EXIT_FAIL;
    }
    return EXIT_OK;
}
