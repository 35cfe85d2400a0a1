/* infer_write.c — jsmf infer's pass: the documents of the inputs read in batches, their theta
 * fitted in parallel and written in input order, and what the run met (summary, OOV warning). */
#include <stdlib.h>

#include "jsmf_eval.h"
#include "core/out.h"
#include "eval_internal.h"
#include "io/docreader.h"

/* A weight of theta: below 1e-7 (far inside the fit's tolerance) printed as 0, not as the
 * residue EM leaves on topics it drives towards zero. */
static void put_weight(FILE *f, const char *sep, double v)
{
    if (v < 1e-7)
        fprintf(f, "%s0", sep);
    else
        fprintf(f, "%s%.6g", sep, v);
}

static void write_theta(FILE *f, int jsonl, uint64_t index, const double *theta, uint32_t k,
                        uint64_t tokens, uint64_t oov)
{
    if (jsonl) {
        fprintf(f, "{\"doc\":%llu,\"tokens\":%llu,\"oov\":%llu,\"theta\":[",
                (unsigned long long)index, (unsigned long long)tokens, (unsigned long long)oov);
        for (uint32_t t = 0; t < k; t++)
            put_weight(f, t ? "," : "", theta[t]);
        fputs("]}\n", f);
    } else {
        fprintf(f, "%llu", (unsigned long long)index);
        for (uint32_t t = 0; t < k; t++)
            put_weight(f, "\t", theta[t]);
        fputc('\n', f);
    }
}

/* Progress in MiB of the inputs when their sizes are known, else in documents. */
static void show_progress(jsmf_step_progress_fn progress, void *arg, const docreader *r,
                          uint64_t docs)
{
    double done, total;
    docreader_bytes(r, &done, &total);
    if (total > 0)
        progress(arg, "inferring", done / 1048576, total / 1048576, "MiB");
    else
        progress(arg, "inferring", (double)docs, 0, "documents");
}

int jsmf_infer_write(FILE *out, const jsmf_model *m, const char *const *inputs, uint32_t n,
                     const jsmf_read_opts *ro, const jsmf_infer_opts *io,
                     const jsmf_theta_format *fmt, jsmf_step_progress_fn progress, void *arg,
                     jsmf_infer_summary *sum)
{
    docreader *r = NULL;
    jsmf_docbatch b = {0};
    double *theta = NULL;
    *sum = (jsmf_infer_summary){0};
    int rc = docreader_open(inputs, n, ro, m->vocab, &r);
    if (!rc && !(theta = malloc((uint64_t)fmt->batch * m->k * sizeof *theta)))
        rc = jsmf_error(JSMF_ENOMEM, "out of memory for %u documents of %u topics", fmt->batch,
                        m->k);
    if (!rc && fmt->header && !fmt->jsonl) {
        fputs("doc", out);
        for (uint32_t t = 0; t < m->k; t++)
            fprintf(out, "\tt%u", t);
        fputc('\n', out);
    }
    uint32_t got = 0;
    while (!rc && !(rc = docreader_next(r, &b, fmt->batch, &got)) && got) {
        if ((rc = jsmf_theta_fit_batch(m, &b, io, theta)))
            break;
        for (uint32_t d = 0; d < b.ndocs; d++) {
            uint64_t tokens = 0;
            for (uint64_t i = b.start[d]; i < b.start[d + 1]; i++)
                tokens += b.counts[i];
            sum->empty += tokens == 0;
            sum->tokens += tokens;
            write_theta(out, fmt->jsonl, b.first_index + d, theta + (uint64_t)d * m->k, m->k,
                        tokens, b.oov[d]);
        }
        sum->docs += b.ndocs;
        if (progress)
            show_progress(progress, arg, r, sum->docs);
        if (ferror(out))
            break;
    }
    sum->oov = r ? docreader_oov(r) : 0;
    free(theta);
    jsmf_docbatch_free(&b);
    docreader_close(r);
    return rc;
}

void jsmf_infer_summary_write(FILE *f, const char *prefix, const jsmf_infer_summary *s)
{
    report_line(f, prefix, "%llu documents, %llu without in-vocabulary words (uniform theta)",
                     (unsigned long long)s->docs, (unsigned long long)s->empty);
    report_line(f, prefix, "%llu out-of-vocabulary tokens ignored",
                     (unsigned long long)s->oov);
}

int jsmf_infer_oov_warning(const jsmf_infer_summary *s, const char *model, uint32_t n_words,
                           char *msg, size_t size)
{
    uint64_t all = s->tokens + s->oov;
    if (!all || (double)s->oov <= JSMF_INFER_OOV_WARN * (double)all)
        return 0;
    snprintf(msg, size, "%.1f%% of the tokens (%llu of %llu) are outside the vocabulary of "
             "%s (%u words): theta rests on the other %.1f%%; is the text in the model's "
             "language and tokenised the same way? (warned above %.0f%%)",
             100.0 * (double)s->oov / (double)all, (unsigned long long)s->oov,
             (unsigned long long)all, model, n_words, 100.0 * (double)s->tokens / (double)all,
             100 * JSMF_INFER_OOV_WARN);
    return 1;
}
