/* cmd_fit.c — 'jsmf fit INPUT -k K -o MODEL': the Rectified Anchor Word fit of a store or of a
 * matrix written by 'jsmf export' (jsmf_source_open); metrics and timings to stderr, the model
 * directory with summary.json (jsmf_fit_summarize) via jsmf_model_save. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "jsmf_fit.h"
#include "jsmf_model.h"
#include "jsmf_store.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: jsmf fit INPUT -k K -o MODEL [options]\n"
            "Fit K topics with the rectified anchor word algorithm. INPUT is a store\n"
            "directory or a C written by 'jsmf export' (MatrixMarket or N x N .npy,\n"
            "recognised by content; vocabulary in FILE.vocab.txt).\n"
            "\n"
            "  -k, --topics K          number of topics (required)\n"
            "  -o, --output MODEL      model directory to write (required)\n"
            "  --rectify ap|compressed|dr|none\n"
            "                          alternating projection, the compressed iterate (low\n"
            "                          rank + repairs, never N x N; default),\n"
            "                          Douglas-Rachford, none\n"
            "  --rectify-iters N       AP/DR iterations (default 15); compressed: at most\n"
            "                          (default 100)\n"
            "  --rectify-tol X         compressed: stop when the estimated distance to the\n"
            "                          fixed point is below X (relative; default 1e-3)\n"
            "  --compress-rows L       compressed: rows kept non-negative (default 2K)\n"
            "  --sketch-passes D       compressed: most passes over C of its first\n"
            "                          eigendecomposition (16 when C fits in --mem/2, else\n"
            "                          8)\n"
            "  --sketch-tol X          compressed: stop those passes when no wanted Ritz\n"
            "                          value moves by more than X of the K-th (3e-2)\n"
            "  --anchors qr|fast       sparse implicit pivoted QR (default), FastAnchorWords\n"
            "  --anchor-space auto|exact|factor\n"
            "                          QR anchors on the rectified rows or in the factor's\n"
            "                          K dimensions (auto: exact for AP, factor for the\n"
            "                          compressed iterate)\n"
            "  --recover admm|expgrad|kl|activeset   solver for B (default admm)\n"
            "  --recover-a auto|diag|pinv            A = D^-1 C_SS D^-1 or B^+ C B^+T\n"
            "  --admm-lambda X, --admm-gamma X       ADMM parameters (1.9, 3.0)\n"
            "  --snls-tol X, --snls-maxit N          per-word solver stop (1e-7, 1000)\n"
            "  --eig-tol X             relative Ritz residual of the streaming eigensolver\n"
            "                          (default 1e-7)\n"
            "  --eig-step-maxit N      eigensolver passes per rectification step after the\n"
            "                          first (AP: default 50, to --eig-tol; compressed: 2)\n"
            "  --levels K1,K2,...      super-topic levels below K (e.g. -k 25 --levels 5)\n"
            "  --min-anchor-df N|auto  words in fewer than N documents are never anchors\n"
            "                          (auto: ceil(sqrt(documents)/8), /2 for ap|dr|none;\n"
            "                          lowered to keep 2K candidates)\n"
            "  --mode auto|dense|stream  N x N in memory, or row blocks from factors (auto)\n"
            "  --mem SIZE              budget for C in memory (half of it), blocks and the\n"
            "                          dense path (default: a quarter of the RAM, 512M-4G)\n"
            "  --threads N             threads (default: all)\n"
            "  --seed S                seed of random starts and projections (default 1)\n"
            "  --json                  print summary.json to stdout\n"
            "  --save-rectified        also write the dense rectified C as\n"
            "                          MODEL/rectified.npy\n"
            "  --force                 replace an existing MODEL\n"
            "  -q, --quiet             no progress or informational messages\n");
}

typedef struct {
    const char *input, *output;
    jsmf_fit_opts o;
    int json, force, have_k, save_rect;
} fit_args;

static int parse_choice(const char *opt, const char *v, const char *const *names, int count,
                        int *out)
{
    for (int i = 0; i < count; i++)
        if (!strcmp(v, names[i])) {
            *out = i;
            return 0;
        }
    return cli_usage_error("%s: unknown value '%s'", opt, v);
}

static int parse_levels(const char *v, uint32_t *levels)
{
    memset(levels, 0, sizeof(uint32_t) * JSMF_FIT_MAX_LEVELS);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    int n = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (n == JSMF_FIT_MAX_LEVELS)
            return cli_usage_error("--levels: at most %d levels", JSMF_FIT_MAX_LEVELS);
        if (cli_parse_u32("--levels", tok, &levels[n]))
            return EXIT_USAGE;
        n++;
    }
    return 0;
}

static int parse_args(int argc, char **argv, fit_args *a)
{
    static const char *const rect[] = {"ap", "dr", "none", "compressed"}; /* enum order */
    static const char *const anc[] = {"qr", "fast"};
    static const char *const rec[] = {"admm", "expgrad", "kl", "activeset"};
    static const char *const ra[] = {"auto", "diag", "pinv"};
    static const char *const modes[] = {"auto", "dense", "stream"};
    static const char *const aspace[] = {"auto", "exact", "factor"};
    jsmf_fit_opts_init(&a->o, 0);
    uint32_t levels_first = 0;
    for (int i = 1; i < argc; i++) {
        int err = 0, rc = 0;
        const char *v;
        if (cli_common_option(argv[i]))
            continue;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return -1;
        } else if (!strcmp(argv[i], "--json")) {
            a->json = 1;
        } else if (!strcmp(argv[i], "--save-rectified")) {
            a->save_rect = 1;
        } else if (!strcmp(argv[i], "--force")) {
            a->force = 1;
        } else if ((v = cli_opt_value(argc, argv, &i, "--topics", "-k", &err))) {
            rc = cli_parse_u32("-k", v, &a->o.k), a->have_k = 1;
        } else if ((v = cli_opt_value(argc, argv, &i, "--output", "-o", &err))) {
            a->output = v;
        } else if ((v = cli_opt_value(argc, argv, &i, "--rectify", NULL, &err))) {
            rc = parse_choice("--rectify", v, rect, 4, &a->o.rectify);
        } else if ((v = cli_opt_value(argc, argv, &i, "--rectify-iters", NULL, &err))) {
            rc = cli_parse_u32("--rectify-iters", v, &a->o.rectify_iters);
        } else if ((v = cli_opt_value(argc, argv, &i, "--rectify-tol", NULL, &err))) {
            rc = cli_parse_double("--rectify-tol", v, &a->o.rectify_tol);
        } else if ((v = cli_opt_value(argc, argv, &i, "--compress-rows", NULL, &err))) {
            rc = cli_parse_u32("--compress-rows", v, &a->o.compress_rows);
        } else if ((v = cli_opt_value(argc, argv, &i, "--sketch-tol", NULL, &err))) {
            rc = cli_parse_double("--sketch-tol", v, &a->o.sketch_tol);
        } else if ((v = cli_opt_value(argc, argv, &i, "--sketch-passes", NULL, &err))) {
            rc = cli_parse_u32("--sketch-passes", v, &a->o.sketch_passes);
        } else if ((v = cli_opt_value(argc, argv, &i, "--anchors", NULL, &err))) {
            rc = parse_choice("--anchors", v, anc, 2, &a->o.anchors);
        } else if ((v = cli_opt_value(argc, argv, &i, "--anchor-space", NULL, &err))) {
            rc = parse_choice("--anchor-space", v, aspace, 3, &a->o.anchor_space);
        } else if ((v = cli_opt_value(argc, argv, &i, "--recover", NULL, &err))) {
            rc = parse_choice("--recover", v, rec, 4, &a->o.recover);
        } else if ((v = cli_opt_value(argc, argv, &i, "--recover-a", NULL, &err))) {
            rc = parse_choice("--recover-a", v, ra, 3, &a->o.recover_a);
        } else if ((v = cli_opt_value(argc, argv, &i, "--admm-lambda", NULL, &err))) {
            rc = cli_parse_double("--admm-lambda", v, &a->o.admm_lambda);
        } else if ((v = cli_opt_value(argc, argv, &i, "--admm-gamma", NULL, &err))) {
            rc = cli_parse_double("--admm-gamma", v, &a->o.admm_gamma);
        } else if ((v = cli_opt_value(argc, argv, &i, "--snls-tol", NULL, &err))) {
            rc = cli_parse_double("--snls-tol", v, &a->o.snls_tol);
        } else if ((v = cli_opt_value(argc, argv, &i, "--snls-maxit", NULL, &err))) {
            rc = cli_parse_u32("--snls-maxit", v, &a->o.snls_maxit);
        } else if ((v = cli_opt_value(argc, argv, &i, "--eig-step-maxit", NULL, &err))) {
            rc = cli_parse_u32("--eig-step-maxit", v, &a->o.eig_step_maxit);
        } else if ((v = cli_opt_value(argc, argv, &i, "--eig-tol", NULL, &err))) {
            rc = cli_parse_double("--eig-tol", v, &a->o.eig_tol);
        } else if ((v = cli_opt_value(argc, argv, &i, "--levels", NULL, &err))) {
            rc = parse_levels(v, a->o.levels);
            levels_first = 1;
        } else if ((v = cli_opt_value(argc, argv, &i, "--min-anchor-df", NULL, &err))) {
            if (!strcmp(v, "auto"))
                a->o.min_anchor_df = JSMF_FIT_DF_AUTO;
            else
                rc = cli_parse_u64("--min-anchor-df", v, &a->o.min_anchor_df);
        } else if ((v = cli_opt_value(argc, argv, &i, "--mode", NULL, &err))) {
            rc = parse_choice("--mode", v, modes, 3, &a->o.mode);
        } else if ((v = cli_opt_value(argc, argv, &i, "--mem", NULL, &err))) {
            rc = cli_parse_mem(v, &a->o.mem_bytes);
        } else if ((v = cli_opt_value(argc, argv, &i, "--threads", NULL, &err))) {
            uint32_t t;
            rc = cli_parse_u32("--threads", v, &t);
            a->o.threads = (int)t;
        } else if ((v = cli_opt_value(argc, argv, &i, "--seed", NULL, &err))) {
            rc = cli_parse_u64("--seed", v, &a->o.seed);
        } else if (err) {
            return err;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error("unknown option '%s'", argv[i]);
        } else if (!a->input) {
            a->input = argv[i];
        } else {
            return cli_usage_error("unexpected argument '%s'", argv[i]);
        }
        if (err || rc)
            return err ? err : rc;
    }
    (void)levels_first;
    if (!a->input)
        return cli_usage_error("missing INPUT (a store directory, or a .mtx or .npy matrix)");
    if (!a->have_k)
        return cli_usage_error("missing -k K");
    if (!a->output)
        return cli_usage_error("missing -o MODEL");
    if (a->o.k < 2)
        return cli_usage_error("-k must be at least 2");
    return 0;
}

