/* cmd_info.c — 'jsmf info STORE [--json] [--check] [--model MODEL]': what a store holds
 * (jsmf_store_info_write), with --check a search for damage (jsmf_store_damage_scan) before one
 * timed read of C (jsmf_store_check_write), and with --model whether MODEL is a model of this
 * store (jsmf_fit_previous_check). */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "jsmf_fit.h"
#include "jsmf_store.h"

static void tell_damage(void *arg, const char *line)
{
    fprintf(stderr, "%s: %s: damage: %s\n", cli_prog, (const char *)arg, line);
}

/* Before LMDB reads anything: the file's structure and every value's checksum. */
static int check_damage(const char *path)
{
    uint64_t found;
    int checked;
    int rc = jsmf_store_damage_scan(path, tell_damage, (void *)path, &found, &checked);
    if (rc)
        return rc;
    if (found)
        return jsmf_error(JSMF_ESTORE, "%s: damaged: %llu piece%s of damage (above); the store "
                          "cannot vouch for what they hold", path, (unsigned long long)found,
                          found == 1 ? "" : "s");
    if (!checked && !cli_quiet)
        fprintf(stderr, "%s: %s: an older store: its values carry no checksums, so only LMDB's "
                "structure and C's decoding are checked (jsmf copy writes a checked copy)\n",
                cli_prog, path);
    return JSMF_OK;
}

int cmd_info(int argc, char **argv)
{
    int json = 0, check = 0;
    const char *path = NULL, *model = NULL;
    const cli_option options[] = {
        {CLI_OPT("STORE", 0, CLI_ARG, &path)},
        {CLI_OPT("--json", 0, CLI_FLAG, &json)},
        {CLI_OPT("--check", 0, CLI_FLAG, &check)},
        {CLI_OPT("--model", 0, CLI_STRING, &model)},
        {0},
    };
    int rc = cli_parse(options, argc, argv);
    if (rc)
        return rc;
    if (model && (rc = jsmf_fit_previous_check(path, model)))
        return cli_fail(rc);
    jsmf_store *s;
    jsmf_store_stats st;
    jsmf_store_growth g;
    jsmf_store_input *in = NULL;
    uint32_t n = 0;
    if (check && (rc = check_damage(path)))
        return cli_fail(rc);
    rc = jsmf_store_open(path, JSMF_STORE_RDONLY, &s);
    if (rc)
        return cli_fail(rc);
    if (!(rc = jsmf_store_stats_get(s, &st)) && !(rc = jsmf_store_growth_get(s, &g)))
        rc = jsmf_store_inputs_get(s, &in, &n);
    jsmf_store_check_result cr;
    if (!rc && check && !(rc = jsmf_store_check(s, &cr)) && !cli_quiet)
        jsmf_store_check_write(stderr, cli_prog, jsmf_store_path(s), &cr);
    jsmf_store_close(s);
    if (rc) {
        free(in);
        return cli_fail(rc);
    }
    jsmf_store_info_write_growth(stdout, path, &st, &g, in, n, json);
    free(in);
    return cli_finish_stdout();
}
