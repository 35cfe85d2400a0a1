/* fit_summary.c — summary.json of a fitted model (formats/model.md): the options of the run, the
 * input it read and, at the top level, the report's metrics, timings and rectification trace;
 * the report for people; what jsmf fit checks and writes besides the model. */
#include <stdlib.h>

#include "fit_internal.h"
#include "jsmf_fit.h"
#include "jsmf_store.h"
#include "core/out.h"
#include "fit_internal.h"
#include "model/json.h"
#include "model/model.h"
#include "model/npy.h"
#include "model/summary.h"
#include "store/source_open.h"

static const char *anchor_space_name(int v)
{
    return v == JSMF_ANCHOR_SPACE_EXACT ? "exact" : v == JSMF_ANCHOR_SPACE_FACTOR ? "factor"
                                                                                  : "auto";
}

static void put_parameters(jsmf_json *j, const jsmf_fit_opts *o, const char *input)
{
    json_begin_object(j, "parameters");
    json_string(j, "input", input);
    json_string(j, "rectify", jsmf_fit_rectify_name(o->rectify));
    json_uint(j, "rectify_iters", fit_rectify_iters(o));
    json_string(j, "anchors", jsmf_fit_anchors_name(o->anchors));
    json_string(j, "anchor_space", anchor_space_name(o->anchor_space));
    json_string(j, "recover", jsmf_fit_recover_name(o->recover));
    json_number(j, "admm_lambda", o->admm_lambda);
    json_number(j, "admm_gamma", o->admm_gamma);
    json_number(j, "snls_tol", o->snls_tol);
    json_uint(j, "snls_maxit", o->snls_maxit);
    json_number(j, "eig_tol", o->eig_tol);
    if (o->min_anchor_df == JSMF_FIT_DF_AUTO)
        json_string(j, "min_anchor_df", "auto");
    else
        json_uint(j, "min_anchor_df", o->min_anchor_df);
    json_begin_array(j, "levels");
    json_uint(j, NULL, o->k);
    for (int l = 0; l < JSMF_FIT_MAX_LEVELS && o->levels[l]; l++)
        json_uint(j, NULL, o->levels[l]);
    json_end_array(j);
    json_string(j, "mode", fit_mode_name(o->mode));
    json_string(j, "products", o->products == JSMF_PRODUCTS_DOCUMENTS ? "documents"
                                    : o->products == JSMF_PRODUCTS_ROWS    ? "rows"
                                                                            : "auto");
    json_uint(j, "seed", o->seed);
    json_int(j, "threads", o->threads);
    json_end_object(j);
}

static void put_metrics(jsmf_json *j, const jsmf_fit_report *r)
{
    json_begin_object(j, "metrics");
    json_number(j, "recovery", r->metrics.recovery);
    json_number(j, "approximation", r->metrics.approximation);
    json_number(j, "recovery_rectified", r->recovery_rect);
    json_number(j, "approximation_rectified", r->approximation_rect);
    json_number(j, "dominancy", r->metrics.dominancy);
    json_number(j, "specificity", r->metrics.specificity);
    json_number(j, "dissimilarity", r->metrics.dissimilarity);
    json_number(j, "sparsity", r->metrics.sparsity);
    json_number(j, "entropy", r->metrics.entropy);
    json_end_object(j);
}

static void put_timings(jsmf_json *j, const jsmf_fit_report *r)
{
    json_begin_object(j, "timings");
    json_number(j, "load", r->t_load);
    if (r->c_scans && r->c_bytes && r->c_scan_secs > 0)
        json_number(j, "read_c_gb_per_s",
                         (double)r->c_scans * (double)r->c_bytes / 1e9 / r->c_scan_secs);
    json_number(j, "rectify", r->t_rectify);
    json_number(j, "anchors", r->t_anchors);
    json_number(j, "recover", r->t_recover_b);
    json_number(j, "recover_a", r->t_recover_a);
    json_number(j, "metrics", r->t_metrics);
    json_number(j, "total", r->t_total);
    json_end_object(j);
}

static void put_trace(jsmf_json *j, const jsmf_fit_report *r)
{
    json_begin_array(j, "rectify_trace");
    for (uint32_t t = 0; t < r->n_trace; t++) {
        const jsmf_fit_trace *tr = &r->trace[t];
        json_begin_object(j, NULL);
        json_number(j, "delta", tr->delta);
        json_number(j, "shift", tr->shift);
        json_number(j, "neg_frac", tr->neg_frac);
        json_number(j, "neg_mass", tr->neg_mass);
        json_number(j, "lambda_min", tr->lambda_min);
        json_uint(j, "eig_passes", tr->eig_iters);
        json_end_object(j);
    }
    json_end_array(j);
}

