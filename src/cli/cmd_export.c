/* cmd_export.c — 'jsmf export STORE -o FILE [--format npy|mm]': the normalised C (entries sum
 * to 1) for other tools, plus FILE.vocab.txt (one word per line, row order). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "jsmf_store.h"

#define NPY_LIMIT (4ULL << 30) /* dense files above 4 GiB are refused: use mm */

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
    const char *out = NULL;
    int format = 1; /* the index in "npy|mm" */
    const cli_option options[] = {
        {CLI_OPT("--format", 0, "mm|npy", CLI_CHOICE, &format,
                 "mm (default): MatrixMarket 'coordinate real symmetric', the lower triangle "
                 "(row >= column), 1-based, any N, streamed; npy: dense N x N float64 .npy "
                 "(C order), refused above 4 GiB"),
         .choices = "npy|mm"},
        {CLI_OPT("--output", 'o', "FILE", CLI_STRING, &out,
                 "output file; '-' writes mm to standard output")},
        {0},
    };
    const cli_spec spec = {
        "usage: jsmf export STORE -o FILE [--format npy|mm] [--quiet]\n\n"
        "Write C = (1/M) sum_m C_m, normalised so that its entries sum to 1, for other\n"
        "tools. FILE.vocab.txt gets the vocabulary, one word per line in row order (not\n"
        "for -o -).\n\n",
        options, NULL};
    int n, rc = cli_parse(&spec, argc, argv, &n);
    if (rc)
        return rc < 0 ? cli_finish_stdout() : rc;
    if (n == 0)
        return cli_usage_error("missing STORE");
    if (n > 1)
        return cli_usage_error("one STORE only");
    const char *store = argv[1];
    int npy = format == 0;
    if (!out)
        return cli_usage_error("missing -o FILE");
    int to_stdout = !strcmp(out, "-");
    if (to_stdout && npy)
        return cli_usage_error("npy cannot be written to standard output; give -o FILE");
    jsmf_store *s;
    rc = jsmf_store_open(store, JSMF_STORE_RDONLY, &s);
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