static void fit_progress(void *arg, const char *what, double done, double total)
{
    (void)arg;
    cli_progress_update(what, done, total, "");
}

static void print_report(const jsmf_fit_report *r)
{
    const jsmf_metrics *m = &r->metrics;
    cli_info("N=%u K=%u mode=%s levels=%u passes=%llu", r->n, r->k, jsmf_fit_mode_name(r->mode),
             r->levels, (unsigned long long)r->passes);
    cli_info("metrics: recovery %.4g  approximation %.4g (rectified: recovery %.4g, "
             "approximation %.4g)", m->recovery, m->approximation, r->recovery_rect,
             r->approximation_rect);
    cli_info("metrics: dominancy %.4f  specificity %.4f  dissimilarity %.2f  sparsity %.4f  "
             "entropy %.4f", m->dominancy, m->specificity, m->dissimilarity, m->sparsity,
             m->entropy);
    cli_info("timings (s): load %.3f  rectify %.3f  anchors %.3f  B %.3f  A %.3f  metrics %.3f  "
             "total %.3f", r->t_load, r->t_rectify, r->t_anchors, r->t_recover_b, r->t_recover_a,
             r->t_metrics, r->t_total);
    if (r->n_trace && r->rectify == JSMF_RECTIFY_COMPRESSED)
        cli_info("rectify: compressed, %u passes over C, %u steps (%s), %u rows kept "
                 "non-negative, alpha0 %.4g", r->trace[0].eig_iters, r->n_trace - 1,
                 r->converged ? "converged" : "stopped at --rectify-iters", r->compress_rows,
                 r->alpha0);
    else if (r->n_trace)
        cli_info("rectify: %u iterations, final clip %.3g%% of entries (mass %.3g), alpha0 %.4g",
                 r->n_trace, 100 * r->final_neg_frac, r->final_neg_mass, r->alpha0);
    if (r->c_scans && r->c_bytes && r->c_scan_secs > 0)
        cli_info("read C: %llu scan%s of %.2f GB of store, %.2f GB/s",
                 (unsigned long long)r->c_scans, r->c_scans == 1 ? "" : "s", r->c_bytes / 1e9,
                 (double)r->c_scans * (double)r->c_bytes / 1e9 / r->c_scan_secs);
    if (r->c_metrics_skipped)
        cli_info("recovery and approximation against C not computed (C is larger than --mem: "
                 "two more passes); 'jsmf eval MODEL --store STORE' computes them");
    if (r->anchor_df)
        cli_info("anchors: %u of %u words are candidates (in at least %llu documents)",
                 r->anchor_candidates, r->n, (unsigned long long)r->anchor_df);
    if (r->snls_unconverged)
        cli_info("warning: %u words hit the solver's iteration cap", r->snls_unconverged);
}