/* The memory plan (formats/fit.md, "Memory"). */
static void put_memory(jsmf_json *j, const jsmf_fit_report *r)
{
    if (!r->mem_budget)
        return;
    json_begin_object(j, "memory");
    json_uint(j, "plan_bytes", r->mem_plan);
    json_uint(j, "budget_bytes", r->mem_budget);
    json_uint(j, "allowance_bytes", JSMF_MEM_ALLOWANCE);
    if (r->eig_depth)
        json_uint(j, "eig_depth", r->eig_depth);
    json_bool(j, "held", (r->mem_choices & JSMF_PLAN_HELD) != 0);
    json_bool(j, "p_kept", (r->mem_choices & JSMF_PLAN_P_KEPT) != 0);
    json_bool(j, "streamed_for_budget", (r->mem_choices & JSMF_PLAN_STREAMED) != 0);
    json_end_object(j);
}

/* What the run did at the top level: everything the report holds. */
static void put_report(jsmf_json *j, const jsmf_fit_report *r)
{
    json_string(j, "mode_run", fit_mode_name(r->mode));
    put_metrics(j, r);
    put_timings(j, r);
    put_trace(j, r);
    json_uint(j, "passes", r->passes);
    json_string(j, "c_products", r->c_documents ? "documents" : "rows");
    json_uint(j, "snls_iters", r->snls_iters);
    json_uint(j, "snls_unconverged", r->snls_unconverged);
    json_number(j, "a_raw_sum", r->a_raw_sum);
    json_number(j, "alpha0", r->alpha0);
    json_uint(j, "anchor_df", r->anchor_df);
    json_uint(j, "anchor_candidates", r->anchor_candidates);
    json_uint(j, "anchor_rounds", r->anchor_rounds);
    json_uint(j, "anchors_replaced", r->anchors_replaced);
    put_memory(j, r);
    const fit_rectify_method *rm = fit_rectify_method_get(r->rectify);
    if (rm && rm->factored) {
        json_bool(j, "converged", r->converged);
        json_uint(j, "compress_rows", r->compress_rows);
        json_uint(j, "eig_cycles_resumed", r->eig_cycles_resumed);
        json_string(j, "eig_start", r->eig_start == JSMF_EIG_WARM      ? "previous"
                                         : r->eig_start == JSMF_EIG_RESUMED ? "checkpoint"
                                                                            : "random");
        json_numbers(j, "sketch_within", r->sketch_within, r->n_sketch_within);
        json_numbers(j, "sketch_between", r->sketch_between, r->n_sketch_between);
    }
    json_number(j, "final_neg_frac", r->final_neg_frac);
    json_number(j, "final_neg_mass", r->final_neg_mass);
}

static char *level_summary(const jsmf_model *m, uint32_t level, const jsmf_fit_opts *o,
                           const jsmf_fit_report *r, const char *input,
                           const jsmf_source_input *in)
{
    jsmf_summary_buf b;
    if (model_summary_begin(&b))
        return NULL;
    jsmf_json *j = &b.j;
    model_summary_header(j, m, "anchor");
    json_string(j, "jsmf_version", jsmf_version());
    json_uint(j, "level", level);
    put_parameters(j, o, input);
    if (level == 0) {
        if (in)
            source_summary(j, input, in);
        put_report(j, r);
    }
    return model_summary_end(&b);
}

int jsmf_fit_summarize(jsmf_model *m, const jsmf_fit_opts *o, const jsmf_fit_report *r,
                       const char *input, const jsmf_source_input *in)
{
    uint32_t level = 0;
    for (jsmf_model *s = m; s; s = s->sub) {
        free(s->summary_json);
        if (!(s->summary_json = level_summary(s, level++, o, r, input, in)))
            return jsmf_error(JSMF_ENOMEM, "out of memory for summary.json");
    }
    return JSMF_OK;
}

int fit_save_rectified(const char *dir, const jsmf_source *C, const jsmf_fit_opts *o)
{
    double *X = NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/rectified.npy", dir);
    int rc = fit_rectify_dense(C, o, &X);
    if (!rc)
        rc = npy_write_f64(path, X, C->n, C->n);
    free(X);
    return rc;
}

int fit_input_check(const char *path, const jsmf_source_input *in, jsmf_fit_opts *o)
{
    if (in->kind != JSMF_SOURCE_STORE)
        return JSMF_OK;
    if (in->stats.docs == 0)
        return jsmf_error(JSMF_EINVAL, "%s: the store holds no documents, so there is nothing "
                          "to fit (ingest documents of at least 2 words first)", path);
    o->docs = in->stats.docs;
    return JSMF_OK;
}

