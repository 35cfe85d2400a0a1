/* cmd_export.c — 'jsmf export STORE -o FILE [--format npy|mm]': the normalised C (entries sum
 * to 1) for other tools, plus FILE.vocab.txt (one word per line, row order). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "jsmf_store.h"

#define NPY_LIMIT (4ULL << 30) /* dense files above 4 GiB are refused: use mm */

static void usage(FILE *f)
{
    fprintf(f, "usage: jsmf export STORE -o FILE [--format npy|mm] [--quiet]\n\n"
               "Write C = (1/M) sum_m C_m, normalised so that its entries sum to 1:\n"
               "  --format mm    MatrixMarket 'coordinate real symmetric': the lower triangle\n"
               "                 (row >= column), 1-based, any N, streamed (default)\n"
               "  --format npy   dense N x N float64 .npy (C order); refused above 4 GiB\n"
               "  -o, --output FILE   output file; '-' writes mm to standard output\n"
               "FILE.vocab.txt gets the vocabulary, one word per line in row order (not for\n"
               "-o -).\n");
}

static int write_vocab(jsmf_store *s, const char *out)
{
    jsmf_vocab *v;
    int rc = jsmf_store_vocab(s, &v);
    if (rc)
        return rc;
    size_t len = strlen(out) + 16;
    char *path = malloc(len);
    if (!path) {
        jsmf_vocab_free(v);
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    }
    snprintf(path, len, "%s.vocab.txt", out);
    /* plain words: the file is row labels, not a vocabulary with counts */
    free(v->df), free(v->tf);
    v->df = v->tf = NULL;
    rc = jsmf_vocab_write(path, v);
    free(path);
    jsmf_vocab_free(v);
    return rc;
}

int cmd_export(int argc, char **argv)
{
    const char *store = NULL, *out = NULL, *format = "mm";
    for (int i = 1; i < argc; i++) {
        int err = 0;
        const char *v;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return cli_finish_stdout();
        }
        if (cli_common_option(argv[i]))
            continue;
        if ((v = cli_opt_value(argc, argv, &i, "--output", "-o", &err)))
            out = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--format", NULL, &err)))
            format = v;
        else if (err)
            return err;
        else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage_error("unknown option '%s'", argv[i]);
        else if (store)
            return cli_usage_error("one STORE only");
        else
            store = argv[i];
    }
    if (!store)
        return cli_usage_error("missing STORE");
    if (!out)
        return cli_usage_error("missing -o FILE");
    int npy = !strcmp(format, "npy");
    if (!npy && strcmp(format, "mm"))
        return cli_usage_error("--format must be npy or mm, not '%s'", format);
    int to_stdout = !strcmp(out, "-");
    if (to_stdout && npy)
        return cli_usage_error("npy cannot be written to standard output; give -o FILE");
    jsmf_store *s;
    int rc = jsmf_store_open(store, JSMF_STORE_RDONLY, &s);
    if (rc)
        return cli_fail(rc);
    /* the matrix is renamed into place after its vocabulary is written: no FILE without
     * FILE.vocab.txt, and a failure leaves an existing FILE as it was */
    struct stat st; /* a device or a pipe gets no FILE.vocab.txt (no /dev/null.vocab.txt) */
    int with_vocab = !to_stdout && (stat(out, &st) != 0 || S_ISREG(st.st_mode));
    jsmf_out *o = NULL;
    if (!(rc = jsmf_out_open(out, &o))) {
        FILE *f = jsmf_out_file(o);
        rc = npy ? jsmf_store_export_npy(s, f, NPY_LIMIT) : jsmf_store_export_mm(s, f);
        if (!rc && with_vocab)
            rc = write_vocab(s, out);
        rc = jsmf_out_close(o, rc);
    }
    jsmf_store_close(s);
    if (rc)
        return cli_fail(rc);
    return to_stdout ? cli_finish_stdout() : EXIT_OK;
}