int cmd_fit(int argc, char **argv)
{
    fit_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc < 0)
        return cli_finish_stdout();
    if (rc)
        return rc;
    struct stat st;
    if (!a.force && !stat(a.output, &st))
        return cli_fail(jsmf_error(JSMF_EEXIST, "%s exists (use --force to replace it)",
                                   a.output));
    jsmf_source_input in;
    if ((rc = jsmf_source_open(a.input, 0, &in)))
        return cli_fail(rc);
    int is_store = in.kind == JSMF_SOURCE_STORE;
    if (is_store && in.stats.docs == 0) {
        jsmf_source_close(&in);
        return cli_fail(jsmf_error(JSMF_EINVAL, "%s: the store holds no documents, so there is "
                                   "nothing to fit (ingest documents of at least 2 words first)",
                                   a.input));
    }
    if (is_store)
        a.o.docs = in.stats.docs;
    a.o.progress = fit_progress;
    jsmf_model *m = NULL;
    jsmf_fit_report *rep = calloc(1, sizeof *rep);
    if (!rep) {
        jsmf_source_close(&in);
        return cli_fail(jsmf_error(JSMF_ENOMEM, "out of memory"));
    }
    rc = jsmf_fit(&in.src, in.vocab, &a.o, &m, rep);
    cli_progress_done();
    if (!rc && !(rc = jsmf_fit_summarize(m, &a.o, rep, a.input, &in)))
        rc = jsmf_model_save(a.output, m, a.force);
    if (!rc && a.save_rect) {
        /* the dense path's rectified C, for inspection and reference tests (N x N) */
        double *X = NULL;
        char path[4096];
        snprintf(path, sizeof path, "%s/rectified.npy", a.output);
        if (!(rc = jsmf_fit_rectify_dense(&in.src, &a.o, &X)))
            rc = jsmf_npy_write_f64(path, X, in.src.n, in.src.n);
        free(X);
    }
    if (!rc) {
        print_report(rep);
        if (a.json && m->summary_json)
            fputs(m->summary_json, stdout);
    }
    jsmf_model_free(m);
    free(rep);
    jsmf_source_close(&in);
    if (rc)
        return cli_fail(rc);
    return cli_finish_stdout();
}