void jsmf_fit_report_write(FILE *f, const char *p, const jsmf_fit_report *r)
{
    const jsmf_metrics *m = &r->metrics;
    report_line(f, p, "N=%u K=%u mode=%s levels=%u passes=%llu", r->n, r->k,
                     fit_mode_name(r->mode), r->levels, (unsigned long long)r->passes);
    report_line(f, p, "metrics: recovery %.4g  approximation %.4g", m->recovery,
                     m->approximation);
    report_line(f, p, "metrics (rectified C): recovery %.4g  approximation %.4g",
                     r->recovery_rect, r->approximation_rect);
    report_line(f, p, "metrics: dominancy %.4f  specificity %.4f  dissimilarity %.2f",
                     m->dominancy, m->specificity, m->dissimilarity);
    report_line(f, p, "metrics: sparsity %.4f  entropy %.4f", m->sparsity, m->entropy);
    report_line(f, p, "timings (s): load %.3f  rectify %.3f  anchors %.3f", r->t_load,
                     r->t_rectify, r->t_anchors);
    report_line(f, p, "timings (s): B %.3f  A %.3f  metrics %.3f  total %.3f",
                     r->t_recover_b, r->t_recover_a, r->t_metrics, r->t_total);
    const fit_rectify_method *rm = fit_rectify_method_get(r->rectify);
    if (r->n_trace && rm && rm->factored) {
        report_line(f, p, "rectify: %s, %u passes over C%s, %u steps (%s)", rm->name,
                         r->trace[0].eig_iters,
                         r->eig_start == JSMF_EIG_WARM      ? " from the previous model"
                         : r->eig_start == JSMF_EIG_RESUMED ? " (resumed from the checkpoint)"
                                                            : "",
                         r->n_trace - 1, r->converged ? "converged" : "at --rectify-iters");
        report_line(f, p, "rectify: %u rows kept non-negative, alpha0 %.4g",
                         r->compress_rows, r->alpha0);
        if (r->eig_cycles_resumed)
            report_line(f, p, "rectify: C's eigendecomposition resumed after its cycle %llu "
                        "(the checkpoint)", (unsigned long long)r->eig_cycles_resumed);
    } else if (r->n_trace) {
        report_line(f, p, "rectify: %u iterations, alpha0 %.4g", r->n_trace, r->alpha0);
        report_line(f, p, "rectify: final clip %.3g%% of entries (mass %.3g)",
                         100 * r->final_neg_frac, r->final_neg_mass);
    }
    if (r->mem_budget)
        report_line(f, p, "memory: plan %.0f MiB of --mem %.0fM (+ %.0f MiB allowance)%s%s",
                    r->mem_plan / 1048576.0, r->mem_budget / 1048576.0,
                    JSMF_MEM_ALLOWANCE / 1048576.0,
                    r->mem_choices & JSMF_PLAN_STREAMED ? ", C read per product" : "",
                    r->eig_depth && r->eig_depth < 4 ? ", fewer Krylov blocks" : "");
    if (r->c_documents)
        report_line(f, p, "C applied through its documents (cheaper than its rows)");
    if (r->c_scans && r->c_bytes && r->c_scan_secs > 0)
        report_line(f, p, "read C: %llu scan%s of %.2f GB of store, %.2f GB/s",
                         (unsigned long long)r->c_scans, r->c_scans == 1 ? "" : "s",
                         r->c_bytes / 1e9,
                         (double)r->c_scans * (double)r->c_bytes / 1e9 / r->c_scan_secs);
    if (r->ranks > 1 && r->rank_rows_max)
        report_line(f, p, "%d ranks: each holds %u to %u rows of C%s", r->ranks,
                         r->rank_rows_min, r->rank_rows_max,
                         rm && rm->factored ? " and of the factor" : "");
    if (r->c_metrics_skipped == 2)
        report_line(f, p, "recovery and approximation against C left out: the model is "
                         "refined");
    else if (r->c_metrics_skipped == 3)
        report_line(f, p, "recovery and approximation against C left out: their arrays "
                         "exceed --mem; 'jsmf eval MODEL --store STORE' does it");
    else if (r->c_metrics_skipped) {
        report_line(f, p, "recovery and approximation against C not computed: C is larger");
        report_line(f, p, "than --mem (two more passes); 'jsmf eval MODEL --store STORE' "
                         "does it");
    }
    if (r->anchor_df)
        report_line(f, p, "anchors: %u of %u words are candidates (in at least %llu "
                         "documents)", r->anchor_candidates, r->n,
                         (unsigned long long)r->anchor_df);
    if (r->anchor_rounds > 1)
        report_line(f, p, "anchors: %u found again over %u rounds (their topics came out "
                         "empty)", r->anchors_replaced, r->anchor_rounds);
    if (r->snls_unconverged)
        report_line(f, p, "warning: %u words hit the solver's iteration cap",
                         r->snls_unconverged);
    if (r->ranks > 1)
        report_line(f, p, "%d ranks: rank 0 sent %.1f MB in %llu calls, %.2f s in MPI",
                         r->ranks, r->comm_bytes_sent / 1e6, (unsigned long long)r->comm_calls,
                         r->comm_seconds);
}
